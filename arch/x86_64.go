package arch

import (
	"debug/elf"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/sframe"
)

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
	classify:  classifyAMD64,
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

func disasmAMD64(code []byte, pc uint64, sym func(uint64) (string, uint64)) (string, int) {
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return "(bad)", 1
	}
	return x86asm.GNUSyntax(inst, pc, sym), inst.Len
}
