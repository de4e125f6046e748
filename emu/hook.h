// C side of the emu package: the hooks that run on every instruction stay
// in C and cross into Go only when a record buffer fills, a system call or
// interrupt arrives, or an instruction in a live range must be seen before it runs.
#ifndef SFRAMESIM_EMU_HOOK_H
#define SFRAMESIM_EMU_HOOK_H

#include <stdint.h>
#include <unicorn/unicorn.h>

// Observer modes.
enum { SFS_OBSERVE_NONE = 0, SFS_OBSERVE_RECORD = 1 };

// What the write hook does (sfs_state.track; -1: out of memory).
enum {
	SFS_TRACK_NONE = 0, // no write hook
	SFS_TRACK_CODE = 1, // note stores into code ranges, and the span stored to (dlo, dhi)
	SFS_TRACK_LOG = 2,  // log every store with the bytes it overwrote
};

// One executed instruction: where, how long, and the frame registers before
// it ran (ra is the link register on AArch64, 0 on x86-64). In merge mode
// a record stands for n instructions (see sfs_state.merge): the one at pc
// and n-1 that ran after it, the last at last_pc (last_size bytes); their
// addresses are pcs[pcidx:pcidx+n] of the state. crossed counts the times
// the run went on into another merge interval of its class.
typedef struct {
	uint64_t pc, sp, fp, ra;
	uint32_t size, n;
	uint64_t last_pc;
	uint32_t last_size, pcidx;
	uint32_t crossed, pad;
	// Extension (sfs_state.extend): key is frame 0's return address, CFA
	// and caller FP at the first instruction as its interval's recipe
	// computes them (keyed set). next entries of the state's ext list,
	// from extidx on, say where the run went on with other registers or
	// into another interval: last_sp, last_fp and last_ra are then the
	// last instruction's.
	uint64_t key[3];
	uint64_t last_sp, last_fp, last_ra;
	uint32_t keyed, next, extidx, pad2;
} sfs_rec;

// Where a run went on with other registers or into another merge
// interval (sfs_rec.next): from its member-th instruction on it had sp, fp
// and ra, in interval idx.
typedef struct {
	uint32_t rec, member;
	uint64_t sp, fp, ra;
	int32_t idx;
	uint32_t jumped; // after a branch to a register (SFS_FLOW_JUMP)
} sfs_ext;

// How the unwinder computes frame 0's return address, CFA and caller FP in
// a merge interval from SP, FP, the link register and up to two stack
// words: CFA = (cfa_fp ? FP : SP) + cfa_off; RA = the link register
// (ra_lr) or the word at CFA + ra_off, and ra_mask; caller FP = FP
// (fp_same) or the word at CFA + fp_off. ok 0: no recipe.
typedef struct {
	uint64_t ra_mask;
	int32_t cfa_off, ra_off, fp_off;
	uint8_t ok, cfa_fp, ra_lr, fp_same;
} sfs_recipe;

// Keep flags (sfs_state.keep): the low two bits say whether the instruction
// leaves sp, fp and the link register alone (and is no branch but a
// direct one); SFS_FLOW_OTHER that it is no call, return or branch to a
// register. The SFS_EFFECT flags say what it does to them where the
// encoding fixes that (arch.Arch.StackEffect): nothing (a return or
// branch), sp -= 8, sp += 8, the link register := the next address.
#define SFS_FLOW_OTHER 0x10
// SFS_FLOW_JUMP: a branch to a register that is no call or return
// (AArch64 br).
#define SFS_FLOW_JUMP 0x80
#define SFS_EFFECT_NONE 0x04
#define SFS_EFFECT_SP_DOWN8 0x08
#define SFS_EFFECT_SP_UP8 0x20
#define SFS_EFFECT_LINK 0x40
// sfs_state.kvalid: kept registers valid, and the engine in the mode of
// hook_code's common case.
#define SFS_KVALID_FAST 2
#define SFS_EFFECTS (SFS_EFFECT_NONE | SFS_EFFECT_SP_DOWN8 | SFS_EFFECT_SP_UP8 | SFS_EFFECT_LINK)
// SFS_EFFECT_MOVE (a combination no single effect has): what the
// instruction does is in the state's move table (sfs_move_set).
#define SFS_EFFECT_MOVE (SFS_EFFECT_NONE | SFS_EFFECT_SP_UP8)

