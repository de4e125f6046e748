// Package arch holds what sframesim knows about each guest architecture,
// one file per architecture (x86_64.go, aarch64.go): the registers by DWARF
// number and their names, which of them are the program counter, stack
// pointer, frame pointer and link register, the SFrame ABIs, how a
// pointer-authentication code is stripped, how instructions are classified
// for the shadow call stack, and how they are disassembled.
//
// It is pure Go: the emulator binding (emu) maps these registers to its
// own ids, the Linux layer (linux) adds the kernel's ABI, and the unwinder
// (unwind) and the shadow stack (shadow) use it without cgo.
package arch

import (
	"debug/elf"
	"strconv"

	"github.com/sframesim/sframesim/sframe"
)

// Reg is a register by its DWARF number in the architecture's psABI
// (x86-64: 0–16 rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8–r15, rip;
// AArch64: 0–30 x0–x30, 31 sp, 32 pc).
type Reg = sframe.Reg

// Arch describes one guest architecture.
type Arch struct {
	Name    string // "x86-64", "aarch64"
	Machine elf.Machine
	PtrSize int
	// ABIs are the SFrame ABIs of the architecture.
	ABIs []sframe.ABI
	// PC, SP and FP are the program counter, stack pointer and frame
	// pointer. LR is the link register, NoReg where the return address
	// lives on the stack (x86-64).
	PC, SP, FP, LR Reg
	// PACMask clears a pointer-authentication code from a user-space code
	// address (0: the architecture has none).
	PACMask uint64

	// Registers lists the general registers in the order a debugger shows
	// them, PC last.
	Registers []Reg
	// Signal is where Linux's signal frame keeps the interrupted
	// registers, as seen from the signal trampoline.
	Signal SignalContext

	names    map[Reg]string
	keeps    func(code []byte) bool
	effect   func(code []byte) (sp int64, link, ok bool)
	move     func(code []byte) (Move, bool)
	classify func(code []byte) (Flow, int)
	facts    func(code []byte) Facts
	disasm   func(code []byte, pc uint64, sym func(uint64) (string, uint64)) (string, int)
}

// SignalContext locates the registers the Linux kernel saves in a signal
// frame (rt_sigframe) when it delivers a signal: the ucontext's
// uc_mcontext, as a signal trampoline (the handler's return address:
// sa_restorer, or the vDSO's __kernel_rt_sigreturn) finds it. The
// trampoline's stack pointer is the CFA of the handler that returned to
// it, so an unwinder finds the context there in both cases, in the
// trampoline itself and one frame up from the handler. This is what
// libgcc's MD_FALLBACK_FRAME_STATE_FOR (linux-unwind.h) and debuggers'
// signal-trampoline unwinders do.
type SignalContext struct {
	// MContext is the offset of uc_mcontext from the trampoline's stack
	// pointer.
	MContext uint64
	// Regs is the offset within uc_mcontext of each register saved there,
	// indexed by DWARF number (the program counter included).
	Regs []uint64
	// Sigreturn lists the code of signal trampolines: the instruction
	// sequences that call rt_sigreturn. An unwinder checks the code at
	// the PC before it trusts a signal frame, as libgcc's
	// MD_FALLBACK_FRAME_STATE_FOR does: a function marked as a signal
	// frame (.cfi_signal_frame) need not be a trampoline.
	Sigreturn []Sequence
}

// Sequence is a sequence of instructions: its bytes and the offset of
// each instruction in them.
type Sequence struct {
	Code  []byte
	Insns []int
}

// Saved returns the address of register r in the signal context of a
// trampoline whose stack pointer is sp; false if the context does not
// hold r.
func (c *SignalContext) Saved(sp uint64, r Reg) (uint64, bool) {
	if r < 0 || int(r) >= len(c.Regs) {
		return 0, false
	}
	return sp + c.MContext + c.Regs[r], true
}

// NoReg is the Reg of a register an architecture does not have.
const NoReg Reg = -2

// All lists the supported architectures.
var All = []*Arch{AMD64, ARM64}

// ForMachine returns the Arch of an ELF machine, or nil.
func ForMachine(m elf.Machine) *Arch {
	for _, a := range All {
		if a.Machine == m {
			return a
		}
	}
	return nil
}

// ForABI returns the Arch whose SFrame data has ABI abi, or nil.
func ForABI(abi sframe.ABI) *Arch {
	for _, a := range All {
		for _, x := range a.ABIs {
			if x == abi {
				return a
			}
		}
	}
	return nil
}

// HasLinkRegister reports whether a call leaves the return address in a
// register (AArch64 x30) rather than on the stack.
func (a *Arch) HasLinkRegister() bool { return a.LR != NoReg }

// RegName names register r ("cfa" for sframe.RegCFA, "r<n>" for a number
// the architecture does not name).
func (a *Arch) RegName(r Reg) string {
	if r == sframe.RegCFA {
		return "cfa"
	}
	if n, ok := a.names[r]; ok {
		return n
	}
	return "r" + strconv.Itoa(int(r))
}

