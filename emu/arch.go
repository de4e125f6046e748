//go:build cgo

package emu

/*
#include <unicorn/unicorn.h>
*/
import "C"

import "debug/elf"

// Arch describes one guest architecture: everything arch-specific the
// emulator needs, selected in one place (ArchFor).
type Arch struct {
	Name    string // "x86-64", "aarch64"
	Machine elf.Machine
	PtrSize int
	// Unicorn register ids of the program counter, stack pointer, frame
	// pointer and link register (RA < 0: the return address lives on the
	// stack, as on x86-64).
	PC, SP, FP, RA int

	ucArch, ucMode, ucCPU int
}

// frameRegs lists the registers the C hook records per instruction: PC,
// SP, FP and, where there is one, the link register.
func (a *Arch) frameRegs() []int {
	if a.RA < 0 {
		return []int{a.PC, a.SP, a.FP}
	}
	return []int{a.PC, a.SP, a.FP, a.RA}
}

// AMD64 is x86-64 in 64-bit mode.
var AMD64 = &Arch{
	Name: "x86-64", Machine: elf.EM_X86_64, PtrSize: 8,
	PC: C.UC_X86_REG_RIP, SP: C.UC_X86_REG_RSP, FP: C.UC_X86_REG_RBP, RA: -1,
	ucArch: C.UC_ARCH_X86, ucMode: C.UC_MODE_64, ucCPU: -1,
}

// ARM64 is AArch64, little-endian, on the "max" CPU model, which has
// FEAT_PAuth: paciasp really signs the return address.
var ARM64 = &Arch{
	Name: "aarch64", Machine: elf.EM_AARCH64, PtrSize: 8,
	PC: C.UC_ARM64_REG_PC, SP: C.UC_ARM64_REG_SP, FP: C.UC_ARM64_REG_X29, RA: C.UC_ARM64_REG_X30,
	ucArch: C.UC_ARCH_ARM64, ucMode: C.UC_MODE_ARM, ucCPU: C.UC_CPU_ARM64_MAX,
}

// ArchFor returns the Arch of an ELF machine, or nil.
func ArchFor(m elf.Machine) *Arch {
	switch m {
	case elf.EM_X86_64:
		return AMD64
	case elf.EM_AARCH64:
		return ARM64
	}
	return nil
}

// ARM64X returns the unicorn id of general register x<n> (0–30).
func ARM64X(n int) int {
	switch {
	case n == 29:
		return C.UC_ARM64_REG_X29
	case n == 30:
		return C.UC_ARM64_REG_X30
	case n >= 0 && n <= 28:
		return C.UC_ARM64_REG_X0 + n
	}
	return -1
}

// DWARFReg returns the unicorn id of DWARF register n of the architecture
// (psABI numbering: x86-64 0–16 = rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
// r8–r15, rip; AArch64 0–30 = x0–x30, 31 = sp), or -1.
func (a *Arch) DWARFReg(n int) int {
	if a == ARM64 {
		if n == 31 {
			return C.UC_ARM64_REG_SP
		}
		return ARM64X(n)
	}
	x86 := [...]int{C.UC_X86_REG_RAX, C.UC_X86_REG_RDX, C.UC_X86_REG_RCX, C.UC_X86_REG_RBX,
		C.UC_X86_REG_RSI, C.UC_X86_REG_RDI, C.UC_X86_REG_RBP, C.UC_X86_REG_RSP,
		C.UC_X86_REG_R8, C.UC_X86_REG_R9, C.UC_X86_REG_R10, C.UC_X86_REG_R11,
		C.UC_X86_REG_R12, C.UC_X86_REG_R13, C.UC_X86_REG_R14, C.UC_X86_REG_R15, C.UC_X86_REG_RIP}
	if n >= 0 && n < len(x86) {
		return x86[n]
	}
	return -1
}
