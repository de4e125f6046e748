package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// Unwinder unwinds with the SFrame sections of one program (an executable
// and, for dynamic programs, its shared objects: one section each).
type Unwinder struct {
	arch  *arch.Arch
	secs  []*sframe.Section
	cache []lookupEntry // nil: no cache (WithCache)
	gen   uint64        // Add and SetMaxFrames count
	max   int           // SetMaxFrames (0: no limit)
}

// lookupEntry is one PC's Lookup result in an Unwinder's cache, with the
// row's extent (RowExtent) once asked for.
type lookupEntry struct {
	pc    uint64
	valid bool
	ext   uint8 // extUnknown, extOK, extNone
	sec   *sframe.Section
	row   sframe.Row
	err   error
	lo    uint64 // the row's extent [lo, hi) when ext is extOK
	hi    uint64
}

// What a lookupEntry knows of its row's extent.
const (
	extUnknown = iota
	extOK
	extNone
)

// lookupCacheSize is the number of PCs a cache holds (direct-mapped).
const lookupCacheSize = 1 << 13

// New returns an unwinder for architecture a over secs, searched in order.
func New(a *arch.Arch, secs ...*sframe.Section) *Unwinder {
	return &Unwinder{arch: a, secs: secs}
}

// Sections returns the unwinder's SFrame sections.
func (u *Unwinder) Sections() []*sframe.Section { return u.secs }

// Add adds the section of an object loaded later (a shared library
// mapped by ld.so), searched after the others. It forgets cached lookups
// (a PC without data may have some now) and changes Generation.
func (u *Unwinder) Add(sec *sframe.Section) {
	u.secs = append(u.secs, sec)
	clear(u.cache)
	u.gen++
}

// Generation changes whenever a section is added or the frame limit
// changes: results computed before may differ now.
func (u *Unwinder) Generation() uint64 { return u.gen }

// Arch returns the unwinder's architecture.
func (u *Unwinder) Arch() *arch.Arch { return u.arch }

// WithCache returns an unwinder over the same sections that remembers the
// rows of the PCs it looked up last (a few thousand), which makes repeated
// walks over the same code several times faster. Unlike u, it is not safe
// for concurrent use.
func (u *Unwinder) WithCache() *Unwinder {
	return &Unwinder{arch: u.arch, secs: u.secs, cache: make([]lookupEntry, lookupCacheSize), gen: u.gen, max: u.max}
}

// SetMaxFrames cuts every walk after n frames (0, the default: no limit).
// A cut walk ends with an error wrapping ErrMaxFrames, which says that the
// walk was not finished, not that it went wrong. It changes Generation.
//
// Without a limit a walk still ends on any stack, however corrupt: every
// frame above the topmost must have its CFA strictly above its callee's
// (the progress rule of the Linux kernel's user unwinder, where a CFA not
// above the previous frame's is an error), so a walk cannot loop, and each
// step reads its return address from memory at or near the new CFA: the
// CFAs climb through the stack and the walk ends where they leave memory
// that reads, or reach a return address without SFrame data. A legitimate
// stack never breaks the rule: a caller's CFA lies above its own saved
// return address (pushed by its call on x86-64, the link register it saved
// on AArch64), which lies at or above its SP at the call: the callee's CFA.
func (u *Unwinder) SetMaxFrames(n int) {
	u.max = max(n, 0)
	u.gen++
}

// MaxFrames returns the limit SetMaxFrames set (0: none).
func (u *Unwinder) MaxFrames() int { return u.max }

// Lookup finds the SFrame row for pc in any section.
func (u *Unwinder) Lookup(pc uint64) (*sframe.Section, sframe.Row, error) {
	if u.cache == nil {
		return u.lookup(pc)
	}
	e := u.cached(pc)
	return e.sec, e.row, e.err
}

// cached returns pc's entry of the cache (which u must have), looking pc
// up if the entry holds another PC.
func (u *Unwinder) cached(pc uint64) *lookupEntry {
	e := &u.cache[(pc^pc>>13)&(lookupCacheSize-1)]
	if !e.valid || e.pc != pc {
		sec, row, err := u.lookup(pc)
		*e = lookupEntry{pc: pc, valid: true, sec: sec, row: row, err: err}
	}
	return e
}

