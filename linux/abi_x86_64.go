//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// The x86-64 side of the Linux layer: system calls are the syscall
// instruction (number in rax, arguments in rdi rsi rdx r10 r8 r9, result in
// rax), TLS is the FS base (arch_prctl), struct stat is 144 bytes.

var amd64 = &sysABI{
	sysRegs: [7]emu.RegID{emu.X86RAX, emu.X86RDI, emu.X86RSI, emu.X86RDX,
		emu.X86R10, emu.X86R8, emu.X86R9},
	ret:        emu.X86RAX,
	names:      amd64SyscallNames[:],
	machine:    "x86_64",
	platform:   "x86_64",
	hwcap:      amd64Hwcap,
	stackTop:   0x7fff_ffff_f000,
	mmapTop:    0x7fff_ffff_f000 - 128<<20,
	pieBase:    0x5555_5555_4000,
	oDirectory: 0o200000,
	insnPC:     func(pc uint64) uint64 { return pc },
	// syscall leaves the return address in rcx and rflags in r11 (which
	// sysret takes back; user code runs with IF set).
	clobber: func(p *Process, pc uint64) error {
		fl, err := p.Engine.Reg(emu.X86EFLAGS)
		if err != nil {
			return err
		}
		return p.Engine.WriteRegs([]emu.RegID{emu.X86RCX, emu.X86R11}, []uint64{pc + 2, fl | eflagsIF | 2})
	},
	stat:      amd64Stat,
	start:     amd64Start,
	archPrctl: amd64ArchPrctl,
	// MINSIGSTKSZ; AT_MINSIGSTKSZ is get_sigframe_size() for FXSR without
	// XSAVE: rt_sigframe (440) + 15 + fxsave (512) + 63, rounded to 16.
	minSigStkSz:    2048,
	sigFrameMax:    1040,
	setupFrame:     amd64SetupFrame,
	restoreFrame:   amd64RestoreFrame,
	illCode:        illIllopn,
	restartSyscall: 219,
	memFault:       amd64MemFault,
	trapInfo:       amd64TrapInfo,
}

// x86 exception vectors.
const (
	trapDE = 0  // divide error
	trapBP = 3  // int3
	trapUD = 6  // invalid opcode
	trapGP = 13 // general protection
	trapPF = 14 // page fault
)

// amd64MemFault records a page fault as set_signal_archinfo does: trap
// 14, the error code (protection, write, user, instruction fetch), CR2.
func amd64MemFault(p *Process, f emu.Fault, prot bool) {
	const pfProt, pfWrite, pfUser, pfInstr = 1, 2, 4, 16
	code := uint64(pfUser)
	if prot {
		code |= pfProt
	}
	switch f.Kind {
	case "write":
		code |= pfWrite
	case "fetch":
		code |= pfInstr
	}
	t := p.thr.cur
	t.sig.trapNo, t.sig.errCode, t.sig.faultAddr = trapPF, code, f.Addr
}

// amd64TrapInfo records a trap's number (error code 0) for the frame.
func amd64TrapInfo(p *Process, trap int, pc uint64) {
	t := p.thr.cur
	t.sig.trapNo, t.sig.errCode = uint64(trap), 0
}

