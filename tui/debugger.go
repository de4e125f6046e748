//go:build cgo

package tui

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/unwind"
	"github.com/sframesim/sframesim/verify"
)

// Debugger drives one program under emulation for the TUI: stepping,
// running to a breakpoint, a mismatch or a return, and going back in time
// through checkpoints and replay. It is not safe for concurrent use,
// except Progress and Interrupt, which another goroutine may call while a
// command runs.
type Debugger struct {
	Path string
	Args []string

	tg    *verify.Target
	sec   *sframe.Section
	p     *linux.Process
	s     *linux.Session
	u     *unwind.Unwinder
	chk   *verify.Checker
	lines *symbols.Lines
	out   bytes.Buffer // the guest's stdout and stderr
	hist  history
	bps   map[uint64]bool
	exit  *linux.Exit

	regs     []uint64 // at the current stop, in the order of Arch.Registers
	prevRegs []uint64 // at the stop before
	view     int      // the thread State shows when not the running one (0: the running one)

	// The last signal delivery or rt_sigreturn (in words) and the
	// instruction count it happened at; the screen tells it when it
	// happened during the last command, which started at cmdStart.
	sig      string
	sigAt    uint64
	cmdStart uint64

	progress  atomic.Uint64
	interrupt atomic.Bool
}

// Open loads path (with argv[1:] args) for stepping; Close releases it.
func Open(path string, args []string, sysroot string) (*Debugger, error) {
	return OpenConfig(path, args, linux.Config{Sysroot: sysroot})
}

// OpenConfig is Open with more of the run's configuration: cfg's Args,
// Stdout and Stderr are replaced (the program's output is kept for the
// UI).
func OpenConfig(path string, args []string, cfg linux.Config) (*Debugger, error) {
	return openConfig(path, args, cfg, verify.Open)
}

// OpenMalformed is OpenConfig, but a program whose SFrame section breaks
// rules of the format (and decodes) is opened too, checked as read
// (verify.OpenMalformed); the state says how many rules it breaks.
func OpenMalformed(path string, args []string, cfg linux.Config) (*Debugger, error) {
	return openConfig(path, args, cfg, verify.OpenMalformed)
}

func openConfig(path string, args []string, cfg linux.Config, open func(string, linux.Config) (*verify.Target, error)) (*Debugger, error) {
	d := &Debugger{Path: path, Args: args, bps: map[uint64]bool{}}
	cfg.Args, cfg.Stdout, cfg.Stderr = append([]string{path}, args...), &d.out, &d.out
	tg, err := open(path, cfg)
	if err != nil {
		return nil, err
	}
	d.tg, d.sec, d.p, d.s, d.u, d.chk, d.lines = tg, tg.Section, tg.Process, tg.Session, tg.Unwinder, tg.Checker, tg.Lines
	d.regs = make([]uint64, len(d.p.Arch.Registers))
	d.prevRegs = make([]uint64, len(d.regs))
	d.s.OnSignal(d.signalSeen)
	d.hist = newHistory()
	if err := d.hist.add(d, true); err != nil {
		d.Close()
		return nil, err
	}
	d.readRegs()
	copy(d.prevRegs, d.regs)
	return d, nil
}

// Close releases the program.
func (d *Debugger) Close() error { return d.tg.Close() }

// Progress returns the instruction count, also while a command runs.
func (d *Debugger) Progress() uint64 { return d.progress.Load() }

// Interrupt stops the running command before its next instruction.
func (d *Debugger) Interrupt() { d.interrupt.Store(true) }

// Insns returns the number of instructions executed.
func (d *Debugger) Insns() uint64 { return d.s.Executed() }

// symbol names pc for the screen: "name+0xoff", C++ names demangled.
func (d *Debugger) symbol(pc uint64) string { return symbols.Demangle(d.s.Syms.Format(pc)) }

// Output returns what the program wrote to stdout and stderr so far.
func (d *Debugger) Output() string { return d.out.String() }

func (d *Debugger) readRegs() {
	e := d.p.Engine
	ids := make([]emu.RegID, len(d.p.Arch.Registers))
	for i, r := range d.p.Arch.Registers {
		ids[i] = e.RegID(r)
	}
	if err := e.ReadRegs(ids, d.regs); err != nil {
		clear(d.regs)
	}
}

// signalSeen words a signal delivery or rt_sigreturn of thread tid.
func (d *Debugger) signalSeen(tid int, ev linux.SignalEvent) {
	d.sigAt = d.s.Executed()
	if ev.Sigreturn {
		d.sig = fmt.Sprintf("rt_sigreturn in tid %d: back to %s", tid, d.symbol(ev.PC))
		return
	}
	d.sig = fmt.Sprintf("%s delivered to tid %d: handler at %s", linux.SignalName(ev.Signal), tid, d.symbol(ev.Handler))
}

// begin starts a command: a signal seen from now on is news.
func (d *Debugger) begin() { d.cmdStart = d.s.Executed() }

