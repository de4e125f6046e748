//go:build cgo

package linux

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/symbols"
)

// Session steps a Process instruction by instruction while keeping its
// shadow call stack exact: the stepping API of the verifier and the TUI.
//
// Every instruction is observed in C and handed to Go before it runs, with
// the registers of that moment (shadow.Record); an observer sees memory as that
// instruction sees it. Stops requested by an observer or a predicate
// happen before the instruction, which then runs first when the session
// continues. Batch trades exact stops for speed.
//
// Each thread has its own shadow stack: Shadow is the running thread's
// (Thread), and records go to it.
type Session struct {
	P      *Process
	Shadow *shadow.Stack // the running thread's
	Syms   *symbols.Table
	stacks map[int]*shadow.Stack // by tid, of the threads that have not exited
	// retired: what the shadow stacks of exited threads saw, by kind of
	// anomaly (retire).
	retired map[string]retiredKind
	// sameFunction: the shadow stacks' SameFunction (nil: the symbols').
	sameFunction func(a, b uint64) bool
	tid          int // the thread Shadow belongs to

	observer func(*shadow.Record) bool
	pred     func(shadow.Record) bool
	onSignal func(tid int, ev SignalEvent)
	stopped  bool
	batch    bool // records arrive in batches (Batch)
	cur      shadow.Record
	obs      shadow.Record                   // the record recordHook hands the shadow stack and the observer
	rec      *emu.Record                     // the record the observer is handling (the engine's, valid while it does)
	hook     func(er *emu.Record, live bool) // recordHook's, given to the engine
}

// shadowRecord is the shadow stack's view of an engine record.
func shadowRecord(r emu.Record) shadow.Record {
	return shadow.Record{PC: r.PC, SP: r.SP, FP: r.FP, RA: r.RA, Size: r.Size, N: r.N, LastPC: r.LastPC, LastSize: r.LastSize}
}

// RunPCs returns the addresses of the instructions of the record the
// observer is handling (more than one in merge mode: emu.Engine.SetMerge,
// shadow.Record.N), in the order they ran.
func (s *Session) RunPCs() []uint64 { return s.P.Engine.RunPCs(s.rec) }

// RunCrossed reports whether the run of the record the observer is
// handling spans more than one merge interval of its class
// (emu.Record.Crossed).
func (s *Session) RunCrossed() bool { return s.rec.Crossed > 0 }

// RunKey returns frame 0's return address, CFA and caller FP at the first
// instruction of the observer's run as the engine's recipe computed them,
// if it did (emu.Engine.SetExtend, emu.Record.Key): the engine's record's,
// valid while the observer runs (a copy passed on by value waits for the
// stores that made it).
func (s *Session) RunKey() (*[3]uint64, bool) { return &s.rec.Key, s.rec.Keyed != 0 }

// RunExt returns where the observer's run went on with other registers
// (emu.Engine.RunExt).
func (s *Session) RunExt() []emu.Ext { return s.P.Engine.RunExt(s.rec) }

// RunStores calls fn with each store an instruction of the observer's run
// made before its last one, until fn returns true, and reports whether it
// did (emu.Engine.RunStores).
func (s *Session) RunStores(fn func(addr, size uint64) bool) bool {
	return s.P.Engine.RunStores(s.rec, fn)
}

// RunAdvance brings memory forward to what instruction k of the
// observer's run (RunPCs()[k]) saw (emu.Engine.RunAdvance).
func (s *Session) RunAdvance(k int) { s.P.Engine.RunAdvance(s.rec, k) }

// NewSession prepares stepping p from its current state (normally its entry
// point). It takes over p's engine observer.
func NewSession(p *Process) *Session {
	s := &Session{P: p, Syms: p.Symbols(), stacks: map[int]*shadow.Stack{}}
	s.tid = p.CurrentThread()
	s.Shadow = s.stack(s.tid)
	// Self-modifying code: the shadow stacks classify instructions again
	// where the code changed.
	p.Engine.OnCodeWrite(func(addr, size uint64) {
		for _, st := range s.stacks {
			st.Invalidate(addr, size)
		}
	})
	p.OnSwitch(s.switchThread)
	p.OnSignal(s.signal)
	s.hook = s.recordHook()
	p.Engine.ObserveHistory(1, s.hook)
	s.sync()
	return s
}

