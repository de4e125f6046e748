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
	X86RBX    RegID = C.UC_X86_REG_RBX
	X86RBP    RegID = C.UC_X86_REG_RBP
	X86R11    RegID = C.UC_X86_REG_R11
	X86R12    RegID = C.UC_X86_REG_R12
	X86R13    RegID = C.UC_X86_REG_R13
	X86R14    RegID = C.UC_X86_REG_R14
	X86R15    RegID = C.UC_X86_REG_R15
	X86EFLAGS RegID = C.UC_X86_REG_EFLAGS

	// The x87 and SSE state (what fxsave stores): control, status and
	// tag words, last instruction and operand pointers and opcode, MXCSR.
	X86FPCW  RegID = C.UC_X86_REG_FPCW
	X86FPSW  RegID = C.UC_X86_REG_FPSW
	X86FPTAG RegID = C.UC_X86_REG_FPTAG
	X86FIP   RegID = C.UC_X86_REG_FIP
	X86FDP   RegID = C.UC_X86_REG_FDP
	X86FOP   RegID = C.UC_X86_REG_FOP
	X86MXCSR RegID = C.UC_X86_REG_MXCSR
)

// X86ST returns the id of x87 stack register st(i) (0–7: 10 bytes each,
// RegBytes).
func X86ST(i int) RegID { return RegID(C.UC_X86_REG_ST0 + i) }

// X86XMM returns the id of xmm<i> (0–15: 16 bytes each, RegBytes).
func X86XMM(i int) RegID { return RegID(C.UC_X86_REG_XMM0 + i) }

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