// lastSignal is the delivery or rt_sigreturn the last command ran
// through (its last), "" if none.
func (d *Debugger) lastSignal() string {
	if d.sig == "" || d.sigAt <= d.cmdStart || d.sigAt > d.s.Executed() {
		return ""
	}
	return d.sig
}

// runOpts say where a run stops besides the end of the program.
type runOpts struct {
	mismatch bool                     // stop before an instruction whose unwind fails
	bps      bool                     // stop at breakpoints
	until    func(shadow.Record) bool // stop when true (before the instruction)
	max      uint64                   // at most this many instructions (0: no limit)
}

// errExited is returned by commands that need a live program.
var errExited = errors.New("the program has ended: r restarts it, S or - steps back")

// run runs the program under opts in slices between checkpoints. It
// returns why it stopped, in words.
func (d *Debugger) run(o runOpts) (string, error) {
	// Instructions run on the running thread: the screen follows it.
	d.view = 0
	if d.exit != nil {
		return "", errExited
	}
	// An Interrupt from now on, even before the first instruction, stops
	// this run; the flag is cleared when it ends.
	defer d.interrupt.Store(false)
	copy(d.prevRegs, d.regs)
	// An open-ended run (continue, next mismatch, advance, finish) goes in
	// batches, several times faster; a stop it finds (hitAt) lies up to a
	// batch behind where the emulator got to, so the run ends by going
	// back to it exactly (Seek: checkpoint and replay).
	batched := o.max == 0
	if batched {
		if err := d.tg.Batch(verify.DefaultBatch); err != nil {
			return "", err
		}
	}
	exact := func() error {
		if !batched {
			return nil
		}
		batched = false
		return d.tg.Batch(1)
	}
	defer exact()
	start := d.s.Executed()
	first := true
	var found verify.Result
	var hitBP, hitMismatch, hitUntil bool
	var n, hitAt uint64
	d.s.Observe(func(r shadow.Record) bool {
		n++
		if n&0x3ff == 0 {
			d.progress.Store(d.s.Executed())
			if d.interrupt.Load() {
				return false
			}
		}
		if first {
			first = false
			return true
		}
		// The state before this record: start + n - 1 instructions ran.
		if o.bps && d.bps[r.PC] {
			hitBP, hitAt = true, start+n-1
			return false
		}
		if o.until != nil && o.until(r) {
			hitUntil, hitAt = true, start+n-1
			return false
		}
		if o.mismatch {
			if res := d.chk.CheckStack(r, d.s.Shadow); res.Kind.Failure() {
				found, hitMismatch, hitAt = res, true, start+n-1
				return false
			}
		}
		return true
	})
	defer d.s.Observe(nil)
	var why string
	for {
		left := uint64(0)
		if o.max > 0 {
			done := d.s.Executed() - start
			if done >= o.max {
				break
			}
			left = o.max - done
		}
		slice := d.hist.next(d.s.Executed()) - d.s.Executed()
		if left > 0 {
			slice = min(slice, left)
		}
		exit, stopped, err := d.s.RunUntil(nil, slice)
		d.progress.Store(d.s.Executed())
		if err != nil {
			d.readRegs()
			return "", err
		}
		if exit != nil {
			d.exit = exit
			why = "program " + exit.String()
			break
		}
		if stopped {
			switch {
			case hitBP:
				why = "breakpoint at " + d.symbol(d.s.State().PC)
			case hitMismatch:
				why = fmt.Sprintf("stopped at a mismatch (%s)", found.Kind)
			case hitUntil:
			default:
				why = "interrupted"
			}
			break
		}
		if d.interrupt.Load() {
			why = "interrupted"
			break
		}
		if err := d.hist.add(d, false); err != nil {
			return "", err
		}
	}
	if hit := hitBP || hitMismatch || hitUntil; hit && d.s.Executed() != hitAt {
		// Batched: back to the instruction that stopped the run, which
		// may lie before the program's end.
		if err := exact(); err != nil {
			return "", err
		}
		d.s.Observe(nil)
		prev := append([]uint64(nil), d.prevRegs...)
		if _, err := d.seek(hitAt); err != nil {
			return "", err
		}
		copy(d.prevRegs, prev)
		if d.s.Executed() != hitAt {
			return "", fmt.Errorf("could not go back to instruction %d (at %d)", hitAt, d.s.Executed())
		}
		switch {
		case hitBP:
			why = "breakpoint at " + d.symbol(d.s.State().PC)
		case hitMismatch:
			why = fmt.Sprintf("stopped at a mismatch (%s)", found.Kind)
		default:
			why = ""
		}
	}
	d.readRegs()
	return why, nil
}

// Step executes one instruction.
func (d *Debugger) Step() (string, error) {
	d.begin()
	return d.run(runOpts{max: 1})
}

