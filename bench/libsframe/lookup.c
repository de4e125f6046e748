/* Times libsframe's sframe_find_fre on the PCs gen.go wrote, for comparison
   with BenchmarkLookup. Build against sid's libsframe-dev (binutils 2.47.50):
     gcc -O2 -I/usr/include/libiberty lookup.c -o lookup -l:libsframe.a
   Usage: ./lookup section.bin pcs.bin  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sframe-api.h>

static char *slurp(const char *path, size_t *len) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(2); }
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(*len);
	if (!buf || fread(buf, 1, *len, f) != *len) { perror(path); exit(2); }
	fclose(f);
	return buf;
}

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: %s section.bin pcs.bin\n", argv[0]); return 2; }
	size_t slen, plen;
	char *sec = slurp(argv[1], &slen);
	int64_t *pcs = (int64_t *)slurp(argv[2], &plen);
	size_t npcs = plen / sizeof(int64_t);
	int err = 0;
	sframe_decoder_ctx *ctx = sframe_decode(sec, slen, &err);
	if (!ctx) { fprintf(stderr, "sframe_decode: %s\n", sframe_errmsg(err)); return 1; }
	for (int run = 0; run < 5; run++) {
		const size_t n = 20 * 1000 * 1000;
		size_t found = 0;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (size_t i = 0; i < n; i++) {
			sframe_frame_row_entry fre;
			if (sframe_find_fre(ctx, pcs[i & (npcs - 1)], &fre) == 0)
				found++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("libsframe sframe_find_fre: %.2f M lookups/s (%zu of %zu found)\n", n / s / 1e6, found, n);
	}
	sframe_decoder_free(&ctx);
	return 0;
}
