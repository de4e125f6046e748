package arch

import (
	"debug/elf"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/arch/arm64/arm64asm"

	"github.com/sframesim/sframesim/sframe"
)

// decodeMu serializes arm64asm.Decode, which marks the format it matched
// in a package-level slice (decoderCover): engines decoding in parallel
// (corpus workers, parallel tests) race there otherwise, as the race
// detector reports.
var decodeMu sync.Mutex

// DecodeARM64 is arm64asm.Decode, safe for concurrent use.
func DecodeARM64(code []byte) (arm64asm.Inst, error) {
	decodeMu.Lock()
	defer decodeMu.Unlock()
	return arm64asm.Decode(code)
}

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
	keeps:     keepsFrameARM64,
	effect:    stackEffectARM64,
	move:      frameMoveARM64,
	classify:  classifyARM64,
	facts:     factsARM64,
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
	inst, err := DecodeARM64(code)
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

// factsARM64 is Facts for AArch64 (only KeepsFrame decodes with x/arch).
func factsARM64(code []byte) Facts {
	var f Facts
	f.Flow, f.Size = classifyARM64(code)
	f.Keeps = keepsFrameARM64(code)
	f.SP, f.Link, f.Effect = stackEffectARM64(code)
	if !f.Effect {
		f.Move, f.Moves = frameMoveARM64(code)
	}
	return f
}

// frameMoveARM64 is FrameMove for AArch64, from the fields of the
// encodings it knows (Arm ARM C4.1): add and sub (immediate) without
// flags, 64-bit; load and store pair, pre-index, post-index and signed
// offset; load and store register (immediate), pre-index and post-index,
// and 64-bit loads at an unsigned offset.
// The base of the loads and stores must be sp. Loads of x29 or x30 count
// only 64 bits wide (a 32-bit one zero-extends).
func frameMoveARM64(code []byte) (Move, bool) {
	if len(code) < 4 {
		return Move{}, false
	}
	w := binary.LittleEndian.Uint32(code)
	rt, rn := w&31, w>>5&31
	const sp, fp, lr = 31, 29, 30
	switch {
	case w&0x3f800000 == 0x11000000 && w>>31 == 1: // add, sub (immediate), 64-bit, S=0
		imm := int64(w >> 10 & 0xfff)
		if w>>22&1 == 1 {
			imm <<= 12
		}
		if w>>30&1 == 1 {
			imm = -imm
		}
		switch rd := rt; {
		case rd == sp && rn == sp:
			return Move{SP: imm}, true
		case rd == fp && rn == sp:
			return Move{FP: MoveSet, FPOff: imm}, true
		case rd == sp && rn == fp:
			return Move{FromFP: true, SP: imm}, true
		}
	case w>>27&7 == 5 && rn == sp: // load/store pair
		mode, load, simd, opc := w>>23&7, w>>22&1 == 1, w>>26&1 == 1, w>>30
		rt2 := w >> 10 & 31
		var scale int64
		switch {
		case simd && opc <= 2:
			scale = 4 << opc
		case !simd && opc == 0:
			scale = 4
		case !simd && opc == 2:
			scale = 8
		default:
			return Move{}, false // ldpsw, stgp, reserved
		}
		imm := int64(int32(w<<10)>>25) * scale // imm7, signed
		var m Move
		var at int64 // where the first register is loaded from or stored to
		switch mode {
		case 1: // post-index
			m.SP = imm
		case 2: // signed offset
			at = imm
		case 3: // pre-index
			m.SP, at = imm, imm
		default:
			return Move{}, false
		}
		frame := func(r uint32) bool { return r == fp || r == lr }
		if load && !simd && (frame(rt) || frame(rt2)) {
			if scale != 8 || rt == rt2 {
				return Move{}, false
			}
			for i, r := range [2]uint32{rt, rt2} {
				switch r {
				case fp:
					m.FP, m.FPOff = MoveLoad, at+8*int64(i)
				case lr:
					m.LR, m.LROff = MoveLoad, at+8*int64(i)
				}
			}
			return m, true
		}
		return m, mode != 2
	case w&0xffc00000 == 0xf9400000 && rn == sp && (rt == fp || rt == lr): // ldr (immediate), unsigned offset, 64-bit
		at := int64(w>>10&0xfff) * 8
		if rt == fp {
			return Move{FP: MoveLoad, FPOff: at}, true
		}
		return Move{LR: MoveLoad, LROff: at}, true
	case w>>27&7 == 7 && w>>24&3 == 0 && w>>21&1 == 0 && w>>10&1 == 1 && rn == sp: // load/store register, pre- or post-index
		size, simd, opc := w>>30, w>>26&1 == 1, w>>22&3
		imm := int64(int32(w<<11) >> 23) // imm9, signed
		m := Move{SP: imm}
		var at int64
		if w>>11&1 == 1 { // pre-index
			at = imm
		}
		if simd || opc == 0 { // a store, or a load of a vector register
			return m, true
		}
		if rt != fp && rt != lr {
			return m, true
		}
		if size != 3 || opc != 1 {
			return Move{}, false
		}
		if rt == fp {
			m.FP, m.FPOff = MoveLoad, at
		} else {
			m.LR, m.LROff = MoveLoad, at
		}
		return m, true
	}
	return Move{}, false
}

