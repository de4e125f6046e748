//go:build cgo

package verify

import (
	"errors"
	"sort"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/unwind"
)

// Checker checks instruction after instruction, evaluating the unwinder
// only where its answer can change. Every instruction still gets the
// result a full unwind would give (TestCheckerEqualsCheck).
//
// Two facts make that possible. The unwind of the callers is a pure
// function of the topmost frame's results (its return address, CFA and
// caller FP) and of the memory words it reads. And the topmost frame's
// results are a pure function of its SFrame row, SP, FP, the link register
// and the words it reads. So the Checker keeps the last walk with every
// word it read and:
//
//   - reuses the whole result (CheckStack) while the PC stays within the
//     same row's range, SP, FP and the link register are the same, the
//     shadow stack has not changed and no word read has changed: most
//     instructions of a function body;
//   - otherwise unwinds the topmost frame and reuses the callers' frames
//     while its results and their words are the same, and the comparison
//     of those frames with the shadow stack while the shadow stack has not
//     changed either (only the topmost frame's row, Result.Top, differs).
//
// The callers' words are known unchanged without reading them again when
// Watch (the emulator in history mode, which sees every store) says
// nothing stored there; otherwise they are re-read, which costs no cgo
// call. The topmost frame's few words are always re-read.
type Checker struct {
	u       *unwind.Unwinder
	covered func(pc uint64) bool // the unwinder has a row for pc
	mem     unwind.Memory
	regs    func(sframe.Reg) (uint64, bool)

	// Watch, when set, tells whether memory under the last walk's reads
	// may have changed, and where, so that only the words stored to are
	// read again (emu.Engine in history mode sees every store).
	Watch Watcher

	// The last walk: the callers' frames (tail), the words frame 0 and
	// the tail read, and what they were computed from.
	valid   bool
	key     [3]uint64      // caller pc, sp, fp
	reads   []memRead      // tail's, frame by frame
	spans   [][2]int       // tail[k] read reads[spans[k][0]:spans[k][1]]
	bounds  [][2]uint64    // bounds[k]: [lo, hi) of the words tail[0..k] read
	sigs    []int          // sigs[k]: the signal frames among tail[0..k]
	reads0  []memRead      // frame 0's
	tail    []unwind.Frame // the callers of frame 0, outermost first
	tailErr error
	// monoN: reads[:monoN] have non-increasing addresses (a stack
	// without signal frames on another stack, read outermost frame
	// first), so the words a span of memory holds are found by binary
	// search: a deep recursion costs no pass over every frame's words.
	monoN int
	// Scratch for the new frames of the next tail (innermost first).
	newReads []memRead
	newSpans [][2]int
	newTail  []unwind.Frame
	frames   []unwind.Frame  // a whole walk (frame 0 with an error, outermost or a signal frame)
	it       unwind.Iterator // walks frame 0, which it keeps
	tit      unwind.Iterator // walks the tail
	f0       *unwind.Frame   // the last check's frame 0 (nil: none): c.it's or c.frames[0]
	// Tail frames [0, okN) matched shadow frames [0, okN), which had the
	// Insn values okIDs.
	okN, okOff int
	// unsure: the shadow stack being compared has unsure frames
	// (shadow.Frame.Unsure): compare takes the plain path.
	unsure bool
	gen    uint64        // the unwinder's Generation the memos belong to
	stack  *shadow.Stack // the shadow stack (thread) the memos belong to
	okIDs  []uint64
	rec0   *recorder // records into reads0
	rec    *recorder // records into reads

	// The last result CheckStack returned, valid for PCs in [lo, hi) with
	// the same regs and shadow stack version when lastOK. When cmpOK, it
	// is also the result of the last comparison beyond frame 0 (Depth >=
	// 1), computed with shadow stack version cmpVersion and the current
	// tail: it holds for any frame 0 with the same key (but for Top).
	res        Result
	lastOK     bool
	cmpOK      bool
	cmpVersion uint64
	lo, hi     uint64
	sp, fp, ra uint64
	version    uint64

	// What CheckStack found of the rows at recently checked PCs
	// (direct-mapped; cleared with the unwinder's generation).
	rows []rowInfo

	// Checks counts the calls of CheckStack.
	Checks uint64
	// Reused counts whole results reused, TailReused the callers' frames
	// reused whole, Walked the tails unwound (at least in part), Steps the
	// caller frames unwound.
	Reused, TailReused, Walked, Steps uint64
	// Reread counts the callers' words read again to see whether a
	// store changed them.
	Reread uint64
	// KeyMisses counts runs whose key (KeyHolds) the engine computed
	// otherwise than the unwinder: a bug of the recipes, never expected.
	KeyMisses uint64
	// Same reports whether the last CheckStack reused the result before it
	// whole: the same kind, frame and rows, with the PC of the same FRE row
	// (a depth-0 frame has the new PC).
	Same bool
}

