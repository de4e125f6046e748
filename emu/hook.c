#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "hook.h"
#include "_cgo_export.h"

// sfs_page_align is never called: its alignment makes the linker start
// this file's code, and so libunicorn's, which comes after it, on a page
// boundary. Unicorn's functions then keep their addresses modulo a page
// whatever the size of the Go code before them; the speed of some of them
// depends on where they lie (reg_read_aarch64 took 2% of a verify run at
// some addresses, 5-10% at others).
__attribute__((used, aligned(4096))) void sfs_page_align(void) {}

// in_ranges reports whether [addr, end) overlaps one of the n sorted
// ranges [r[2i], r[2i+1]).
static int in_ranges(const uint64_t *r, int n, uint64_t addr, uint64_t end) {
	int lo = 0, hi = n;
	if (n == 0 || end <= r[0] || addr >= r[2 * n - 1])
		return 0;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (addr >= r[2 * mid + 1])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && end > r[2 * lo];
}

// in_live reports whether pc lies in one of the live ranges.
static int in_live(const sfs_state *st, uint64_t pc) {
	return in_ranges(st->live, st->nlive, pc, pc + 1);
}

static void flush(sfs_state *st, int live) {
	sfsGoFlush(st->slot, live);
	st->kvalid = 0; // Go may have changed registers
	st->nbuf = 0;
	st->nwlog = 0;
	st->ncodew = 0;
	st->nwbytes = 0;
	st->npcs = 0;
	st->next = 0;
	st->run_lo = st->run_hi = 0;
	st->run_idx = -1;
}

// find_region is below.
static sfs_region *find_region(sfs_state *st, uint64_t addr);

