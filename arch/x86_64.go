package arch

import (
	"debug/elf"
	"errors"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/sframe"
)

// DecodeX86 decodes one x86-64 instruction as x86asm.Decode does, with two
// differences:
//   - The hint NOPs 0F 19–0F 1F /r, which x86asm rejects in their register
//     forms and for 0F 19–0F 1E in all forms, decode as NOP with their r/m
//     operand. Among them are endbr64 and endbr32 (F3 0F 1E FA/FB), at
//     the start of every function built with -fcf-protection (the default
//     of several distributions), and rdssp: a CPU without CET, Unicorn's,
//     runs them all as NOPs.
//   - What x86asm returns without an error but with no operation (it does
//     for some F3-prefixed instructions, as a one-byte "rep") is an error:
//     such a length would split the instruction.
func DecodeX86(code []byte) (x86asm.Inst, error) {
	inst, err := x86asm.Decode(code, 64)
	if err == nil && inst.Op != 0 {
		return inst, nil
	}
	if hint, ok := decodeHintNOP(code); ok {
		return hint, nil
	}
	if err == nil {
		err = errUnknownX86
	}
	return x86asm.Inst{}, err
}

var errUnknownX86 = errors.New("unrecognized instruction")

// decodeHintNOP decodes code as a hint NOP (prefixes, a REX prefix, 0F 19–
// 0F 1F, ModRM and what it implies): the length and r/m operand are those
// of mov r32, r/m32 (8B) with the same ModRM, REX and size prefixes.
func decodeHintNOP(code []byte) (x86asm.Inst, bool) {
	var buf [16]byte
	n, dropped, p := 0, 0, 0
	for ; p < len(code) && p < 14; p++ {
		switch code[p] {
		case 0xf2, 0xf3, 0xf0:
			dropped++ // rep/repne/lock: no part of a NOP's operand
			continue
		case 0x66, 0x67, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
			buf[n] = code[p]
			n++
			continue
		}
		break
	}
	if p < len(code) && code[p]&0xf0 == 0x40 {
		buf[n] = code[p]
		n, p = n+1, p+1
	}
	if p+2 >= len(code) || code[p] != 0x0f || code[p+1] < 0x19 || code[p+1] > 0x1f {
		return x86asm.Inst{}, false
	}
	buf[n] = 0x8b
	m := n + 1 + copy(buf[n+1:], code[p+2:])
	mov, err := x86asm.Decode(buf[:m], 64)
	if err != nil || mov.Op != x86asm.MOV {
		return x86asm.Inst{}, false
	}
	inst := x86asm.Inst{Op: x86asm.NOP, Mode: 64, DataSize: mov.DataSize, AddrSize: mov.AddrSize, MemBytes: mov.MemBytes,
		Len: mov.Len + 1 + dropped, Opcode: uint32(code[p])<<24 | uint32(code[p+1])<<16}
	inst.Args[0] = mov.Args[1]
	return inst, true
}

// isENDBR reports whether code starts with endbr64 or endbr32, and which.
func isENDBR(code []byte) (string, bool) {
	if len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e {
		switch code[3] {
		case 0xfa:
			return "endbr64", true
		case 0xfb:
			return "endbr32", true
		}
	}
	return "", false
}

// AMD64 is x86-64 in 64-bit mode. A call pushes the return address, so
// there is no link register; the return address of a frame is at CFA-8.
var AMD64 = &Arch{
	Name: "x86-64", Machine: elf.EM_X86_64, PtrSize: 8,
	ABIs: []sframe.ABI{sframe.ABIAMD64LE},
	PC:   16, SP: 7, FP: 6, LR: NoReg,
	// In the usual order: rax rbx rcx rdx rsi rdi rbp rsp r8–r15 rip.
	Registers: []Reg{0, 3, 2, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	Signal:    amd64Signal,
	names:     amd64Names(),
	keeps:     keepsFrameAMD64,
	effect:    stackEffectAMD64,
	move:      frameMoveAMD64,
	classify:  classifyAMD64,
	facts:     factsAMD64,
	disasm:    disasmAMD64,
}

// amd64Signal: the x86-64 rt_sigframe (arch/x86/include/asm/sigframe.h)
// starts with pretcode, the handler's return address, which the handler's
// ret pops: the trampoline's stack pointer is the ucontext (struct
// ucontext: uc_flags, uc_link, uc_stack of 24 bytes, then uc_mcontext at
// 40). struct sigcontext (arch/x86/include/uapi/asm/sigcontext.h) holds
// r8–r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip in that order, 8
// bytes each.
var amd64Signal = SignalContext{
	MContext: 40,
	// DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8–r15 rip.
	Regs: []uint64{13 * 8, 12 * 8, 14 * 8, 11 * 8, 9 * 8, 8 * 8, 10 * 8, 15 * 8,
		0, 1 * 8, 2 * 8, 3 * 8, 4 * 8, 5 * 8, 6 * 8, 7 * 8, 16 * 8},
	Sigreturn: []Sequence{
		// mov $15,%rax; syscall (glibc's __restore_rt; libgcc's check)
		{Code: []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}, Insns: []int{0, 7}},
		// mov $15,%eax; syscall (what gas makes of mov $15,%eax, musl)
		{Code: []byte{0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}, Insns: []int{0, 5}},
	},
}

