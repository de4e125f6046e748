/* Differential-test harness: GNU libsframe's answer at every PC of ranges
   of an SFrame section, for sframe/libsframe_test.go.

   Usage: harness SECTION LO HI [LO HI ...]
   SECTION is the raw .sframe section; LO and HI (C integers: -0x1288, 4096) are PCs relative to
   the section's first byte, as sframe_find_fre takes them. For every PC in
   each [LO, HI) it asks sframe_find_fre and prints a line "PC ANSWER" (PC
   in hex) whenever the answer differs from the previous PC's:
     none                          no FRE covers the PC
     fde=I start=S info=X cfa=B:O ra=R fp=F mangled=M undefined=U
   I is the index of the FDE whose [start, start+size) holds the PC (from
   sframe_decoder_get_funcdesc_v2/v3), S the FRE's start address offset,
   X its fre_info; B the CFA base register id (in a V3 FLEX FDE "cN", N
   the CFA's control word) and O the CFA offset, R and F
   the RA and FP offsets or "u" where libsframe reports none, M and U
   whether the RA is mangled / undefined. Exit status 1 when the section
   does not decode, 2 on bad usage.

   Build: gcc -O2 -I.deps/libsframe/usr/include harness.c .deps/libsframe/lib/libsframe.a */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sframe-api.h>

struct fde {
	int64_t start; /* relative to the section's first byte */
	uint32_t size;
	uint32_t type;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(*len ? *len : 1);
	if (!buf || fread(buf, 1, *len, f) != *len) {
		perror(path);
		exit(2);
	}
	fclose(f);
	return buf;
}

static void offset(char *out, size_t n, int32_t v, int err)
{
	if (err)
		snprintf(out, n, "u");
	else
		snprintf(out, n, "%" PRId32, v);
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc % 2 != 0) {
		fprintf(stderr, "usage: %s SECTION LO HI [LO HI ...]\n", argv[0]);
		return 2;
	}
	size_t len;
	char *sec = slurp(argv[1], &len);
	int err = 0;
	sframe_decoder_ctx *ctx = sframe_decode(sec, len, &err);
	if (!ctx) {
		fprintf(stderr, "sframe_decode: %s\n", sframe_errmsg(err));
		return 1;
	}
	uint8_t ver = sframe_decoder_get_version(ctx);
	uint32_t n = sframe_decoder_get_num_fidx(ctx);
	struct fde *fdes = calloc(n ? n : 1, sizeof *fdes);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nfres, size;
		unsigned char info, info2 = 0;
		uint8_t rep;
		int64_t start;
		if (ver >= SFRAME_VERSION_3) {
			err = sframe_decoder_get_funcdesc_v3(ctx, i, &nfres, &size, &start, &info, &info2, &rep);
		} else {
			int32_t s32;
			err = sframe_decoder_get_funcdesc_v2(ctx, i, &nfres, &size, &s32, &info, &rep);
			start = s32;
		}
		if (err) {
			fprintf(stderr, "FDE %u: funcdesc: error %d\n", i, err);
			return 1;
		}
		/* The start field as stored is relative to the field itself
		   (SFRAME_F_FDE_FUNC_START_PCREL): libsframe's own reading. */
		int e = 0;
		fdes[i].start = start + sframe_decoder_get_offsetof_fde_start_addr(ctx, i, &e);
		fdes[i].size = size;
		fdes[i].type = info2 & 0x1f;
	}
	char prev[256] = "", cur[256];
	for (int a = 2; a < argc; a += 2) {
		int64_t lo = strtoll(argv[a], NULL, 0), hi = strtoll(argv[a + 1], NULL, 0);
		for (int64_t pc = lo; pc < hi; pc++) {
			sframe_frame_row_entry fre;
			if (sframe_find_fre(ctx, pc, &fre) != 0) {
				snprintf(cur, sizeof cur, "none");
			} else {
				int idx = -1;
				for (uint32_t i = 0; i < n; i++)
					if (pc >= fdes[i].start && pc < fdes[i].start + (int64_t)fdes[i].size) {
						idx = (int)i;
						break;
					}
				uint32_t type = idx >= 0 ? fdes[idx].type : 0;
				int e1 = 0, e2 = 0, e3 = 0, e4 = 0, e5 = 0, e6 = 0;
				uint8_t base = sframe_fre_get_base_reg_id(&fre, &e1);
				int32_t cfa = sframe_fre_get_cfa_offset(ctx, &fre, type, &e2);
				int32_t ra = sframe_fre_get_ra_offset(ctx, &fre, type, &e3);
				int32_t fp = sframe_fre_get_fp_offset(ctx, &fre, type, &e4);
				int mangled = sframe_fre_get_ra_mangled_p(ctx, &fre, &e5);
				int undef = sframe_fre_get_ra_undefined_p(ctx, &fre, &e6);
				char bs[32], cs[32], rs[32], fs[32];
				if (type == SFRAME_FDE_TYPE_FLEX) {
					/* A FLEX row's CFA register is in its control
					   word, data word 0; fre_info's base bit is unused. */
					int e = 0;
					uint32_t ctl = sframe_get_fre_udata(&fre, 0, &e);
					snprintf(bs, sizeof bs, e ? "c?" : "c%" PRIu32, ctl);
				} else {
					snprintf(bs, sizeof bs, "%d", e1 ? -1 : base);
				}
				offset(cs, sizeof cs, cfa, e2);
				offset(rs, sizeof rs, ra, e3);
				offset(fs, sizeof fs, fp, e4);
				snprintf(cur, sizeof cur, "fde=%d start=%" PRIu32 " info=0x%x cfa=%s:%s ra=%s fp=%s mangled=%d undefined=%d",
					 idx, fre.fre_start_addr, fre.fre_info, bs, cs, rs, fs, mangled, undef);
			}
			if (strcmp(cur, prev) != 0) {
				printf("%" PRIx64 " %s\n", (uint64_t)pc, cur);
				strcpy(prev, cur);
			}
		}
	}
	return 0;
}