// merge_interval sets run_lo/run_hi and run_cls to the merge interval
// holding pc and its class, or to an empty one of class 0.
static void merge_interval(sfs_state *st, uint64_t pc) {
	// Falling through from the last interval into the next (pc starts
	// it) is most changes of interval in an interpreter's big functions,
	// whose FRE rows change every few instructions: no lookup.
	int i = st->run_idx + 1;
	int next = pc == st->run_hi && i > 0 && i < st->nbounds && st->bounds[i] == pc;
	st->run_lo = st->run_hi = 0;
	st->run_cls = 0;
	st->run_idx = -1;
	if (next)
		goto found;
	struct sfs_icache *c = NULL;
	if (st->icache) {
		c = &st->icache[(uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - SFS_ICACHE_BITS)) & (SFS_ICACHE - 1)];
		if (c->addr == pc && c->i >= 0) {
			i = c->i;
			goto found;
		}
	}
	int lo = 0, hi = st->nbounds;
	// The last bound <= pc.
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (st->bounds[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo - 1;
	if (c) {
		c->addr = pc;
		c->i = i;
	}
found:
	if (i < 0 || i + 1 >= st->nbounds || !st->cls[i])
		return;
	st->run_lo = st->bounds[i];
	st->run_hi = st->bounds[i + 1];
	st->run_cls = st->cls[i];
	st->run_idx = i;
}

// a64_links_or_jumps reports whether the AArch64 instruction at pc is a
// branch with link (bl) or a branch to a register (br, blr, ret and their
// authenticated forms): the shadow stack must see it as the last of its
// record. Unreadable: yes.
static int a64_links_or_jumps(sfs_state *st, uint64_t pc) {
	sfs_region *r = find_region(st, pc);
	if (!r || pc - r->addr + 4 > r->size)
		return 1;
	uint32_t w;
	memcpy(&w, r->host + (pc - r->addr), 4);
	return (w & 0xfc000000) == 0x94000000 || (w >> 25) == 0x6b;
}

// keep_flags returns the keep flags of the instruction at pc (0: not
// known yet, which queues it for Go).
static inline uint8_t keep_flags(sfs_state *st, uint64_t pc);

// read_word reads the guest word at addr from host memory, as
// emu.Engine.Read64 does; 0 if it is not within one region.
static int read_word(sfs_state *st, uint64_t addr, uint64_t *v) {
	sfs_region *r = find_region(st, addr);
	if (!r || addr - r->addr > r->size - 8 || r->size < 8)
		return 0;
	memcpy(v, r->host + (addr - r->addr), 8);
	return 1;
}

// key_word reads the word at addr for frame_key into *v: the value the
// run's key was computed from when addr is one of the words it read
// (st->kw, st->kwv) and no store hit them since (kdirty), instead of
// looking for the memory (a push or pop in a prologue or epilogue moves SP
// and the CFA rule, but most often leaves the words the key reads).
static inline int key_word(sfs_state *st, uint64_t addr, uint64_t *v) {
	if (!st->kdirty && addr != 0) {
		if (addr == st->kw[0]) {
			*v = st->kwv[0];
			return 1;
		}
		if (addr == st->kw[1]) {
			*v = st->kwv[1];
			return 1;
		}
	}
	return read_word(st, addr, v);
}

// frame_key computes frame 0's return address, CFA and caller FP (key)
// with interval i's recipe from the registers v (sp, fp, ra) and memory,
// and the words it read (kw, 0: none) and their values (kwv); 0 where the
// recipe gives no frame (none, the CFA below SP or at it when strict, a
// word unreadable).
static int frame_key(sfs_state *st, int32_t i, const uint64_t *v, uint64_t *key, uint64_t *kw, uint64_t *kwv) {
	if (i < 0 || !st->recipes)
		return 0;
	const sfs_recipe *rc = &st->recipes[i];
	if (!rc->ok)
		return 0;
	uint64_t cfa = (rc->cfa_fp ? v[1] : v[0]) + (uint64_t)(int64_t)rc->cfa_off;
	if (cfa < v[0] || (st->strict && cfa == v[0]))
		return 0;
	uint64_t ra = v[2], fp = v[1], w[2] = {0, 0};
	if (!rc->ra_lr) {
		w[0] = cfa + (uint64_t)(int64_t)rc->ra_off;
		if (!key_word(st, w[0], &ra))
			return 0;
	}
	if (!rc->fp_same) {
		w[1] = cfa + (uint64_t)(int64_t)rc->fp_off;
		if (!key_word(st, w[1], &fp))
			return 0;
	}
	kw[0] = w[0];
	kw[1] = w[1];
	kwv[0] = ra;
	kwv[1] = fp;
	key[0] = ra & rc->ra_mask;
	key[1] = cfa;
	key[2] = fp;
	return 1;
}

// add_member adds the instruction at addr to run p.
static inline void add_member(sfs_state *st, sfs_rec *p, uint64_t addr, uint32_t size, int crossed) {
	p->n++;
	p->crossed += crossed;
	p->last_pc = addr;
	p->last_size = size;
	st->pcs[st->npcs++] = addr;
}

// add_ext notes that the next instruction of run p has the registers
// msp, mfp, mra and lies in interval run_idx, after a branch to a
// register if jumped (ext has room).
static void add_ext(sfs_state *st, sfs_rec *p, int jumped) {
	sfs_ext *e = &st->ext[st->next++];
	e->rec = st->nbuf - 1;
	e->member = p->n;
	e->sp = p->last_sp = st->msp;
	e->fp = p->last_fp = st->mfp;
	e->ra = p->last_ra = st->mra;
	e->idx = st->run_idx;
	e->jumped = jumped;
	p->next++;
}

// jump_within reports whether a keyed run p may go on after its last
// instruction, a branch to a register (AArch64 br: SFS_FLOW_JUMP), with
// SP sp: below the run's CFA, where the shadow stack does nothing at such
// a branch (a frame the SP left, or a landing with SP at the top frame's
// CFA, both need SP at or above the CFA, which Go checks is the top
// frame's).
static int jump_within(sfs_state *st, sfs_rec *p, uint64_t sp) {
	return p->keyed && st->extend && sp < p->key[1] && (keep_flags(st, p->last_pc) & SFS_FLOW_JUMP);
}

// try_extend adds the instruction at addr, whose registers v differ from
// the run's last ones (or a store hit the words its key read), to run p if
// the key stays (see sfs_state.extend).
static int try_extend(sfs_state *st, sfs_rec *p, uint64_t addr, uint32_t size, const uint64_t *v) {
	if (!p->keyed || !st->extend || st->next == st->capext)
		return 0;
	if (st->nlive > 0 && in_live(st, addr))
		return 0;
	int jumped = 0;
	if (!(keep_flags(st, p->last_pc) & SFS_FLOW_OTHER) && !(jumped = jump_within(st, p, v[0])))
		return 0;
	if (addr - st->run_lo >= st->run_hi - st->run_lo)
		merge_interval(st, addr);
	if (st->run_idx < 0 || st->fcls[st->run_idx] != st->rec_fcls)
		return 0;
	uint64_t key[3], kw[2], kwv[2], w[3] = {v[0], v[1], st->nregs > 3 ? v[2] : 0};
	if (!frame_key(st, st->run_idx, w, key, kw, kwv) || key[0] != p->key[0] || key[1] != p->key[1] || key[2] != p->key[2])
		return 0;
	st->msp = w[0];
	st->mfp = w[1];
	st->mra = w[2];
	add_ext(st, p, jumped);
	st->extended++;
	st->rec_cls = st->run_cls;
	st->kw[0] = kw[0];
	st->kw[1] = kw[1];
	st->kwv[0] = kwv[0];
	st->kwv[1] = kwv[1];
	st->kdirty = 0;
	add_member(st, p, addr, size, 1);
	return 1;
}

// try_merge adds the instruction at addr to the last record if it may
// stand for it (see sfs_state.merge and extend).
static int try_merge(sfs_state *st, uint64_t addr, uint32_t size, const uint64_t *v) {
	sfs_rec *p = &st->buf[st->nbuf - 1];
	if (st->ncodew != st->wcode)
		return 0;
	if (v[0] != st->msp || v[1] != st->mfp || (st->nregs > 3 ? v[2] : 0) != st->mra || st->kdirty)
		return try_extend(st, p, addr, size, v);
	int crossed = 0;
	if (addr - st->run_lo >= st->run_hi - st->run_lo) {
		merge_interval(st, addr);
		if (st->run_cls == 0 || st->run_cls != st->rec_cls)
			return try_extend(st, p, addr, size, v);
		crossed = 1;
	}
	if (st->nlive > 0 && in_live(st, addr))
		return 0;
	int jumped = 0;
	// (A ret or br to the next instruction is a branch too: the shadow
	// stack sees a return no frame expected.)
	if (st->arm64 && (addr != p->last_pc + p->last_size || !(keep_flags(st, p->last_pc) & SFS_FLOW_OTHER)) &&
	    a64_links_or_jumps(st, p->last_pc) && !(jumped = jump_within(st, p, v[0])))
		return 0;
	// With extension on, every change of interval and every branch to a
	// register is listed (ext).
	if ((crossed || jumped) && st->extend) {
		if (st->next == st->capext)
			return 0;
		add_ext(st, p, jumped);
	}
	add_member(st, p, addr, size, crossed);
	return 1;
}

static uint32_t page_hash(uint64_t key, uint32_t mask) {
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

// page_entries returns the entries (esize bytes each) of the page holding
// addr in t, making them (zeroed) if make is set; NULL if out of memory or
// not made.
static void *page_entries_slow(struct sfs_pages *t, uint64_t key, size_t esize, int make);

// (The page at hand inline, for the hooks that look up every instruction's
// page; the search out of line.)
static inline __attribute__((always_inline)) void *page_entries(struct sfs_pages *t, uint64_t addr, size_t esize, int make) {
	uint64_t key = (addr >> 12) + 1;
	if (t->last && t->last->page == key)
		return t->last->ent;
	return page_entries_slow(t, key, esize, make);
}

static __attribute__((noinline)) void *page_entries_slow(struct sfs_pages *t, uint64_t key, size_t esize, int make) {
	if (t->cap > 0) {
		uint32_t j = page_hash(key, t->cap - 1);
		while (t->tab[j].page != 0) {
			if (t->tab[j].page == key) {
				t->last = &t->tab[j];
				return t->last->ent;
			}
			j = (j + 1) & (t->cap - 1);
		}
	}
	if (!make)
		return NULL;
	if (2 * (t->used + 1) > t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		struct sfs_page *nt = calloc(cap, sizeof *nt);
		if (!nt)
			return NULL;
		for (uint32_t i = 0; i < t->cap; i++) {
			if (t->tab[i].page == 0)
				continue;
			uint32_t j = page_hash(t->tab[i].page, cap - 1);
			while (nt[j].page != 0)
				j = (j + 1) & (cap - 1);
			nt[j] = t->tab[i];
		}
		free(t->tab);
		t->tab = nt;
		t->cap = cap;
	}
	void *ent = calloc(4096, esize);
	if (!ent)
		return NULL;
	uint32_t j = page_hash(key, t->cap - 1);
	while (t->tab[j].page != 0)
		j = (j + 1) & (t->cap - 1);
	t->tab[j] = (struct sfs_page){.page = key, .ent = ent};
	t->used++;
	t->last = &t->tab[j];
	return ent;
}

// pages_free drops every page of t.
static void pages_free(struct sfs_pages *t) {
	for (uint32_t i = 0; i < t->cap; i++)
		free(t->tab[i].ent);
	free(t->tab);
	*t = (struct sfs_pages){0};
}

void sfs_keep_set(sfs_state *st, uint64_t pc, uint8_t v) {
	uint8_t *k = page_entries(&st->keep, pc, 1, 1);
	if (k)
		k[pc & 4095] = v;
}

void sfs_keep_forget(sfs_state *st) {
	pages_free(&st->keep);
	free(st->moves);
	st->moves = NULL;
	st->nmoves = st->capmoves = 0;
	st->nkq = 0;
	st->kvalid = 0;
}

static uint32_t move_slot(uint64_t pc, uint32_t cap) {
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

// move_at returns the slot of the move table (capmoves > 0) holding pc's
// move, or the empty one where it would go.
static sfs_move *move_at(sfs_state *st, uint64_t pc) {
	uint32_t j = move_slot(pc, st->capmoves);
	while (st->moves[j].used && st->moves[j].pc != pc)
		j = (j + 1) & (st->capmoves - 1);
	return &st->moves[j];
}

int sfs_move_set(sfs_state *st, uint64_t pc, int32_t sp, uint8_t fromfp, uint8_t fp, int32_t fpoff, uint8_t lr, int32_t lroff) {
	if (2 * (st->nmoves + 1) > st->capmoves) {
		uint32_t cap = st->capmoves ? 2 * st->capmoves : 1024;
		sfs_move *t = calloc(cap, sizeof *t);
		if (!t)
			return 0;
		for (uint32_t i = 0; i < st->capmoves; i++) {
			if (!st->moves[i].used)
				continue;
			uint32_t j = move_slot(st->moves[i].pc, cap);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = st->moves[i];
		}
		free(st->moves);
		st->moves = t;
		st->capmoves = cap;
	}
	sfs_move *m = move_at(st, pc);
	if (!m->used)
		st->nmoves++;
	*m = (sfs_move){.pc = pc, .sp = sp, .fpoff = fpoff, .lroff = lroff, .fromfp = fromfp, .fp = fp, .lr = lr, .used = 1};
	return 1;
}

// apply_move computes into v the registers after the instruction at pc,
// whose keep flags say SFS_EFFECT_MOVE, from kv, those before it, and
// memory; 0 if its move is not known or a word it loaded is not at hand
// (the caller then reads the registers).
static int apply_move(sfs_state *st, uint64_t pc, uint64_t *v) {
	if (st->capmoves == 0)
		return 0;
	const sfs_move *m = move_at(st, pc);
	if (!m->used)
		return 0;
	uint64_t base = m->fromfp ? st->kv[1] : st->kv[0];
	uint64_t fp = st->kv[1], lr = st->kv[2];
	if (m->fp == SFS_MOVE_SET)
		fp = base + (uint64_t)(int64_t)m->fpoff;
	else if (m->fp == SFS_MOVE_LOAD && !read_word(st, base + (uint64_t)(int64_t)m->fpoff, &fp))
		return 0;
	if (m->lr == SFS_MOVE_LOAD && !read_word(st, base + (uint64_t)(int64_t)m->lroff, &lr))
		return 0;
	v[0] = base + (uint64_t)(int64_t)m->sp;
	v[1] = fp;
	v[2] = lr;
	st->kmoved++;
	return 1;
}

static inline uint8_t keep_flags(sfs_state *st, uint64_t pc) {
	uint8_t *k = page_entries(&st->keep, pc, 1, 0);
	uint8_t v = k ? k[pc & 4095] : 0;
	if (v == 0 && st->nkq < st->capkq && (k || (k = page_entries(&st->keep, pc, 1, 1)))) {
		k[pc & 4095] = 3;
		st->kq[st->nkq++] = pc;
	}
	return v;
}

// keeps reports whether the instruction at pc is known to leave sp, fp
// and the link register alone; an unknown one is queued for Go.
static inline int keeps(sfs_state *st, uint64_t pc) {
	return (keep_flags(st, pc) & 3) == 1;
}

// read_frame_regs reads sp, fp and the link register before the
// instruction at addr into v, or takes them from before the previous
// instruction (prev) when that one left them alone or changed them as its
// encoding says (SFS_EFFECT_*).
static inline void read_frame_regs(sfs_state *st, uc_engine *uc, uint64_t prev, uint64_t *v) {
	uint8_t f;
	if (st->kvalid && st->kq && ((f = keep_flags(st, prev)) & 3) != 0 && ((f & 3) == 1 || (f & SFS_EFFECTS)) &&
	    ((f & SFS_EFFECTS) != SFS_EFFECT_MOVE || apply_move(st, prev, v))) {
		if ((f & SFS_EFFECTS) != SFS_EFFECT_MOVE) {
			v[0] = st->kv[0];
			v[1] = st->kv[1];
			v[2] = st->kv[2];
			if (f & SFS_EFFECT_SP_DOWN8)
				v[0] -= 8;
			else if (f & SFS_EFFECT_SP_UP8)
				v[0] += 8;
			else if (f & SFS_EFFECT_LINK)
				v[2] = prev + 4; // AArch64 only
		}
		st->kkept++;
		if (st->kcheck) {
			uint64_t w[4] = {0, 0, 0, 0};
			void *p[4] = {&w[0], &w[1], &w[2], &w[3]};
			uc_reg_read_batch(uc, st->regs + 1, p, st->nregs - 1);
			if (w[0] != v[0] || w[1] != v[1] || (st->nregs > 3 && w[2] != v[2])) {
				st->kmiss++;
				v[0] = w[0], v[1] = w[1], v[2] = w[2];
			}
		}
	} else {
		void *p[4] = {&v[0], &v[1], &v[2], &v[3]};
		uc_reg_read_batch(uc, st->regs + 1, p, st->nregs - 1);
	}
	st->kv[0] = v[0];
	st->kv[1] = v[1];
	st->kv[2] = v[2];
	st->kvalid = 1;
}

static void hook_code_slow(uc_engine *uc, uint64_t addr, uint32_t size, sfs_state *st);

// fast_mode marks kept registers (kvalid 1) as SFS_KVALID_FAST when the
// engine records in merge mode with a store log, no live ranges and no
// checks of kept registers, a run is open, no store hit the words its key
// read and no store into code was logged since it last grew: what
// hook_code's common case needs beyond the run at hand. It sets fast_end,
// so that one comparison of count stands for the budget and the room left
// in pcs (the common case adds one to both count and npcs). Everything
// that may change those either clears kvalid (Go, which runs only when
// kvalid is cleared) or takes it back to 1 (hook_write, storing into a key
// word or code) until hook_code_slow comes here again.
static inline void fast_mode(sfs_state *st) {
	if (st->kvalid == 1 && st->observe == SFS_OBSERVE_RECORD && st->merge && st->track == SFS_TRACK_LOG &&
	    st->nlive == 0 && !st->kcheck && st->nbuf > 0 && !st->kdirty && st->ncodew == st->wcode &&
	    st->npcs < st->cappcs && st->count < st->limit) {
		uint64_t room = st->count + (st->cappcs - st->npcs);
		st->fast_end = room < st->limit ? room : st->limit;
		st->kvalid = SFS_KVALID_FAST;
	}
}

// hook_code runs before every instruction. Most instructions of a run in
// merge mode only join it: the previous one, the last of the open run,
// left sp, fp and the link register alone, so they are still the run's
// (kv, which it had, are msp, mfp and mra), and this one lies in the run's
// interval, as try_merge would have it (a keeping instruction is no call,
// return or branch to a register). That is done here, in a small function
// (it saves two registers), when the engine is in the mode that allows it
// (SFS_KVALID_FAST) and the previous instruction's page of keep flags is
// at hand; all else in hook_code_slow.
static void hook_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	sfs_state *st = user;
	uint64_t prev = st->last_pc;
	struct sfs_page *lp = st->keep.last;
	if (__builtin_expect(st->kvalid == SFS_KVALID_FAST && st->count < st->fast_end &&
	                         addr - st->run_lo < st->run_hi - st->run_lo &&
	                         lp && lp->page == (prev >> 12) + 1 &&
	                         (((uint8_t *)lp->ent)[prev & 4095] & 3) == 1,
	                     1)) {
		st->count++;
		st->last_pc = addr;
		st->last_size = size;
		st->last_at = st->count;
		st->kkept++;
		add_member(st, &st->buf[st->nbuf - 1], addr, size, 0);
		return;
	}
	hook_code_slow(uc, addr, size, st);
}

static __attribute__((noinline)) void hook_code_slow(uc_engine *uc, uint64_t addr, uint32_t size, sfs_state *st) {
	if (st->count >= st->limit) {
		// The instruction budget of this Start is spent: stop before
		// this one (instead of Unicorn's own count, a second code hook).
		uc_emu_stop(uc);
		return;
	}
	st->count++;
	uint64_t prev = st->last_pc;
	st->last_pc = addr;
	st->last_size = size;
	st->last_at = st->count;
	switch (st->observe) {
	case SFS_OBSERVE_RECORD: {
		uint64_t v[4] = {0, 0, 0, 0};
		read_frame_regs(st, uc, prev, v);
		int merging = st->merge && st->track == SFS_TRACK_LOG;
		if (merging) {
			if (st->npcs == st->cappcs)
				flush(st, 0); // every instruction recorded so far ran
			if (st->nbuf > 0 && try_merge(st, addr, size, v)) {
				st->wcode = st->ncodew;
				break;
			}
			if (addr - st->run_lo >= st->run_hi - st->run_lo)
				merge_interval(st, addr);
			st->rec_cls = st->run_cls;
		}
		sfs_rec *r = &st->buf[st->nbuf];
		r->pc = addr;
		r->size = size;
		r->sp = v[0];
		r->fp = v[1];
		r->ra = st->nregs > 3 ? v[2] : 0;
		r->n = 1;
		r->last_pc = addr;
		r->last_size = size;
		r->pcidx = st->npcs;
		r->crossed = 0;
		r->keyed = r->next = 0;
		r->extidx = st->next;
		r->key[0] = r->key[1] = r->key[2] = 0;
		r->last_sp = r->last_fp = r->last_ra = 0;
		if (merging) {
			st->pcs[st->npcs++] = addr;
			st->wcode = st->ncodew;
			st->msp = r->sp;
			st->mfp = r->fp;
			st->mra = r->ra;
			st->kdirty = 0;
			st->kw[0] = st->kw[1] = 0;
			if (st->extend && st->run_idx >= 0 && (st->rec_fcls = st->fcls[st->run_idx]) != 0) {
				uint64_t w[3] = {r->sp, r->fp, r->ra};
				r->keyed = frame_key(st, st->run_idx, w, r->key, st->kw, st->kwv);
			}
		}
		if (++st->nbuf == st->cap || (st->nlive > 0 && in_live(st, addr)))
			flush(st, 1);
		break;
	}
	}
	fast_mode(st);
	// The next instruction's common case needs this one's page of keep
	// flags at hand (keep.last), but the lookups above were of the
	// previous instruction's: after a call, a return or a jump to another
	// page, the callee's second instruction would come here too.
	if (st->kvalid == SFS_KVALID_FAST && (!st->keep.last || st->keep.last->page != (addr >> 12) + 1))
		page_entries(&st->keep, addr, 1, 0);
}

// find_region returns the host-backed region holding addr, or NULL.
static sfs_region *find_region(sfs_state *st, uint64_t addr) {
	if (st->lastregion < st->nregions) {
		sfs_region *r = &st->regions[st->lastregion];
		if (addr - r->addr < r->size)
			return r;
	}
	if (st->prevregion < st->nregions) {
		sfs_region *r = &st->regions[st->prevregion];
		if (addr - r->addr < r->size) {
			int32_t t = st->lastregion;
			st->lastregion = st->prevregion;
			st->prevregion = t;
			return r;
		}
	}
	int lo = 0, hi = st->nregions;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (addr >= st->regions[mid].addr + st->regions[mid].size)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->nregions && addr >= st->regions[lo].addr) {
		st->prevregion = st->lastregion;
		st->lastregion = lo;
		return &st->regions[lo];
	}
	return NULL;
}

// grow makes room for n more elements of size sz in *buf (capacity *cap).
static int grow(void **buf, uint64_t *cap, uint64_t used, uint64_t n, size_t sz) {
	if (used + n <= *cap)
		return 1;
	uint64_t c = *cap ? *cap : 1024;
	while (c < used + n)
		c *= 2;
	void *b = realloc(*buf, c * sz);
	if (!b)
		return 0;
	*buf = b;
	*cap = c;
	return 1;
}

// note_span adds a store to [dlo, dhi), where memory changed since Go last
// looked.
static inline void note_span(sfs_state *st, uint64_t addr, int size) {
	if (st->dhi == 0 || addr < st->dlo)
		st->dlo = addr;
	if (addr + (uint64_t)size > st->dhi)
		st->dhi = addr + (uint64_t)size;
}

// hook_write runs before every guest store (history mode) and saves the
// bytes it is about to overwrite.
static void hook_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	sfs_state *st = user;
	uint32_t code = st->ncode > 0 && in_ranges(st->code, st->ncode, addr, addr + size);
	if (code) {
		sfs_cg_tick(st); // Unicorn drops the translations of code stored into
		if (st->nbuf == 0 || st->track != SFS_TRACK_LOG) {
			if (st->chi == 0 || addr < st->clo)
				st->clo = addr;
			if (addr + size > st->chi)
				st->chi = addr + size;
		}
	}
	if (st->track != SFS_TRACK_LOG) {
		// One instruction at a time (SFS_TRACK_CODE): say where memory
		// changed, for the checker's watch (Engine.Touched).
		note_span(st, addr, size);
		return;
	}
	if (st->nbuf > 0 && (st->kw[0] | st->kw[1])) {
		uint64_t end = addr + (uint64_t)size;
		for (int i = 0; i < 2; i++)
			if (st->kw[i] && addr < st->kw[i] + 8 && st->kw[i] < end) {
				st->kdirty = 1;
				if (st->kvalid == SFS_KVALID_FAST)
					st->kvalid = 1; // the next instruction goes to try_merge
			}
	}
	if (st->nbuf == 0) {
		// The storing instruction was passed to Go already: only say
		// where memory changed.
		note_span(st, addr, size);
		return;
	}
	while (size > 0) {
		sfs_region *r = find_region(st, addr);
		if (!r)
			return; // the store faults; nothing changes
		uint64_t off = addr - r->addr;
		uint32_t n = (uint64_t)size <= r->size - off ? (uint32_t)size : (uint32_t)(r->size - off);
		uint64_t capw = st->capwlog;
		if (!grow((void **)&st->wlog, &capw, st->nwlog, 1, sizeof(sfs_write)) ||
		    !grow((void **)&st->wbytes, &st->capwbytes, st->nwbytes, n, 1)) {
			st->track = -1; // out of memory: Go reports it
			return;
		}
		st->capwlog = (uint32_t)capw;
		sfs_write *w = &st->wlog[st->nwlog++];
		w->addr = addr;
		w->host = r->host + off;
		w->off = st->nwbytes;
		w->size = n;
		w->rec = st->nbuf - 1;
		w->member = st->buf[st->nbuf - 1].n - 1;
		w->code = code;
		st->ncodew += code;
		if (code && st->kvalid == SFS_KVALID_FAST)
			st->kvalid = 1; // the next instruction ends the run (try_merge)
		memcpy(st->wbytes + st->nwbytes, w->host, n);
		st->nwbytes += n;
		addr += n;
		size -= (int)n;
	}
}