// stackEffectARM64 is StackEffect for AArch64: a return or a branch to
// a register writes no register (the authenticating forms check x30 or
// the target without writing it back); a branch with link writes only
// x30, the next instruction's address.
func stackEffectARM64(code []byte) (int64, bool, bool) {
	if len(code) < 4 {
		return 0, false, false
	}
	switch classifyA64(binary.LittleEndian.Uint32(code)) {
	case FlowRet, FlowJump:
		return 0, false, true
	case FlowCall:
		return 0, true, true
	}
	return 0, false, false
}

// keepsFrameARM64 is KeepsFrame for AArch64: nop, yield, csdb and bti
// (hints; the pointer-authentication instructions on x30 are hints too,
// which change it); not a branch with link, a return or a branch to a
// register; and an operation of arm64Keeps that
// writes none of x29, x30 and sp (in any width) and has no address
// writeback to one of them. Which operands it writes follows from the
// operation (arm64Writes); the others it only reads, which keeps them:
// a store of x29 and x30, a local's address taken from sp.
func keepsFrameARM64(code []byte) bool {
	if len(code) < 4 {
		return false
	}
	w := binary.LittleEndian.Uint32(code)
	if w&0xfffff01f == 0xd503201f { // HINT #n
		// nop, yield, csdb and bti write no register; the pointer
		// authentication hints (#7–#31) write x30 or x17, and hints
		// not named here may come to write others.
		switch w >> 5 & 0x7f {
		case 0, 1, 20, 32, 34, 36, 38:
			return true
		}
		return false
	}
	if classifyA64(w) != FlowOther {
		return false
	}
	inst, err := DecodeARM64(code)
	if err != nil || !arm64Keeps[inst.Op] {
		return false
	}
	frame := func(r arm64asm.Reg) bool {
		switch r {
		case arm64asm.X29, arm64asm.W29, arm64asm.X30, arm64asm.W30:
			return true
		}
		return false
	}
	written := arm64Writes(inst.Op)
	for i, a := range inst.Args {
		switch a := a.(type) {
		case nil, arm64asm.Imm, arm64asm.Imm64, arm64asm.ImmShift, arm64asm.Cond, arm64asm.PCRel,
			arm64asm.Imm_fp, arm64asm.RegisterWithArrangement, arm64asm.RegisterWithArrangementAndIndex:
		case arm64asm.Reg:
			if i < written && frame(a) {
				return false
			}
		case arm64asm.RegSP:
			if i < written && (a == arm64asm.RegSP(arm64asm.SP) || a == arm64asm.RegSP(arm64asm.WSP) || frame(arm64asm.Reg(a))) {
				return false
			}
		case arm64asm.MemImmediate:
			if a.Mode != arm64asm.AddrOffset && (a.Base == arm64asm.RegSP(arm64asm.SP) || frame(arm64asm.Reg(a.Base))) {
				return false
			}
		case arm64asm.MemExtend:
		case arm64asm.RegExtshiftAmount:
			// Its register is unexported: its name leads the text.
			r, _, _ := strings.Cut(a.String(), ",")
			if i < written && (r == "X29" || r == "W29" || r == "X30" || r == "W30") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// arm64Writes returns how many of an operation's leading operands it
// writes (of those arm64Keeps lists): none for stores, comparisons, tests,
// branches and barriers, two for a load of a pair, else the first (the
// destination; the rest are sources). A store's base register written back
// is a memory operand's addressing mode, which keepsFrameARM64 checks on
// its own.
func arm64Writes(op arm64asm.Op) int {
	switch op {
	case arm64asm.STR, arm64asm.STRB, arm64asm.STRH, arm64asm.STUR, arm64asm.STURB, arm64asm.STURH,
		arm64asm.STP, arm64asm.ST1,
		arm64asm.CMP, arm64asm.CMN, arm64asm.TST, arm64asm.CCMP, arm64asm.CCMN, arm64asm.FCMP, arm64asm.FCMPE,
		arm64asm.B, arm64asm.CBZ, arm64asm.CBNZ, arm64asm.TBZ, arm64asm.TBNZ,
		arm64asm.DMB, arm64asm.DSB, arm64asm.ISB:
		return 0
	case arm64asm.LDP, arm64asm.LDPSW:
		return 2
	}
	return 1
}

// arm64Keeps lists the operations that write only their explicit
// operands (and flags): data processing, loads and stores, conditional
// branches and direct branches without link, common floating-point and
// SIMD moves and arithmetic, barriers.
var arm64Keeps = func() map[arm64asm.Op]bool {
	m := map[arm64asm.Op]bool{}
	for _, op := range []arm64asm.Op{
		arm64asm.ADD, arm64asm.ADDS, arm64asm.SUB, arm64asm.SUBS, arm64asm.CMP, arm64asm.CMN,
		arm64asm.MOV, arm64asm.MOVZ, arm64asm.MOVK, arm64asm.MOVN, arm64asm.AND, arm64asm.ANDS,
		arm64asm.ORR, arm64asm.ORN, arm64asm.EOR, arm64asm.EON, arm64asm.BIC, arm64asm.BICS, arm64asm.TST,
		arm64asm.LSL, arm64asm.LSR, arm64asm.ASR, arm64asm.ROR, arm64asm.MUL, arm64asm.MADD, arm64asm.MSUB,
		arm64asm.MNEG, arm64asm.SDIV, arm64asm.UDIV, arm64asm.SMULL, arm64asm.UMULL, arm64asm.SMULH,
		arm64asm.UMULH, arm64asm.SMADDL, arm64asm.UMADDL, arm64asm.NEG, arm64asm.NEGS, arm64asm.MVN,
		arm64asm.ADC, arm64asm.ADCS, arm64asm.SBC, arm64asm.SBCS,
		arm64asm.CSEL, arm64asm.CSINC, arm64asm.CSINV, arm64asm.CSNEG, arm64asm.CSET, arm64asm.CSETM,
		arm64asm.CINC, arm64asm.CINV, arm64asm.CNEG, arm64asm.CCMP, arm64asm.CCMN,
		arm64asm.SXTW, arm64asm.SXTB, arm64asm.SXTH, arm64asm.UXTB, arm64asm.UXTH,
		arm64asm.UBFM, arm64asm.SBFM, arm64asm.BFM, arm64asm.UBFX, arm64asm.SBFX, arm64asm.BFI,
		arm64asm.BFXIL, arm64asm.UBFIZ, arm64asm.SBFIZ, arm64asm.EXTR, arm64asm.CLZ, arm64asm.CLS,
		arm64asm.REV, arm64asm.REV16, arm64asm.REV32, arm64asm.RBIT, arm64asm.ADR, arm64asm.ADRP,
		arm64asm.LDR, arm64asm.LDRB, arm64asm.LDRH, arm64asm.LDRSW, arm64asm.LDRSB, arm64asm.LDRSH,
		arm64asm.LDUR, arm64asm.LDURB, arm64asm.LDURH, arm64asm.LDURSW, arm64asm.LDURSB, arm64asm.LDURSH,
		arm64asm.STR, arm64asm.STRB, arm64asm.STRH, arm64asm.STUR, arm64asm.STURB, arm64asm.STURH,
		arm64asm.LDP, arm64asm.STP, arm64asm.LDPSW,
		arm64asm.B, arm64asm.CBZ, arm64asm.CBNZ, arm64asm.TBZ, arm64asm.TBNZ,
		arm64asm.FMOV, arm64asm.FADD, arm64asm.FSUB, arm64asm.FMUL, arm64asm.FDIV, arm64asm.FCMP,
		arm64asm.FCMPE, arm64asm.FCVT, arm64asm.SCVTF, arm64asm.UCVTF, arm64asm.FCVTZS, arm64asm.FCVTZU,
		arm64asm.FCSEL, arm64asm.FABS, arm64asm.FNEG, arm64asm.FSQRT, arm64asm.FMADD, arm64asm.FMSUB,
		arm64asm.LD1, arm64asm.ST1, arm64asm.DUP, arm64asm.INS, arm64asm.UMOV, arm64asm.MOVI,
		arm64asm.DMB, arm64asm.DSB, arm64asm.ISB,
	} {
		m[op] = true
	}
	return m
}()