// amd64Interrupt handles a CPU exception Unicorn reports by vector (the
// faulting or trapping instruction is the last one started) as Linux does
// for user code: #DE is SIGFPE, int3 SIGTRAP (after the instruction), #UD
// SIGILL, int N with a vector user code may not use #GP (SIGSEGV), and so
// is any other #GP: the guest runs at CPL 3, where privileged instructions
// (hlt, cli, mov to a control or debug register, wrmsr, lgdt, swapgs, …)
// raise it. rdtsc raises it too (CR4.TSD) and is answered from the
// guest's clock (counters.go).
func amd64Interrupt(p *Process, intno uint32) {
	pc, size := p.Engine.LastInsn()
	next := pc + uint64(size)
	var b [2]byte
	intN := size == 2 && p.Engine.ReadMem(pc, b[:]) == nil && b[0] == 0xcd
	switch {
	case intno == trapDE:
		amd64TrapInfo(p, trapDE, pc)
		p.forceFault(sigInfo{signo: sigFPE, code: fpeIntdiv, addr: pc, fault: true}, pc, pc, "SIGFPE: divide error")
	case intno == trapBP || intno == 4 && intN: // int3, int 3; into's vector 4 (int 4)
		amd64TrapInfo(p, int(intno), pc)
		sig, what := sigTRAP, "SIGTRAP: int3"
		if intno == 4 {
			sig, what = sigSEGV, "SIGSEGV: int 0x4"
		}
		p.forceFault(sigInfo{signo: int32(sig), code: siKernel}, pc, next, what)
	case intno == trapUD:
		amd64TrapInfo(p, trapUD, pc)
		p.forceFault(sigInfo{signo: sigILL, code: illIllopn, addr: pc, fault: true}, pc, pc, "SIGILL: invalid instruction")
	case intno == trapGP && !intN:
		if amd64Counter(p, pc) {
			return
		}
		amd64TrapInfo(p, trapGP, pc)
		p.forceFault(sigInfo{signo: sigSEGV, code: siKernel}, pc, pc, "SIGSEGV: general protection fault (a privileged instruction)")
	case intno == 0x80 && intN:
		p.stopAt(StopUnsupported, 0, pc, "int 0x80: 32-bit system calls are not supported")
	case intN:
		t := p.thr.cur
		t.sig.trapNo, t.sig.errCode = trapGP, uint64(intno)<<3|2
		p.forceFault(sigInfo{signo: sigSEGV, code: siKernel}, pc, pc, fmt.Sprintf("SIGSEGV: int %#x", intno))
	default:
		p.stopAt(StopFault, 0, pc, fmt.Sprintf("CPU exception %d", intno))
	}
}

func amd64Start(p *Process) error {
	p.Engine.OnSyscall(p.syscall)
	p.Engine.OnInterrupt(func(intno uint32) { amd64Interrupt(p, intno) })
	// Unicorn lets in and out through at CPL 3 (it does not check the
	// I/O permission bitmap); Linux delivers their #GP as SIGSEGV.
	p.Engine.OnPortIO(func() {
		pc, _ := p.Engine.LastInsn()
		amd64TrapInfo(p, trapGP, pc)
		p.forceFault(sigInfo{signo: sigSEGV, code: siKernel}, pc, pc, "SIGSEGV: in/out: privileged instruction")
	})
	// Linux runs user code with CR4.OSFXSR and OSXMMEXCPT set; without
	// OSFXSR, fxsave and fxrstor skip the XMM registers, and ld.so's lazy
	// binding trampoline (fxsave, resolve, fxrstor) would lose the
	// floating-point arguments of the function it binds.
	const cr4OSFXSR, cr4OSXMMEXCPT = 1 << 9, 1 << 10
	cr4, err := p.Engine.Reg(emu.X86CR4)
	if err != nil {
		return err
	}
	if err := p.Engine.SetReg(emu.X86CR4, cr4|cr4OSFXSR|cr4OSXMMEXCPT); err != nil {
		return err
	}
	// A new process starts with the FPU's initial state, as Linux gives
	// it (fpstate_init: x87 control word 0x37f, every register empty,
	// MXCSR 0x1f80); Unicorn's reset state has a control word of 0
	// (single precision, every exception unmasked: long double arithmetic,
	// which SQLite's printf uses, kept 24 bits) and MXCSR 0.
	if err := amd64FXInit(p.Engine); err != nil {
		return err
	}
	// rdx is the rtld_fini function _start passes to __libc_start_main:
	// none for a static program (ld.so passes its own to a dynamic one).
	return p.Engine.WriteRegs([]emu.RegID{emu.X86RSP, emu.X86RIP, emu.X86RDX, emu.X86FSBase},
		[]uint64{p.SP, p.start, 0, 0})
}