// stack returns thread tid's shadow stack, made empty for a new thread:
// its first frame, like the entry point's, is the outermost one.
func (s *Session) stack(tid int) *shadow.Stack {
	st := s.stacks[tid]
	if st == nil {
		st = shadow.New(s.P.Arch, s.P.Engine.ReadMem)
		st.SameFunction = s.sameFunction
		if st.SameFunction == nil {
			st.SameFunction = s.Syms.SameFunction
		}
		s.stacks[tid] = st
	}
	return st
}

// switchThread settles the outgoing thread's shadow stack with its
// registers (still the engine's) and makes the incoming thread's current.
func (s *Session) switchThread(from, to int, exited bool) {
	s.sync()
	if exited {
		s.retire(from)
	}
	s.tid, s.Shadow = to, s.stack(to)
}

// retiredKind is one kind of anomaly the shadow stacks of exited threads
// saw: how often, and its first in the thread of the lowest tid.
type retiredKind struct {
	tid  int
	kind shadow.AnomalyKind
}

// retire drops the shadow stack of thread tid, which exited, keeping the
// anomalies it saw: a program that creates threads without end costs no
// memory per past thread.
func (s *Session) retire(tid int) {
	st := s.stacks[tid]
	if st == nil {
		return
	}
	for _, k := range st.AnomalyKinds() {
		if s.retired == nil {
			s.retired = map[string]retiredKind{}
		}
		r, ok := s.retired[k.First.Kind]
		if !ok || tid < r.tid {
			r.tid, r.kind.First = tid, k.First
		}
		r.kind.Count += k.Count
		s.retired[k.First.Kind] = r
	}
	delete(s.stacks, tid)
}

// signal keeps the running thread's shadow stack exact across a signal
// delivery and rt_sigreturn: the engine still holds the interrupted state
// (or the trampoline's), which settles the last instruction first.
func (s *Session) signal(ev SignalEvent) {
	s.sync()
	if ev.Sigreturn {
		s.Shadow.SignalReturn()
	} else {
		s.Shadow.Signal(ev.Signal, s.cur, shadow.Record{PC: ev.Handler, SP: ev.HandlerSP, FP: ev.HandlerFP}, ev.Return, ev.Frame)
	}
	if s.onSignal != nil {
		s.onSignal(s.tid, ev)
	}
}

// OnSignal sets a function told of each signal delivery and rt_sigreturn
// in thread tid, after the shadow stack took it (nil: none).
func (s *Session) OnSignal(fn func(tid int, ev SignalEvent)) { s.onSignal = fn }

// Thread returns the id of the thread whose instructions the session sees
// now (and whose shadow stack Shadow is).
func (s *Session) Thread() int { return s.tid }

// SetSameFunction sets the function the shadow stacks ask whether two
// code addresses lie in one function (shadow.Stack.SameFunction; by
// default the symbols'), for every thread.
func (s *Session) SetSameFunction(fn func(a, b uint64) bool) {
	s.sameFunction = fn
	for _, st := range s.stacks {
		st.SetSameFunction(fn)
	}
}

// EachAnomalyKind calls fn with each kind of anomaly the shadow stacks
// saw (shadow.Stack.AnomalyKinds), thread by thread in tid order; the
// threads that exited are summed up per kind, with the first of the
// lowest tid, which comes in that tid's place.
func (s *Session) EachAnomalyKind(fn func(tid int, k shadow.AnomalyKind)) {
	type entry struct {
		tid int
		k   shadow.AnomalyKind
	}
	var all []entry
	for tid, st := range s.stacks {
		for _, k := range st.AnomalyKinds() {
			all = append(all, entry{tid, k})
		}
	}
	for _, r := range s.retired {
		all = append(all, entry{r.tid, r.kind})
	}
	// In tid order; within a thread, in the order the stack saw them;
	// a retired kind after a live stack's of the same tid (a tid is
	// never both).
	slices.SortStableFunc(all, func(a, b entry) int { return cmp.Compare(a.tid, b.tid) })
	for _, e := range all {
		fn(e.tid, e.k)
	}
}