uc_err sfs_track_writes(sfs_state *st, int track) {
	if (track != SFS_TRACK_NONE && !st->write_hook) {
		uc_err err = uc_hook_add(st->uc, &st->write_hook, UC_HOOK_MEM_WRITE, hook_write, st, 1, 0);
		if (err != UC_ERR_OK)
			return err;
	}
	if (track == SFS_TRACK_NONE && st->write_hook) {
		uc_err err = uc_hook_del(st->uc, st->write_hook);
		st->write_hook = 0;
		if (err != UC_ERR_OK)
			return err;
	}
	if (track != SFS_TRACK_LOG) {
		st->nwlog = 0;
		st->ncodew = 0;
		st->nwbytes = 0;
	}
	if (st->track >= 0)
		st->track = track;
	return UC_ERR_OK;
}

uc_err sfs_flush_tb(uc_engine *uc) { return uc_ctl_flush_tb(uc); }

uc_err sfs_remove_cache(uc_engine *uc, uint64_t begin, uint64_t end) {
	return uc_ctl_remove_cache(uc, begin, end);
}

void sfs_free_history(sfs_state *st) {
	free(st->bounds);
	free(st->cls);
	free(st->icache);
	sfs_keep_forget(st);
	free(st->kq);
	st->kq = NULL;
	st->capkq = 0;
	free(st->pcs);
	free(st->recipes);
	free(st->fcls);
	free(st->ext);
	st->recipes = NULL;
	st->fcls = NULL;
	st->ext = NULL;
	st->extend = 0;
	st->next = st->capext = 0;
	st->bounds = NULL;
	st->cls = NULL;
	st->icache = NULL;
	st->pcs = NULL;
	st->nbounds = 0;
	st->npcs = st->cappcs = 0;
	st->merge = 0;
	free(st->wlog);
	free(st->wbytes);
	free(st->regions);
	free(st->live);
	free(st->code);
	st->code = NULL;
	st->wlog = NULL;
	st->wbytes = NULL;
	st->regions = NULL;
	st->live = NULL;
	st->nwlog = st->capwlog = 0;
	st->nwbytes = st->capwbytes = 0;
	st->nregions = st->nlive = st->ncode = 0;
}

