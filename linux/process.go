//go:build cgo

package linux

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/hostfile"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// This file holds a Process and its run loop; see doc.go for the package.

// Config describes one run of a guest program.
type Config struct {
	// Args is argv, argv[0] included; empty means just the program's path.
	Args []string
	// Env is the environment ("NAME=value"); nil means an empty one.
	Env []string
	// Stdin feeds reads from fd 0; nil means end of file. An *os.File on a
	// regular file (a shell's `< FILE`) is fd 0 as that file, as natively:
	// fstat gives its size, lseek and pread work, reads start at its
	// offset (its own offset is left alone). The timeout or
	// an interrupt (Interrupt, WaitLimits) ends the run even while the
	// guest waits for input: on an *os.File that can block (a pipe, a
	// terminal), the layer waits with poll(2) and reads only then; on
	// another io.Reader, the read runs on another goroutine, left behind
	// if the run ends first (hostwait.go).
	Stdin io.Reader
	// Stdout and Stderr receive what the guest writes to fds 1 and 2 (nil:
	// discarded), in pieces of at most 64 KiB (4 KiB, each after poll(2)
	// says there is room, on an *os.File that can block), waited for as
	// Stdin is.
	Stdout, Stderr io.Writer
	// ReadAllow lists the host files the guest may open (read-only), and
	// directories it sees with everything below them. Paths are compared
	// after filepath.Abs; everything else is ENOENT, except the program
	// itself and the sysroot's files (see fsview.go).
	ReadAllow []string
	// Sysroot is the host directory a dynamically linked program's
	// interpreter and shared libraries are read from: every other absolute
	// path the guest opens is resolved inside it, read-only, as in a
	// chroot; of "/", only what ld.so reads is shown (fsview.go). Empty:
	// DefaultSysroot of the program's architecture for a dynamically
	// linked program, none for a static one.
	Sysroot string
	// MaxInsns stops the run after that many instructions (0: no limit).
	MaxInsns uint64
	// Timeout stops the run after that much wall-clock time (0: no limit).
	Timeout time.Duration
	// MaxMem caps the memory held for the guest (0: DefaultMaxMem): its
	// accessible mappings (segments, stack, brk heap and mmap regions,
	// counted whole when mapped or made accessible, though host pages are
	// only allocated when touched; address space reserved PROT_NONE counts
	// only once mprotect makes it accessible, which past the cap stops the
	// run as mmap does) and
	// the contents of the files it maps as ELF objects (each file once,
	// kept for its symbols). Exceeding it stops the run (StopMemory). The
	// files the guest writes (its in-memory overlay, overlay.go) count
	// too: a write beyond the cap fails with ENOSPC instead.
	// Beyond MaxMem the layer uses a bounded amount of host memory, which
	// does not grow with what the guest asks for: file reads and writes go
	// through 64 KiB pieces, at most 1024 descriptors are open (opened
	// files are read lazily, one host descriptor per file), system call
	// arguments are bounded (paths 4 KiB, iovec arrays 1024 entries, random
	// bytes 64 KiB at a time); not included are the emulator's own state
	// (Unicorn's translation cache), the ELF structures and symbol tables
	// of the mapped objects, and what a Session adds (checkpoints, checking).
	MaxMem uint64
	// Quantum is how many instructions a thread runs before the next
	// runnable one gets the CPU (0: DefaultQuantum); see sched.go.
	Quantum uint64
	// CountBlocks counts instructions per translated block instead of
	// with a hook on every instruction (emu.Engine.CountBlocks): several
	// times faster, with the same counts, clocks, timers, scheduling and
	// exit. For runs without an observer; an observer switches it off.
	// A fault inside a block ends the run with NeedExact (see RunFast).
	CountBlocks bool
	// ExactAfter, with CountBlocks, counts per block only up to that
	// many instructions and per instruction from there on (0: always per
	// block): where a run with CountBlocks met NeedExact.
	ExactAfter uint64
	// Signals, if not nil, passes signals from outside to the program
	// (hostsignal.go).
	Signals *HostSignals
	// uncounted, with CountBlocks, counts nothing (emu.Engine.
	// DisableCounting): only for measuring Unicorn's own speed, in
	// BenchmarkRunVsQemu, on programs of one thread that neither fault
	// nor need the clock to move.
	uncounted bool
}