// ShadowOf returns thread tid's shadow stack, or nil if it has none yet.
func (s *Session) ShadowOf(tid int) *shadow.Stack { return s.stacks[tid] }

// Batch has the engine pass instructions to the session in batches of n
// (n > 1) instead of one at a time, several times faster: the C hooks
// record each instruction's registers and every guest store, and the
// observer still sees each instruction with its own registers and the
// memory it saw. Registers beyond a shadow.Record's (emu.Engine.Reg) are only those
// of the instruction when emu.Engine.Live says so (see SetLiveRanges). A stop
// requested by the observer or a predicate takes effect at
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
func (s *Session) Observe(fn func(r shadow.Record) bool) {
	if fn == nil {
		s.observer = nil
		return
	}
	s.observer = func(r *shadow.Record) bool { return fn(*r) }
}

// ObserveRef is Observe with the record by pointer: the session's, valid
// until fn returns, which fn may change (what the predicate of RunUntil
// sees then is undefined) but not keep. It saves a copy of the record per
// instruction or run.
func (s *Session) ObserveRef(fn func(r *shadow.Record) bool) { s.observer = fn }

// recordHook returns the function the engine hands each record to (its
// body is the closure's own, not a method it calls: a method value adds a
// call that copies the record once more, for every record).
func (s *Session) recordHook() func(er *emu.Record, live bool) {
	return func(er *emu.Record, live bool) {
		// Field by field (not shadowRecord's composite literal, which is
		// built in a temporary and copied in wide moves that stall on the
		// narrow stores that built it), into the session's own record,
		// which the shadow stack and the observer get by pointer (passed
		// by value, it was copied twice more in such moves): once per
		// checked record.
		r := &s.obs
		r.PC, r.SP, r.FP, r.RA = er.PC, er.SP, er.FP, er.RA
		r.Size, r.N, r.LastPC, r.LastSize = er.Size, er.N, er.LastPC, er.LastSize
		if er.NExt > 0 {
			r.Moved, r.LastSP, r.LastFP, r.LastRA = true, er.LastSP, er.LastFP, er.LastRA
		} else {
			r.Moved, r.LastSP, r.LastFP, r.LastRA = false, 0, 0, 0
		}
		s.Shadow.ObserveRef(r)
		s.rec = er // the engine's, valid while the observer runs
		if s.stopped {
			// A batch goes on after a stop (Batch): the shadow stack
			// follows.
			if live {
				s.Shadow.Unobserve()
				s.P.Engine.StopBefore()
			}
			return
		}
		if (s.observer != nil && !s.observer(r)) || (s.pred != nil && s.pred(*r)) {
			s.stop(live)
		}
	}
}

// stop stops the engine before the record the observer or the predicate
// stopped at (live: its instruction has not run) or at the end of the
// batch.
func (s *Session) stop(live bool) {
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
	r, err := s.P.Engine.FrameState()
	if err != nil {
		return
	}
	s.cur = shadowRecord(r)
	s.Shadow.Sync(s.cur)
}

// State returns the registers before the next instruction.
func (s *Session) State() shadow.Record { return s.cur }

// Executed returns the number of instructions executed so far.
func (s *Session) Executed() uint64 { return s.P.Engine.Executed() }

// Step executes one instruction.
func (s *Session) Step() (*Exit, error) {
	exit, _, err := s.run(1, nil)
	return exit, err
}

// RunUntil runs until pred is true before an instruction (which does not
// run), the observer stops it, the program ends, or max instructions ran (0: no
// limit). It reports whether a stop condition matched.
func (s *Session) RunUntil(pred func(shadow.Record) bool, max uint64) (exit *Exit, stopped bool, err error) {
	return s.run(max, pred)
}

// chunk bounds one Continue so a long run can be interrupted.
const chunk = 1 << 20

func (s *Session) run(max uint64, pred func(shadow.Record) bool) (*Exit, bool, error) {
	s.pred, s.stopped = pred, false
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
	n, err := s.P.Engine.ReadCode(pc, code)
	if err != nil {
		return "(unmapped)", 0
	}
	return s.P.Arch.Disasm(code[:n], pc, s.Syms.Resolver())
}