// The rules of a move (arch.MoveRule).
enum { SFS_MOVE_KEEP = 0, SFS_MOVE_SET = 1, SFS_MOVE_LOAD = 2 };

// What the instruction at pc does to sp, fp and the link register, where
// it takes an immediate or a load (arch.Move): with base = fp if fromfp,
// else sp (the registers before it), sp becomes base + sp; fp stays, or
// becomes base + fpoff (SFS_MOVE_SET) or the word there (SFS_MOVE_LOAD);
// the link register stays, or becomes the word at base + lroff. used 0:
// an empty slot of the table.
typedef struct {
	uint64_t pc;
	int32_t sp, fpoff, lroff;
	uint8_t fromfp, fp, lr, used;
} sfs_move;

// One guest store seen by the write hook (history mode): the bytes it
// overwrote are at bytes[off:off+size] of the state's byte log, and host is
// where the guest address lives in host memory.
typedef struct {
	uint64_t addr;
	uint8_t *host;
	uint64_t off;
	uint32_t size;
	uint32_t rec;        // index of the storing instruction's record
	uint32_t code;       // the store hit a code range (may change code)
	uint32_t member;     // the storing instruction's index in its record's run
} sfs_write;

// A host-backed guest region, for the write hook to find host addresses.
typedef struct {
	uint64_t addr, size;
	uint8_t *host;
} sfs_region;

// A table of per-address entries of code pages (4096 entries of one size
// per page, made on demand), open addressing by page, the page used last
// at hand.
struct sfs_page {
	uint64_t page; // addr >> 12, +1 (0: empty slot)
	void *ent;
};

struct sfs_pages {
	struct sfs_page *tab, *last;
	uint32_t cap, used;
};

