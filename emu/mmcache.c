// A cache in front of Unicorn's lookup of the memory region of a guest
// address.
//
// Once a memory hook exists, Unicorn 2.1 sends every guest load and store
// through its slow path (load_helper, store_helper), which looks up the
// region of the address each time (uc->memory_mapping, its
// find_memory_mapping): a walk of the address space's radix tree
// (address_space_translate, flatview_translate, phys_page_find), 10-14% of
// a verify run. The regions change only when the engine maps, unmaps or
// protects memory, which this package does through the wrappers below; so
// a region found for a page stays the answer until then.
//
// sfs_mm_patch replaces the engine's memory_mapping pointer with a cached
// lookup calling the original on a miss. It finds the pointer by its value
// (the address of find_memory_mapping_<arch>, weak: a libunicorn that does
// not export it is left alone) in the engine's allocation, and patches only
// when it occurs there exactly once: a libunicorn laid out otherwise keeps
// its own lookup.
//
// The cache is per OS thread (an engine runs on one thread at a time; a
// goroutine may move between threads, and a miss is only slower), keyed by
// engine and 4 KiB page (the package maps and protects whole pages; a
// region never starts or ends inside one), and valid for one generation:
// every change of any engine's regions, and every engine's close, starts a
// new one, before and after the change; during the change the cache is not
// used (Unicorn looks regions up while it splits them).

#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include "hook.h"

typedef void *(*sfs_mm_fn)(void *uc, uint64_t addr);

extern void *find_memory_mapping_x86_64(void *uc, uint64_t addr) __attribute__((weak));
extern void *find_memory_mapping_aarch64(void *uc, uint64_t addr) __attribute__((weak));

// The thread-locals are initial-exec: cgo compiles this file as PIC, and
// the general-dynamic model GCC picks then made the hit path set up a call
// (five registers saved) for what the linker turns into one load.
static _Atomic uint64_t mm_gen = 1;
static __thread int mm_bypass __attribute__((tls_model("initial-exec")));

struct mm_ent {
	void *uc;
	uint64_t page;
	void *mr;
	uint64_t gen;
};

// MM_CACHE entries per thread (32 KiB), direct-mapped by page. The lookup
// runs when a load or store misses Unicorn's TLB, whose entries are 4 KiB
// pages on both architectures (pagesize.c): with 64 entries, lua's
// fib(31) and table.sort under run missed here on most TLB refills (12%
// of the run on AArch64 in Unicorn's own lookup); with 1024, as fast as
// with 1 KiB pages, whose four refills per 4 KiB page hit the entry the
// first made.
#define MM_CACHE 1024

static __thread struct mm_ent mm_cache[MM_CACHE] __attribute__((tls_model("initial-exec")));

static __attribute__((noinline)) void *mm_miss(sfs_mm_fn orig, void *uc, uint64_t addr) {
	uint64_t gen = atomic_load_explicit(&mm_gen, memory_order_acquire);
	void *mr = orig(uc, addr);
	if (!mm_bypass)
		mm_cache[(addr >> 12) & (MM_CACHE - 1)] = (struct mm_ent){.uc = uc, .page = addr >> 12, .mr = mr, .gen = gen};
	return mr;
}

// mm_cached is orig(uc, addr) through the cache; its common case, a hit,
// saves no registers.
static inline void *mm_cached(sfs_mm_fn orig, void *uc, uint64_t addr) {
	const struct mm_ent *e = &mm_cache[(addr >> 12) & (MM_CACHE - 1)];
	if (__builtin_expect(e->uc == uc && e->page == addr >> 12 &&
	                         e->gen == atomic_load_explicit(&mm_gen, memory_order_acquire) && !mm_bypass,
	                     1))
		return e->mr;
	return mm_miss(orig, uc, addr);
}

static void *mm_x86_64(void *uc, uint64_t addr) { return mm_cached(find_memory_mapping_x86_64, uc, addr); }
static void *mm_aarch64(void *uc, uint64_t addr) { return mm_cached(find_memory_mapping_aarch64, uc, addr); }

int sfs_mm_available(int arm64) {
	return (arm64 ? find_memory_mapping_aarch64 : find_memory_mapping_x86_64) != NULL;
}

int sfs_mm_patch(uc_engine *uc, int arm64) {
	sfs_mm_fn orig = arm64 ? find_memory_mapping_aarch64 : find_memory_mapping_x86_64;
	if (!orig)
		return 0;
	void **p = (void **)uc;
	size_t n = malloc_usable_size(uc) / sizeof *p;
	size_t at = n;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == (void *)orig) {
			if (at != n)
				return 0; // twice: not what we think it is
			at = i;
		}
	}
	if (at == n)
		return 0;
	atomic_fetch_add(&mm_gen, 1);
	p[at] = arm64 ? (void *)mm_aarch64 : (void *)mm_x86_64;
	return 1;
}

static void mm_begin(void) {
	mm_bypass = 1;
	atomic_fetch_add(&mm_gen, 1);
}

static void mm_end(void) {
	atomic_fetch_add(&mm_gen, 1);
	mm_bypass = 0;
}

uc_err sfs_mem_map_ptr(uc_engine *uc, uint64_t addr, size_t size, uint32_t perms, void *ptr) {
	mm_begin();
	uc_err err = uc_mem_map_ptr(uc, addr, size, perms, ptr);
	mm_end();
	return err;
}

uc_err sfs_mem_unmap(uc_engine *uc, uint64_t addr, size_t size) {
	mm_begin();
	uc_err err = uc_mem_unmap(uc, addr, size);
	mm_end();
	return err;
}

uc_err sfs_mem_protect(uc_engine *uc, uint64_t addr, size_t size, uint32_t perms) {
	mm_begin();
	uc_err err = uc_mem_protect(uc, addr, size, perms);
	mm_end();
	return err;
}

uc_err sfs_close(uc_engine *uc) {
	mm_begin();
	uc_err err = uc_close(uc);
	mm_end();
	return err;
}