// rowInfo is what CheckStack knows of the row at pc, which has one (ok):
// whether a result there is reusable over [lo, hi) (its rules use only SP,
// FP and the link register, and the section knows the row's extent).
type rowInfo struct {
	pc           uint64
	lo, hi       uint64
	ok, reusable bool
}

// rowMemoSize is the number of PCs a Checker remembers rows of.
const rowMemoSize = 2048

// Watcher watches memory for stores (emu.Engine implements it).
type Watcher interface {
	// Watch arms the watch on [lo, hi).
	Watch(lo, hi uint64)
	// Touched reports whether memory under the watch may have changed
	// since Watch.
	Touched() bool
	// TouchedSpan returns where: [lo, hi) (lo >= hi: nowhere), all of
	// memory when it cannot tell.
	TouchedSpan() (lo, hi uint64)
}

type memRead struct {
	addr, val uint64
	ok        bool
}

// recorder reads memory and remembers every word read.
type recorder struct {
	mem   unwind.Memory
	eng   *emu.Engine // mem's, when it is a Memory: one dynamic call less per read
	reads *[]memRead
}

func newRecorder(mem unwind.Memory, reads *[]memRead) *recorder {
	r := &recorder{mem: mem, reads: reads}
	if m, ok := mem.(Memory); ok {
		r.eng = m.E
	}
	r.reset()
	return r
}

// reset empties the list of words read.
func (r *recorder) reset() { *r.reads = (*r.reads)[:0] }

func (r *recorder) ReadUint64(addr uint64) (v uint64, err error) {
	if r.eng != nil {
		v, err = r.eng.Read64(addr)
	} else {
		v, err = r.mem.ReadUint64(addr)
	}
	*r.reads = append(*r.reads, memRead{addr, v, err == nil})
	return v, err
}

// NewChecker returns a Checker over u, reading memory through mem and the
// topmost frame's other registers through regs (may be nil).
func NewChecker(u *unwind.Unwinder, mem unwind.Memory, regs func(sframe.Reg) (uint64, bool)) *Checker {
	c := &Checker{u: u, mem: mem, regs: regs, covered: covers(u), rows: make([]rowInfo, rowMemoSize)}
	c.rec0 = newRecorder(mem, &c.reads0)
	c.rec = newRecorder(mem, &c.newReads)
	return c
}

// CheckStack checks the state r against the shadow stack st, reusing the
// previous result where nothing it depends on changed.
//
// Each guest thread has its own shadow stack: when st is another stack
// than the previous call's (another thread runs), nothing of the previous
// walks is reused.
func (c *Checker) CheckStack(r shadow.Record, st *shadow.Stack) Result { return *c.checkStack(&r, st) }

// checkStack is CheckStack without copying the result (a few hundred
// bytes) out: it returns the Checker's own, valid until the next check.
func (c *Checker) checkStack(r *shadow.Record, st *shadow.Stack) *Result {
	c.Checks++
	c.sync()
	c.Same = false
	if st != c.stack {
		c.valid, c.lastOK, c.cmpOK, c.okN, c.stack = false, false, false, 0, st
	}
	res := &c.res
	if c.lastOK && r.PC-c.lo < c.hi-c.lo && r.SP == c.sp && r.FP == c.fp && r.RA == c.ra && st.Version() == c.version {
		// Frame 0's few words are read again (the watch covers only the
		// tail's: see watch), the tail's when the watch saw a store.
		touched := c.Watch == nil || c.Watch.Touched()
		if c.unchanged(c.reads0) && c.tailUnchanged(len(c.reads)) {
			if touched && c.Watch != nil {
				c.watch()
			}
			c.Reused++
			c.Same = true
			if res.Depth == 0 {
				res.Frame.PC = r.PC
			}
			return res
		}
	}
	c.lastOK = false
	row := &c.rows[r.PC%rowMemoSize]
	if !row.ok || row.pc != r.PC {
		row = nil
	}
	if row == nil && c.u.LookupErr(r.PC) == unwind.ErrNoFDE {
		// No SFrame data for the PC (most of a static glibc program): the
		// result needs no walk, no shadow stack and no memory.
		c.cmpOK = false
		*res = Result{Kind: NoFDE}
		f := &res.Frame
		f.PC, f.SP, f.FP, f.Topmost, f.Err = r.PC, r.SP, r.FP, true, unwind.ErrNoFDE
		return res
	}
	c.unsure = st.Unsure() > 0
	c.check(r, st.Frames(), st.Version(), res)
	// Frame 0's error would name its PC: not reusable at another.
	if f := c.f0; f != nil && f.Err == nil && f.HasRow && f.Section != nil && !f.Signal {
		if row == nil {
			row = c.rowMemo(r.PC, f)
		}
		if row.reusable {
			c.lastOK = true
			c.lo, c.hi, c.sp, c.fp, c.ra, c.version = row.lo, row.hi, r.SP, r.FP, r.RA, st.Version()
		}
	}
	return res
}