// Per-engine hook state, allocated in C memory and shared with Go.
typedef struct {
	// What the block hook's common case reads and writes, in the first 64
	// bytes (the state is allocated 64-aligned: sfs_state_new): one cache
	// line for a hook that runs once per translated block.
	uint64_t count;      // instructions whose hook ran (started)
	uint64_t limit;      // count a run may reach (UINT64_MAX: none)
	struct sfs_dent *dcache; // a direct-mapped cache of the blocks seen lately
	uint64_t slow_hi;    // see slow_lo below
	// The block counted last: where and its size.
	uint64_t blk_addr;
	uint32_t blk_size;
	int32_t stopping;    // a stop was asked for: blocks no longer count
	int32_t ncode;       // see code below
	int32_t arm64;       // fixed-size instructions: a block has size/4
	int32_t cur_slow;    // see slow_lo below
	int32_t pad0;
	uc_engine *uc;
	int32_t slot;        // index of the Go engine in the Go-side table
	int32_t observe;     // SFS_OBSERVE_*
	int regs[4];         // unicorn ids of pc, sp, fp, ra (ra < 0: none)
	int nregs;
	sfs_rec *buf;        // record buffer (SFS_OBSERVE_RECORD)
	uint32_t nbuf, cap;
	// History mode: every guest store since the oldest pending record, with
	// the bytes it overwrote, so Go can show each record the memory it saw.
	int32_t track;       // SFS_TRACK_*
	sfs_write *wlog;
	uint32_t nwlog, capwlog;
	uint32_t ncodew;     // entries of wlog with code set
	uint8_t *wbytes;
	uint64_t nwbytes, capwbytes;
	sfs_region *regions; // sorted by addr
	// lastregion and prevregion are the two regions found last (most
	// stores alternate between the stack and one other region).
	int32_t nregions, lastregion, prevregion, pad5;
	// Live ranges: [live[2i], live[2i+1]) sorted; an instruction there is
	// passed to Go before it runs, with the engine's registers still its own.
	uint64_t *live;
	int32_t nlive;
	// Stores by instructions already passed to Go: [dlo, dhi), dhi 0 if
	// none since Go last looked.
	uint64_t dlo, dhi;
	// Code ranges: [code[2i], code[2i+1]) sorted, the guest pages that are
	// both writable and executable, where a guest store may change code.
	// Stores there by instructions already passed to Go: [clo, chi), chi 0
	// if none since Go last looked.
	uint64_t *code;
	uint64_t clo, chi;
	// Merge mode (history mode only): an instruction joins the previous
	// record when it has the same sp, fp and ra, lies in a merge interval
	// ([bounds[i], bounds[i+1]) with class[i] not 0) of the class of the
	// record's first one, and the previous instruction stored nothing
	// into code; on AArch64 not after a branch with link or an indirect
	// branch. Every instruction's address goes to pcs (flushed when full).
	int32_t merge;
	uint64_t *bounds;
	uint32_t *cls;
	int32_t nbounds;
	uint64_t run_lo, run_hi; // the merge interval of the last instruction (empty: none)
	uint32_t run_cls;        // its class
	uint32_t rec_cls;        // the class of the last record's first instruction
	struct sfs_icache *icache; // the intervals of PCs seen lately (SFS_ICACHE)
	uint32_t wcode;          // ncodew when the last instruction started
	uint64_t *pcs;
	uint32_t npcs, cappcs;
	// Extension (SetExtend): a run also goes on where SP, FP or the link
	// register changed, when the previous instruction was no call, return
	// or branch to a register (SFS_FLOW_OTHER), the interval has a recipe
	// and the fcls of the run's first one, and the recipe gives the key
	// the record's first instruction had. The registers of its last
	// stretch are msp, mfp, mra; kw the words its key read (0: none), and
	// kdirty says a store hit one of them since. strict: the CFA must lie
	// above SP (x86-64: at SP the return address was popped).
	int32_t extend, strict;
	sfs_recipe *recipes;
	uint32_t *fcls;
	int32_t run_idx;         // the interval of run_lo (-1: none)
	uint32_t rec_fcls;
	uint64_t msp, mfp, mra;
	uint64_t kw[2], kwv[2]; // and the values read there
	int32_t kdirty, pad3;
	sfs_ext *ext;
	uint32_t next, capext;
	uint64_t extended;       // extensions in all (a test's count)
	// Last invalid memory access (UC_HOOK_MEM_INVALID).
	int32_t fault_type;
	int32_t fault_size;
	uint64_t fault_addr;
	int64_t fault_value;
	uint64_t fault_pc;
	// The instruction whose code hook ran last.
	uint64_t last_pc;
	uint32_t last_size;
	uc_hook code_hook, sys_hook, mem_hook, write_hook, in_hook, out_hook, intr_hook;
	uc_hook smc_hook; // a store hook doing nothing (Engine.syncSMCHook)
	// Block counting (sfs_block_counting): no per-instruction hook; a
	// block hook adds a translated block's instruction count when it
	// starts, and stops before a block that would pass limit.
	int32_t blocks;      // block counting is on
	int32_t stopped_before; // the last stop was before block stop_addr
	uint64_t stop_addr;
	uint32_t stop_size;
	// last_pc/last_size are the last instruction when count is last_at;
	// otherwise it is the last one of the block counted last.
	uint64_t last_at;
	// Per-instruction counting of the blocks inside [slow_lo, slow_hi):
	// a code hook bounded to it; cur_slow says whether the running block
	// is counted so.
	uc_hook slow_hook;
	uint64_t slow_lo;
	// Blocks that ran per instruction because their instructions could
	// not be counted (not because of the limit): see Engine.Start.
	uint64_t uncounted;
	// Offset of QEMU's env->old_exception in a saved x86 context, -1 if
	// not known (usermode.c).
	int32_t oldexc_off;
	// Instruction counts of blocks seen: open addressing on (addr, size);
	// n 0 means "run per instruction". Blocks in writable and executable
	// memory keep a copy of their bytes, compared at every start.
	struct sfs_block *btab;
	uint32_t bcap, bused;
	// The same for read-only code, by page: a uint32_t per address, the
	// block starting there, size << 12 | n (0: not known).
	struct sfs_pages blockpages;
	// In front of it, dcache (above).
	uc_hook block_hook;
	// nocount: counting per block adds no hook at all (Engine.
	// DisableCounting, for measuring Unicorn's own speed).
	int32_t nocount;
	// rewritten counts the blocks of writable code seen anew or found
	// rewritten since they were counted (wx_block_insns); stop_rewritten
	// says the engine stopped before such a block, whose translations Go
	// must drop.
	uint64_t rewritten;
	int32_t stop_rewritten;
	// Registers kept across instructions that do not change them (record
	// mode): kv are sp, fp, ra as read before the instruction at last_pc;
	// kvalid says they are still the engine's (cleared whenever Go runs),
	// SFS_KVALID_FAST also that hook_code's common case may add the next
	// instruction to the open run (fast_mode).
	// keep flags (by page, lastk at hand) say per PC of read-only code
	// whether its instruction leaves them alone: 0 unknown, 1 leaves them,
	// 2 may change them, 3 queued in kq for Go to classify; and what it
	// does to them where that is fixed (SFS_EFFECT_*). fast_end, set with
	// SFS_KVALID_FAST, is the count below which the common case may go on:
	// the budget (limit) or where the address buffer (pcs) is full.
	uint64_t kv[3];
	uint64_t fast_end;
	int32_t kvalid;
	int32_t kcheck;          // read the registers anyway and count misses
	uint64_t kmiss, kkept;   // kept values that were wrong; reads saved
	uint64_t kmoved;         // of those, after moves (apply_move)
	struct sfs_pages keep; // a uint8_t per address
	uint64_t *kq;
	uint32_t nkq, capkq;
	// The moves of the instructions whose keep flags say SFS_EFFECT_MOVE:
	// open addressing by pc, capmoves a power of two (0: none yet).
	sfs_move *moves;
	uint32_t nmoves, capmoves;
	// The translation buffer's watch (Engine.flushCode): cg_probe is the
	// page of Unicorn's buffer past which it counts as full, NULL when not
	// watched; events that make Unicorn translate code again (stores into
	// code, dropped translations) are counted in cg_ticks, and every 16th
	// looks at the page. cg_want says the buffer is full: Go must drop all
	// translations before the engine goes on (limit is brought down to
	// count, so that the engine stops at the next instruction or block).
	uint8_t *cg_probe;
	uint32_t cg_ticks;
	int32_t cg_want;
	uint32_t stop_n; // the instruction count of the block at stop_addr
} sfs_state;