// amd64DWARF names the DWARF registers 0–16 of the x86-64 psABI.
var amd64DWARF = [...]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

func amd64Names() map[Reg]string {
	m := make(map[Reg]string, len(amd64DWARF))
	for i, n := range amd64DWARF {
		m[Reg(i)] = n
	}
	return m
}

func classifyAMD64(code []byte) (Flow, int) {
	inst, err := DecodeX86(code)
	if err != nil {
		return FlowBad, 0
	}
	return classifyInstAMD64(&inst)
}

func classifyInstAMD64(inst *x86asm.Inst) (Flow, int) {
	switch inst.Op {
	case x86asm.CALL:
		return FlowCall, inst.Len
	case x86asm.RET:
		return FlowRet, inst.Len
	}
	return FlowOther, inst.Len
}

func disasmAMD64(code []byte, pc uint64, sym func(uint64) (string, uint64)) (string, int) {
	if name, ok := isENDBR(code); ok {
		return name, 4
	}
	inst, err := DecodeX86(code)
	if err != nil {
		return "(bad)", 1
	}
	return x86asm.GNUSyntax(inst, pc, sym), inst.Len
}

// factsAMD64 is Facts for x86-64: one decoding for the three.
func factsAMD64(code []byte) Facts {
	inst, err := DecodeX86(code)
	if err != nil {
		return Facts{Flow: FlowBad}
	}
	var f Facts
	f.Flow, f.Size = classifyInstAMD64(&inst)
	f.Keeps = keepsInstAMD64(&inst)
	f.SP, f.Link, f.Effect = effectInstAMD64(&inst)
	if !f.Effect {
		f.Move, f.Moves = moveInstAMD64(&inst)
	}
	return f
}

// frameMoveAMD64 is FrameMove for x86-64.
func frameMoveAMD64(code []byte) (Move, bool) {
	inst, err := DecodeX86(code)
	if err != nil {
		return Move{}, false
	}
	if _, _, ok := effectInstAMD64(&inst); ok {
		return Move{}, false
	}
	return moveInstAMD64(&inst)
}

// moveInstAMD64: see FrameMove. (An operand-size prefix makes pop and
// leave 16 bits wide, as with StackEffect.)
func moveInstAMD64(inst *x86asm.Inst) (Move, bool) {
	if inst.DataSize == 16 {
		return Move{}, false
	}
	// based reports whether a is d(%base) with no index (disp d).
	based := func(a x86asm.Arg, base x86asm.Reg) (int64, bool) {
		m, ok := a.(x86asm.Mem)
		return m.Disp, ok && m.Segment == 0 && m.Base == base && m.Index == 0
	}
	switch inst.Op {
	case x86asm.SUB, x86asm.ADD:
		imm, ok := inst.Args[1].(x86asm.Imm)
		if inst.Args[0] != x86asm.RSP || !ok || inst.Args[2] != nil {
			break
		}
		if inst.Op == x86asm.SUB {
			return Move{SP: -int64(imm)}, true
		}
		return Move{SP: int64(imm)}, true
	case x86asm.LEA:
		if d, ok := based(inst.Args[1], x86asm.RSP); ok {
			switch inst.Args[0] {
			case x86asm.RSP:
				return Move{SP: d}, true
			case x86asm.RBP:
				return Move{FP: MoveSet, FPOff: d}, true
			}
		}
		if d, ok := based(inst.Args[1], x86asm.RBP); ok && inst.Args[0] == x86asm.RSP {
			return Move{FromFP: true, SP: d}, true
		}
	case x86asm.MOV:
		switch {
		case inst.Args[0] == x86asm.RBP && inst.Args[1] == x86asm.RSP:
			return Move{FP: MoveSet}, true
		case inst.Args[0] == x86asm.RSP && inst.Args[1] == x86asm.RBP:
			return Move{FromFP: true}, true
		}
	case x86asm.POP:
		if inst.Args[0] == x86asm.RBP {
			return Move{SP: 8, FP: MoveLoad}, true
		}
	case x86asm.LEAVE:
		return Move{FromFP: true, SP: 8, FP: MoveLoad}, true
	}
	return Move{}, false
}

// keepsFrameAMD64 is KeepsFrame for x86-64: an operation of amd64Keeps
// that writes no register of the rsp or rbp families (as a source operand,
// or a memory operand's base or index, they are only read).
func keepsFrameAMD64(code []byte) bool {
	inst, err := DecodeX86(code)
	return err == nil && keepsInstAMD64(&inst)
}