static void hook_syscall(uc_engine *uc, void *user) {
	sfs_state *st = user;
	if (st->nbuf > 0)
		flush(st, 0);
	sfsGoSyscall(st->slot);
	st->kvalid = 0;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
	sfs_state *st = user;
	if (st->nbuf > 0)
		flush(st, 0);
	sfsGoInterrupt(st->slot, intno);
	st->kvalid = 0;
	if (!st->arm64)
		sfs_clear_exception(st);
}

// hook_in and hook_out see x86 in and out instructions, which Unicorn
// (running at CPL 0) would otherwise let through.
static uint32_t hook_in(uc_engine *uc, uint32_t port, int size, void *user) {
	sfs_state *st = user;
	if (st->nbuf > 0)
		flush(st, 0);
	sfsGoPortIO(st->slot);
	st->kvalid = 0;
	return 0;
}

static void hook_out(uc_engine *uc, uint32_t port, int size, uint32_t value, void *user) {
	sfs_state *st = user;
	if (st->nbuf > 0)
		flush(st, 0);
	sfsGoPortIO(st->slot);
	st->kvalid = 0;
}

static bool hook_mem_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	sfs_state *st = user;
	st->fault_type = type;
	st->fault_addr = addr;
	st->fault_size = size;
	st->fault_value = value;
	uint64_t pc = 0;
	uc_reg_read(uc, st->regs[0], &pc);
	st->fault_pc = pc;
	return false; // stop with UC_ERR_*_UNMAPPED / _PROT
}

