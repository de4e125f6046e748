/* realign: stack realignment.  64-byte aligned locals make x86-64 realign
 * the stack (and $-64, %rsp) with an rbp-based CFA; together with alloca
 * GCC uses a DRAP register (CFA = r10, then a DW_CFA_def_cfa_expression on
 * rbp: .cfi_escape 0xf,0x3,0x76,0x78,0x6) -- not representable in SFrame
 * V1/V2 (the function gets no FDE), a FLEX FDE in V3.  On AArch64 the same
 * code realigns through x29.  Exits with status 0. */
#include <alloca.h>
#include <stdio.h>

struct __attribute__((aligned(64))) blk {
	double v[8];
};

__attribute__((noipa)) static double use(const struct blk *b, const char *p, int n)
{
	double s = 0;
	for (int i = 0; i < 8; i++)
		s += b->v[i] * (i + 1);
	for (int i = 0; i < n; i++)
		s += p[i];
	return s;
}

/* aligned local only: realigned, CFA = rbp + 16 */
__attribute__((noipa)) static double aligned_local(int n)
{
	struct blk b;
	for (int i = 0; i < 8; i++)
		b.v[i] = i * n + 0.5;
	return use(&b, "", 0);
}

/* aligned local + alloca: DRAP */
__attribute__((noipa)) static double drap(int n, int depth)
{
	struct blk b;
	char *p = alloca(n);
	for (int i = 0; i < n; i++)
		p[i] = (char)((i * 3 + depth) & 63);
	for (int i = 0; i < 8; i++)
		b.v[i] = i + n;
	double r = depth > 0 ? drap(n + 16, depth - 1) : aligned_local(n);
	return r + use(&b, p, n);
}

int main(void)
{
	double a = aligned_local(3);
	double b = drap(40, 3);
	printf("aligned=%.1f drap=%.1f\n", a, b);
	return 0;
}