// StripPAC removes a pointer-authentication code from a code address.
func (a *Arch) StripPAC(addr uint64) uint64 {
	if a.PACMask == 0 {
		return addr
	}
	return addr & a.PACMask
}

// Classify returns what the instruction at the start of code does to the
// call stack, and its length (0 with FlowBad when it does not decode).
func (a *Arch) Classify(code []byte) (Flow, int) { return a.classify(code) }

// KeepsFrame reports whether the instruction at the start of code is known
// to leave the stack pointer, the frame pointer and the link register as
// they were: one of a list of common operations that write only their
// explicit operands (or registers and flags none of those), writing none
// of these registers (reading them is fine), with no address writeback to
// them. Anything else —
// pushes, pops, calls, returns, leave, pointer authentication, system
// instructions, what x/arch cannot decode — may change them: false. The
// emulator's hook then reads them before the next instruction instead of
// keeping the values it read before this one.
func (a *Arch) KeepsFrame(code []byte) bool { return a.keeps(code) }

// StackEffect reports what the instruction at the start of code does to
// the stack pointer, the frame pointer and the link register where its
// encoding alone fixes that, beyond KeepsFrame's operations (ok): SP
// changes by sp, the link register becomes the address of the next
// instruction if link, and nothing else of the three changes. Those are
// x86-64 near calls and returns (no immediate), and pushes and pops of a
// general register other than rsp and rbp (-8, +8: 64-bit operands only);
// AArch64 returns and branches to a register (nothing changes) and
// branches with link (link). Anything else: not ok. The emulator's hook
// then computes the registers before the next instruction from those
// before this one instead of reading them.
func (a *Arch) StackEffect(code []byte) (sp int64, link, ok bool) { return a.effect(code) }

// FrameMove reports what the instruction at the start of code does to
// the stack pointer, the frame pointer and the link register where its
// encoding fixes that but StackEffect does not say it (ok): an immediate
// added to SP, SP set from FP or FP from SP, FP or the link register
// loaded from the stack (see Move). Those are, with 64-bit operands only:
// on x86-64, sub and add of an immediate to rsp, lea d(%rsp) into rsp or
// rbp, lea d(%rbp) into rsp, mov between rsp and rbp, pop %rbp and leave;
// on AArch64, add and sub of an immediate from sp into sp or x29 and from
// x29 into sp, and loads and stores of a register or a pair with sp as
// the base, with writeback or loading x29 or x30. The emulator's hook then
// computes the registers before the next instruction from those before
// this one (and the words it loaded) instead of reading them.
func (a *Arch) FrameMove(code []byte) (Move, bool) { return a.move(code) }

// Move is a FrameMove. From the registers before the instruction (sp, fp
// and lr) and memory as it left it, with base = fp if FromFP, else sp:
// SP becomes base+SP; FP becomes fp (MoveKeep), base+FPOff (MoveSet) or
// the word at base+FPOff (MoveLoad); the link register becomes lr
// (MoveKeep) or the word at base+LROff (MoveLoad).
type Move struct {
	SP     int64
	FromFP bool
	FP, LR MoveRule
	FPOff  int64
	LROff  int64
}

// MoveRule is how a Move sets FP or the link register.
type MoveRule uint8

// The rules of a Move.
const (
	MoveKeep MoveRule = iota // as it was
	MoveSet                  // base + offset
	MoveLoad                 // the word at base + offset
)

// Facts is what Classify, KeepsFrame, StackEffect and FrameMove say of
// one instruction.
type Facts struct {
	Flow  Flow
	Size  int
	Keeps bool
	// StackEffect: SP changes by SP, the link register becomes the next
	// instruction's address if Link; valid if Effect.
	SP           int64
	Link, Effect bool
	// FrameMove, valid if Moves (never with Effect).
	Move  Move
	Moves bool
}

// Facts returns Classify, KeepsFrame, StackEffect and FrameMove of the
// instruction at the start of code at once, decoding it once (the emulator
// asks all of every new PC).
func (a *Arch) Facts(code []byte) Facts { return a.facts(code) }

// Disasm formats the instruction at the start of code, at address pc, in
// GNU syntax, with symbolic branch targets from sym (may be nil).
func (a *Arch) Disasm(code []byte, pc uint64, sym func(uint64) (string, uint64)) (text string, size int) {
	return a.disasm(code, pc, sym)
}

// Flow is what an instruction does to the call stack.
type Flow uint8

// Control-flow classes the shadow stack cares about.
const (
	FlowOther Flow = iota // falls through or jumps within the frame
	FlowCall              // x86-64 call; AArch64 bl, blr, blraa, blrab, blraaz, blrabz
	FlowRet               // x86-64 ret; AArch64 ret, retaa, retab
	FlowBad               // undecodable bytes
	FlowJump              // AArch64 indirect branch: br, braa, brab, braaz, brabz
)

func (f Flow) String() string {
	switch f {
	case FlowCall:
		return "call"
	case FlowRet:
		return "ret"
	case FlowBad:
		return "bad"
	case FlowJump:
		return "jump"
	}
	return "other"
}