uc_err sfs_hooks_install(sfs_state *st, int arch) {
	uc_err err = uc_hook_add(st->uc, &st->code_hook, UC_HOOK_CODE, hook_code, st, 1, 0);
	if (err != UC_ERR_OK)
		return err;
	if (arch == UC_ARCH_X86) {
		err = uc_hook_add(st->uc, &st->sys_hook, UC_HOOK_INSN, hook_syscall, st, 1, 0, UC_X86_INS_SYSCALL);
		if (err == UC_ERR_OK)
			err = uc_hook_add(st->uc, &st->in_hook, UC_HOOK_INSN, hook_in, st, 1, 0, UC_X86_INS_IN);
		if (err == UC_ERR_OK)
			err = uc_hook_add(st->uc, &st->out_hook, UC_HOOK_INSN, hook_out, st, 1, 0, UC_X86_INS_OUT);
		// CPU exceptions (#DE, int3, int N, #UD) by vector, instead of
		// UC_ERR_EXCEPTION without one.
		if (err == UC_ERR_OK)
			err = uc_hook_add(st->uc, &st->intr_hook, UC_HOOK_INTR, hook_intr, st, 1, 0);
	} else
		err = uc_hook_add(st->uc, &st->sys_hook, UC_HOOK_INTR, hook_intr, st, 1, 0);
	if (err != UC_ERR_OK)
		return err;
	return uc_hook_add(st->uc, &st->mem_hook, UC_HOOK_MEM_INVALID, hook_mem_invalid, st, 1, 0);
}

