/* memwalk: reads and writes a 64 MiB array at pseudo-random places, as a
 * hash table or a compressor's match finder does: far more pages than a
 * small software TLB covers. "memwalk N" makes N million accesses and
 * prints a checksum. Built static for x86-64 and AArch64 (the command is
 * in linux/bench_test.go). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS (8u << 20) /* 64 MiB of uint64_t */

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 10;
	uint64_t *a = malloc(WORDS * sizeof *a);
	if (!a)
		return 1;
	for (uint32_t i = 0; i < WORDS; i++)
		a[i] = i;
	uint64_t x = 1, sum = 0;
	for (long i = 0; i < n * 1000000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t k = (uint32_t)(x >> 40) & (WORDS - 1);
		sum += a[k];
		a[k] = sum;
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