// rowMemo returns pc's entry of c.rows, made from frame 0 f at pc (which
// has a row, not a signal frame's).
func (c *Checker) rowMemo(pc uint64, f *unwind.Frame) *rowInfo {
	row := &c.rows[pc%rowMemoSize]
	*row = rowInfo{pc: pc, ok: true}
	if plainRules(f) {
		row.lo, row.hi, row.reusable = c.u.RowExtent(pc)
	}
	return row
}

// Reusable reports whether the last CheckStack's result holds for any PC
// of the same FRE row with the same registers, shadow stack and memory
// (the PC of a depth-0 frame aside): the next CheckStack there would
// reuse it whole.
func (c *Checker) Reusable() bool { return c.lastOK }

// Reads reports whether [addr, addr+size) overlaps a word the last walk
// read (frame 0's and its callers'): a store there may change the result
// Reusable speaks of.
func (c *Checker) Reads(addr, size uint64) bool {
	// Frame 0's few words first; the callers' only within their span (a
	// store into frame 0's own locals lies below it).
	return hitReads(c.reads0, addr, size) || c.TailReads(addr, size)
}

// TailReads reports whether [addr, addr+size) overlaps a word the last
// walk read for the callers of frame 0.
func (c *Checker) TailReads(addr, size uint64) bool {
	n := len(c.bounds)
	if !c.valid || n == 0 || addr >= c.bounds[n-1][1] || satAdd(addr, size) <= c.bounds[n-1][0] {
		return false
	}
	if len(c.reads) <= c.monoN {
		i, j := c.readsIn(len(c.reads), addr, satAdd(addr, size))
		return i < j
	}
	return hitReads(c.reads, addr, size)
}

// readsIn returns the range [i, j) of c.reads[:m], which must have
// non-increasing addresses (m <= monoN), of the words that overlap
// [lo, hi).
func (c *Checker) readsIn(m int, lo, hi uint64) (i, j int) {
	r := c.reads[:m]
	i = sort.Search(m, func(k int) bool { return r[k].addr < hi })
	j = sort.Search(m, func(k int) bool { return satAdd(r[k].addr, 8) <= lo })
	return i, max(i, j)
}

// hitReads reports whether [addr, addr+size) overlaps a word of reads.
func hitReads(reads []memRead, addr, size uint64) bool {
	end := satAdd(addr, size)
	for _, rd := range reads {
		if rd.addr < end && addr < satAdd(rd.addr, 8) {
			return true
		}
	}
	return false
}

// KeyHolds reports whether the last check's result, res, holds for every
// instruction of a run with the same shadow stack st and no store into
// the words the callers' unwind read, where the engine found frame 0 to
// have the return address, CFA and caller FP key at each (emu.Engine.
// SetExtend) — but for the topmost row (Result.Top). It does when the
// check's frame 0 had that key, no error and a row (the unwinder's result
// is then a function of the key, the tail and the shadow stack alone)
// and frame 0 matched the shadow stack's top frame (Depth >= 1: a problem,
// if there is one, lies in a caller's frame, the same at each
// instruction). A key the Checker computed otherwise than the engine
// counts in KeyMisses.
func (c *Checker) KeyHolds(key *[3]uint64, res *Result, st *shadow.Stack) bool {
	if res.Kind == NoFDE || res.Depth < 1 || !c.hasKey(key) {
		return false
	}
	// Frame 0 matched the top frame, whose CFA is then the key's; the
	// engine had SP at or below it (below on x86-64) at every instruction,
	// so no instruction of the run left that frame (shadow.Stack.Follow).
	frames := st.Frames()
	n := len(frames)
	return n > 0 && frames[n-1].CFA == key[1] && !frames[n-1].SignalFrame
}

