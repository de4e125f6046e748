/* bigframe: stack frames larger than 255 bytes (2-byte FRE data words) and
 * larger than 64 KiB (4-byte FRE data words), nested and recursive, with the
 * arrays actually used.  Exits with status 0. */
#include <stdio.h>

#define MID 600          /* bytes: > 255 */
#define HUGE (70 * 1024) /* bytes: > 64 KiB */

__attribute__((noipa)) static unsigned long consume(const unsigned char *p, unsigned long n, unsigned long stride)
{
	unsigned long h = 1469598103934665603UL;
	for (unsigned long i = 0; i < n; i += stride)
		h = (h ^ p[i]) * 1099511628211UL;
	return h;
}

__attribute__((noipa)) static unsigned long mid_frame(unsigned long seed, int depth)
{
	unsigned char buf[MID];
	for (int i = 0; i < MID; i++)
		buf[i] = (unsigned char)(seed + i * 7);
	unsigned long h = consume(buf, MID, 5);
	if (depth > 0)
		h ^= mid_frame(h, depth - 1) + buf[depth * 11];
	return h;
}

__attribute__((noipa)) static unsigned long huge_frame(unsigned long seed)
{
	unsigned char big[HUGE];
	for (unsigned long i = 0; i < HUGE; i += 61)
		big[i] = (unsigned char)(seed ^ (i >> 3));
	big[HUGE - 1] = 0x5a;
	unsigned long h = consume(big, HUGE, 61);
	h += mid_frame(h, 3);
	return h + big[HUGE - 1] + big[122];
}

/* two big frames on the stack at once */
__attribute__((noipa)) static unsigned long huge_outer(unsigned long seed)
{
	unsigned long words[(HUGE + 4096) / sizeof(unsigned long)];
	unsigned long n = sizeof words / sizeof words[0];
	for (unsigned long i = 0; i < n; i += 97)
		words[i] = seed * (i + 1);
	/* reads byte 0 of every initialised word only */
	return huge_frame(words[97] ^ words[n / 2 / 97 * 97]) +
	       consume((const unsigned char *)words, sizeof words, 97 * sizeof words[0]);
}

int main(void)
{
	unsigned long a = mid_frame(1, 2);
	unsigned long b = huge_frame(2);
	unsigned long c = huge_outer(3);
	printf("mid=%016lx huge=%016lx outer=%016lx\n", a, b, c);
	return 0;
}
