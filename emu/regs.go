//go:build cgo

package emu

/*
#include <unicorn/unicorn.h>
*/
import "C"

import (
	"fmt"

	"github.com/sframesim/sframesim/arch"
)

// RegID is a register as libunicorn numbers it for the engine's
// architecture (UC_X86_REG_*, UC_ARM64_REG_*). Callers usually name
// registers by DWARF number (arch.Reg) and translate with Engine.RegID;
// the Linux layer also uses the few registers DWARF has no number for
// (regs_x86_64.go, regs_aarch64.go).
type RegID int

// NoRegID is the RegID of a register libunicorn does not have.
const NoRegID RegID = -1

// ucArch is how libunicorn is opened for one architecture, and its
// register ids by DWARF number.
type ucArch struct {
	arch, mode, cpu int // cpu < 0: libunicorn's default model
	dwarf           map[arch.Reg]RegID
}

// ucArchOf returns the libunicorn description of a, or nil.
func ucArchOf(a *arch.Arch) *ucArch {
	switch a {
	case arch.AMD64:
		return ucAMD64
	case arch.ARM64:
		return ucARM64
	}
	return nil
}

// RegID returns the libunicorn id of DWARF register r of the engine's
// architecture, or NoRegID.
func (e *Engine) RegID(r arch.Reg) RegID {
	if id, ok := e.uca.dwarf[r]; ok {
		return id
	}
	return NoRegID
}

// frameRegs lists the registers the C hook records per instruction: PC,
// SP, FP and, where there is one, the link register.
func (e *Engine) frameRegs() []RegID {
	a := e.arch
	ids := []RegID{e.RegID(a.PC), e.RegID(a.SP), e.RegID(a.FP)}
	if a.HasLinkRegister() {
		ids = append(ids, e.RegID(a.LR))
	}
	return ids
}

// PC reads the program counter.
func (e *Engine) PC() (uint64, error) { return e.Reg(e.RegID(e.arch.PC)) }

// ReadDWARF reads DWARF register r of the engine's architecture.
func (e *Engine) ReadDWARF(r arch.Reg) (uint64, error) {
	id := e.RegID(r)
	if id == NoRegID {
		return 0, fmt.Errorf("no register with DWARF number %d on %s", r, e.arch.Name)
	}
	return e.Reg(id)
}

// FrameState reads what the C hook records per instruction (PC, SP, FP,
// link register) from the engine's current state; Size is 0.
func (e *Engine) FrameState() (Record, error) {
	ids := e.frameRegs()
	var v [4]uint64
	if err := e.ReadRegs(ids, v[:len(ids)]); err != nil {
		return Record{}, err
	}
	return Record{PC: v[0], SP: v[1], FP: v[2], RA: v[3]}, nil
}
