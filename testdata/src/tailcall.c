/* tailcall: sibling calls at -O2 (jmp / b instead of call / bl): mutual
 * recursion through tail calls, a tail call made after restoring
 * callee-saved registers (epilogue then jmp), and one through a function
 * pointer.  At -O0 the same code makes real calls.  Exits with status 2. */
#include <stdio.h>

__attribute__((noipa)) static long ping(long x, long n);
__attribute__((noipa)) static long pong(long x, long n);

__attribute__((noipa)) static long finish(long x, long n) { return x * 10 + n; }

__attribute__((noipa)) static long ping(long x, long n)
{
	if (n <= 0)
		return finish(x, n);
	return pong(x * 3 + 1, n - 1);
}

__attribute__((noipa)) static long pong(long x, long n)
{
	return ping(x ^ (x >> 3), n);
}

__attribute__((noipa)) static long helper(long x) { return x * x + 1; }

/* x must survive the call to helper: callee-saved register, restored in the
 * epilogue right before the tail call */
__attribute__((noipa)) static long wrap(long x)
{
	long t = helper(x);
	return ping(t % 1000, x % 7 + t % 5);
}

typedef long (*fn)(long);

__attribute__((noipa)) static long through(fn f, long x)
{
	return f(x + 1);
}

int main(void)
{
	long a = ping(1, 40);
	long b = wrap(12345);
	long c = through(wrap, 77);
	long d = through(helper, 5);
	printf("ping=%ld wrap=%ld through=%ld,%ld\n", a, b, c, d);
	return 2;
}