// KeyHoldsFrame0 is KeyHolds for a result whose frame 0 was wrong (a
// mismatch at depth 0, which the callers' frames cannot change): it holds
// at every instruction of the run, but for frame 0's PC and row, when the
// check's frame 0 had the key, no error and a row, and no instruction of
// the run left the shadow stack's top frame: the key's CFA is not above
// the top frame's (the engine kept SP at or below the key's CFA), or the
// run's highest SP, maxSP, is below both the top frame's CFA and the
// outermost's (the shadow stack leaves or parks frames only with SP at or
// above a CFA).
func (c *Checker) KeyHoldsFrame0(key *[3]uint64, res *Result, st *shadow.Stack, maxSP uint64) bool {
	if res.Depth != 0 || res.Kind != MismatchCFA && res.Kind != MismatchRA && res.Kind != MismatchFP || !c.hasKey(key) {
		return false
	}
	frames := st.Frames()
	n := len(frames)
	if n == 0 || frames[n-1].SignalFrame {
		return false
	}
	top := frames[n-1].CFA
	return key[1] <= top || maxSP < top && maxSP < frames[0].CFA
}

// hasKey reports whether the last check's frame 0 had no error, a row,
// and the return address, CFA and caller FP key, which the engine
// computed; one it computed otherwise counts in KeyMisses.
func (c *Checker) hasKey(key *[3]uint64) bool {
	f := c.f0
	if f == nil || f.Err != nil || f.Signal || f.Outermost || !f.HasRow {
		return false
	}
	if f.RA != key[0] || f.CFA != key[1] || f.CallerFP != key[2] {
		c.KeyMisses++
		return false
	}
	return true
}

// satAdd is a+b, or the largest address if that overflows.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

// sync forgets everything computed before a section was added to the
// unwinder.
func (c *Checker) sync() {
	if g := c.u.Generation(); g != c.gen {
		c.valid, c.lastOK, c.cmpOK, c.okN, c.gen = false, false, false, 0, g
		clear(c.rows)
	}
}

// plainRules reports whether a frame's rules use no register beyond SP, FP
// and the link register (which CheckStack's key covers).
func plainRules(f *unwind.Frame) bool {
	sp, fp, _, _ := f.Section.Header.ABI.Regs()
	for _, r := range [...]sframe.Rule{f.Row.CFA, f.Row.RA, f.Row.FP} {
		if r.Kind == sframe.RuleExpr && r.Reg != sp && r.Reg != fp && r.Reg != sframe.RegCFA {
			return false
		}
	}
	return true
}

// Check unwinds from the state r and compares with the shadow frames
// (outermost first), reusing the callers' frames of the previous walk when
// the topmost frame's results and their words are the same.
func (c *Checker) Check(r shadow.Record, shadow []shadow.Frame) Result {
	var res Result
	c.unsure = unsureFrame(shadow) >= 0
	c.check(&r, shadow, 0, &res)
	return res
}

