package codeflow

import (
	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// The per-architecture decoders (amd64_arch.go, arm64_arch.go) turn each
// instruction into a few ops on an abstract register file and stack, and
// a control-flow class; propagation (flow.go) only interprets those.

// Register indices: DWARF numbers 0–32, then a scratch register for
// instructions that move memory to memory (push mem).
const (
	regTmp  = 33
	nregs   = 34
	regNone = -1
)

type opKind uint8

const (
	// opSet: r[dst] = r[src] + imm.
	opSet opKind = iota
	// opClobber: r[dst] is no longer known. Flag fDown: dst is the SP and
	// only moves down (alloca), so the slots above it stay live.
	opClobber
	// opAlign: r[dst] = r[src] rounded down to a multiple of imm.
	opAlign
	// opStore: size bytes at r[base]+imm = r[src] (regNone: an unknown value).
	opStore
	// opLoad: r[dst] = the 8 bytes at r[base]+imm.
	opLoad
	// opClobberMask: every register in the bit mask imm is no longer known
	// (the caller-saved registers at a call).
	opClobberMask
	// opSign, opAuth, opStrip: pointer authentication of the link
	// register: sign with key imm (1: A, 2: B), authenticate, strip.
	opSign
	opAuth
	opStrip
	// opConst: r[dst] = the address imm.
	opConst
)

// Op flags.
const (
	fDown uint8 = 1 << iota
)

type op struct {
	kind     opKind
	dst, src int8
	base     int8
	size     uint8
	flags    uint8
	imm      int64
}

// flowKind is what an instruction does to control flow.
type flowKind uint8

const (
	flowNext         flowKind = iota // falls through
	flowJump                         // direct jump to target
	flowCond                         // conditional direct branch to target, or falls through
	flowCall                         // call (target 0: indirect); falls through
	flowCallNoReturn                 // call to a target Func.NoReturn names
	flowRet                          // return
	flowIndirect                     // indirect jump: a jump table or leaving the function
	flowStop                         // trap: ud2, hlt, brk, udf
	flowBad                          // undecodable
)

// dinsn is one decoded instruction.
type dinsn struct {
	off    uint32 // offset in the code
	len    uint8
	flow   flowKind
	nops   uint8
	op0    uint32 // first op in analysis.ops
	target uint64 // branch or call target (flowJump, flowCond, flowCall)
}

// A machine holds what propagation needs to know of an architecture.
type machine struct {
	arch       *arch.Arch
	sp, fp, lr int8 // lr: regNone on x86-64
	// raID names the return address's entry value: the link register, or
	// on x86-64 DWARF's return-address column (rip), whose value sits at
	// CFA-8 at the entry.
	raID int8
	// entrySP is the SP at a call entry relative to the CFA.
	entrySP int64
	// redZone: bytes below the SP that signal delivery leaves alone, so a
	// value saved there stays valid (x86-64 psABI §3.2.2: 128).
	redZone int64
	// callClobber is the mask of the registers a call clobbers.
	callClobber uint64
	// nGPR: registers 0..nGPR-1 are the general registers (and the SP).
	nGPR int8
	// decode decodes the instruction at the start of code, at pc, into d
	// and appends its ops to an.ops.
	decode func(an *analysis, code []byte, pc uint64, d *dinsn)
	// padding reports whether the instruction is alignment padding (nop,
	// int3, zeros).
	padding func(code []byte) bool
	// table resolves the targets of the indirect jump at index i from the
	// instructions before it (a jump table with its bounds check), or
	// says why it cannot.
	table func(an *analysis, i int) (targets []uint64, why string)
	// facts describes instruction k for the bounds-check search.
	facts func(an *analysis, k int) facts
}

func machineFor(a *arch.Arch) *machine {
	switch a {
	case arch.AMD64:
		return amd64Machine
	case arch.ARM64:
		return arm64Machine
	}
	return nil
}

// regName names a register index for reasons.
func (m *machine) regName(r int8) string {
	if r == regTmp {
		return "tmp"
	}
	return m.arch.RegName(sframe.Reg(r))
}

// emit helpers used by the decoders.

func (an *analysis) addOp(d *dinsn, o op) {
	an.ops = append(an.ops, o)
	d.nops++
}

func (an *analysis) set(d *dinsn, dst, src int8, imm int64) {
	an.addOp(d, op{kind: opSet, dst: dst, src: src, imm: imm})
}

func (an *analysis) clobber(d *dinsn, dst int8) {
	if dst >= 0 {
		an.addOp(d, op{kind: opClobber, dst: dst})
	}
}

func (an *analysis) store(d *dinsn, base int8, off int64, src int8, size int) {
	if base < 0 || size <= 0 {
		return
	}
	if size > 255 {
		size = 255
	}
	an.addOp(d, op{kind: opStore, base: base, imm: off, src: src, size: uint8(size)})
}

func (an *analysis) load(d *dinsn, dst, base int8, off int64) {
	if dst < 0 {
		return
	}
	if base < 0 {
		an.clobber(d, dst)
		return
	}
	an.addOp(d, op{kind: opLoad, dst: dst, base: base, imm: off, size: 8})
}
