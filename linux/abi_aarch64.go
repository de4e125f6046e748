//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"

	"github.com/sframesim/sframesim/emu"
)

// The AArch64 side of the Linux layer: system calls are svc #0 (number in
// x8, arguments in x0-x5, result in x0), which unicorn reports as
// interrupt 2 (EXCP_SWI) with the PC already past the svc; TLS is
// TPIDR_EL0, which the program sets itself; struct stat is the generic
// 128-byte one.

var arm64 = &sysABI{
	sysRegs: [7]emu.RegID{emu.ARM64X(8), emu.ARM64X(0), emu.ARM64X(1), emu.ARM64X(2),
		emu.ARM64X(3), emu.ARM64X(4), emu.ARM64X(5)},
	ret:      emu.ARM64X(0),
	names:    arm64SyscallNames[:],
	machine:  "aarch64",
	platform: "aarch64",
	hwcap:    func() uint64 { return arm64Hwcap },
	// A 39-bit address space (4 KiB pages, 3 levels), as many arm64
	// kernels have: the emulated CPU's physical address range, which is
	// what addresses are with the MMU off, ends at 2^44, so Linux's 48-bit
	// layout (stack below 2^48) would not fit.
	stackTop:   0x7f_ffff_f000,
	mmapTop:    0x7f_ffff_f000 - 128<<20,
	pieBase:    0x55_5555_0000,
	oDirectory: 0o40000,
	insnPC:     func(pc uint64) uint64 { return pc - 4 },
	stat:       arm64Stat,
	start:      arm64Start,
	// MINSIGSTKSZ; AT_MINSIGSTKSZ is signal_minsigstksz: the frame (4688),
	// the frame record (16) and 16 bytes of alignment.
	minSigStkSz:    5120,
	sigFrameMax:    4720,
	setupFrame:     arm64SetupFrame,
	restoreFrame:   arm64RestoreFrame,
	illCode:        illIllopc,
	restartSyscall: 128,
	memFault:       arm64MemFault,
	trapInfo:       func(p *Process, trap int, pc uint64) { arm64NotifyDie(p, 0) },
}

// arm64MemFault records a memory abort as set_thread_esr does: the fault
// address and the ESR of a data or instruction abort from EL0 (EC 0x24 or
// 0x20, IL, WnR for a write) with the status code of a translation fault
// or, for a protected page, a permission fault. The layer has no page
// tables: it reports both at level 3.
func arm64MemFault(p *Process, f emu.Fault, prot bool) {
	const ecDABTLow, ecIABTLow, il, wnr = 0x24, 0x20, 1 << 25, 1 << 6
	const transL3, permL3 = 0x07, 0x0f
	ec := uint64(ecDABTLow)
	if f.Kind == "fetch" {
		ec = ecIABTLow
	}
	esr := ec<<26 | il | transL3
	if prot {
		esr = esr&^0x3f | permL3
	}
	if f.Kind == "write" {
		esr |= wnr
	}
	t := p.thr.cur
	t.sig.faultAddr, t.sig.errCode = f.Addr, esr
}

// arm64NotifyDie is what arm64_notify_die leaves for the frame: no fault
// address, ESR err.
func arm64NotifyDie(p *Process, err uint64) {
	t := p.thr.cur
	t.sig.faultAddr, t.sig.errCode = 0, err
}

// arm64Hwcap is AT_HWCAP: what the emulated "max" CPU has of FP, ASIMD,
// AES, PMULL, SHA1, SHA2, CRC32, ATOMICS, FPHP, ASIMDHP, ASIMDRDM, LRCPC,
// DCPOP, ASIMDDP, PACA and PACG. SVE, MTE and HWCAP_CPUID (MIDR_EL1 reads)
// are left out, so glibc picks its plain string functions.
const arm64Hwcap = 1<<0 | 1<<1 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 |
	1<<12 | 1<<15 | 1<<16 | 1<<20 | 1<<30 | 1<<31

// AArch64 exception numbers unicorn passes to the interrupt hook
// (QEMU's EXCP_*).
const (
	excpUDEF          = 1
	excpSWI           = 2
	excpPrefetchAbort = 3
	excpDataAbort     = 4
	excpBKPT          = 7
	excpUnaligned     = 22
)

func arm64Start(p *Process) error {
	p.Engine.OnInterrupt(func(intno uint32) {
		switch intno {
		case excpSWI:
			p.syscall()
		case excpUDEF:
			// At EL0, privileged instructions (msr to DAIF or an EL1
			// register, smc, hvc, eret, mrs of MIDR_EL1, …) land here
			// too, and so do counter-timer reads, which are answered
			// from the guest's clock (counters.go).
			pc, _ := p.Engine.PC()
			if arm64Counter(p, pc) {
				return
			}
			arm64NotifyDie(p, 0)
			p.forceFault(sigInfo{signo: sigILL, code: illIllopc, addr: pc, fault: true}, pc, pc, "SIGILL: undefined instruction")
		case excpPrefetchAbort, excpDataAbort:
			// Addresses beyond the physical address range abort rather
			// than fault as unmapped; the address is not known.
			pc, _ := p.Engine.PC()
			p.forceFault(sigInfo{signo: sigSEGV, code: segvMaperr, fault: true}, pc, pc, "SIGSEGV: memory abort (address out of range)")
		case excpBKPT:
			// brk: the PC stays at the instruction (send_user_sigtrap).
			pc, _ := p.Engine.PC()
			p.forceFault(sigInfo{signo: sigTRAP, code: trapBrkpt, addr: pc, fault: true}, pc, pc, "SIGTRAP: breakpoint (brk)")
		case excpUnaligned:
			pc, _ := p.Engine.PC()
			p.forceFault(sigInfo{signo: sigBUS, code: busAdraln, fault: true}, pc, pc, "SIGBUS: unaligned access")
		default:
			p.stop(StopFault, 0, fmt.Sprintf("CPU exception %d", intno))
		}
	})
	if err := p.Engine.WriteSysReg(emu.SysRegTPIDR_EL0, 0); err != nil {
		return err
	}
	// x0 is the rtld_fini function _start passes to __libc_start_main:
	// none for a static program (ld.so passes its own to a dynamic one).
	return p.Engine.WriteRegs([]emu.RegID{emu.ARM64SP, emu.ARM64PC, emu.ARM64X(0)},
		[]uint64{p.SP, p.start, 0})
}

// arm64Stat encodes the generic struct stat (asm-generic/stat.h).
func arm64Stat(st statInfo) []byte {
	b := make([]byte, 128)
	le := binary.LittleEndian
	le.PutUint64(b[0:], st.dev)
	le.PutUint64(b[8:], st.ino)
	le.PutUint32(b[16:], st.mode)
	le.PutUint32(b[20:], uint32(st.nlink))
	le.PutUint32(b[24:], st.uid)
	le.PutUint32(b[28:], st.gid)
	le.PutUint64(b[32:], st.rdev)
	le.PutUint64(b[48:], uint64(st.size))
	le.PutUint32(b[56:], uint32(st.blksize))
	le.PutUint64(b[64:], uint64(st.blocks))
	for i, t := range statTimes(st) { // atime, mtime, ctime
		le.PutUint64(b[72+16*i:], uint64(t.sec))
		le.PutUint64(b[80+16*i:], uint64(t.nsec))
	}
	return b
}
