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
package verify

import (
	"errors"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
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
}

// EngineRegs returns a DWARF register reader over an engine's current
// state, for Check.
func EngineRegs(e *emu.Engine) func(sframe.Reg) (uint64, bool) {
	return func(r sframe.Reg) (uint64, bool) {
		id := e.Arch().DWARFReg(int(r))
		if id < 0 {
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
// (outermost first, as emu.ShadowStack.Frames returns them). regs, if not
// nil, reads any other register of the topmost frame by DWARF number (FLEX
// rules may base the CFA on one).
func Check(u *unwind.Unwinder, r emu.Record, mem unwind.Memory, shadow []emu.Frame, regs func(sframe.Reg) (uint64, bool)) Result {
	it := u.Walk(unwind.Registers{PC: r.PC, SP: r.SP, FP: r.FP, LR: r.RA, Get: regs}, mem)
	n := len(shadow)
	res := Result{}
	for k := 0; it.Next(); k++ {
		f := it.Frame()
		res.Depth, res.Frame = k, f
		if k >= n && k > 0 {
			// The true outermost function: no truth beyond it.
			switch {
			case f.Outermost || f.Err != nil && unwind.NoData(f.Err):
				res.Kind = OK
			case f.Err == nil:
				res.Kind, res.Got = Unterminated, f.RA
			default:
				res.Kind, res.Err = Unterminated, f.Err
			}
			return res
		}
		switch {
		case f.Err != nil && unwind.NoData(f.Err):
			if k == 0 {
				res.Kind = NoFDE
			}
			return res
		case f.Err != nil && errors.Is(f.Err, unwind.ErrRegister):
			res.Kind, res.Err = Limited, f.Err
			return res
		case f.Err != nil:
			res.Kind, res.Err = UnwindError, f.Err
			return res
		case f.Outermost:
			if k < n {
				res.Kind = TooShort
			}
			return res
		}
		if k >= n {
			// In the outermost function itself (no shadow frame): its row
			// should have marked the end.
			res.Kind, res.Got = Unterminated, f.RA
			return res
		}
		want := &shadow[n-1-k]
		switch {
		case f.CFA != want.CFA:
			res.Kind, res.Want, res.Got = MismatchCFA, want.CFA, f.CFA
			return res
		case f.RA != want.ReturnAddr:
			res.Kind, res.Want, res.Got = MismatchRA, want.ReturnAddr, f.RA
			return res
		case f.CallerFP != want.CallerFP:
			res.Kind, res.Want, res.Got = MismatchFP, want.CallerFP, f.CallerFP
			return res
		}
		res.Checked++
	}
	if err := it.Err(); err != nil {
		res.Kind, res.Err = UnwindError, err
	}
	return res
}
