/* setjmp: longjmp out of several nested frames (some with their own
 * buffers), repeatedly, and once from a callback.  Exits with status 4. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static int unwound;

__attribute__((noipa)) static long dive(int n, long acc)
{
	volatile long local[4] = {acc, n, acc ^ n, 7};
	if (n == 0) {
		unwound++;
		longjmp(env, (int)(local[0] % 1000) + 1);
	}
	return dive(n - 1, acc * 3 + n) + local[3];
}

__attribute__((noipa)) static long apply(long (*f)(int, long), int n, long acc)
{
	return f(n, acc) + 1;
}

int main(void)
{
	long total = 0;
	for (int depth = 1; depth <= 5; depth++) {
		volatile int rounds = 0;
		int r = setjmp(env);
		if (r == 0) {
			rounds++;
			total += depth % 2 ? dive(depth, depth) : apply(dive, depth, depth);
			printf("not reached\n");
		} else {
			printf("depth %d: longjmp value %d after %d round(s)\n", depth, r, rounds);
			total += r;
		}
	}
	printf("total = %ld, unwound = %d\n", total, unwound);
	return 4;
}
