//go:build cgo

package linux

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// The time-stamp counters. The engine runs the guest at user privilege
// with its counters trapping (CR4.TSD on x86-64, CNTKCTL_EL1 clear on
// AArch64: emu's usermode.c), so that rdtsc and reads of CNTVCT_EL0,
// CNTPCT_EL0 and CNTFRQ_EL0 come here instead of from the host's clock,
// which would make runs differ. They count at 1 GHz on the guest's
// monotonic clock (sys_time.go): a nanosecond per instruction, plus
// sleeps. The read is emulated from the interrupt hook; the hook stops
// the engine (Unicorn would put an x86 PC back at the instruction) and
// Continue goes on after it.

// counterHz is the frequency CNTFRQ_EL0 reports: the counters count
// nanoseconds.
const counterHz = 1_000_000_000

// counter returns the counters' value now.
func (p *Process) counter() uint64 {
	t, _ := p.now(1) // CLOCK_MONOTONIC
	return uint64(t)
}

// emulated sets the PC the guest goes on from, after the instruction at
// pc of size bytes the hook answered, and stops the engine.
func (p *Process) emulated(pc, size uint64) {
	p.resumePC, p.resume = pc+size, true
	p.Engine.Stop()
}

// amd64Counter answers an rdtsc at pc that raised #GP; false if the
// instruction there is something else.
func amd64Counter(p *Process, pc uint64) bool {
	var code [15]byte
	n, _ := p.Engine.ReadCode(pc, code[:])
	inst, err := arch.DecodeX86(code[:n])
	if err != nil || inst.Op != x86asm.RDTSC {
		return false
	}
	v := p.counter()
	if p.Engine.WriteRegs([]emu.RegID{emu.X86RAX, emu.X86RDX}, []uint64{v & 0xffffffff, v >> 32}) != nil {
		return false
	}
	p.emulated(pc, uint64(inst.Len))
	return true
}

// arm64 counter-timer registers, as MRS encodes them (the instruction
// with Rt 0).
const (
	mrsCNTFRQ   = 0xd53be000
	mrsCNTPCT   = 0xd53be020
	mrsCNTVCT   = 0xd53be040
	mrsCNTPCTSS = 0xd53be0a0
	mrsCNTVCTSS = 0xd53be0c0
)

// arm64Counter answers a read of a counter-timer register at pc that
// trapped as undefined; false if the instruction there is something else.
func arm64Counter(p *Process, pc uint64) bool {
	var b [4]byte
	if p.Engine.ReadMem(pc, b[:]) != nil {
		return false
	}
	w := binary.LittleEndian.Uint32(b[:])
	var v uint64
	switch w &^ 0x1f {
	case mrsCNTFRQ:
		v = counterHz
	case mrsCNTPCT, mrsCNTVCT, mrsCNTPCTSS, mrsCNTVCTSS:
		v = p.counter()
	default:
		return false
	}
	if rt := w & 0x1f; rt != 31 { // xzr: the value goes nowhere
		if p.Engine.SetReg(emu.ARM64X(int(rt)), v) != nil {
			return false
		}
	}
	p.emulated(pc, 4)
	return true
}