// StepOver executes one instruction, or a whole call if it is one.
func (d *Debugger) StepOver() (string, error) {
	if d.exit != nil {
		return "", errExited
	}
	d.begin()
	regs := append([]uint64(nil), d.regs...)
	depth := d.s.Shadow.Depth()
	why, err := d.run(runOpts{max: 1})
	if err != nil || d.exit != nil || d.s.Shadow.Depth() <= depth {
		return why, err
	}
	ret := d.s.Shadow.Frames()[depth].ReturnAddr
	why, err = d.run(runOpts{bps: true, until: func(r shadow.Record) bool {
		return r.PC == ret && d.s.Shadow.Depth() <= depth
	}})
	copy(d.prevRegs, regs)
	return why, err
}

// Finish runs until the current function returns.
func (d *Debugger) Finish() (string, error) {
	depth := d.s.Shadow.Depth()
	if depth == 0 {
		return "", errors.New("finish: the outermost function does not return")
	}
	d.begin()
	return d.run(runOpts{bps: true, until: func(shadow.Record) bool { return d.s.Shadow.Depth() < depth }})
}

// Continue runs to the next breakpoint or the end.
func (d *Debugger) Continue() (string, error) {
	d.begin()
	return d.run(runOpts{bps: true})
}

// NextMismatch runs to the next instruction whose unwind fails (a
// mismatch, an unwinder error or a chain ending too early), a breakpoint,
// or the end.
func (d *Debugger) NextMismatch() (string, error) {
	d.begin()
	why, err := d.run(runOpts{bps: true, mismatch: true})
	if err == nil && d.exit != nil {
		why += "; no mismatch on the way"
	}
	return why, err
}

// Advance runs until the PC reaches addr (or a breakpoint, or the end).
func (d *Debugger) Advance(addr uint64) (string, error) {
	d.begin()
	return d.run(runOpts{bps: true, until: func(r shadow.Record) bool { return r.PC == addr }})
}

// Seek goes to the state after exactly n instructions, backwards through
// the latest checkpoint at or before n and replay, forwards by running.
func (d *Debugger) Seek(n uint64) (string, error) {
	d.begin()
	return d.seek(n)
}

// seek is Seek within a command.
func (d *Debugger) seek(n uint64) (string, error) {
	d.view = 0
	now := d.s.Executed()
	regs := append([]uint64(nil), d.regs...)
	if n < now || d.exit != nil {
		cp := d.hist.before(n)
		if err := d.s.Restore(cp.cp); err != nil {
			return "", err
		}
		d.out.Truncate(cp.out)
		d.exit = d.p.Exited()
		d.progress.Store(d.s.Executed())
		d.readRegs()
	}
	var why string
	if now := d.s.Executed(); n > now {
		var err error
		why, err = d.run(runOpts{max: n - now})
		if err != nil {
			return "", err
		}
	}
	// The registers that differ from the stop before are highlighted, as
	// if the instructions in between ran as one step.
	copy(d.prevRegs, regs)
	if d.s.Executed() != n && why == "" {
		why = fmt.Sprintf("stopped at instruction %d", d.s.Executed())
	}
	return why, nil
}

// Back goes n instructions back.
func (d *Debugger) Back(n uint64) (string, error) {
	now := d.s.Executed()
	if now == 0 {
		return "", errors.New("already at the first instruction")
	}
	return d.Seek(now - min(n, now))
}

// Restart goes back to the first instruction.
func (d *Debugger) Restart() (string, error) {
	_, err := d.Seek(0)
	return "restarted", err
}

// View makes State show thread tid (0: the running thread, also after
// the next command that runs or goes back) and says which it shows.
func (d *Debugger) View(tid int) (string, error) {
	if tid == 0 || tid == d.s.Thread() {
		d.view = 0
		return fmt.Sprintf("showing the running thread, tid %d", d.s.Thread()), nil
	}
	if _, err := d.p.ThreadRegs(tid); err != nil {
		return "", err
	}
	d.view = tid
	return fmt.Sprintf("viewing tid %d", tid), nil
}

// viewed is the thread State shows if not the running one, else 0.
func (d *Debugger) viewed() int {
	if d.view == d.s.Thread() {
		return 0
	}
	return d.view
}

// ToggleBreakpoint sets or clears a breakpoint at addr; it reports which.
func (d *Debugger) ToggleBreakpoint(addr uint64) bool {
	if d.bps[addr] {
		delete(d.bps, addr)
		return false
	}
	d.bps[addr] = true
	return true
}

// Resolve parses an address: hex (0x401000), a symbol, or symbol+offset.
func (d *Debugger) Resolve(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("no address or symbol given")
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("bad address %q", s)
		}
		return v, nil
	}
	name, off := s, uint64(0)
	if i := strings.LastIndexByte(s, '+'); i > 0 {
		v, err := strconv.ParseUint(s[i+1:], 0, 64)
		if err != nil {
			return 0, fmt.Errorf("bad offset in %q", s)
		}
		name, off = s[:i], v
	}
	a, ok := d.s.Syms.Addr(name)
	if !ok {
		return 0, fmt.Errorf("no symbol %q", name)
	}
	return a + off, nil
}
