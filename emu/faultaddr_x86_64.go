//go:build cgo

package emu

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
)

// x86PhysMask: Unicorn's x86-64 (no paging) hands the invalid-memory
// hooks the physical address, the virtual one cut to its 52 bits
// (TARGET_PHYS_ADDR_SPACE_BITS): a fault at 0xfffffffffffffff8 comes as
// 0xffffffffffff8.
const x86PhysMask = 1<<52 - 1

// x86FaultAddr gives the 64-bit virtual address of an invalid access
// Unicorn reported at addr (cut to 52 bits): the one of the candidates —
// the faulting instruction's memory operand, the registers its implicit
// operands use (rsp, rsi, rdi), the PC for a fetch — whose low 52 bits
// lie within 64 bytes of addr, with its high bits. Without such a
// candidate, addr as reported.
func (e *Engine) x86FaultAddr(kind string, addr, pc uint64) uint64 {
	reg := func(id RegID) uint64 {
		v, _ := e.Reg(id)
		return v
	}
	var cands []uint64
	if kind == "fetch" {
		cands = append(cands, reg(X86RIP), pc)
	} else {
		var code [15]byte
		n, _ := e.ReadCode(pc, code[:])
		if inst, err := arch.DecodeX86(code[:n]); err == nil {
			for _, a := range inst.Args {
				m, ok := a.(x86asm.Mem)
				if !ok {
					continue
				}
				ea := uint64(m.Disp)
				switch m.Base {
				case x86asm.RIP:
					ea += pc + uint64(inst.Len)
				case 0:
				default:
					ea += e.x86Reg(m.Base)
				}
				if m.Index != 0 {
					ea += e.x86Reg(m.Index) * uint64(m.Scale)
				}
				switch m.Segment {
				case x86asm.FS:
					ea += reg(X86FSBase)
				case x86asm.GS:
					ea += reg(X86GSBase)
				}
				cands = append(cands, ea)
			}
		}
		cands = append(cands, reg(X86RSP), reg(X86RSI), reg(X86RDI))
	}
	for _, c := range cands {
		d := int64((addr-c)<<12) >> 12 // addr - c in 52 bits, signed
		if d > -64 && d < 64 {
			return c + uint64(d)
		}
	}
	return addr
}

// x86RegIDs are the engine's IDs of x86asm's RAX … R15, in its order.
var x86RegIDs = [...]RegID{X86RAX, X86RCX, X86RDX, X86RBX, X86RSP, X86RBP, X86RSI, X86RDI,
	X86R8, X86R9, X86R10, X86R11, X86R12, X86R13, X86R14, X86R15}

// x86Reg reads a 64-bit general register named by x86asm (0 for others:
// a 32-bit address has no bits to lose).
func (e *Engine) x86Reg(r x86asm.Reg) uint64 {
	if r < x86asm.RAX || r > x86asm.R15 {
		return 0
	}
	v, _ := e.Reg(x86RegIDs[r-x86asm.RAX])
	return v
}
