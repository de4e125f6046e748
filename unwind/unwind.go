// Package unwind walks a call stack with SFrame data, as a profiler or the
// Linux kernel's SFrame unwinder does, following the fact sheet's unwind
// step [SFrame §5.2] for AMD64 and AArch64.
//
// It reads registers and memory through small interfaces and never imports
// the emulator, so it works as a library over any machine state: a live
// emulator, a core dump, or a simulated stack in a test.
//
// # One step (frame n → n+1)
//
//  1. Look up the FRE for the frame's PC (unchanged: SFrame unwinders do not
//     use pc-1 for return addresses). No FDE: the SFrame chain ends there
//     (a coverage gap, not an error). An FRE without data words marks the
//     outermost frame: the walk ends successfully.
//  2. CFA = base register + offset (DEFAULT: SP or FP; FLEX: any DWARF
//     register, optionally dereferenced). A base other than SP or FP is only
//     known in the topmost frame, where all registers are.
//  3. RA: AMD64 loads it from CFA-8 (the header's fixed offset); AArch64
//     loads it from CFA+offset when the FRE saves it, else it is still in
//     the link register x30 — which is legal only in the topmost frame.
//     With the FRE's mangled-RA bit set the pointer-authentication code is
//     stripped (bits above the 48-bit user address space).
//  4. FP: loaded from CFA+offset when the FRE saves it, else unchanged.
//  5. The caller's frame has PC = RA, SP = CFA, FP as recovered; it is no
//     longer topmost.
//
// # Signal frames
//
// A signal handler returns to a signal trampoline (x86-64: the
// sa_restorer, glibc's __restore_rt; AArch64: the vDSO's
// __kernel_rt_sigreturn or an sa_restorer), which calls rt_sigreturn. An
// SFrame V3 FDE with the signal flag (.cfi_signal_frame) marks such a
// trampoline. Its frame is not a call frame: the kernel saved every
// register of the interrupted code in the signal frame's ucontext, at the
// trampoline's stack pointer (arch.SignalContext). So, whatever rows the
// FDE has (gas writes none: it cannot express the ucontext's DWARF
// expressions), the trampoline's frame is unwound from there, as libgcc's
// MD_FALLBACK_FRAME_STATE_FOR and debuggers do: its CFA is the interrupted
// stack pointer, its return address the interrupted PC (not a return
// address: the instruction the signal interrupted, looked up as it is)
// and its caller's FP the interrupted frame pointer. The interrupted
// frame then has all its registers, like a topmost frame: its return
// address may still be in the link register (AArch64: x30 from the
// ucontext) and FLEX rules may use any register.
//
// A signal frame may go down the stack (the handler ran on an alternate
// signal stack above the interrupted one), so the progress rule is
// relaxed there, a bounded number of times per walk (maxStackSwitches);
// and the interrupted frame's CFA may equal the signal frame's (a function
// interrupted before it moved its stack pointer).
//
// Each Frame records the FDE and FRE row that described it and the rules
// that produced its CFA, RA and FP, so a mismatch can be explained.
package unwind

import (
	"errors"
	"fmt"

	"github.com/sframesim/sframesim/sframe"
)

// Memory reads the unwound program's memory.
type Memory interface {
	// ReadUint64 reads the 8-byte word at addr in the program's byte order.
	ReadUint64(addr uint64) (uint64, error)
}

// Registers is the machine state of the topmost frame.
type Registers struct {
	PC, SP, FP uint64
	// LR is the link register (AArch64 x30); unused on AMD64.
	LR uint64
	// Get returns any other register by DWARF number, for FLEX rules based
	// on one (only in the topmost frame). nil: none available.
	Get func(reg sframe.Reg) (uint64, bool)
}

// Frame is one frame of an unwound stack.
type Frame struct {
	// PC is the frame's program counter: the current instruction in the
	// topmost frame, a return address in the others.
	PC, SP, FP uint64
	// Topmost is set for frame 0, the one whose registers were given.
	Topmost bool

	// What the SFrame data says about the frame and what it yields for its
	// caller; valid when Err is nil and HasRow.
	HasRow    bool
	Row       sframe.Row
	Section   *sframe.Section
	CFA       uint64 // this frame's CFA
	RA        uint64 // return address (PAC stripped): the caller's PC
	RawRA     uint64 // return address as stored (may carry a PAC)
	CallerFP  uint64 // the FP the caller resumes with
	Outermost bool   // the FRE marks the end of the stack

	// Signal is set for a signal trampoline's frame (a V3 FDE with the
	// signal flag): CFA, RA (= RawRA) and CallerFP are the interrupted
	// SP, PC and FP, read from the signal frame's ucontext at Context.
	Signal bool
	// Context is the address of the signal context (uc_mcontext) a Signal
	// frame reads, or an Interrupted frame's registers come from.
	Context uint64
	// Interrupted is set for the frame a signal interrupted (the one after
	// a signal frame): its PC is the interrupted instruction, and all its
	// registers are known (from the ucontext), as in the topmost frame.
	Interrupted bool

	// Err says why the walk cannot go past this frame: ErrNoFDE (no SFrame
	// data for the PC: a coverage gap) or an unwinding failure.
	Err error
}

// Errors that end a walk.
var (
	// ErrNoFDE: no SFrame function covers the frame's PC.
	ErrNoFDE error = &gapError{"no SFrame FDE for the PC"}
	// ErrNoFRE: the function's FDE has no row for the PC (a V3 FDE without
	// FREs, as gas writes for signal trampolines it cannot describe): no
	// data, like ErrNoFDE.
	ErrNoFRE error = &gapError{"no SFrame row for the PC"}
	// ErrRAInRegister: the FRE leaves the return address in the link
	// register below the topmost frame, where its value is lost.
	ErrRAInRegister = errors.New("return address still in the link register, but the frame is not topmost")
	// ErrNoRA: the ABI has no rule for the return address (AMD64 without
	// a fixed RA offset, or an RA "unchanged" without a link register).
	ErrNoRA = errors.New("no rule recovers the return address")
	// ErrRegister: a FLEX rule names a register not known in this frame.
	ErrRegister = errors.New("register not available below the topmost frame")
	// ErrMaxFrames: the walk reached the limit of Unwinder.SetMaxFrames
	// before its end. Not an unwinding failure: the frames beyond were not
	// computed.
	ErrMaxFrames = errors.New("walk cut at the frame limit")
)

// A StepError is an unwinding failure at one frame.
type StepError struct {
	PC   uint64
	What string // "CFA", "RA", "FP", "lookup"
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("%s at pc %#x: %v", e.What, e.PC, e.Err) }
func (e *StepError) Unwrap() error { return e.Err }
