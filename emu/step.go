//go:build cgo

package emu

import (
	"errors"
	"fmt"
)

// Session steps a Process instruction by instruction while keeping its
// shadow call stack exact: the stepping API of the verifier and the TUI.
//
// Every instruction is observed in C and handed to Go before it runs, with
// the registers of that moment (Record); an observer sees memory as that
// instruction sees it. Stops requested by an observer or a breakpoint
// happen before the instruction, which then runs first when the session
// continues. Batch trades exact stops for speed.
type Session struct {
	P      *Process
	Shadow *ShadowStack
	Syms   *Symbols

	// Breakpoints stop RunUntil before the instruction at each address.
	Breakpoints map[uint64]bool

	observer func(Record) bool
	pred     func(Record) bool
	stopped  bool
	batch    bool // records arrive in batches (Batch)
	first    bool // the next record is the first of this run
	cur      Record
	regs     []uint64
}

// NewSession prepares stepping p from its current state (normally its entry
// point). It takes over p's engine observer.
func NewSession(p *Process) *Session {
	s := &Session{
		P:           p,
		Shadow:      NewShadowStack(p.Arch, p.Engine.ReadMem),
		Syms:        p.Symbols(),
		Breakpoints: make(map[uint64]bool),
		regs:        make([]uint64, 4),
	}
	s.Shadow.SameFunction = s.Syms.SameFunction
	p.Engine.ObserveHistory(1, s.hook)
	s.sync()
	return s
}

// Batch has the engine pass instructions to the session in batches of n
// (n > 1) instead of one at a time, several times faster: the C hooks
// record each instruction's registers and every guest store, and the
// observer still sees each instruction with its own registers and the
// memory it saw. Registers beyond a Record's (Engine.Reg) are only those
// of the instruction when Engine.Live says so (see SetLiveRanges). A stop
// requested by the observer, a predicate or a breakpoint takes effect at
// the end of the batch: the instructions after it in the batch have run
// (the observer is not called for them; the shadow stack follows them).
// n = 1 restores exact stops.
func (s *Session) Batch(n int) error {
	if n < 1 {
		return fmt.Errorf("batch size %d", n)
	}
	s.batch = n > 1
	return s.P.Engine.ObserveHistory(n, s.hook)
}

// Observe sets a function called before every instruction, after the shadow
// stack has been brought up to that point. Returning false stops before
// the instruction. nil removes it.
func (s *Session) Observe(fn func(r Record) bool) { s.observer = fn }

func (s *Session) hook(r Record, live bool) {
	s.Shadow.Observe(r)
	if s.stopped {
		// A batch goes on after a stop (Batch): the shadow stack follows.
		if live {
			s.Shadow.Unobserve()
			s.P.Engine.StopBefore()
		}
		return
	}
	// A breakpoint at the PC a run starts from does not stop it again.
	bp := len(s.Breakpoints) > 0 && s.Breakpoints[r.PC] && !s.first
	s.first = false
	stop := (s.observer != nil && !s.observer(r)) || (s.pred != nil && s.pred(r)) || bp
	if !stop {
		return
	}
	s.stopped = true
	if live {
		s.Shadow.Unobserve()
		s.P.Engine.StopBefore()
	} else if s.batch {
		s.P.Engine.Stop()
	}
}

// sync reads the registers after a stop and settles the shadow stack.
func (s *Session) sync() {
	if err := s.P.Engine.ReadRegs(s.P.Arch.frameRegs(), s.regs); err != nil {
		return
	}
	s.cur = Record{PC: s.regs[0], SP: s.regs[1], FP: s.regs[2]}
	if s.P.Arch.RA >= 0 {
		s.cur.RA = s.regs[3]
	}
	s.Shadow.Sync(s.cur)
}

// State returns the registers before the next instruction.
func (s *Session) State() Record { return s.cur }

// Executed returns the number of instructions executed so far.
func (s *Session) Executed() uint64 { return s.P.Engine.Executed() }

// ErrStopped is returned by RunUntil when it stopped because of a
// breakpoint, the predicate or the observer.
var ErrStopped = errors.New("stopped")

// Step executes one instruction.
func (s *Session) Step() (*Exit, error) {
	exit, _, err := s.run(1, nil)
	return exit, err
}

// RunUntil runs until pred is true before an instruction (which does not
// run), a breakpoint is reached (other than the one at the current PC), the
// observer stops it, the program ends, or max instructions ran (0: no
// limit). It reports whether a stop condition matched.
func (s *Session) RunUntil(pred func(Record) bool, max uint64) (exit *Exit, stopped bool, err error) {
	return s.run(max, pred)
}

// Finish runs until the current function returns to its caller: the
// shadow stack is shallower than now.
func (s *Session) Finish(max uint64) (*Exit, bool, error) {
	depth := s.Shadow.Depth()
	if depth == 0 {
		return nil, false, fmt.Errorf("finish: the outermost function does not return")
	}
	return s.run(max, func(Record) bool { return s.Shadow.Depth() < depth })
}

// StepOver executes one instruction, or a whole call if it is one.
func (s *Session) StepOver(max uint64) (*Exit, bool, error) {
	code := make([]byte, 16)
	n, _ := s.readCode(s.cur.PC, code)
	flow, size := s.P.Arch.classify(code[:n])
	if flow != FlowCall {
		exit, err := s.Step()
		return exit, false, err
	}
	ret := s.cur.PC + uint64(size)
	depth := s.Shadow.Depth()
	return s.run(max, func(r Record) bool { return r.PC == ret && s.Shadow.Depth() <= depth })
}

func (s *Session) readCode(pc uint64, buf []byte) (int, error) {
	for n := len(buf); n > 0; n-- {
		if err := s.P.Engine.ReadMem(pc, buf[:n]); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no code at %#x", pc)
}

// chunk bounds one Continue so a long run can be interrupted.
const chunk = 1 << 20

func (s *Session) run(max uint64, pred func(Record) bool) (*Exit, bool, error) {
	s.pred, s.stopped, s.first = pred, false, true
	defer func() { s.pred = nil }()
	var done uint64
	for max == 0 || done < max {
		n := uint64(chunk)
		if max > 0 {
			n = min(n, max-done)
		}
		before := s.P.Engine.Executed()
		exit, err := s.P.Continue(n)
		done += s.P.Engine.Executed() - before
		s.sync()
		if err != nil || exit != nil {
			return exit, false, err
		}
		if s.stopped {
			return nil, true, nil
		}
		if s.P.Engine.Executed() == before {
			return nil, false, fmt.Errorf("no progress at %s", s.Syms.Format(s.cur.PC))
		}
	}
	return nil, false, nil
}

// Disasm disassembles the instruction at pc.
func (s *Session) Disasm(pc uint64) (text string, size int) {
	code := make([]byte, 16)
	n, err := s.readCode(pc, code)
	if err != nil {
		return "(unmapped)", 0
	}
	return s.P.Arch.Disasm(code[:n], pc, s.Syms.Resolver())
}