// The interval of an address seen lately: bounds[i] <= addr < bounds[i+1]
// (i < 0: empty entry).
struct sfs_icache {
	uint64_t addr;
	int32_t i;
	uint32_t pad;
};

// SFS_ICACHE entries (1 MiB): of CPython's lookups, 4096 entries missed
// 7%, these 0.4%.
#define SFS_ICACHE_BITS 16
#define SFS_ICACHE (1 << SFS_ICACHE_BITS)

struct sfs_dent {
	uint64_t addr;
	uint32_t v; // size << 12 | n, 0: empty
	uint32_t pad;
};

// SFS_DCACHE entries: 128 KiB, most of a run's hot blocks.
#define SFS_DCACHE 8192


struct sfs_block {
	uint64_t addr;
	uint32_t size, n;
	uint8_t *bytes; // a copy of the code (writable code only)
};

// sfs_hooks_install adds the code, system-call/interrupt and invalid-memory
// hooks for arch (UC_ARCH_X86 or UC_ARCH_ARM64).
uc_err sfs_hooks_install(sfs_state *st, int arch);

// sfs_track_writes installs the guest-store hook in mode track
// (SFS_TRACK_CODE, SFS_TRACK_LOG) or removes it (SFS_TRACK_NONE).
uc_err sfs_track_writes(sfs_state *st, int track);

// sfs_remove_cache drops Unicorn's translations of code in [begin, end),
// whose bytes changed behind its back (written by the host).
uc_err sfs_remove_cache(uc_engine *uc, uint64_t begin, uint64_t end);

// sfs_free_history releases the write log.
void sfs_free_history(sfs_state *st);