// check is Check into res. With a shadow stack's version (CheckStack; 0:
// unknown), res may be the Checker's own result (c.res) of the last
// comparison, which it then only updates where it can differ.
func (c *Checker) check(r *shadow.Record, shadow []shadow.Frame, version uint64, res *Result) {
	c.sync()
	// The memo of the last comparison (cmpOK) holds only for c.res: any
	// other result written there, or a comparison without a version,
	// ends it.
	memo := c.cmpOK && res == &c.res && version != 0 && version == c.cmpVersion
	c.cmpOK = false
	c.rec0.reset()
	it := &c.it
	it.Reset(c.u, unwind.Registers{PC: r.PC, SP: r.SP, FP: r.FP, LR: r.RA, Get: c.regs}, c.rec0)
	c.f0 = nil
	if !it.Next() {
		*res = compare(nil, it.Err(), shadow, c.covered)
		return
	}
	f0 := it.Current() // stays: the tail has an iterator of its own
	if f0.Err != nil || f0.Outermost || f0.Signal {
		// A signal trampoline's callers are unwound from its signal
		// context, which a tail walked from RA, CFA and FP cannot know:
		// the whole stack is walked (two instructions per delivery).
		c.frames = append(c.frames[:0], *f0)
		for it.Next() {
			c.frames = append(c.frames, *it.Current())
		}
		c.f0 = &c.frames[0]
		c.valid = false
		if c.Watch != nil {
			c.watch()
		}
		*res = compare(c.frames, it.Err(), shadow, c.covered)
		return
	}
	c.f0 = f0
	if n := len(shadow); n > 0 && !shadow[n-1].Unsure {
		if kind, w, g := frameMismatch(f0, &shadow[n-1]); kind != OK {
			// Frame 0 is wrong, which decides the result (as compare2
			// has it): its callers are not walked. The last tail stays,
			// with its key and its watch, for a later frame 0.
			*res = Result{Kind: kind, Frame: *f0, Want: w, Got: g}
			if f0.HasRow {
				res.Top[0], res.Top[1], res.TopSection = f0.Row.FDE, f0.Row.FRE, f0.Section
			}
			return
		}
	}
	key := [3]uint64{f0.RA, f0.CFA, f0.CallerFP}
	if c.valid && key == c.key && c.tailUnchanged(len(c.reads)) {
		c.TailReused++
	} else {
		c.walkTail(f0)
		c.key, c.valid = key, true
		c.Walked++
		memo = false
	}
	if c.Watch != nil {
		c.watch()
	}
	if memo {
		// The same tail, shadow stack and frame 0 results (the key) as
		// the last comparison, whose result is still in res, beyond frame
		// 0 (Depth >= 1): only frame 0's row can differ.
		res.Top[0], res.Top[1], res.TopSection = f0.Row.FDE, f0.Row.FRE, f0.Section
		c.cmpOK = true
		return
	}
	c.compare(f0, shadow, res)
	// A result beyond frame 0 depends on frame 0 only through the key and
	// its row (Top): a frame 0 here has no error, is not the outermost
	// and not a signal frame.
	if res == &c.res && version != 0 && res.Depth >= 1 {
		c.cmpOK, c.cmpVersion = true, version
	}
}

// walkTail unwinds the callers of frame 0, reusing the previous tail from
// the first frame on that has the same PC, SP and FP and whose frames read
// the same words: after a call the new tail is the old frame 0 plus the old
// tail, after a return the old tail less its first frame, so a deep stack
// costs a step or two instead of a walk. The tail is kept outermost first,
// so the reused part stays where it is.
func (c *Checker) walkTail(f0 *unwind.Frame) {
	c.newReads, c.newSpans, c.newTail = c.newReads[:0], c.newSpans[:0], c.newTail[:0]
	c.cmpOK = false
	it := &c.tit
	it.ResetCaller(c.u, f0.RA, f0.CFA, f0.CallerFP, c.rec)
	keep := 0 // old frames [0, keep) stay
	var err error
	// With a frame limit, the old frames are the walk's end only if it
	// ended within the limit (a cut depends on the depth it is cut at) and
	// still does at the new depth.
	limit := c.u.MaxFrames()
	oldCut := limit > 0 && errors.Is(c.tailErr, unwind.ErrMaxFrames)
	for {
		pc, sp, fp, depth, done := it.Position()
		if done {
			err = it.Err()
			break
		}
		ctx, intr := it.Interrupted()
		if q := c.oldFrame(pc, sp, fp, ctx, intr); q >= 0 && (limit == 0 || !oldCut && depth+q+1 <= limit) && c.prefixUnchanged(q) {
			keep, err = q+1, c.tailErr
			break
		}
		start := len(c.newReads)
		if !it.Next() {
			err = it.Err()
			break
		}
		c.Steps++
		c.newTail = append(c.newTail, *it.Current())
		// (Grown, then set element by element: a composite literal is
		// built on the stack and copied in a wide move that waits for
		// the narrow stores that built it.)
		c.newSpans = append(c.newSpans, [2]int{})
		ns := &c.newSpans[len(c.newSpans)-1]
		ns[0], ns[1] = start, len(c.newReads)
	}
	if !c.valid {
		keep = 0
	}
	nreads := 0
	if keep > 0 {
		nreads = c.spans[keep-1][1]
	}
	c.tail, c.spans, c.reads, c.bounds, c.sigs = c.tail[:keep], c.spans[:keep], c.reads[:nreads], c.bounds[:keep], c.sigs[:keep]
	c.monoN = min(c.monoN, nreads)
	c.okN = min(c.okN, keep)
	for k := len(c.newTail) - 1; k >= 0; k-- {
		start := len(c.reads)
		c.reads = append(c.reads, c.newReads[c.newSpans[k][0]:c.newSpans[k][1]]...)
		if c.monoN == start {
			for c.monoN < len(c.reads) && (c.monoN == 0 || c.reads[c.monoN].addr <= c.reads[c.monoN-1].addr) {
				c.monoN++
			}
		}
		c.spans = append(c.spans, [2]int{})
		sp := &c.spans[len(c.spans)-1]
		sp[0], sp[1] = start, len(c.reads)
		c.tail = append(c.tail, c.newTail[k])
		lo, hi := ^uint64(0), uint64(0)
		if n := len(c.bounds); n > 0 {
			lo, hi = c.bounds[n-1][0], c.bounds[n-1][1]
		}
		for _, rd := range c.reads[start:] {
			lo, hi = min(lo, rd.addr), max(hi, satAdd(rd.addr, 8))
		}
		c.bounds = append(c.bounds, [2]uint64{})
		b := &c.bounds[len(c.bounds)-1]
		b[0], b[1] = lo, hi
		c.sigs = append(c.sigs, c.sigsUpTo(len(c.sigs)-1)+b2i(c.newTail[k].Signal))
	}
	c.tailErr = err
}