func keepsInstAMD64(inst *x86asm.Inst) bool {
	if !amd64Keeps[inst.Op] {
		return false
	}
	written := amd64Writes(inst.Op)
	for i, a := range inst.Args {
		switch a := a.(type) {
		case nil, x86asm.Mem, x86asm.Imm, x86asm.Rel:
		case x86asm.Reg:
			switch a {
			case x86asm.RSP, x86asm.ESP, x86asm.SP, x86asm.SPB, x86asm.RBP, x86asm.EBP, x86asm.BP, x86asm.BPB:
				if i < written {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// amd64Writes returns how many of an operation's leading operands (in
// Intel order, the destination first) it writes, of those amd64Keeps
// lists: none for comparisons, tests, jumps and nop, else the first (the
// others are sources; mul and div write rax and rdx besides, which are no
// frame registers). A frame register an instruction only reads, as in
// mov %rbp,%rdi where rbp is one more callee-saved register, keeps.
func amd64Writes(op x86asm.Op) int {
	switch op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.UCOMISD, x86asm.COMISD, x86asm.NOP,
		x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG,
		x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS,
		x86asm.JO, x86asm.JP, x86asm.JS:
		return 0
	}
	return 1
}

// stackEffectAMD64 is StackEffect for x86-64.
func stackEffectAMD64(code []byte) (int64, bool, bool) {
	inst, err := DecodeX86(code)
	if err != nil {
		return 0, false, false
	}
	return effectInstAMD64(&inst)
}

func effectInstAMD64(inst *x86asm.Inst) (int64, bool, bool) {
	// (An operand-size prefix makes the stack operation 16 bits wide;
	// x/arch says 32 for the default, 64-bit one.)
	if inst.DataSize == 16 {
		return 0, false, false
	}
	gpr := func(a x86asm.Arg) bool {
		r, ok := a.(x86asm.Reg)
		return ok && r >= x86asm.RAX && r <= x86asm.R15 && r != x86asm.RSP && r != x86asm.RBP
	}
	switch inst.Op {
	case x86asm.CALL:
		return -8, false, true
	case x86asm.RET:
		if inst.Args[0] == nil {
			return 8, false, true
		}
	case x86asm.PUSH:
		// (push %rbp leaves FP as it was; pop %rbp does not.)
		if gpr(inst.Args[0]) || inst.Args[0] == x86asm.RBP {
			return -8, false, true
		}
	case x86asm.POP:
		if gpr(inst.Args[0]) {
			return 8, false, true
		}
	}
	return 0, false, false
}

// amd64Keeps lists the operations that write only their explicit operands,
// flags, or rax and rdx: data movement, arithmetic and logic, conditional
// moves and sets, jumps (direct or indirect) and common SSE moves and
// arithmetic. Not the string operations, exchanges, stack operations,
// calls or returns.
var amd64Keeps = func() map[x86asm.Op]bool {
	m := map[x86asm.Op]bool{}
	for _, op := range []x86asm.Op{
		x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA,
		x86asm.ADD, x86asm.SUB, x86asm.ADC, x86asm.SBB, x86asm.CMP, x86asm.TEST,
		x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.NOT, x86asm.NEG, x86asm.INC, x86asm.DEC,
		x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR, x86asm.SHLD, x86asm.SHRD,
		x86asm.IMUL, x86asm.MUL, x86asm.DIV, x86asm.IDIV,
		x86asm.CDQ, x86asm.CDQE, x86asm.CQO, x86asm.CWDE, x86asm.CBW, x86asm.CWD,
		x86asm.BT, x86asm.BTS, x86asm.BTR, x86asm.BTC, x86asm.BSF, x86asm.BSR,
		x86asm.TZCNT, x86asm.LZCNT, x86asm.POPCNT, x86asm.BSWAP, x86asm.NOP,
		x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG,
		x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS,
		x86asm.JO, x86asm.JP, x86asm.JS,
		x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB, x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVG,
		x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVNE, x86asm.CMOVNO, x86asm.CMOVNP,
		x86asm.CMOVNS, x86asm.CMOVO, x86asm.CMOVP, x86asm.CMOVS,
		x86asm.SETA, x86asm.SETAE, x86asm.SETB, x86asm.SETBE, x86asm.SETE, x86asm.SETG,
		x86asm.SETGE, x86asm.SETL, x86asm.SETLE, x86asm.SETNE, x86asm.SETNO, x86asm.SETNP,
		x86asm.SETNS, x86asm.SETO, x86asm.SETP, x86asm.SETS,
		x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQA, x86asm.MOVDQU,
		x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSS, x86asm.MOVSD_XMM,
		x86asm.PXOR, x86asm.XORPS, x86asm.XORPD, x86asm.ANDPS, x86asm.ANDPD, x86asm.ORPS,
		x86asm.ADDSD, x86asm.SUBSD, x86asm.MULSD, x86asm.DIVSD, x86asm.ADDSS, x86asm.SUBSS,
		x86asm.MULSS, x86asm.DIVSS, x86asm.CVTSI2SD, x86asm.CVTTSD2SI, x86asm.UCOMISD, x86asm.COMISD,
		x86asm.PCMPEQB, x86asm.PMOVMSKB, x86asm.PUNPCKLQDQ, x86asm.PSHUFD,
	} {
		m[op] = true
	}
	return m
}()
