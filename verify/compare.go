//go:build cgo

// Package verify checks SFrame unwinding against the truth: at an
// instruction of a running program it unwinds the stack with the unwind
// package and compares every frame with the emulator's shadow call stack.
//
// Frame k of the unwind (0: topmost) is compared with the k-th shadow frame
// from the top: the unwound CFA with the shadow frame's CFA, the recovered
// return address with the address after its call, and the caller's frame
// pointer the unwind restores with the one the caller had at the call. The
// comparison goes up to the first frame without SFrame data (a coverage
// gap, not an error) or the outermost frame.
//
// A signal delivery is a frame of its own on the shadow stack (the signal
// frame, under the handler's): its CFA, return address and caller's FP
// are the interrupted SP, PC and FP. The unwinder yields the same frame
// for a signal trampoline whose V3 FDE has the signal flag, from the
// ucontext, and goes on into the interrupted code: those frames are
// compared like any other, and counted (Result.Signals). Where the SFrame
// data does not mark the trampoline (no data, or a V1/V2 row, which has no
// signal flag), the chain ends there as a SignalGap.
package verify

import (
	"errors"
	"fmt"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/unwind"
)

// Result is the outcome of checking one instruction.
type Result struct {
	Kind  Kind
	Depth int // frame where it happened (0: topmost)
	// Frame is the unwound frame at Depth (its Row says which FDE/FRE).
	Frame unwind.Frame
	// Want and Got are the true and unwound values for mismatches.
	Want, Got uint64
	Err       error
	// Checked is the number of frames compared.
	Checked int
	// Signals is the number of signal frames among the frames compared
	// right: frames unwound through a signal trampoline.
	Signals int
	// Top is the SFrame row of the topmost frame (FDE and FRE index in
	// TopSection), when it has one.
	Top        [2]int
	TopSection *sframe.Section
	// Lost is the shadow frame an Untracked result stopped at.
	Lost shadow.Frame
}

// EngineRegs returns a DWARF register reader over an engine's current
// state, for Check. While a batched session replays instructions that
// already ran, the registers are unknown (see linux.Session.Batch).
func EngineRegs(e *emu.Engine) func(sframe.Reg) (uint64, bool) {
	return func(r sframe.Reg) (uint64, bool) {
		id := e.RegID(r)
		if id == emu.NoRegID || !e.Live() {
			return 0, false
		}
		v, err := e.Reg(id)
		return v, err == nil
	}
}

// Memory adapts an emu.Engine to unwind.Memory.
type Memory struct{ E *emu.Engine }

// ReadUint64 reads guest memory.
func (m Memory) ReadUint64(addr uint64) (uint64, error) { return m.E.Read64(addr) }

// Check unwinds from the state r and compares with the shadow frames
// (outermost first, as shadow.Stack.Frames returns them). regs, if not
// nil, reads any other register of the topmost frame by DWARF number (FLEX
// rules may base the CFA on one). A Checker does the same for a sequence of
// instructions, faster.
func Check(u *unwind.Unwinder, r shadow.Record, mem unwind.Memory, shadow []shadow.Frame, regs func(sframe.Reg) (uint64, bool)) Result {
	it := u.Walk(unwind.Registers{PC: r.PC, SP: r.SP, FP: r.FP, LR: r.RA, Get: regs}, mem)
	var frames []unwind.Frame
	for it.Next() {
		frames = append(frames, it.Frame())
	}
	return compare(frames, it.Err(), shadow, covers(u))
}

// covers returns whether u has SFrame data (a row) for a PC.
func covers(u *unwind.Unwinder) func(pc uint64) bool {
	return func(pc uint64) bool { return u.LookupErr(pc) == nil }
}

// compare matches unwound frames (topmost first; walkErr: the error that
// ended the walk) with the shadow frames. covered tells whether the SFrame
// data covers a PC (see judge).
func compare(frames []unwind.Frame, walkErr error, shadow []shadow.Frame, covered func(uint64) bool) Result {
	if len(frames) == 0 {
		return compare2(nil, nil, false, walkErr, shadow, covered)
	}
	return compare2(&frames[0], frames[1:], false, walkErr, shadow, covered)
}