// oldFrame returns the index of the previous tail's frame computed from
// pc, sp and fp (and, for a frame a signal interrupted, intr, the signal
// context ctx), or -1. The tail's SPs decrease from the outermost frame,
// but for signal frames, which may switch stacks: the search is then
// linear.
func (c *Checker) oldFrame(pc, sp, fp, ctx uint64, intr bool) int {
	if !c.valid {
		return -1
	}
	t := c.tail
	same := func(q int) bool {
		return t[q].SP == sp && t[q].PC == pc && t[q].FP == fp && t[q].Interrupted == intr && (!intr || t[q].Context == ctx)
	}
	if n := len(c.sigs); n > 0 && c.sigs[n-1] > 0 {
		for q := range t {
			if same(q) {
				return q
			}
		}
		return -1
	}
	q := sort.Search(len(t), func(k int) bool { return t[k].SP <= sp })
	if q < len(t) && same(q) {
		return q
	}
	return -1
}

// sigsUpTo returns the number of signal frames among tail[0..k] (0 for
// k < 0).
func (c *Checker) sigsUpTo(k int) int {
	if k < 0 {
		return 0
	}
	return c.sigs[k]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prefixUnchanged reports whether the words the previous tail's frames
// [0, q] read are unchanged.
func (c *Checker) prefixUnchanged(q int) bool { return c.tailUnchanged(c.spans[q][1]) }

// tailUnchanged reports whether the words c.reads[:m] still read the
// same: with a watch, those a store under it may have hit are read again
// (none when nothing was stored), without one all of them.
func (c *Checker) tailUnchanged(m int) bool {
	if c.Watch == nil {
		c.Reread += uint64(m)
		return c.unchanged(c.reads[:m])
	}
	if !c.Watch.Touched() {
		return true
	}
	lo, hi := c.Watch.TouchedSpan()
	if lo >= hi {
		return true
	}
	if m <= c.monoN {
		i, j := c.readsIn(m, lo, hi)
		c.Reread += uint64(j - i)
		return c.unchanged(c.reads[i:j])
	}
	for k := range c.reads[:m] {
		if rd := &c.reads[k]; rd.addr < hi && lo < satAdd(rd.addr, 8) {
			c.Reread++
			if !c.unchanged(c.reads[k : k+1]) {
				return false
			}
		}
	}
	return true
}

// compare compares frame 0 and the tail with the shadow stack. Tail frame
// i (outermost first) is compared with shadow frame i-o, where o is 1 when
// the unwind's outermost frame is the true outermost function (which has no
// shadow frame) and 0 when it is a frame without SFrame data below it. The
// frames found right before are not compared again while both sides are
// unchanged: a shadow frame is the same while the one at the top of the
// known-good part still has the Insn (the instruction count of its call) it
// had, since frames only come and go at the top.
func (c *Checker) compare(f0 *unwind.Frame, shadow []shadow.Frame, res *Result) {
	n, L := len(shadow), len(c.tail)
	// o is 1 when the unwind's outermost frame is the true outermost
	// function's (no shadow frame), 0 when the unwind reached the true
	// outermost frame, negative when it ended earlier at a frame without
	// SFrame data (a static glibc program's __libc_start_call_main).
	o := L + 1 - n
	if L == 0 || o > 1 || c.unsure {
		c.okN = 0
		*res = compare2(f0, c.tail, true, c.tailErr, shadow, c.covered)
		return
	}
	if o != c.okOff {
		c.okN, c.okOff = 0, o
	}
	*res = Result{}
	if f0.HasRow {
		res.Top[0], res.Top[1], res.TopSection = f0.Row.FDE, f0.Row.FRE, f0.Section
	}
	if _, done := judge(0, f0, shadow, c.covered); done {
		// Frame 0 ends the walk (cannot happen with a tail; kept exact).
		*res = compare2(f0, c.tail, true, c.tailErr, shadow, c.covered)
		return
	}
	// Frame 0 matches the shadow stack's top frame: check, the only
	// caller, compared them before walking the tail (here no frame is
	// unsure and there is a top frame).
	// Shrink the known-good part to what is still the same.
	if c.okN > o && c.okN > 0 && shadow[c.okN-1-o].Insn != c.okIDs[c.okN-1] {
		c.okN = sort.Search(c.okN, func(i int) bool { return i >= o && shadow[i-o].Insn != c.okIDs[i] })
	}
	checked := 1
	for i := L - 1; i >= c.okN; i-- {
		k := L - i
		f := &c.tail[i]
		if kind, done := judge(k, f, shadow, c.covered); done {
			if kind == OK && i == 0 {
				break
			}
			*res = compare2(f0, c.tail, true, c.tailErr, shadow, c.covered)
			return
		}
		if kind, w, g := frameMismatch(f, &shadow[i-o]); kind != OK {
			res.Kind, res.Depth, res.Frame, res.Want, res.Got, res.Checked = kind, k, *f, w, g, checked
			res.Signals = b2i(f0.Signal) + c.sigs[L-1] - c.sigs[i]
			return
		}
		checked++
	}
	// Every frame is right.
	if c.okN < L {
		c.okIDs = c.okIDs[:c.okN]
		for i := c.okN; i < L; i++ {
			id := uint64(0) // tail[0] when o is 1: no shadow frame
			if i >= o {
				id = shadow[i-o].Insn
			}
			c.okIDs = append(c.okIDs, id)
		}
		c.okN = L
	}
	res.Depth, res.Frame = L, c.tail[0]
	res.Signals = b2i(f0.Signal) + c.sigs[L-1]
	if kind, done := judge(L, &c.tail[0], shadow, c.covered); done {
		if kind != OK {
			*res = compare2(f0, c.tail, true, c.tailErr, shadow, c.covered)
			return
		}
		res.Checked = L
		res.Signals -= c.sigs[0]
	} else {
		res.Checked = L + 1
		if c.tailErr != nil {
			res.Kind, res.Err = walkKind(c.tailErr), c.tailErr
		}
	}
}

// watch arms the watcher over the words the tail read. Not frame 0's,
// which CheckStack reads again: they are one to three words, and the
// watch is one range, which would then also span frame 0's locals
// (AArch64 saves FP and LR at the bottom of the frame), whose every store
// would have the tail's words read again.
func (c *Checker) watch() {
	b := [2]uint64{^uint64(0), 0}
	if n := len(c.bounds); n > 0 {
		b = c.bounds[n-1]
	}
	if b[1] == 0 {
		b[0] = 0
	}
	c.Watch.Watch(b[0], b[1])
}

// unchanged reports whether every recorded word still reads the same.
func (c *Checker) unchanged(reads []memRead) bool {
	e := c.rec0.eng
	if e == nil {
		return unchanged(c.mem, reads)
	}
	for _, rd := range reads {
		v, err := e.Read64(rd.addr)
		if (err == nil) != rd.ok || v != rd.val {
			return false
		}
	}
	return true
}

// unchanged reports whether every recorded word still reads the same in
// mem.
func unchanged(mem unwind.Memory, reads []memRead) bool {
	for _, rd := range reads {
		v, err := mem.ReadUint64(rd.addr)
		if (err == nil) != rd.ok || v != rd.val {
			return false
		}
	}
	return true
}