// sfs_reg_read_batch reads n registers into vals with one call.
uc_err sfs_reg_read_batch(uc_engine *uc, int *ids, uint64_t *vals, int n);
// sfs_context_reg_read_batch reads n registers of a saved context.
uc_err sfs_context_reg_read_batch(uc_context *ctx, int *ids, uint64_t *vals, int n);
uc_err sfs_reg_write_batch(uc_engine *uc, int *ids, uint64_t *vals, int n);

// sfs_set_cpu_model and sfs_flush_tlb wrap the variadic uc_ctl, which cgo
// cannot call.
uc_err sfs_set_cpu_model(uc_engine *uc, int model);
uc_err sfs_set_tcg_buffer(uc_engine *uc, uint32_t size);
// sfs_set_page_size gives a new AArch64 engine 4 KiB pages (pagesize.c).
uc_err sfs_set_page_size(uc_engine *uc);
uc_err sfs_get_tcg_buffer(uc_engine *uc, uint32_t *size);
// sfs_cg_full says whether the translation buffer's watched page is in
// memory; sfs_cg_tick counts an event that makes Unicorn translate again.
int sfs_cg_full(sfs_state *st);
void sfs_cg_watch(sfs_state *st, uintptr_t probe);
void sfs_cg_tick(sfs_state *st);
uc_err sfs_flush_tlb(uc_engine *uc);

// sfs_code_hook_del removes the per-instruction hook (for baselines).
uc_err sfs_code_hook_del(sfs_state *st);

// sfs_state_new returns a zeroed state, 64-aligned (NULL: no memory).
sfs_state *sfs_state_new(void);

// Cached lookups of guest memory regions (mmcache.c): sfs_mm_patch gives
// the engine the cached lookup (1: done, 0: left as it is); every change of
// the engine's regions and its close go through the wrappers.
int sfs_mm_patch(uc_engine *uc, int arm64);
int sfs_mm_available(int arm64); // libunicorn exports the lookup
uc_err sfs_mem_map_ptr(uc_engine *uc, uint64_t addr, size_t size, uint32_t perms, void *ptr);
uc_err sfs_mem_unmap(uc_engine *uc, uint64_t addr, size_t size);
uc_err sfs_mem_protect(uc_engine *uc, uint64_t addr, size_t size, uint32_t perms);
uc_err sfs_close(uc_engine *uc);

// sfs_block_counting switches between the per-instruction code hook (on
// 0) and block counting (on 1); the caller drops the translations made
// the other way.
uc_err sfs_block_counting(sfs_state *st, int on);
uc_err sfs_flush_tb(uc_engine *uc);
uc_err sfs_smc_hook(sfs_state *st, int on);

// sfs_blocks_forget drops the remembered instruction counts (code changed).
void sfs_blocks_forget(sfs_state *st);

// sfs_slow_begin has the blocks inside [lo, hi) counted per instruction,
// sfs_slow_end goes back to block counting there.
uc_err sfs_slow_begin(sfs_state *st, uint64_t lo, uint64_t hi);
uc_err sfs_slow_end(sfs_state *st);

// sfs_keep_set records whether the instruction at pc leaves sp, fp and
// the link register alone (v 1) or may change them (v 2);
// sfs_keep_forget drops every flag (code changed).
void sfs_keep_set(sfs_state *st, uint64_t pc, uint8_t v);
void sfs_keep_forget(sfs_state *st);
// sfs_move_set records the move of the instruction at pc (see sfs_move)
// for keep flags with SFS_EFFECT_MOVE; 0 if out of memory.
int sfs_move_set(sfs_state *st, uint64_t pc, int32_t sp, uint8_t fromfp, uint8_t fp, int32_t fpoff, uint8_t lr, int32_t lroff);

// sfs_user_mode drops a new engine, before its hooks, to CPL 3 or EL0
// with the time-stamp counters trapping, and finds (x86-64) where the
// context keeps the last exception; sfs_clear_exception forgets that
// exception after a hook took it (usermode.c).
uc_err sfs_user_mode(uc_engine *uc, int arm64, int32_t *oldexc);
void sfs_clear_exception(sfs_state *st);

// sfs_arm64_sysreg reads or writes an AArch64 system register by encoding.
uc_err sfs_arm64_sysreg(uc_engine *uc, int write, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t *val);

#endif
