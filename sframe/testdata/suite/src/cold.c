/* Hot/cold splitting: with -freorder-blocks-and-partition the unlikely
   paths move to .text.unlikely as NAME.cold, a second FDE starting in the
   middle of the frame. */
extern void sink(void *, int);
extern __attribute__((cold, noreturn)) void fail(int);

int check(int *v, int n) {
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (__builtin_expect(v[i] < 0, 0)) {
			sink(v, i);
			fail(i);
		}
		s += v[i];
	}
	return s;
}

int twice(int x) {
	if (__builtin_expect(x == 12345, 0)) {
		int a[8];
		sink(a, x);
		return a[1];
	}
	return 2 * x;
}
