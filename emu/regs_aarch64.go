//go:build cgo

package emu

/*
#include <unicorn/unicorn.h>
*/
import "C"

import "github.com/sframesim/sframesim/arch"

// ARM64X returns the libunicorn id of general register x<n> (0–30), or
// NoRegID.
func ARM64X(n int) RegID {
	switch {
	case n == 29:
		return C.UC_ARM64_REG_X29
	case n == 30:
		return C.UC_ARM64_REG_X30
	case n >= 0 && n <= 28:
		return RegID(C.UC_ARM64_REG_X0 + n)
	}
	return NoRegID
}

// libunicorn's AArch64 registers the Linux layer uses by name.
const (
	ARM64SP RegID = C.UC_ARM64_REG_SP
	ARM64PC RegID = C.UC_ARM64_REG_PC
	// PSTATE (NZCV and the rest, as SPSR holds it), and the floating-point
	// control and status registers.
	ARM64PSTATE RegID = C.UC_ARM64_REG_PSTATE
	ARM64NZCV   RegID = C.UC_ARM64_REG_NZCV
	ARM64FPCR   RegID = C.UC_ARM64_REG_FPCR
	ARM64FPSR   RegID = C.UC_ARM64_REG_FPSR
)

// ARM64V returns the id of SIMD register v<i> (0–31: 16 bytes each,
// RegBytes).
func ARM64V(i int) RegID { return RegID(C.UC_ARM64_REG_V0 + i) }

// ucARM64 opens AArch64 on the "max" CPU model, which has FEAT_PAuth:
// paciasp really signs the return address. DWARF: x0–x30, 31 sp, 32 pc.
var ucARM64 = &ucArch{
	arch: C.UC_ARCH_ARM64, mode: C.UC_MODE_ARM, cpu: C.UC_CPU_ARM64_MAX,
	dwarf: func() map[arch.Reg]RegID {
		m := map[arch.Reg]RegID{31: C.UC_ARM64_REG_SP, 32: C.UC_ARM64_REG_PC}
		for i := 0; i <= 30; i++ {
			m[arch.Reg(i)] = ARM64X(i)
		}
		return m
	}(),
}