// entry returns pc's Lookup result: the cache's entry, or, without a
// cache, scratch filled in.
func (u *Unwinder) entry(pc uint64, scratch *lookupEntry) *lookupEntry {
	if u.cache != nil {
		return u.cached(pc)
	}
	sec, row, err := u.lookup(pc)
	*scratch = lookupEntry{pc: pc, valid: true, sec: sec, row: row, err: err}
	return scratch
}

// LookupErr returns Lookup's error alone: nil when pc has a row, ErrNoFDE
// when no section has a function for it.
func (u *Unwinder) LookupErr(pc uint64) error {
	if u.cache == nil {
		_, _, err := u.lookup(pc)
		return err
	}
	return u.cached(pc).err
}

// RowExtent returns the PC range [lo, hi) around pc over which the section
// holding pc's row (the one Lookup finds) has the same FDE and FRE
// (sframe.Section.RowExtent); ok is false where pc has no row or the
// section cannot tell. With a cache it is remembered with the lookup.
func (u *Unwinder) RowExtent(pc uint64) (lo, hi uint64, ok bool) {
	if u.cache == nil {
		sec, _, err := u.lookup(pc)
		if err != nil || sec == nil {
			return 0, 0, false
		}
		return sec.RowExtent(pc)
	}
	e := u.cached(pc)
	if e.ext == extUnknown {
		e.ext = extNone
		if e.err == nil && e.sec != nil {
			if e.lo, e.hi, ok = e.sec.RowExtent(pc); ok {
				e.ext = extOK
			}
		}
	}
	return e.lo, e.hi, e.ext == extOK
}

func (u *Unwinder) lookup(pc uint64) (*sframe.Section, sframe.Row, error) {
	for _, s := range u.secs {
		row, err := s.Lookup(pc)
		if errors.Is(err, sframe.ErrNoFDE) {
			continue
		}
		return s, row, err
	}
	return nil, sframe.Row{}, ErrNoFDE
}

// Iterator walks a stack frame by frame:
//
//	it := u.Walk(regs, mem)
//	for it.Next() {
//		f := it.Frame()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type Iterator struct {
	u    *Unwinder
	mem  Memory
	regs Registers

	pc, sp, fp uint64
	topmost    bool
	// interrupted: the next frame is the one a signal interrupted, whose
	// registers are saved at ctx (the signal frame's uc_mcontext).
	interrupted bool
	ctx         uint64
	switches    int // signal frames that went down the stack
	depth       int
	frame       Frame
	done        bool
	err         error
	lastCFA     uint64
	scratch     lookupEntry // an Unwinder without a cache looks up into it
}

// maxStackSwitches bounds how many signal frames of one walk may have
// their CFA below the previous frame's (a handler on an alternate signal
// stack above the interrupted code's stack), so that a walk still ends on
// any stack, however corrupt: between two such frames every CFA is
// strictly above the one before.
const maxStackSwitches = 8

// Walk starts a walk at the machine state regs.
func (u *Unwinder) Walk(regs Registers, mem Memory) *Iterator {
	it := new(Iterator)
	it.Reset(u, regs, mem)
	return it
}

// Reset makes it a new walk, as u.Walk(regs, mem) returns, without
// allocating.
func (it *Iterator) Reset(u *Unwinder, regs Registers, mem Memory) {
	it.reset(u, mem, regs.PC, regs.SP, regs.FP)
	// Field by field: it.regs = regs compiles to wide moves from the
	// argument, which the caller stored field by field, and each waits
	// for those narrow stores (once per walk).
	it.regs.PC, it.regs.SP, it.regs.FP, it.regs.LR, it.regs.Get = regs.PC, regs.SP, regs.FP, regs.LR, regs.Get
	it.topmost = true
}