func amd64ArchPrctl(p *Process, code, addr uint64) uint64 {
	const setGS, setFS, getFS, getGS = 0x1001, 0x1002, 0x1003, 0x1004
	reg := emu.X86FSBase
	if code == setGS || code == getGS {
		reg = emu.X86GSBase
	}
	switch code {
	case setFS, setGS:
		if addr >= 1<<47 {
			return sysErr(ePERM)
		}
		if err := p.Engine.SetReg(reg, addr); err != nil {
			return sysErr(eINVAL)
		}
		return 0
	case getFS, getGS:
		v, err := p.Engine.Reg(reg)
		if err != nil {
			return sysErr(eINVAL)
		}
		if !p.put64(addr, v) {
			return sysErr(eFAULT)
		}
		return 0
	}
	return sysErr(eINVAL)
}

// amd64Stat encodes struct stat (arch/x86/include/uapi/asm/stat.h).
func amd64Stat(st statInfo) []byte {
	b := make([]byte, 144)
	le := binary.LittleEndian
	le.PutUint64(b[0:], st.dev)
	le.PutUint64(b[8:], st.ino)
	le.PutUint64(b[16:], st.nlink)
	le.PutUint32(b[24:], st.mode)
	le.PutUint32(b[28:], st.uid)
	le.PutUint32(b[32:], st.gid)
	le.PutUint64(b[40:], st.rdev)
	le.PutUint64(b[48:], uint64(st.size))
	le.PutUint64(b[56:], uint64(st.blksize))
	le.PutUint64(b[64:], uint64(st.blocks))
	for i, t := range statTimes(st) { // atime, mtime, ctime
		le.PutUint64(b[72+16*i:], uint64(t.sec))
		le.PutUint64(b[80+16*i:], uint64(t.nsec))
	}
	return b
}

// amd64CPUIDLeaves are the CPUID leaves (with subleaves) the layer asks
// the emulated CPU: AT_HWCAP's and those /proc/cpuinfo shows (cpuinfo.go).
var amd64CPUIDLeaves = [][2]uint32{{0, 0}, {1, 0}, {6, 0}, {7, 0}, {7, 1}, {0xd, 1},
	{0x80000000, 0}, {0x80000001, 0}, {0x80000002, 0}, {0x80000003, 0}, {0x80000004, 0},
	{0x80000005, 0}, {0x80000006, 0}, {0x80000007, 0}, {0x80000008, 0}}

var (
	amd64CPUIDOnce sync.Once
	amd64CPUIDVals map[[2]uint32][4]uint32 // EAX, EBX, ECX, EDX by leaf and subleaf
)

// amd64CPUID returns what CPUID gives for leaf and subleaf sub on the
// emulated CPU, as the guest's cpuid instruction does (asked once, on a
// scratch engine; false for a leaf not asked, or if asking failed).
func amd64CPUID(leaf, sub uint32) ([4]uint32, bool) {
	amd64CPUIDOnce.Do(func() {
		e, err := emu.NewEngine(arch.AMD64)
		if err != nil {
			return
		}
		defer e.Close()
		const at = 0x1000
		mem, err := e.Map(at, emu.PageSize, emu.ProtRead|emu.ProtExec, "cpuid")
		if err != nil {
			return
		}
		copy(mem, []byte{0x0f, 0xa2}) // cpuid
		vals := map[[2]uint32][4]uint32{}
		regs := []emu.RegID{emu.X86RAX, emu.X86RBX, emu.X86RCX, emu.X86RDX}
		for _, l := range amd64CPUIDLeaves {
			if e.WriteRegs([]emu.RegID{emu.X86RAX, emu.X86RCX}, []uint64{uint64(l[0]), uint64(l[1])}) != nil || e.Start(at, at+2, 0, 0) != nil {
				return
			}
			out := make([]uint64, 4)
			if e.ReadRegs(regs, out) != nil {
				return
			}
			vals[l] = [4]uint32{uint32(out[0]), uint32(out[1]), uint32(out[2]), uint32(out[3])}
		}
		amd64CPUIDVals = vals
	})
	v, ok := amd64CPUIDVals[[2]uint32{leaf, sub}]
	return v, ok
}

// amd64Hwcap is AT_HWCAP as Linux gives it on x86-64: CPUID leaf 1's
// EDX, here of the emulated CPU.
func amd64Hwcap() uint64 {
	if v, ok := amd64CPUID(1, 0); ok {
		return uint64(v[3])
	}
	return 0x078bfbff // qemu64's, if asking fails
}