uc_err sfs_reg_read_batch(uc_engine *uc, int *ids, uint64_t *vals, int n) {
	void *p[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		p[i] = &vals[i];
	return uc_reg_read_batch(uc, ids, p, n);
}

uc_err sfs_context_reg_read_batch(uc_context *ctx, int *ids, uint64_t *vals, int n) {
	void *p[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		p[i] = &vals[i];
	return uc_context_reg_read_batch(ctx, ids, p, n);
}

uc_err sfs_reg_write_batch(uc_engine *uc, int *ids, uint64_t *vals, int n) {
	void *p[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		p[i] = &vals[i];
	return uc_reg_write_batch(uc, ids, (void *const *)p, n);
}

uc_err sfs_flush_tlb(uc_engine *uc) { return uc_ctl_flush_tlb(uc); }

uc_err sfs_set_cpu_model(uc_engine *uc, int model) {
	return uc_ctl_set_cpu_model(uc, model);
}

uc_err sfs_set_tcg_buffer(uc_engine *uc, uint32_t size) {
	return uc_ctl_set_tcg_buffer_size(uc, size);
}

uc_err sfs_get_tcg_buffer(uc_engine *uc, uint32_t *size) {
	return uc_ctl_get_tcg_buffer_size(uc, size);
}

// Unicorn writes its translations into its buffer from the start on, and
// from the start again once all are dropped (Engine.flushCode gives the
// pages back then): whether the page at cg_probe is in memory says
// whether the buffer is filled that far.
int sfs_cg_full(sfs_state *st) {
	unsigned char v = 0;
	return st->cg_probe && mincore(st->cg_probe, 1, &v) == 0 && (v & 1);
}

void sfs_cg_watch(sfs_state *st, uintptr_t probe) { st->cg_probe = (uint8_t *)probe; }

void sfs_cg_tick(sfs_state *st) {
	if (!st->cg_probe || st->cg_want || (++st->cg_ticks & 15) != 0 || !sfs_cg_full(st))
		return;
	st->cg_want = 1;
	st->limit = st->count;
	if (st->kvalid == SFS_KVALID_FAST)
		st->kvalid = 1; // hook_code's common case would not look at limit
}

uc_err sfs_arm64_sysreg(uc_engine *uc, int write, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t *val) {
	uc_arm64_cp_reg r = {.crn = crn, .crm = crm, .op0 = op0, .op1 = op1, .op2 = op2, .val = *val};
	uc_err err = write ? uc_reg_write(uc, UC_ARM64_REG_CP_REG, &r) : uc_reg_read(uc, UC_ARM64_REG_CP_REG, &r);
	*val = r.val;
	return err;
}

uc_err sfs_code_hook_del(sfs_state *st) {
	if (!st->code_hook)
		return UC_ERR_OK;
	uc_err err = uc_hook_del(st->uc, st->code_hook);
	st->code_hook = 0;
	return err;
}

// ---- Block counting ----

// guest_bytes copies guest [addr, addr+size) into buf through the region
// table; 0 if some byte is not host-backed.
static int guest_bytes(sfs_state *st, uint64_t addr, uint8_t *buf, uint32_t size) {
	while (size > 0) {
		sfs_region *r = find_region(st, addr);
		if (!r)
			return 0;
		uint64_t off = addr - r->addr;
		uint32_t n = (uint64_t)size <= r->size - off ? size : (uint32_t)(r->size - off);
		memcpy(buf, r->host + off, n);
		buf += n;
		addr += n;
		size -= n;
	}
	return 1;
}

static uint32_t bhash(uint64_t addr, uint32_t size, uint32_t mask) {
	uint64_t h = (addr ^ ((uint64_t)size << 48)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & mask;
}

void sfs_blocks_forget(sfs_state *st) {
	for (uint32_t i = 0; i < st->bcap; i++)
		free(st->btab[i].bytes);
	free(st->btab);
	st->btab = NULL;
	st->bcap = st->bused = 0;
	pages_free(&st->blockpages);
	free(st->dcache);
	st->dcache = NULL;
}

// bput remembers block (addr, size) with n instructions; bytes (may be
// NULL) becomes the table's.
static void bput(sfs_state *st, uint64_t addr, uint32_t size, uint32_t n, uint8_t *bytes) {
	if (2 * (st->bused + 1) > st->bcap) {
		uint32_t cap = st->bcap ? 2 * st->bcap : 1 << 14;
		struct sfs_block *t = calloc(cap, sizeof *t);
		if (!t) {
			free(bytes);
			return; // not remembered: asked again next time
		}
		for (uint32_t i = 0; i < st->bcap; i++) {
			struct sfs_block *b = &st->btab[i];
			if (b->size == 0)
				continue;
			uint32_t j = bhash(b->addr, b->size, cap - 1);
			while (t[j].size != 0)
				j = (j + 1) & (cap - 1);
			t[j] = *b;
		}
		free(st->btab);
		st->btab = t;
		st->bcap = cap;
	}
	uint32_t j = bhash(addr, size, st->bcap - 1);
	while (st->btab[j].size != 0) {
		struct sfs_block *b = &st->btab[j];
		if (b->addr == addr && b->size == size) { // code changed: replace
			free(b->bytes);
			b->n = n;
			b->bytes = bytes;
			return;
		}
		j = (j + 1) & (st->bcap - 1);
	}
	st->btab[j] = (struct sfs_block){.addr = addr, .size = size, .n = n, .bytes = bytes};
	st->bused++;
}

// wx_block_insns is block_insns for a block in writable and executable
// memory: its bytes are compared with those it was counted with.
//
// A block seen for the first time, or whose code changed since it was
// last counted, is counted anew and noted (rewritten), for
// hook_block_slow: its translation may be older than its bytes (the
// guest rewrote it in place, or its record was forgotten while the
// translation stayed). One whose bytes cannot be kept is not (0: it runs
// per instruction).
static __attribute__((noinline)) uint32_t wx_block_insns(sfs_state *st, uint64_t addr, uint32_t size) {
	if (st->bcap > 0) {
		uint32_t j = bhash(addr, size, st->bcap - 1);
		for (;;) {
			struct sfs_block *b = &st->btab[j];
			if (b->size == 0)
				break;
			if (b->addr == addr && b->size == size) {
				uint8_t buf[4096];
				if (b->bytes && size <= sizeof buf && guest_bytes(st, addr, buf, size) && memcmp(buf, b->bytes, size) == 0)
					return b->n;
				break; // the code changed
			}
			j = (j + 1) & (st->bcap - 1);
		}
	}
	uint32_t n = st->arm64 ? size / 4 : sfsGoBlock(st->slot, addr, size);
	uint8_t *bytes = size <= 4096 ? malloc(size) : NULL;
	if (!bytes || !guest_bytes(st, addr, bytes, size)) {
		free(bytes);
		return 0; // cannot be compared later: run it per instruction
	}
	bput(st, addr, size, n, bytes);
	st->rewritten++;
	return n;
}

// dslot is the direct-mapped cache's entry for a block at addr: x86-64
// blocks start at any byte, and the page bits spread neighbouring pages.
static inline uint32_t dslot(uint64_t addr) { return (uint32_t)(addr ^ addr >> 13) & (SFS_DCACHE - 1); }

// new_block_insns counts the instructions of a block of read-only code
// seen for the first time (or with another size).
static __attribute__((noinline)) uint32_t new_block_insns(sfs_state *st, uint64_t addr, uint32_t size) {
	uint32_t n = sfsGoBlock(st->slot, addr, size);
	uint32_t *ent = (uint32_t *)page_entries(&st->blockpages, addr, sizeof(uint32_t), 1);
	if (ent && size < (1u << 20) && n < 4096)
		ent[addr & 4095] = size << 12 | n;
	return n;
}

// seen_block_insns is block_insns past the direct-mapped cache, which it
// fills (entry d).
static __attribute__((noinline)) uint32_t seen_block_insns(sfs_state *st, uint64_t addr, uint32_t size, struct sfs_dent *d) {
	uint32_t *ent = (uint32_t *)page_entries(&st->blockpages, addr, sizeof(uint32_t), 0);
	uint32_t v = ent ? ent[addr & 4095] : 0;
	uint32_t n;
	if (v != 0 && v >> 12 == size)
		n = v & 4095;
	else
		n = new_block_insns(st, addr, size);
	if (!st->dcache) {
		st->dcache = calloc(SFS_DCACHE, sizeof *st->dcache);
		if (st->dcache)
			d = &st->dcache[dslot(addr)];
	}
	if (d && size < (1u << 20) && n < 4096) {
		d->addr = addr;
		d->v = size << 12 | n;
	}
	return n;
}

// block_insns returns the instruction count of the block (addr, size), 0
// if it must run per instruction.
static inline uint32_t block_insns(sfs_state *st, uint64_t addr, uint32_t size) {
	if (st->ncode > 0 && in_ranges(st->code, st->ncode, addr, addr + size))
		return wx_block_insns(st, addr, size);
	if (st->arm64)
		return size / 4;
	struct sfs_dent *d = NULL;
	if (st->dcache) {
		d = &st->dcache[dslot(addr)];
		if (d->addr == addr && d->v >> 12 == size)
			return d->v & 4095;
	}
	return seen_block_insns(st, addr, size, d);
}

// sfs_state_new returns a zeroed state, 64-aligned (NULL: no memory).
sfs_state *sfs_state_new(void) {
	size_t size = (sizeof(sfs_state) + 63) & ~(size_t)63;
	sfs_state *st = aligned_alloc(64, size);
	if (st)
		memset(st, 0, size);
	return st;
}

// block_counted notes that the block (addr, size) starts, its instructions
// bringing the count to count.
static inline void block_counted(sfs_state *st, uint64_t addr, uint32_t size, uint64_t count) {
	st->blk_addr = addr;
	st->blk_size = size;
	st->count = count;
}

// stop_before stops the engine before the block (addr, size) of n
// instructions (0: not known) runs.
static void stop_before(uc_engine *uc, sfs_state *st, uint64_t addr, uint32_t size, uint32_t n) {
	st->stopping = 1;
	st->stopped_before = 1;
	st->stop_addr = addr;
	st->stop_size = size;
	st->stop_n = n;
	uc_emu_stop(uc);
}

// hook_block_slow is the block hook but for its common case.
//
// A block of writable code seen for the first time or whose bytes changed
// since it was last seen (wx_block_insns) stops the engine before it,
// with stop_rewritten set, in a range run per instruction too: Unicorn
// 2.1.1 without a memory hook does not always drop the translation of
// code the guest rewrote in place (a JIT's), and would run the old code;
// Go drops the block's translations and starts there again
// (Engine.Start), and the block, now known, runs from its new
// translation.
static __attribute__((noinline)) void hook_block_slow(uc_engine *uc, uint64_t addr, uint32_t size, sfs_state *st) {
	if (st->stopping)
		return;
	int wx = st->ncode > 0 && in_ranges(st->code, st->ncode, addr, addr + size);
	uint32_t n = 0;
	if (wx) {
		uint64_t seen = st->rewritten;
		n = wx_block_insns(st, addr, size);
		if (st->rewritten != seen) {
			st->stop_rewritten = 1;
			stop_before(uc, st, addr, size, n);
			return;
		}
	}
	if (st->slow_hi != 0) {
		if (addr >= st->slow_lo && addr + size <= st->slow_hi) {
			st->cur_slow = 1; // its code hooks count
			return;
		}
		st->cur_slow = 0;
	}
	if (!wx)
		n = block_insns(st, addr, size);
	st->uncounted += n == 0;
	if (n == 0 || st->count + n > st->limit) {
		stop_before(uc, st, addr, size, n);
		return;
	}
	block_counted(st, addr, size, st->count + n);
}

// hook_block_x86_64 and hook_block_aarch64 count a block's instructions as
// it starts. Their common case, a block of read-only code whose count is
// in the direct-mapped cache (on AArch64: any block) and that stays within
// the limit, touches only the state's first cache line and the cache
// entry, and saves no registers.
static void hook_block_x86_64(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	sfs_state *st = user;
	if (__builtin_expect((st->stopping | st->ncode) == 0 && st->slow_hi == 0 && st->dcache, 1)) {
		const struct sfs_dent *d = &st->dcache[dslot(addr)];
		uint32_t n = d->v & 4095;
		uint64_t c = st->count + n;
		if (__builtin_expect(d->addr == addr && d->v >> 12 == size && n != 0 && c <= st->limit, 1)) {
			block_counted(st, addr, size, c);
			return;
		}
	}
	hook_block_slow(uc, addr, size, st);
}

static void hook_block_aarch64(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	sfs_state *st = user;
	uint64_t c = st->count + size / 4;
	if (__builtin_expect((st->stopping | st->ncode) == 0 && st->slow_hi == 0 && size >= 4 && c <= st->limit, 1)) {
		block_counted(st, addr, size, c);
		return;
	}
	hook_block_slow(uc, addr, size, st);
}

// hook_slow counts the instructions of a block run per instruction, and
// stops before the one that would pass the limit.
static void hook_slow(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	sfs_state *st = user;
	if (!st->cur_slow || st->stopping)
		return;
	if (st->count >= st->limit) {
		st->stopping = 1;
		uc_emu_stop(uc);
		return;
	}
	st->count++;
	st->last_pc = addr;
	st->last_size = size;
	st->last_at = st->count;
}

uc_err sfs_slow_begin(sfs_state *st, uint64_t lo, uint64_t hi) {
	uc_err err = uc_hook_add(st->uc, &st->slow_hook, UC_HOOK_CODE, hook_slow, st, lo, hi - 1);
	if (err != UC_ERR_OK)
		return err;
	st->slow_lo = lo;
	st->slow_hi = hi;
	sfs_cg_tick(st);
	return uc_ctl_remove_cache(st->uc, lo, hi);
}

uc_err sfs_slow_end(sfs_state *st) {
	if (st->slow_hi == 0)
		return UC_ERR_OK;
	uint64_t lo = st->slow_lo, hi = st->slow_hi;
	st->slow_lo = st->slow_hi = 0;
	st->cur_slow = 0;
	uc_err err = uc_hook_del(st->uc, st->slow_hook);
	st->slow_hook = 0;
	if (err != UC_ERR_OK)
		return err;
	return uc_ctl_remove_cache(st->uc, lo, hi);
}

// hook_nothing is a store hook that does nothing: it only makes Unicorn
// send stores through the path that drops translations of rewritten code.
// Stores into code are counted for the translation buffer's watch.
static void hook_nothing(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	(void)uc, (void)type, (void)value;
	sfs_state *st = user;
	if (st->ncode > 0 && in_ranges(st->code, st->ncode, addr, addr + (uint64_t)size))
		sfs_cg_tick(st);
}

uc_err sfs_smc_hook(sfs_state *st, int on) {
	if (on && !st->smc_hook)
		return uc_hook_add(st->uc, &st->smc_hook, UC_HOOK_MEM_WRITE, hook_nothing, st, 1, 0);
	if (!on && st->smc_hook) {
		uc_err err = uc_hook_del(st->uc, st->smc_hook);
		st->smc_hook = 0;
		return err;
	}
	return UC_ERR_OK;
}

uc_err sfs_block_counting(sfs_state *st, int on) {
	uc_err err = UC_ERR_OK;
	if (on && !st->block_hook) {
		if (st->code_hook) {
			err = uc_hook_del(st->uc, st->code_hook);
			st->code_hook = 0;
		}
		if (err == UC_ERR_OK && !st->nocount)
			err = uc_hook_add(st->uc, &st->block_hook, UC_HOOK_BLOCK, st->arm64 ? hook_block_aarch64 : hook_block_x86_64, st, 1, 0);
	}
	if (!on && st->block_hook) {
		err = sfs_slow_end(st);
		if (err == UC_ERR_OK)
			err = uc_hook_del(st->uc, st->block_hook);
		st->block_hook = 0;
		if (err == UC_ERR_OK)
			err = uc_hook_add(st->uc, &st->code_hook, UC_HOOK_CODE, hook_code, st, 1, 0);
	}
	if (err != UC_ERR_OK)
		return err;
	st->blocks = on;
	st->last_at = st->count;
	return UC_ERR_OK;
}