// reset sets every field but regs and topmost; the last frame is left as
// it is (Next overwrites it before Frame can return it).
func (it *Iterator) reset(u *Unwinder, mem Memory, pc, sp, fp uint64) {
	it.u, it.mem = u, mem
	it.pc, it.sp, it.fp = pc, sp, fp
	it.depth, it.done, it.err, it.lastCFA = 0, false, nil, 0
	it.interrupted, it.ctx, it.switches = false, 0, 0
}

// ResetCaller makes it a new walk, as u.WalkCaller(pc, sp, fp, mem)
// returns, without allocating.
func (it *Iterator) ResetCaller(u *Unwinder, pc, sp, fp uint64, mem Memory) {
	it.reset(u, mem, pc, sp, fp)
	it.regs, it.topmost = Registers{}, false
	it.depth, it.lastCFA = 1, sp
}

// WalkCaller continues a walk at the caller of a topmost frame, as Walk's
// second Next would: pc, sp and fp are that frame's RA, CFA and CallerFP.
// The frames it yields are those Walk yields after the first, so a caller
// can reuse them while the inputs (and the memory they read) stay the same.
func (u *Unwinder) WalkCaller(pc, sp, fp uint64, mem Memory) *Iterator {
	it := new(Iterator)
	it.ResetCaller(u, pc, sp, fp, mem)
	return it
}

// Next computes the next frame; false when the walk is over.
func (it *Iterator) Next() bool {
	if it.done {
		return false
	}
	if m := it.u.max; m > 0 && it.depth >= m {
		it.err = fmt.Errorf("%w of %d frames", ErrMaxFrames, m)
		it.done = true
		return false
	}
	// The frame is computed in place: a Frame is large, and a walk of
	// every instruction copies none.
	// (Cleared and then set field by field: a composite literal is built
	// on the stack and copied over in wide moves that wait for the
	// narrow stores that built it.)
	f := &it.frame
	*f = Frame{}
	f.PC, f.SP, f.FP, f.Topmost, f.Interrupted = it.pc, it.sp, it.fp, it.topmost, it.interrupted
	if f.Interrupted {
		f.Context = it.ctx
	}
	it.step(f)
	it.depth++
	if f.Err != nil || f.Outermost {
		it.done = true
		if f.Err != nil && !NoData(f.Err) {
			it.err = f.Err
		}
		return true
	}
	if !f.Topmost && f.CFA <= it.lastCFA {
		switch {
		case f.Interrupted && f.CFA == it.lastCFA:
			// Interrupted before it moved its stack pointer (AArch64: CFA
			// = SP at entry).
		case f.Signal && it.switches < maxStackSwitches:
			it.switches++ // from an alternate signal stack
		default:
			f.Err = &StepError{PC: f.PC, What: "CFA", Err: fmt.Errorf("CFA %#x is not above the previous frame's %#x", f.CFA, it.lastCFA)}
			it.err, it.done = f.Err, true
			return true
		}
	}
	it.lastCFA = f.CFA
	it.pc, it.sp, it.fp, it.topmost = f.RA, f.CFA, f.CallerFP, false
	it.interrupted, it.ctx = f.Signal, f.Context
	return true
}

// Position returns the registers the next frame will be computed from (its
// PC, SP and FP), how many frames came before it, and whether the walk is
// over.
func (it *Iterator) Position() (pc, sp, fp uint64, depth int, done bool) {
	return it.pc, it.sp, it.fp, it.depth, it.done
}

// Interrupted reports whether the next frame is one a signal interrupted
// (the frame after a signal frame), whose registers all come from the
// signal context at ctx: a frame with the PC, SP and FP Position returns
// is the same only with the same context.
func (it *Iterator) Interrupted() (ctx uint64, ok bool) { return it.ctx, it.interrupted }

// Frame returns the frame Next computed.
func (it *Iterator) Frame() Frame { return it.frame }

// Current returns the frame Next computed, without copying it: the
// iterator's own, overwritten by the next call to Next.
func (it *Iterator) Current() *Frame { return &it.frame }

// Err returns the failure that ended the walk, or nil when it ended at an
// outermost frame or at a PC without SFrame data (see the last Frame's Err).

