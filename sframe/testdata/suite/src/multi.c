/* Several functions of different frame shapes in one object: a leaf, a
   caller, a big frame, an FP-based frame (alloca), a static helper. */
extern void sink(void *, int);

int leaf(int x) { return x * 3 + 1; }

static __attribute__((noinline)) int helper(int x) { sink(&x, 1); return x + 7; }

int caller(int x) { return helper(x) + leaf(x); }

int bigframe(int n) {
	char buf[600];
	sink(buf, n);
	return buf[n & 7];
}

int dynframe(int n) {
	char *p = __builtin_alloca(n);
	sink(p, n);
	return p[0];
}
