/* vla: FP-based CFA.  Variable-length arrays and alloca make both x86-64 and
 * AArch64 address the frame through the frame pointer (CFA = fp + N) at
 * every -O level; one function also asks for a frame pointer explicitly
 * (x86-64 -O2: rbp-based CFA without alloca).  Recursive.  Exits with 5. */
#include <alloca.h>
#include <stdio.h>
#include <string.h>

__attribute__((noipa)) static long sum(const long *v, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * (i + 1);
	return s;
}

/* VLA, recursive: every level's frame has a different size */
__attribute__((noipa)) static long with_vla(int n, int depth)
{
	long a[n];
	for (int i = 0; i < n; i++)
		a[i] = (long)n * 31 + i;
	long r = depth > 0 ? with_vla(n + 5, depth - 1) : 0;
	return r + sum(a, n);
}

__attribute__((noipa)) static long with_alloca(int n)
{
	char *p = alloca(n);
	memset(p, 'a' + n % 26, n);
	p[n - 1] = 0;
	return (long)strlen(p) * 1000 + with_vla(n / 8, 2);
}

__attribute__((noipa, optimize("no-omit-frame-pointer"))) static long framed(long x)
{
	volatile long local[4] = {x, x + 1, x + 2, x + 3};
	return with_alloca((int)(local[3] % 200) + 40) + local[1];
}

int main(void)
{
	long a = with_vla(3, 4);
	long b = with_alloca(300);
	long c = framed(77);
	printf("vla=%ld alloca=%ld framed=%ld\n", a, b, c);
	return 5;
}