// DefaultMaxMem is the memory cap when Config.MaxMem is 0: 1 GiB.
const DefaultMaxMem = 1 << 30

// RunChunk is how many instructions Run lets the engine run per
// emu.Engine.Start; the limits are checked between chunks (the budget is
// exact, the timeout also interrupts a chunk).
const RunChunk = 4 << 20

// StopReason says why a run ended.
type StopReason int

// Reasons a run ends.
const (
	StopExited      StopReason = iota // the program called exit or exit_group
	StopSignaled                      // killed by a signal it sent itself (abort)
	StopBudget                        // Config.MaxInsns instructions ran
	StopTimeout                       // Config.Timeout passed
	StopMemory                        // a mapping would exceed Config.MaxMem, or the emulator's limit on memory regions
	StopUnsupported                   // a system call (or use of one) the layer does not emulate
	StopFault                         // a CPU fault: bad memory access, illegal instruction, trap
	StopDeadlock                      // every thread waits for something that cannot happen
	StopInterrupted                   // Process.Interrupt was called (Ctrl-C)
)

var stopNames = [...]string{"exited", "signaled", "budget", "timeout", "memory", "unsupported", "fault", "deadlock", "interrupted"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Exit is how a run ended.
type Exit struct {
	Reason StopReason
	// Status is the exit status for StopExited, 128+Signal for
	// StopSignaled (as a shell reports it), and 0 otherwise.
	Status int
	Signal int // StopSignaled, and StopFault when it maps to a signal
	// Detail says what happened, with the PC and its symbol.
	Detail string
	PC     uint64 // where the run stopped
	Insns  uint64 // instructions executed
}

func (x *Exit) String() string {
	if x.Reason == StopExited {
		return fmt.Sprintf("exited with status %d", x.Status)
	}
	return x.Detail
}

// Process is a guest program loaded into an engine.
type Process struct {
	// traceSyscall, if set (by tests), sees every system call before it
	// is handled.
	traceSyscall func(nr uint64, args [6]uint64)

	Engine *emu.Engine
	Arch   *arch.Arch
	ELF    *elf.File
	Path   string // the program, as given to Load
	Base   uint64 // load bias: 0 for ET_EXEC
	Entry  uint64 // the program's entry point (bias applied): AT_ENTRY
	SP     uint64 // initial stack pointer (points at argc)

	cfg         Config
	abi         *sysABI
	resumePC    uint64 // where the guest goes on after an emulated instruction
	resume      bool   // resumePC is set: the engine stopped after emulating
	start       uint64 // the first instruction: Entry, or the interpreter's entry
	interpBase  uint64 // the interpreter's load bias (AT_BASE), 0 without one
	sysroot     string
	objects     []*Object
	onObject    func(*Object)
	inodes      map[string]uint64 // host file → guest inode number
	file        *os.File
	vm          addrSpace
	phdr        uint64
	auxv        []byte    // the auxiliary vector buildStack wrote, AT_NULL included (/proc/self/auxv)
	argSpan     [3]uint64 // where the argument strings start and end, and where the environment's end (/proc/self/stat)
	brkStart    uint64
	brk         uint64
	rng         detRNG
	view        fsView   // the host files the guest sees
	ov          *overlay // the guest's writable files (overlay.go)
	cwd         string   // the guest's working directory (chdir; at first the host's), "" if unknown
	fds         map[int]*openFile
	fdUsed      fdSet                  // the descriptors in fds below fdLimit
	cloexec     fdSet                  // those with FD_CLOEXEC (F_GETFD shows it; nothing execs)
	limits      [16]rlimitSet          // the resource limits the guest set (sys_process.go)
	images      []image                // the PT_LOAD segments the loader mapped
	shared      map[fileID]*sharedFile // the host files opened, by identity
	scratch     []byte                 // ioChunk bytes for copies to and from the guest
	sig         sigState
	vdso        *vdsoImage // the vDSO (vdso.go), mapped at vdsoBase
	vdsoBase    uint64
	noResult    bool              // the system call set the return register itself (rt_sigreturn)
	inSyscall   bool              // the engine stopped at the end of a system call
	onSignal    func(SignalEvent) // OnSignal
	sleep       time.Duration     // time the guest slept (added to the fake clocks)
	scanWake    int64             // a poll's scan: the earliest expiry of a timerfd it watches (-1: none; timerfd.go)
	sysPC       uint64            // the system call instruction being handled
	exit        *Exit
	timedOut    atomic.Bool
	interrupted atomic.Bool
	intrWhy     string        // the detail of StopInterrupted ("" : "interrupted")
	stopCh      chan struct{} // closed when the timeout passes or on Interrupt
	stopOnce    sync.Once
	lastErr     error // an internal error raised inside a hook
	stalls      int   // chunks in a row that ran no instruction
	syms        *symbols.Table
	symsOnce    sync.Once
	thr         threadTable                     // the threads and the scheduler's state (threads.go)
	onSwitch    func(from, to int, exited bool) // OnSwitch

	// The limits a wait for the host keeps to (hostwait.go).
	deadline      time.Time    // when the wait ends the run; zero: never
	waitInterrupt *atomic.Bool // the caller's interrupt (WaitLimits)
	inFD          int          // hostFD of Config.Stdin, Stdout and Stderr
	outFD, errFD  int

	// denied counts the system calls the sandbox denied, by name (sys_net.go).
	denied map[string]uint64
}

// Load reads an ELF program, maps it (and, for a dynamically linked one,
// its program interpreter from the sysroot) into a new engine and prepares
// the initial stack and registers. Close releases it.
func Load(path string, cfg Config) (*Process, error) {
	file, err := hostfile.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(file)
	if err != nil {
		err = sframe.ELFError(file, err) // what is wrong, and where
		file.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a := arch.ForMachine(f.Machine)
	if a == nil {
		file.Close()
		return nil, fmt.Errorf("%s: unsupported machine %v", path, f.Machine)
	}
	if cfg.MaxMem == 0 {
		cfg.MaxMem = DefaultMaxMem
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	p := &Process{Arch: a, ELF: f, Path: path, cfg: cfg, file: file, abi: abiFor(a), sysroot: cfg.Sysroot, stopCh: make(chan struct{}),
		inFD: hostFD(cfg.Stdin), outFD: hostFD(cfg.Stdout), errFD: hostFD(cfg.Stderr)}
	if p.sysroot == "" && isDynamic(f) {
		p.sysroot = DefaultSysroot(a)
	}
	if p.sysroot != "" {
		if err := SysrootDir(p.sysroot); err != nil {
			file.Close()
			if isDynamic(f) {
				// What it costs: the interpreter cannot be found.
				return nil, fmt.Errorf("%s: %w (choose one with --sysroot): %w", path, err, ErrNoSysroot)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if p.sysroot, err = filepath.Abs(p.sysroot); err != nil {
			file.Close()
			return nil, err
		}
	}
	p.rng.init()
	p.initThreads()
	if err := p.initFiles(); err != nil {
		file.Close()
		return nil, err
	}
	e, err := emu.NewEngine(a)
	if err != nil {
		file.Close()
		return nil, err
	}
	p.Engine = e
	p.vm = addrSpace{e: e, max: cfg.MaxMem}
	if cfg.CountBlocks {
		if cfg.uncounted {
			e.DisableCounting()
		}
		if err := e.CountBlocks(true); err != nil {
			p.Close()
			return nil, err
		}
	}
	if err := p.load(); err != nil {
		p.Close()
		if errors.Is(err, errMemCap) {
			what := ""
			if err != errMemCap { // say what did not fit
				what = " (" + strings.TrimPrefix(err.Error(), path+": ") + ")"
			}
			return nil, fmt.Errorf("%s: loading needs more than the memory cap of %d bytes%s", path, cfg.MaxMem, what)
		}
		return nil, err
	}
	if err := p.abi.start(p); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Close releases the engine and the ELF file.
func (p *Process) Close() error {
	var err error
	if p.Engine != nil {
		err = p.Engine.Close()
	}
	if p.file != nil {
		p.file.Close()
		p.file = nil
	}
	p.closeShared()
	return err
}

// Interrupt stops the run, from any goroutine (Ctrl-C): Run, or the
// Continue under way, returns soon with StopInterrupted, also while the
// guest waits for input (Config.Stdin) or for its output to be taken
// (Stdout, Stderr).
func (p *Process) Interrupt() {
	p.interrupted.Store(true)
	p.closeStop()
	p.Engine.Stop()
}

func (p *Process) closeStop() {
	p.stopOnce.Do(func() {
		if p.stopCh != nil {
			close(p.stopCh)
		}
	})
}

// stopForSignal ends the run for the timeout or an Interrupt, whichever
// came.
func (p *Process) stopForSignal() {
	if p.interrupted.Load() {
		why := "interrupted"
		if p.intrWhy != "" {
			why = p.intrWhy
		}
		p.stop(StopInterrupted, 0, why)
		return
	}
	p.stop(StopTimeout, 0, fmt.Sprintf("timeout: %v of wall-clock time passed", p.cfg.Timeout))
}

// Exited returns how the run ended, or nil while it can continue.
func (p *Process) Exited() *Exit { return p.exit }

// Denied returns how many times each system call was denied by the
// sandbox (EACCES), by name; nil if none was.
func (p *Process) Denied() map[string]uint64 {
	if len(p.denied) == 0 {
		return nil
	}
	return maps.Clone(p.denied)
}

// untilNever is the "until" address given to emu.Engine.Start: one no program
// reaches (not canonical on x86-64, beyond the VA range on AArch64).
const untilNever = 0xdead_0000_0000_0000

// Run runs the program until it exits or a limit of its Config stops it.
// The error is for failures of the emulator itself; whatever the guest
// does ends in an Exit.
func (p *Process) Run() (*Exit, error) {
	start := time.Now()
	if p.cfg.Timeout > 0 && p.deadline.IsZero() {
		p.deadline = start.Add(p.cfg.Timeout)
	}
	if p.cfg.Timeout > 0 && p.exit == nil {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go p.watchdog(p.cfg.Timeout, done, &wg)
		defer func() { close(done); wg.Wait() }()
	}
	for {
		if p.exit != nil {
			return p.exit, nil
		}
		if p.timedOut.Load() || (p.cfg.Timeout > 0 && time.Since(start) >= p.cfg.Timeout) {
			p.timedOut.Store(true)
			p.stopForSignal()
			continue
		}
		n := uint64(RunChunk)
		if p.cfg.MaxInsns > 0 {
			done := p.Engine.Executed()
			if done >= p.cfg.MaxInsns {
				p.stop(StopBudget, 0, fmt.Sprintf("instruction budget of %d exhausted", p.cfg.MaxInsns))
				continue
			}
			n = min(n, p.cfg.MaxInsns-done)
		}
		if _, err := p.Continue(n); err != nil {
			return p.exit, err
		}
	}
}

// watchdog stops the engine once the timeout passes, and keeps stopping it
// (a stop between two chunks is lost) until Run is done.
func (p *Process) watchdog(d time.Duration, done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	p.timedOut.Store(true)
	p.closeStop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		p.Engine.Stop()
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// Continue runs at most n (> 0) more instructions from the current PC. It
// returns the Exit if the program ended (or had ended), nil if it can go
// on. Run is a loop around it; a stepper can call it directly.
func (p *Process) Continue(n uint64) (*Exit, error) {
	if p.exit != nil {
		return p.exit, nil
	}
	if n == 0 {
		return nil, errors.New("Continue: need a positive instruction count")
	}
	if p.interrupted.Load() || p.endedFromOutside() {
		p.stopForSignal()
		return p.exit, nil
	}
	if at := p.cfg.ExactAfter; at > 0 && p.Engine.CountingBlocks() {
		// Per block up to ExactAfter, per instruction from there.
		if done := p.Engine.Executed(); done >= at {
			if err := p.Engine.CountBlocks(false); err != nil {
				return nil, err
			}
		} else {
			n = min(n, at-done)
		}
	}
	pc, err := p.Engine.PC()
	if err != nil {
		return nil, err
	}
	before := p.Engine.Executed()
	p.inSyscall = false
	err = p.Engine.Start(pc, untilNever, 0, p.timerSlice(p.slice(n)))
	if ne := needExact(err); ne != nil {
		return nil, ne
	}
	if p.resume {
		// A hook emulated the instruction it stopped at (counters.go).
		p.resume = false
		if err == nil {
			err = p.Engine.SetReg(p.Engine.RegID(p.Arch.PC), p.resumePC)
		}
	}
	ran := p.Engine.Executed() - before
	p.thr.cur.insns += ran
	p.thr.cur.ran += ran
	p.fireTimers()
	if err := p.takeHostSignals(); err != nil {
		return p.exit, err
	}
	if p.lastErr != nil {
		err, p.lastErr = p.lastErr, nil
		return p.exit, err
	}
	if p.exit != nil {
		return p.exit, nil
	}
	if err != nil {
		p.fault(err)
		if p.exit != nil {
			return p.exit, nil
		}
	}
	// The running thread returns to user mode: rt_sigreturn, signals.
	err = p.deliverSignals()
	p.inSyscall = false
	if err != nil {
		return p.exit, err
	}
	if p.exit != nil {
		return p.exit, nil
	}
	if p.needSchedule() {
		if err := p.schedule(); err != nil {
			return p.exit, err
		}
		if p.exit != nil {
			return p.exit, nil
		}
		pc = ^uint64(0) // another thread (or a new context): no stall
	}
	// A stop nobody asked for (the watchdog's, or a stale one) is harmless
	// once; an engine that keeps returning without running anything would
	// make Run spin. (The PC is compared too: without the code hook,
	// Executed does not count.)
	if p.interrupted.Load() {
		p.stopForSignal()
		return p.exit, nil
	}
	if now, _ := p.Engine.PC(); now == pc && p.Engine.Executed() == before && !p.timedOut.Load() {
		if p.stalls++; p.stalls >= 3 {
			p.stop(StopFault, 0, "the emulator stopped making progress")
			return p.exit, nil
		}
	} else {
		p.stalls = 0
	}
	return nil, nil
}

// stop ends the run: it records the Exit (with the current PC) and stops
// the engine. The first stop wins.
func (p *Process) stop(reason StopReason, status int, detail string) {
	if p.exit != nil {
		return
	}
	pc, _ := p.Engine.PC()
	p.stopAt(reason, status, pc, detail)
}

// stopAt is stop at a given PC; it reports whether this stop was the first.
func (p *Process) stopAt(reason StopReason, status int, pc uint64, detail string) bool {
	if p.exit != nil {
		return false
	}
	x := &Exit{Reason: reason, Status: status, PC: pc, Insns: p.Engine.Executed()}
	if reason != StopExited {
		x.Detail = fmt.Sprintf("%s at pc %#x%s", detail, pc, p.symbolSuffix(pc))
	}
	if reason == StopSignaled {
		x.Signal = status - 128
	}
	p.exit = x
	p.Engine.Stop()
	return true
}

// signalFault ends the run with a CPU fault that Linux would turn into
// signal sig, at pc (or, if pc is 0, the current PC).
func (p *Process) signalFault(sig int, pc uint64, detail string) {
	if pc == 0 {
		pc, _ = p.Engine.PC()
	}
	if p.stopAt(StopFault, 0, pc, detail) {
		p.exit.Signal = sig
	}
}

// fault turns an error from emu.Engine.Start into the signal Linux would
// raise (a StopFault exit without a handler).
func (p *Process) fault(err error) {
	var ue emu.Error
	if !errors.As(err, &ue) {
		p.stop(StopFault, 0, fmt.Sprintf("emulator error: %v", err))
		return
	}
	pc, _ := p.Engine.PC()
	switch ue {
	case emu.ErrReadUnmapped, emu.ErrWriteUnmapped, emu.ErrFetchUnmapped, emu.ErrReadProt, emu.ErrWriteProt, emu.ErrFetchProt:
		f, ok := p.Engine.LastFault()
		if !ok {
			break
		}
		// munmap leaves the pages in the engine without permissions: a
		// protection fault outside every mapping is SEGV_MAPERR, as in
		// Linux, which looks the address up in the process's mappings
		what, code := "unmapped", int32(segvMaperr)
		if (ue == emu.ErrReadProt || ue == emu.ErrWriteProt || ue == emu.ErrFetchProt) && p.vm.covered(f.Addr, f.Addr+1) {
			what, code = "protected", segvAccerr
		}
		at := f.PC
		if f.Kind == "fetch" {
			at = f.Addr
		}
		p.abi.memFault(p, f, code == segvAccerr)
		p.forceFault(sigInfo{signo: sigSEGV, code: code, addr: f.Addr, fault: true}, at, at,
			fmt.Sprintf("SIGSEGV: %s of %d bytes at %s address %#x", f.Kind, f.Size, what, f.Addr))
		return
	case emu.ErrInsnInvalid:
		p.abi.trapInfo(p, trapUD, pc)
		p.forceFault(sigInfo{signo: sigILL, code: p.abi.illCode, addr: pc, fault: true}, pc, pc, "SIGILL: invalid instruction")
		return
	case emu.ErrReadUnaligned, emu.ErrWriteUnaligned, emu.ErrFetchUnaligned:
		addr := pc
		if f, ok := p.Engine.LastFault(); ok {
			addr = f.Addr
		}
		p.forceFault(sigInfo{signo: sigBUS, code: busAdraln, addr: addr, fault: true}, pc, pc, fmt.Sprintf("SIGBUS: %v", ue))
		return
	}
	p.stop(StopFault, 0, fmt.Sprintf("CPU exception: %v", ue))
}

// detRNG is the guest's source of "random" bytes (AT_RANDOM, getrandom):
// a ChaCha8 stream with a fixed seed, so runs are reproducible.
type detRNG struct{ c *rand.ChaCha8 }

func (r *detRNG) init() {
	r.c = rand.NewChaCha8([32]byte{'s', 'f', 'r', 'a', 'm', 'e', 's', 'i', 'm'})
}

func (r *detRNG) bytes(n int) []byte {
	b := make([]byte, n)
	r.c.Read(b)
	return b
}

// symbols.Table returns the code symbols of the program and of the shared
// objects it has mapped, read once; symbols of objects mapped later are
// added to the same table.
func (p *Process) Symbols() *symbols.Table {
	p.symsOnce.Do(func() {
		s := symbols.New(p.ELF, p.Base)
		for i, o := range p.objects {
			if i == 0 {
				s.AddRange(o.Name, o.Base, o.Start, o.End, false)
				continue
			}
			s.AddObject(o.Name, o.ELF, o.Base, o.Start, o.End)
		}
		if start, size := p.VDSO(); size > 0 {
			if f, err := p.vdso.file(); err == nil {
				s.AddObject("[vdso]", f, start, start, start+size)
			}
		}
		p.syms = s
	})
	return p.syms
}

// isDynamic reports whether f has a program interpreter.
func isDynamic(f *elf.File) bool {
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

// symbolAt returns "name+0xoff" for the symbol containing pc (or the
// nearest one below it), or "" when the binary has no symbols there.
func (p *Process) symbolAt(pc uint64) string {
	if _, _, ok := p.Symbols().Lookup(pc); !ok {
		return ""
	}
	return p.Symbols().Format(pc)
}

func (p *Process) symbolSuffix(pc uint64) string {
	if s := p.symbolAt(pc); s != "" {
		return " (" + s + ")"
	}
	return ""
}
