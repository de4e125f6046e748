//go:build cgo

package emu

import (
	"encoding/binary"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"
)

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

// classify returns the flow class and length of the instruction at the
// start of code.
func (a *Arch) classify(code []byte) (Flow, int) {
	if a == ARM64 {
		if len(code) < 4 {
			return FlowBad, 0
		}
		return classifyARM64(binary.LittleEndian.Uint32(code)), 4
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return FlowBad, 0
	}
	switch inst.Op {
	case x86asm.CALL:
		return FlowCall, inst.Len
	case x86asm.RET:
		return FlowRet, inst.Len
	}
	return FlowOther, inst.Len
}

// classifyARM64 matches the A64 branch-with-link and return encodings,
// pointer-authentication forms included (which x/arch does not decode)
// [Arm ARM C6.2: BL, BLR, BLRAA/BLRAAZ/BLRAB/BLRABZ, RET, RETAA/RETAB].
func classifyARM64(w uint32) Flow {
	switch {
	case w&0xfc000000 == 0x94000000: // BL imm26
		return FlowCall
	case w&0xfffffc1f == 0xd63f0000: // BLR Xn
		return FlowCall
	case w&0xfffff800 == 0xd73f0800: // BLRAA/BLRAB Xn, Xm|SP
		return FlowCall
	case w&0xfffff81f == 0xd63f081f: // BLRAAZ/BLRABZ Xn
		return FlowCall
	case w&0xfffffc1f == 0xd65f0000: // RET Xn
		return FlowRet
	case w == 0xd65f0bff || w == 0xd65f0fff: // RETAA, RETAB
		return FlowRet
	case w&0xfffffc1f == 0xd61f0000: // BR Xn
		return FlowJump
	case w&0xfffff800 == 0xd71f0800: // BRAA/BRAB Xn, Xm|SP
		return FlowJump
	case w&0xfffff81f == 0xd61f081f: // BRAAZ/BRABZ Xn
		return FlowJump
	}
	return FlowOther
}

// Disasm formats the instruction at the start of code, at address pc, in
// GNU syntax, with symbolic branch targets from sym (may be nil).
func (a *Arch) Disasm(code []byte, pc uint64, sym func(uint64) (string, uint64)) (text string, size int) {
	if a == ARM64 {
		if len(code) < 4 {
			return "(bad)", 0
		}
		inst, err := arm64asm.Decode(code)
		if err != nil {
			return disasmARM64Unknown(binary.LittleEndian.Uint32(code)), 4
		}
		return arm64asm.GNUSyntax(inst), 4
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return "(bad)", 1
	}
	return x86asm.GNUSyntax(inst, pc, sym), inst.Len
}

// disasmARM64Unknown names the pointer-authentication and hint
// instructions x/arch leaves undecoded.
func disasmARM64Unknown(w uint32) string {
	switch w {
	case 0xd503233f:
		return "paciasp"
	case 0xd503237f:
		return "pacibsp"
	case 0xd50323bf:
		return "autiasp"
	case 0xd50323ff:
		return "autibsp"
	case 0xd65f0bff:
		return "retaa"
	case 0xd65f0fff:
		return "retab"
	case 0xd503245f:
		return "bti c"
	case 0xd503249f:
		return "bti j"
	case 0xd50324df:
		return "bti jc"
	}
	return "(bad)"
}
