/* asm: C driver for the hand-written CFI functions in asm.S.  The call chain
 * alternates between C callbacks and assembly:
 *   main -> asm_sigframe_call -> c1 -> asm_push_call -> c2 -> asm_frame_call
 *   -> c3 -> asm_fake_sigtramp -> c4 -> asm_regcfa_call -> c5
 *   -> pac_call (asm_pac_call on AArch64) -> c6 -> asm_leaf_sum
 * Exits with status 42. */
#include <stdio.h>

long asm_leaf_sum(const long *v, long n);
long asm_push_call(long x, long (*cb)(long));
long asm_frame_call(long n, long (*cb)(const long *, long));
long asm_sigframe_call(long x, long (*cb)(long));
long asm_fake_sigtramp(long x, long (*cb)(long));
long asm_regcfa_call(long x, long (*cb)(long));

#if defined(__aarch64__)
long asm_pac_call(long x, long (*cb)(long));
#define pac_call asm_pac_call
#else
/* same result as asm_pac_call, for identical output on both targets */
__attribute__((noipa)) static long pac_call(long x, long (*cb)(long)) { return cb(x) + 1; }
#endif

__attribute__((noipa)) static long c6(long x)
{
	long v[6];
	for (int i = 0; i < 6; i++)
		v[i] = x + i * i;
	return asm_leaf_sum(v, 6);
}

__attribute__((noipa)) static long c5(long x) { return pac_call(x + 2, c6) * 3; }
__attribute__((noipa)) static long c4(long x) { return asm_regcfa_call(x ^ 7, c5) + 11; }

__attribute__((noipa)) static long c3(const long *buf, long n)
{
	return asm_fake_sigtramp(asm_leaf_sum(buf, n), c4);
}

__attribute__((noipa)) static long c2(long x) { return asm_frame_call(x % 13 + 3, c3); }
__attribute__((noipa)) static long c1(long x) { return asm_push_call(x, c2); }

int main(void)
{
	long total = 0;
	for (long i = 1; i <= 4; i++) {
		long r = asm_sigframe_call(i * 10, c1);
		printf("chain(%ld) = %ld\n", i * 10, r);
		total += r;
	}
	printf("total = %ld\n", total);
	return 42;
}