// compare2 is compare over the topmost frame f0 (nil: none) and the
// callers' frames, without joining them: tail holds frames 1, 2, ... in
// that order, or (rev) outermost first.
func compare2(f0 *unwind.Frame, tail []unwind.Frame, rev bool, walkErr error, shadow []shadow.Frame, covered func(uint64) bool) Result {
	n := len(shadow)
	res := Result{}
	if f0 == nil {
		if walkErr != nil {
			res.Kind, res.Err = walkKind(walkErr), walkErr
		}
		return res
	}
	if f0.HasRow {
		res.Top, res.TopSection = [2]int{f0.Row.FDE, f0.Row.FRE}, f0.Section
	}
	for k := 0; k <= len(tail); k++ {
		f := f0
		switch {
		case k > 0 && rev:
			f = &tail[len(tail)-k]
		case k > 0:
			f = &tail[k-1]
		}
		if kind, done := judge(k, f, shadow, covered); done {
			res.Kind, res.Depth, res.Frame = kind, k, *f
			if kind == TooShort {
				// The true stack goes on: unless a frame of it may be
				// none.
				if i := unsureFrame(shadow[:n-k]); i >= 0 {
					res.Kind, res.Lost = Untracked, shadow[i]
					return res
				}
			}
			switch kind {
			case Unterminated:
				if f.Err == nil {
					res.Got = f.RA
				} else {
					res.Err = f.Err
				}
			case Limited, UnwindError:
				res.Err = f.Err
			case EndedEarly:
				call := shadow[n-k].CallSite
				res.Err = fmt.Errorf("no SFrame row covers the return address %#x, though the call at %#x that left it is covered", f.PC, call)
			case SignalGap:
				res.Err = signalGapError(f)
			}
			return res
		}
		if shadow[n-1-k].Unsure {
			res.Kind, res.Depth, res.Frame, res.Lost = Untracked, k, *f, shadow[n-1-k]
			return res
		}
		kind, w, g := frameMismatch(f, &shadow[n-1-k])
		if kind == OK {
			res.Checked++
			if f.Signal {
				res.Signals++
			}
			continue
		}
		res.Kind, res.Depth, res.Frame, res.Want, res.Got = kind, k, *f, w, g
		return res
	}
	res.Depth = len(tail)
	switch {
	case len(tail) > 0 && rev:
		res.Frame = tail[0]
	case len(tail) > 0:
		res.Frame = tail[len(tail)-1]
	default:
		res.Frame = *f0
	}
	if walkErr != nil {
		res.Kind, res.Err = walkKind(walkErr), walkErr
	}
	return res
}

// unsureFrame returns the index of the topmost unsure frame of shadow,
// or -1.
func unsureFrame(shadow []shadow.Frame) int {
	for i := len(shadow) - 1; i >= 0; i-- {
		if shadow[i].Unsure {
			return i
		}
	}
	return -1
}

// signalGapError says why the chain ended at signal trampoline f.
func signalGapError(f *unwind.Frame) error {
	if f.HasRow {
		return fmt.Errorf("the signal trampoline at %#x has SFrame V%d rows, which cannot mark a signal frame: the interrupted frames were not checked", f.PC, f.Section.Header.Version)
	}
	return fmt.Errorf("no SFrame data for the signal trampoline at %#x: the interrupted frames were not checked", f.PC)
}

// walkKind is the outcome of a walk that ended with err after every frame
// it gave was right: cut at the frame limit, or an unwinding failure.
func walkKind(err error) Kind {
	if errors.Is(err, unwind.ErrMaxFrames) {
		return Cut
	}
	return UnwindError
}

// frameMismatch compares an unwound frame with its true one: OK, or the
// first value that differs (CFA, RA, caller FP) with the true and unwound
// values.
func frameMismatch(f *unwind.Frame, want *shadow.Frame) (Kind, uint64, uint64) {
	switch {
	case f.CFA != want.CFA:
		return MismatchCFA, want.CFA, f.CFA
	case f.RA != want.ReturnAddr:
		return MismatchRA, want.ReturnAddr, f.RA
	case f.CallerFP != want.CallerFP:
		return MismatchFP, want.CallerFP, f.CallerFP
	}
	return OK, 0, 0
}

// judge decides frame k when the comparison ends there (done): no truth
// beyond the true outermost frame, no data, unwinding failures, an early
// end. A caller frame (k > 0) without SFrame data for its PC ends the chain
// as a coverage gap when its function has no SFrame data at all; when the
// SFrame data covers the call that made frame k-1 (the true caller's call
// site, per covered) but not the return address it left, the chain ended
// early (EndedEarly): a consumer looking the return address up, as
// libsframe, glibc and the kernel do, loses the stack there — as after a
// noreturn call that ends a function, whose return address lies in padding.
func judge(k int, f *unwind.Frame, shadow []shadow.Frame, covered func(uint64) bool) (Kind, bool) {
	n := len(shadow)
	if k > 0 && k < n && shadow[n-1-k].SignalFrame && !f.Signal && (f.Err != nil && unwind.NoData(f.Err) || f.HasRow && f.Section.Header.Version < sframe.Version3) {
		// A signal trampoline the data does not mark.
		return SignalGap, true
	}
	if k >= n && k > 0 {
		// The true outermost function: no truth beyond it.
		if f.Outermost || f.Err != nil && unwind.NoData(f.Err) {
			return OK, true
		}
		return Unterminated, true
	}
	switch {
	case f.Err != nil && unwind.NoData(f.Err):
		if k == 0 {
			return NoFDE, true
		}
		if covered != nil && covered(shadow[n-k].CallSite) {
			return EndedEarly, true
		}
		return OK, true
	case f.Err != nil && errors.Is(f.Err, unwind.ErrRegister):
		return Limited, true
	case f.Err != nil:
		return UnwindError, true
	case f.Outermost:
		if k < n {
			return TooShort, true
		}
		return OK, true
	case k >= n:
		// In the outermost function itself (no shadow frame): its row
		// should have marked the end.
		return Unterminated, true
	}
	return OK, false
}
