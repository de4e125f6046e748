//go:build cgo

package emu

/*
#include <unicorn/unicorn.h>
*/
import "C"

import "github.com/sframesim/sframesim/arch"

// libunicorn's x86-64 registers the Linux layer uses by name.
const (
	X86RAX    RegID = C.UC_X86_REG_RAX
	X86RCX    RegID = C.UC_X86_REG_RCX
	X86RDX    RegID = C.UC_X86_REG_RDX
	X86RSI    RegID = C.UC_X86_REG_RSI
	X86RDI    RegID = C.UC_X86_REG_RDI
	X86RSP    RegID = C.UC_X86_REG_RSP
	X86RIP    RegID = C.UC_X86_REG_RIP
	X86R8     RegID = C.UC_X86_REG_R8
	X86R9     RegID = C.UC_X86_REG_R9
	X86R10    RegID = C.UC_X86_REG_R10
	X86CR4    RegID = C.UC_X86_REG_CR4
	X86FSBase RegID = C.UC_X86_REG_FS_BASE
	X86GSBase RegID = C.UC_X86_REG_GS_BASE
	X86FPCW   RegID = C.UC_X86_REG_FPCW
	X86MXCSR  RegID = C.UC_X86_REG_MXCSR
)

// ucAMD64 opens x86-64 in 64-bit mode; DWARF registers 0–16 of the psABI.
var ucAMD64 = &ucArch{
	arch: C.UC_ARCH_X86, mode: C.UC_MODE_64, cpu: -1,
	dwarf: map[arch.Reg]RegID{
		0: C.UC_X86_REG_RAX, 1: C.UC_X86_REG_RDX, 2: C.UC_X86_REG_RCX, 3: C.UC_X86_REG_RBX,
		4: C.UC_X86_REG_RSI, 5: C.UC_X86_REG_RDI, 6: C.UC_X86_REG_RBP, 7: C.UC_X86_REG_RSP,
		8: C.UC_X86_REG_R8, 9: C.UC_X86_REG_R9, 10: C.UC_X86_REG_R10, 11: C.UC_X86_REG_R11,
		12: C.UC_X86_REG_R12, 13: C.UC_X86_REG_R13, 14: C.UC_X86_REG_R14, 15: C.UC_X86_REG_R15,
		16: C.UC_X86_REG_RIP,
	},
}