// NoData reports whether a frame's error only means that the SFrame data
// does not cover its PC (ErrNoFDE, ErrNoFRE): the end of the SFrame chain,
// not an unwinding failure.
func NoData(err error) bool {
	// The walk's own errors are these values themselves, the only ones of
	// their type: one comparison of types, inlined, for the common case
	// (every walk that ends at a gap; comparing interfaces is a call).
	if _, ok := err.(*gapError); ok {
		return true
	}
	return err != nil && (errors.Is(err, ErrNoFDE) || errors.Is(err, ErrNoFRE))
}

// gapError is the type of ErrNoFDE and ErrNoFRE, and of no other error.
type gapError struct{ msg string }

func (e *gapError) Error() string { return e.msg }

func (it *Iterator) Err() error { return it.err }

// step fills in what the SFrame data says about frame f.
func (it *Iterator) step(f *Frame) {
	e := it.u.entry(f.PC, &it.scratch)
	sec, row, err := e.sec, &e.row, e.err
	if signalFDE(sec, row, err) && it.sigreturnAt(f.PC) {
		it.signal(f, sec, *row, err == nil)
		return
	}
	if err != nil {
		switch {
		case errors.Is(err, ErrNoFDE):
			f.Err = ErrNoFDE
		case errors.Is(err, sframe.ErrNoFRE):
			f.Err = ErrNoFRE
		default:
			f.Err = &StepError{PC: f.PC, What: "lookup", Err: err}
		}
		return
	}
	// One statement each: a tuple assignment copies the row through a
	// temporary, in overlapping wide moves that wait for each other.
	f.HasRow = true
	f.Row = *row
	f.Section = sec
	if row.Outermost {
		f.Outermost = true
		return
	}
	cfa, err := it.eval(f, row.CFA, 0)
	if err != nil {
		f.Err = &StepError{PC: f.PC, What: "CFA", Err: err}
		return
	}
	f.CFA = cfa
	if cfa < f.SP {
		f.Err = &StepError{PC: f.PC, What: "CFA", Err: fmt.Errorf("CFA %#x is below SP %#x", cfa, f.SP)}
		return
	}
	// Return address.
	switch row.RA.Kind {
	case sframe.RuleExpr:
		f.RawRA, err = it.eval(f, row.RA, cfa)
	case sframe.RuleSame:
		switch {
		case !it.u.arch.HasLinkRegister():
			err = ErrNoRA
		case f.Interrupted:
			f.RawRA, err = it.saved(it.u.arch.LR)
		case !f.Topmost:
			err = ErrRAInRegister
		default:
			f.RawRA = it.regs.LR
		}
	default:
		err = ErrNoRA
	}
	if err != nil {
		f.Err = &StepError{PC: f.PC, What: "RA", Err: err}
		return
	}
	f.RA = f.RawRA
	if row.MangledRA && it.u.arch.PACMask != 0 {
		f.RA &= it.u.arch.PACMask
	}
	// Frame pointer.
	switch row.FP.Kind {
	case sframe.RuleExpr:
		f.CallerFP, err = it.eval(f, row.FP, cfa)
	default:
		f.CallerFP = f.FP
	}
	if err != nil {
		f.Err = &StepError{PC: f.PC, What: "FP", Err: err}
	}
}

// eval computes a rule's value in frame f (cfa: the frame's CFA, for rules
// based on it).
func (it *Iterator) eval(f *Frame, r sframe.Rule, cfa uint64) (uint64, error) {
	base := cfa
	if r.Reg != sframe.RegCFA {
		var err error
		if base, err = it.base(f, r.Reg); err != nil {
			return 0, err
		}
	}
	addr := base + uint64(int64(r.Offset))
	if !r.Deref {
		return addr, nil
	}
	v, err := it.mem.ReadUint64(addr)
	if err != nil {
		return 0, fmt.Errorf("reading %#x (%s): %w", addr, r.Format(f.abi()), err)
	}
	return v, nil
}

