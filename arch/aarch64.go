package arch

import (
	"debug/elf"
	"encoding/binary"
	"strconv"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/sframesim/sframesim/sframe"
)

// ARM64 is AArch64. A call (bl, blr, ...) leaves the return address in the
// link register x30; Linux gives user space 48-bit virtual addresses, so a
// pointer-authentication code lives in the bits above them.
var ARM64 = &Arch{
	Name: "aarch64", Machine: elf.EM_AARCH64, PtrSize: 8,
	ABIs: []sframe.ABI{sframe.ABIAArch64LE, sframe.ABIAArch64BE},
	PC:   32, SP: 31, FP: 29, LR: 30,
	PACMask: 1<<48 - 1,
	// x0–x30, sp, pc.
	Registers: arm64Registers(),
	Signal:    arm64Signal(),
	names:     arm64Names(),
	classify:  classifyARM64,
	disasm:    disasmARM64,
}

// arm64Signal: the AArch64 rt_sigframe (arch/arm64/kernel/signal.c) is
// siginfo (128 bytes) then the ucontext, at the handler's stack pointer,
// which the trampoline keeps: struct ucontext has uc_flags, uc_link,
// uc_stack (24 bytes), uc_sigmask (8 bytes, padded to 128) and
// uc_mcontext 16-byte aligned at 176, so the context is at 128+176. struct
// sigcontext (arch/arm64/include/uapi/asm/sigcontext.h) holds
// fault_address, regs[31] (x0–x30), sp and pc, 8 bytes each.
func arm64Signal() SignalContext {
	c := SignalContext{MContext: 128 + 176, Sigreturn: []Sequence{
		// mov x8, #139; svc #0 (the vDSO's __kernel_rt_sigreturn)
		{Code: []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}, Insns: []int{0, 4}},
	}}
	for i := uint64(0); i <= 32; i++ { // x0–x30, sp (31), pc (32)
		c.Regs = append(c.Regs, 8+8*i)
	}
	return c
}

func arm64Registers() []Reg {
	var rs []Reg
	for i := Reg(0); i <= 32; i++ {
		rs = append(rs, i)
	}
	return rs
}

func arm64Names() map[Reg]string {
	m := map[Reg]string{31: "sp", 32: "pc"}
	for i := 0; i <= 30; i++ {
		m[Reg(i)] = "x" + strconv.Itoa(i)
	}
	return m
}

func classifyARM64(code []byte) (Flow, int) {
	if len(code) < 4 {
		return FlowBad, 0
	}
	return classifyA64(binary.LittleEndian.Uint32(code)), 4
}

// classifyA64 matches the A64 branch-with-link and return encodings,
// pointer-authentication forms included (which x/arch does not decode)
// [Arm ARM C6.2: BL, BLR, BLRAA/BLRAAZ/BLRAB/BLRABZ, RET, RETAA/RETAB].
func classifyA64(w uint32) Flow {
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

func disasmARM64(code []byte, _ uint64, _ func(uint64) (string, uint64)) (string, int) {
	if len(code) < 4 {
		return "(bad)", 0
	}
	// x/arch decodes the pointer-authentication and BTI hints as plain
	// "hint #n": name them first.
	w := binary.LittleEndian.Uint32(code)
	if name := disasmA64Unknown(w); name != "(bad)" {
		return name, 4
	}
	inst, err := arm64asm.Decode(code)
	if err != nil {
		return "(bad)", 4
	}
	return arm64asm.GNUSyntax(inst), 4
}

// disasmA64Unknown names the pointer-authentication and hint instructions
// x/arch leaves undecoded.
func disasmA64Unknown(w uint32) string {
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
