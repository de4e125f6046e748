// Linux's 4 KiB pages for AArch64 engines.
//
// QEMU's Arm targets translate with the smallest page size the
// architecture allows, 1 KiB, unless told otherwise before the engine is
// initialized. Two things follow from the page size: the software TLB (a
// cache of guest pages, 256 entries to start with) covers a quarter of
// the memory it covers on x86-64, so a program whose data spans a few
// hundred KiB misses it on most accesses; and the number of memory
// regions the engine can hold is the page size in bytes less a few (the
// index of a region is kept in a TLB entry's low bits), 1 000 against
// x86-64's 4 000. A Linux guest never sees the page size (the package maps
// and protects whole 4 KiB pages, and tells the guest AT_PAGESZ 4096), so
// sfs_set_page_size gives a new AArch64 engine 4 KiB pages.
//
// uc_ctl_set_page_size does that in a libunicorn that accepts it for
// AArch64. Unicorn 2.1.1 accepts it only for 32-bit Arm engines (and sets
// 8 KiB for 4 KiB there); for AArch64 it refuses, but the field it sets,
// uc_struct's target_bits, is read at initialization for both. Its offset
// is found once by setting the page size of a 32-bit Arm engine and
// comparing the engine's allocation before and after: exactly one 32-bit
// word must go from 0 to 12 or 13. Then a new AArch64 engine whose word
// there is 0 gets 12. A libunicorn laid out otherwise keeps 1 KiB pages
// (sfs_set_page_size returns UC_ERR_ARG), and Go checks the page size the
// engine reports once initialized.

#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include "hook.h"

static pthread_once_t bits_once = PTHREAD_ONCE_INIT;
static size_t bits_off; // 0: not found

static void find_target_bits(void) {
	uc_engine *arm;
	if (uc_open(UC_ARCH_ARM, UC_MODE_ARM, &arm) != UC_ERR_OK)
		return;
	size_t n = malloc_usable_size(arm);
	uint8_t *before = malloc(n);
	if (before) {
		memcpy(before, arm, n);
		if (uc_ctl_set_page_size(arm, 4096) == UC_ERR_OK) {
			int found = 0;
			size_t off = 0;
			for (size_t k = 0; k + 4 <= n; k += 4) {
				int32_t x, y;
				memcpy(&x, before + k, 4);
				memcpy(&y, (uint8_t *)arm + k, 4);
				if (x == y)
					continue;
				found++;
				if (x == 0 && (y == 12 || y == 13))
					off = k;
			}
			if (found == 1 && off != 0)
				bits_off = off;
		}
		free(before);
	}
	uc_close(arm);
}

uc_err sfs_set_page_size(uc_engine *uc) {
	if (uc_ctl_set_page_size(uc, 4096) == UC_ERR_OK)
		return UC_ERR_OK;
	pthread_once(&bits_once, find_target_bits);
	if (bits_off == 0 || malloc_usable_size(uc) < bits_off + 4)
		return UC_ERR_ARG;
	int32_t v;
	memcpy(&v, (uint8_t *)uc + bits_off, 4);
	if (v != 0)
		return UC_ERR_ARG;
	v = 12;
	memcpy((uint8_t *)uc + bits_off, &v, 4);
	return UC_ERR_OK;
}