// base returns register reg's value in frame f (a rule's base other than
// the CFA).
func (it *Iterator) base(f *Frame, reg sframe.Reg) (uint64, error) {
	sp, fp, _, _ := f.abiRegs()
	switch {
	case reg == sp:
		return f.SP, nil
	case reg == fp:
		return f.FP, nil
	case f.Interrupted:
		return it.saved(reg)
	case !f.Topmost || it.regs.Get == nil:
		return 0, fmt.Errorf("%w: %s", ErrRegister, sframe.RegName(f.abi(), reg))
	}
	v, ok := it.regs.Get(reg)
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrRegister, sframe.RegName(f.abi(), reg))
	}
	return v, nil
}

// signalFDE reports whether a lookup found a signal trampoline: an FDE
// with the V3 signal flag, with a row for the PC or none (gas writes such
// FDEs without rows).
func signalFDE(sec *sframe.Section, row *sframe.Row, err error) bool {
	if err == nil {
		return row.Signal
	}
	return sec != nil && errors.Is(err, sframe.ErrNoFRE) && row.FDE >= 0 && row.FDE < len(sec.FDEs) && sec.FDEs[row.FDE].Signal()
}

// sigreturnAt reports whether pc is in an rt_sigreturn sequence
// (arch.SignalContext.Sigreturn): at the start of one of its
// instructions.
func (it *Iterator) sigreturnAt(pc uint64) bool {
	var buf [16]byte
	for _, seq := range it.u.arch.Signal.Sigreturn {
		n := uint64(len(seq.Code))
		for _, off := range seq.Insns {
			start := pc - uint64(off)
			// Two words cover [start, start+n) for 8 <= n <= 16, or
			// the 8 bytes ending at start+n for shorter sequences.
			lo := start + n - 8
			if n >= 8 {
				lo = start
			}
			w0, err0 := it.mem.ReadUint64(lo)
			w1, err1 := it.mem.ReadUint64(start + n - 8)
			if err0 != nil || err1 != nil {
				continue
			}
			binary.LittleEndian.PutUint64(buf[:], w0)
			binary.LittleEndian.PutUint64(buf[start+n-8-lo:], w1)
			if bytes.Equal(buf[start-lo:start-lo+n], seq.Code) {
				return true
			}
		}
	}
	return false
}

// signal unwinds a signal trampoline's frame f from the registers the
// kernel saved in the signal frame (see the package documentation).
func (it *Iterator) signal(f *Frame, sec *sframe.Section, row sframe.Row, hasRow bool) {
	a := it.u.arch
	f.Signal, f.Section, f.HasRow, f.Row = true, sec, hasRow, row
	f.Context = f.SP + a.Signal.MContext
	it.ctx = f.Context
	var err error
	if f.CFA, err = it.saved(a.SP); err != nil {
		f.Err = &StepError{PC: f.PC, What: "CFA", Err: err}
		return
	}
	if f.RawRA, err = it.saved(a.PC); err != nil {
		f.Err = &StepError{PC: f.PC, What: "RA", Err: err}
		return
	}
	f.RA = f.RawRA
	if f.CallerFP, err = it.saved(a.FP); err != nil {
		f.Err = &StepError{PC: f.PC, What: "FP", Err: err}
	}
}

// saved reads register r of the interrupted code from the signal context
// at it.ctx.
func (it *Iterator) saved(r sframe.Reg) (uint64, error) {
	addr, ok := it.u.arch.Signal.Saved(it.ctx-it.u.arch.Signal.MContext, r)
	if !ok {
		return 0, fmt.Errorf("%w: %s (not in the signal context)", ErrRegister, it.u.arch.RegName(r))
	}
	v, err := it.mem.ReadUint64(addr)
	if err != nil {
		return 0, fmt.Errorf("reading the signal context's %s at %#x: %w", it.u.arch.RegName(r), addr, err)
	}
	return v, nil
}

func (f *Frame) abi() sframe.ABI {
	if f.Section == nil {
		return 0
	}
	return f.Section.Header.ABI
}

func (f *Frame) abiRegs() (sp, fp, ra sframe.Reg, ok bool) { return f.abi().Regs() }
