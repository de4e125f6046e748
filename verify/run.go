//go:build cgo

package verify

import (
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/symbols"
)

// Options configure Run.
type Options struct {
	Args     []string // the program's arguments (argv[1:])
	Config   linux.Config
	MaxInsns uint64        // 0: no limit
	Timeout  time.Duration // 0: no limit
	// Interrupt, when it becomes non-zero, stops the run; the report
	// covers what was checked.
	Interrupt *atomic.Bool
	// Batch is how many instructions the emulator runs between two
	// crossings into Go (0: DefaultBatch). Every instruction is checked
	// with its own registers and memory either way; 1 hands each one over
	// before it runs, which is slower and only useful to cross-check.
	Batch int
	// MaxFrames cuts each unwind after that many frames (0: no limit, the
	// default: a walk ends at the stack's end however deep it is). An
	// instruction whose walk was cut with every frame up to the limit
	// right counts as Cut, and a run with any is incomplete (Report.
	// Incomplete says how many): the frames beyond the limit were not
	// compared.
	MaxFrames int
	// Static also checks the rows of the program's SFrame section the run
	// did not execute, against the file's CFI (package check): Report.
	// Static. Problems found there make the verdict MISMATCH, rows that
	// could not be proven INCOMPLETE.
	Static bool
	// CheckMalformed checks a program whose SFrame section breaks rules
	// of the format (but decodes whole) anyway, as read (OpenMalformed),
	// instead of refusing it: Report.Malformed lists the rules broken,
	// and the verdict is MALFORMED whatever the run found.
	CheckMalformed bool
}

// timeCheckInsns bounds the instructions checked between two looks at the
// clock for Options.Timeout: a few milliseconds' worth.
const timeCheckInsns = 1 << 22

// clock is time.Now (tests count its calls).
var clock = time.Now

// DefaultBatch is Options.Batch's default.
const DefaultBatch = 4096

// Run loads path, runs it under emulation and checks the SFrame unwind
// against the shadow stack before every instruction.
func Run(path string, opt Options) (*Report, error) {
	cfg := opt.Config
	cfg.Args = append([]string{path}, opt.Args...)
	open := Open
	if opt.CheckMalformed {
		open = OpenMalformed
	}
	tg, err := open(path, cfg)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	return tg.run(opt)
}

// runSection is Run with the program's SFrame section already decoded (and
// possibly changed, as fault-injection tests do).
func runSection(path string, sec *sframe.Section, opt Options) (*Report, error) {
	cfg := opt.Config
	cfg.Args = append([]string{path}, opt.Args...)
	tg, err := OpenSection(path, sec, cfg)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	return tg.run(opt)
}

// run checks every instruction of the target's run under opt.
func (tg *Target) run(opt Options) (*Report, error) {
	sec, s, checker := tg.Section, tg.Session, tg.Checker
	if err := tg.Batch(opt.Batch); err != nil {
		return nil, err
	}
	if opt.MaxFrames < 0 {
		return nil, fmt.Errorf("frame limit %d", opt.MaxFrames)
	}
	tg.Unwinder.SetMaxFrames(opt.MaxFrames)
	c := newCollector(tg.Path, sec, tg.Process, s)
	for _, e := range tg.Malformed {
		c.rep.Malformed = append(c.rep.Malformed, e.Error())
	}
	c.lines = tg.Lines
	c.intervalRow = tg.intervalRow
	start := time.Now()
	// The observer sees the limits between instructions; while the guest
	// waits for the host (its stdin, a reader of its stdout), the process
	// does.
	var deadline time.Time
	if opt.Timeout > 0 {
		deadline = start.Add(opt.Timeout)
	}
	tg.Process.WaitLimits(deadline, opt.Timeout, opt.Interrupt)
	// Each thread is checked against its own shadow stack (s.Shadow is the
	// running thread's).
	tid, count := s.Thread(), c.thread(s.Thread())
	// Batched, runs of instructions with the same registers and shadow
	// stack in FRE rows of the same rules (and one function and object)
	// arrive as one record (Target.merge, emu.Engine.SetMerge): each of
	// them has the result of the first, but for the PC of a depth-0 frame,
	// whenever the Checker would reuse that result whole at the next PC
	// and no store of the run (but the last instruction's) hit a word the
	// unwind read — or no FDE covers the run. A problem counts for each
	// of them too, PC by PC (in frame 0 with the PC's own row, both of
	// which the report names). Otherwise (a store under the unwind, an
	// error in frame 0) each instruction is checked on its own, with the
	// memory it saw.
	tg.merge()
	// The clock is read every 4096 records or timeCheckInsns instructions,
	// whichever comes first: a merged record may stand for 64 K.
	var ticks, clockAt uint64
	s.ObserveRef(func(r *shadow.Record) bool {
		if opt.Interrupt != nil && opt.Interrupt.Load() {
			return false
		}
		if ticks++; opt.Timeout > 0 && (ticks&0xfff == 0 || c.insns >= clockAt) {
			clockAt = c.insns + timeCheckInsns
			if clock().Sub(start) > opt.Timeout {
				c.stop = fmt.Sprintf("timeout: %v of wall-clock time passed", opt.Timeout)
				return false
			}
		}
		if opt.MaxInsns > 0 && c.insns >= opt.MaxInsns {
			c.stop = fmt.Sprintf("instruction budget of %d reached", opt.MaxInsns)
			return false
		}
		if now := s.Thread(); now != tid {
			tid, count = now, c.thread(now)
		}
		n := uint64(max(r.N, 1))
		if opt.MaxInsns > 0 {
			n = min(n, opt.MaxInsns-c.insns)
		}
		*count += n
		res := checker.checkStack(r, s.Shadow)
		c.add(r, res, checker.Same)
		if n == 1 {
			return true
		}
		var whole bool
		switch key, keyed := s.RunKey(); {
		case s.Shadow.Special():
			// Frames whose callee took its return address off the
			// stack, or unsure ones: the stack may change within the
			// run (shadow.Stack.Follow, at every instruction).
		case keyed && res.Depth == 0 && res.Kind.Problem():
			// Frame 0 was wrong: the key alone decides that.
			whole = checker.KeyHoldsFrame0(key, res, s.Shadow, runMaxSP(r.SP, s.RunExt()))
		case keyed:
			// The engine computed frame 0's key at every instruction
			// (emu.Engine.SetExtend): only the callers' words matter.
			whole = checker.KeyHolds(key, res, s.Shadow) && !runStoresHit(s, checker.TailReads)
		default:
			whole = res.Kind == NoFDE || checker.Reusable() && !runStoresHit(s, checker.Reads)
		}
		if whole {
			c.addRun(n-1, r.PC)
			if res.Kind.Problem() {
				c.addRunProblem(s.RunPCs()[1:n], res)
			}
			if ext := s.RunExt(); len(ext) > 0 {
				c.spreadExt(ext, int(n), res)
			} else if s.RunCrossed() {
				c.spread(s.RunPCs()[1:n], res)
			}
			return true
		}
		// Instruction by instruction, in a record of its own (r is the
		// session's).
		one := *r
		r = &one
		r.N, r.Size = 1, 0
		ext, pcs := s.RunExt(), s.RunPCs()
		for k, pc := range pcs[1:n] {
			s.RunAdvance(k + 1)
			r.PC = pc
			if len(ext) > 0 && int(ext[0].Member) == k+1 {
				// A branch to itself with the same SP did not run, as
				// the shadow stack sees it (settle: a fault).
				jumped := ext[0].Jumped != 0 && !(pc == pcs[k] && r.SP == ext[0].SP)
				r.SP, r.FP, r.RA = ext[0].SP, ext[0].FP, ext[0].RA
				s.Shadow.Follow(*r, jumped)
				ext = ext[1:]
			} else if s.Shadow.Special() {
				// Where a detached frame returns or an unsure one
				// becomes sure, the PC tells (shadow.Stack.resolve).
				s.Shadow.Follow(*r, false)
			}
			c.add(r, checker.checkStack(r, s.Shadow), checker.Same)
		}
		return true
	})
	exit, stopped, err := s.RunUntil(nil, 0)
	c.rep.Seconds = time.Since(start).Seconds()
	c.rep.Denied = tg.Process.Denied()
	switch {
	case err != nil:
		c.rep.Stop = "emulator error: " + err.Error()
	case exit != nil && exit.Reason == linux.StopInterrupted:
		c.rep.Stop = "interrupted" // as when the observer saw it
	case exit != nil:
		c.rep.Stop = exit.String()
		c.rep.Exited = exit.Reason == linux.StopExited
		c.rep.ExitStatus = exit.Status
		// The program's own end: exit, or a signal it sent itself
		// (abort). Anything else (a limit, an unsupported system call, a
		// CPU fault) stopped the run before it.
		c.rep.Complete = exit.Reason == linux.StopExited || exit.Reason == linux.StopSignaled
	case stopped && opt.Interrupt != nil && opt.Interrupt.Load():
		c.rep.Stop = "interrupted"
	case c.stop != "":
		c.rep.Stop = c.stop
	default:
		c.rep.Stop = "stopped before the program ended"
	}
	rep := c.finish()
	switch {
	case !rep.Complete:
		rep.Incomplete = rep.Stop
	case rep.Instructions == 0:
		rep.Complete, rep.Incomplete = false, "no instruction was checked"
	}
	ranToEnd := rep.Complete
	if n := rep.Counts[Cut.String()]; n > 0 {
		cut := fmt.Sprintf("the unwind of %d instructions was cut at the frame limit of %d (--max-frames): the frames beyond it were not compared", n, opt.MaxFrames)
		if rep.Incomplete != "" {
			cut = rep.Incomplete + "; " + cut
		}
		rep.ranToEnd = ranToEnd
		rep.Complete, rep.Incomplete = false, cut
	}
	if n := rep.Counts[Untracked.String()]; n > 0 {
		lost := fmt.Sprintf("the shadow stack lost track of %d true frame(s) (see \"lost track\"): at %d instructions the unwind was compared only up to such a frame", len(rep.LostTrack), n)
		if rep.Incomplete != "" {
			lost = rep.Incomplete + "; " + lost
		}
		rep.ranToEnd = ranToEnd
		rep.Complete, rep.Incomplete = false, lost
	}
	if opt.Static {
		rep.Static = c.static(tg)
	}
	return rep, nil
}

// runMaxSP is the highest SP of a run that starts with SP sp and whose
// registers change where ext says (emu.Engine.RunExt: at every change).
func runMaxSP(sp uint64, ext []emu.Ext) uint64 {
	for i := range ext {
		sp = max(sp, ext[i].SP)
	}
	return sp
}

// runStoresHit reports whether a store of the run the session's observer
// handles (but its last instruction's) hit a word reads says the
// checker's last walk read (Checker.Reads, TailReads): the stores' span
// first, then store by store.
func runStoresHit(s *linux.Session, reads func(addr, size uint64) bool) bool {
	lo, hi := ^uint64(0), uint64(0)
	s.RunStores(func(addr, size uint64) bool {
		lo, hi = min(lo, addr), max(hi, satAdd(addr, size))
		return false
	})
	if hi == 0 || !reads(lo, hi-lo) {
		return false
	}
	return s.RunStores(reads)
}

// collector aggregates the results of every instruction.
type collector struct {
	rep      *Report
	sec      *sframe.Section
	p        *linux.Process
	s        *linux.Session
	lines    *symbols.Lines
	insns    uint64
	sigs     uint64 // frames unwound through signal frames (Result.Signals)
	stop     string
	problems map[problemKey]*problemCount
	// recent caches problems (direct-mapped by key): most of a loop's
	// instructions with a problem find it there, without hashing a key.
	recent [256]*problemCount
	// rowPCs caches the rows of PCs (rowAt).
	rowPCs  [256]rowPC
	lost    map[lostKey]*LostTrack // Untracked results, by the frame
	lostPCs map[lostKey]map[uint64]bool
	funcs   map[string]*FuncStat
	rows    map[[2]int]uint64  // (FDE, FRE) → hits as the topmost row
	rowFail map[[2]int]*uint64 // (FDE, FRE) → failures attributed to it
	objs    *objectStats       // per mapped ELF file (objects.go)
	threads map[int]*uint64    // instructions checked per thread (pruneThreads)
	others  uint64             // and in the threads pruned

	// Per-instruction counters kept without maps: outcomes by kind, rows
	// hit (rowHits[FDE][FRE], folded into rows at the end), and the
	// function of recently seen PCs (direct-mapped).
	kinds   [len(kindNames)]uint64
	rowHits [][]uint64
	pcFunc  []pcFunc
	// intervalRow is Target.intervalRow (spreadExt).
	intervalRow func(fi int, idx int32) int

	// What the last full add counted, for results the Checker reused
	// whole (Checker.Same): the counters to bump again.
	memo struct {
		ok      bool
		obj     *ObjectStat
		end     *chainEnd // nil: the chain did not end at a frame without data
		covered bool
		hits    *uint64 // the topmost row's hits, nil if in another section
		kind    Kind
		signals uint64
		// The problem counted, when it lies in a caller's frame (Depth
		// >= 1): the same for every instruction the result is reused at.
		// nil otherwise.
		pr *problemCount
	}
}

// problemCount is a problem with what is counted of it besides its hits:
// the PCs it was met at and the failures of its row.
type problemCount struct {
	key  problemKey
	pr   *Problem
	fail *uint64 // the row's failures (rowFail), if a failure in a row of the section
	pcs  *pcSet  // nil at depth 0, where the key names its one PC
}

// pcSet is a set of PCs, with the ones added last (direct-mapped), which
// spare the map most of the instructions of a loop.
type pcSet struct {
	m      map[uint64]bool
	recent [64]uint64
}

func (s *pcSet) add(pc uint64) {
	if e := &s.recent[pc%uint64(len(s.recent))]; *e != pc || pc == 0 {
		*e = pc
		s.m[pc] = true
	}
}

// count counts n more instructions at pc (in function fs) with the
// problem.
func (p *problemCount) count(fs *FuncStat, pc uint64, n uint64) {
	fs.Problems += n
	p.pr.Hits += n
	if p.fail != nil {
		*p.fail += n
	}
	if p.pcs != nil {
		p.pcs.add(pc)
	}
}

type rowPC struct {
	pc       uint64
	sec      *sframe.Section
	fde, fre int
}

type pcFunc struct {
	pc uint64
	fs *FuncStat
}

// lostKey names a frame the shadow stack could not vouch for.
type lostKey struct{ call, entry uint64 }

type problemKey struct {
	kind     Kind
	framePC  uint64
	fde, fre int
	depth    int
}

func newCollector(path string, sec *sframe.Section, p *linux.Process, s *linux.Session) *collector {
	return &collector{
		rep:      &Report{Binary: path, Arch: p.Arch.Name, SFrameVersion: int(sec.Header.Version), Counts: map[string]uint64{}},
		sec:      sec,
		p:        p,
		s:        s,
		problems: map[problemKey]*problemCount{},
		lost:     map[lostKey]*LostTrack{},
		lostPCs:  map[lostKey]map[uint64]bool{},
		funcs:    map[string]*FuncStat{},
		rows:     map[[2]int]uint64{},
		rowFail:  map[[2]int]*uint64{},
		threads:  map[int]*uint64{},
		objs:     newObjectStats(p, s.Syms),
		rowHits:  make([][]uint64, len(sec.FDEs)),
		pcFunc:   make([]pcFunc, 1<<12),
	}
}

// funcStat returns the statistics of the function holding pc.
func (c *collector) funcStat(pc uint64) *FuncStat {
	e := &c.pcFunc[(pc^pc>>12)&(1<<12-1)]
	if e.fs != nil && e.pc == pc {
		return e.fs
	}
	name, _, _ := c.s.Syms.Lookup(pc)
	fs := c.funcs[name]
	if fs == nil {
		fs = &FuncStat{Name: name, NameDemangled: symbols.Demangled(name)}
		c.funcs[name] = fs
	}
	*e = pcFunc{pc, fs}
	return fs
}

// add counts the instruction of r with its result; same says the result
// is the previous one reused whole (Checker.Same), in the same FRE row, so
// the counters the previous add found are bumped again.
func (c *collector) add(r *shadow.Record, res *Result, same bool) {
	c.insns++
	c.kinds[res.Kind]++
	c.sigs += uint64(res.Signals)
	m := &c.memo
	if same && (m.ok || m.pr != nil) {
		m.obj.Instructions++
		if m.end != nil {
			m.end.stat.ChainEnds++
			m.end.n++
		}
		fs := c.funcStat(r.PC)
		fs.Instructions++
		if m.covered {
			m.obj.Covered++
			fs.Covered++
			c.rep.Covered++
		}
		if m.hits != nil {
			*m.hits++
		}
		if m.pr != nil {
			m.pr.count(fs, r.PC, 1)
		}
		return
	}
	m.obj, m.end = c.objs.add(r.PC, res)
	m.kind, m.signals = res.Kind, uint64(res.Signals)
	fs := c.funcStat(r.PC)
	fs.Instructions++
	m.covered = res.Kind != NoFDE
	if m.covered {
		fs.Covered++
		c.rep.Covered++
	}
	m.hits = nil
	if res.TopSection == c.sec {
		hits := c.rowHits[res.Top[0]]
		if hits == nil {
			hits = make([]uint64, len(c.sec.FDEs[res.Top[0]].FREs))
			c.rowHits[res.Top[0]] = hits
		}
		m.hits = &hits[res.Top[1]]
		*m.hits++
	}
	// A problem is counted per PC: through the memo only when it lies in
	// a caller's frame (which the PC does not name); a frame the shadow
	// stack lost track of never is.
	m.pr = nil
	m.ok = !res.Kind.Problem() && res.Kind != Untracked
	if m.ok {
		return
	}
	if res.Kind == Untracked {
		c.addLost(r.PC, res)
		return
	}
	if p := c.addProblem(fs, r.PC, res); res.Depth > 0 {
		// Not at depth 0, whose key names the PC of frame 0.
		m.pr = p
	}
}

// addProblem counts the problem res at pc, in function fs, and returns it.
func (c *collector) addProblem(fs *FuncStat, pc uint64, res *Result) *problemCount {
	f := &res.Frame
	key := problemKey{kind: res.Kind, framePC: f.PC, fde: f.Row.FDE, fre: f.Row.FRE, depth: res.Depth}
	if !f.HasRow {
		key.fde, key.fre = -1, -1
	}
	slot := &c.recent[(key.framePC^key.framePC>>12^uint64(key.depth)<<4^uint64(key.kind)<<8)%uint64(len(c.recent))]
	p := *slot
	if p == nil || p.key != key {
		p = c.problem(pc, res, key)
		*slot = p
	}
	p.count(fs, pc, 1)
	return p
}

// problem returns the problem of key, made from the result res at pc if
// it is new.
func (c *collector) problem(pc uint64, res *Result, key problemKey) *problemCount {
	if p := c.problems[key]; p != nil {
		return p
	}
	f := &res.Frame
	sym, frameSym := c.s.Syms.Format(pc), c.s.Syms.Format(f.PC)
	pr := &Problem{
		kind: res.Kind, Kind: res.Kind.String(), PC: pc, Symbol: sym, SymbolDemangled: symbols.Demangled(sym), Source: c.lines.Lookup(pc),
		Depth: res.Depth, FramePC: f.PC, FrameSymbol: frameSym, FrameSymbolDemangled: symbols.Demangled(frameSym), FrameSource: c.lines.Lookup(f.PC),
		Want: res.Want, Got: res.Got, FDE: -1, FRE: -1,
	}
	pr.Insn, _ = c.s.Disasm(pc)
	if res.Err != nil {
		pr.Error = res.Err.Error()
	}
	pr.Cause = callEndedCause(res, frameSym)
	p := &problemCount{key: key, pr: pr}
	if res.Depth > 0 {
		p.pcs = &pcSet{m: map[uint64]bool{}}
	}
	if f.HasRow && f.Section == c.sec {
		pr.FDE, pr.FRE = f.Row.FDE, f.Row.FRE
		fde := &c.sec.FDEs[f.Row.FDE]
		pr.FDEText = fmt.Sprintf("func idx [%d]: pc = 0x%x, size = %d bytes", f.Row.FDE, fde.Start, fde.Size)
		pr.Row = c.sec.FormatRow(f.Row.FDE, f.Row.FRE)
		if res.Kind.Failure() {
			row := [2]int{f.Row.FDE, f.Row.FRE}
			if p.fail = c.rowFail[row]; p.fail == nil {
				p.fail = new(uint64)
				c.rowFail[row] = p.fail
			}
		}
	}
	c.problems[key] = p
	return p
}

// addLost counts an Untracked result at pc by the frame it stopped at.
func (c *collector) addLost(pc uint64, res *Result) {
	f := &res.Lost
	key := lostKey{f.CallSite, f.Entry}
	lt := c.lost[key]
	if lt == nil {
		why := "a call to its own return address (a get-PC idiom, which makes no frame, or a call of the function that follows it), and no symbol tells which"
		if f.Detached {
			why = "the callee took its return address off the stack (as PCRE2's JIT code and vfork do) and no symbol tells whether it still runs"
		}
		callSym, entrySym, sym := c.s.Syms.Format(f.CallSite), c.s.Syms.Format(f.Entry), c.s.Syms.Format(pc)
		lt = &LostTrack{CallSite: f.CallSite, CallSymbol: callSym, Entry: f.Entry, EntrySymbol: entrySym, Why: why,
			PC: pc, Symbol: sym, Source: c.lines.Lookup(pc), Depth: res.Depth}
		lt.Insn, _ = c.s.Disasm(pc)
		c.lost[key] = lt
		c.lostPCs[key] = map[uint64]bool{}
	}
	lt.Hits++
	c.lostPCs[key][pc] = true
}

// addRun counts k more instructions after the one at pc that add just
// counted, with the same result, in its function and FRE row (a run of a
// merged record).
func (c *collector) addRun(k uint64, pc uint64) {
	m := &c.memo
	c.insns += k
	c.kinds[c.memo.kind] += k
	c.sigs += k * m.signals
	m.obj.Instructions += k
	if m.end != nil {
		m.end.stat.ChainEnds += k
		m.end.n += k
	}
	fs := c.funcStat(pc)
	fs.Instructions += k
	if m.covered {
		m.obj.Covered += k
		fs.Covered += k
		c.rep.Covered += k
	}
	if m.hits != nil {
		*m.hits += k
	}
}

// addRunProblem counts the problem res of a run's first instruction,
// which add counted, for the rest of the run, pcs: the same at each when
// it lies in a caller's frame (memo.pr); in frame 0, the same but for
// frame 0's PC and its row in the same FDE, which name a problem of their
// own (res is put back as it was).
func (c *collector) addRunProblem(pcs []uint64, res *Result) {
	m := &c.memo
	if len(pcs) == 0 {
		return
	}
	if m.pr == nil {
		f := &res.Frame
		pc0, row0 := f.PC, f.Row.FRE
		fs := c.funcStat(pcs[0])
		for _, pc := range pcs {
			if f.HasRow {
				f.Row.FRE = c.rowAt(f.Section, f.Row.FDE, pc, row0)
			}
			f.PC = pc
			c.addProblem(fs, pc, res)
		}
		f.PC, f.Row.FRE = pc0, row0
		return
	}
	m.pr.count(c.funcStat(pcs[0]), pcs[0], uint64(len(pcs)))
	for _, pc := range pcs[1:] {
		m.pr.pcs.add(pc)
	}
}

// rowAt returns the index of the row of FDE fi of sec at pc (as the
// unwinder finds it: PCMASK FDEs, rows out of order), through a cache of
// the PCs asked for last; def if there is none (cannot be: a run's merge
// intervals lie in rows of its FDE).
func (c *collector) rowAt(sec *sframe.Section, fi int, pc uint64, def int) int {
	e := &c.rowPCs[(pc^pc>>10)%uint64(len(c.rowPCs))]
	if e.pc == pc && e.sec == sec && e.fde == fi {
		return e.fre
	}
	j, err := sec.FindFRE(&sec.FDEs[fi], pc)
	if err != nil {
		return def
	}
	*e = rowPC{pc: pc, sec: sec, fde: fi, fre: j}
	return j
}

// spread moves the row hits addRun counted for pcs, the rest of a run
// whose first instruction had the result res, to the rows of the PCs that
// lie in another row of the run's class (same FDE, same rules).
func (c *collector) spread(pcs []uint64, res *Result) {
	m := &c.memo
	if m.hits == nil || res.TopSection != c.sec {
		return
	}
	fi := res.Top[0]
	f := &c.sec.FDEs[fi]
	hits := c.rowHits[fi]
	// extent is row j's addresses.
	extent := func(j int) (uint64, uint64) {
		hi := f.Start + uint64(f.Size)
		if j+1 < len(f.FREs) {
			hi = f.Start + uint64(f.FREs[j+1].Start)
		}
		return f.Start + uint64(f.FREs[j].Start), hi
	}
	lo, hi := extent(res.Top[1])
	// The other row met last (a run goes back and forth between a few).
	olo, ohi, oj := uint64(0), uint64(0), -1
	for _, pc := range pcs {
		if pc-lo < hi-lo {
			continue
		}
		if pc-olo >= ohi-olo {
			j, err := c.sec.FindFRE(f, pc)
			if err != nil {
				continue // cannot be: mergeBounds put pc in a row of f
			}
			oj = j
			olo, ohi = extent(j)
		}
		*m.hits--
		hits[oj]++
	}
}

// spreadExt is spread for a run whose every change of merge interval the
// engine listed (emu.Engine.RunExt, in extension mode): the instructions
// from one change to the next lie in the change's interval, one row.
func (c *collector) spreadExt(ext []emu.Ext, n int, res *Result) {
	m := &c.memo
	if m.hits == nil || res.TopSection != c.sec {
		return
	}
	fi := res.Top[0]
	hits := c.rowHits[fi]
	for i, e := range ext {
		start, end := int(e.Member), n
		if i+1 < len(ext) {
			end = min(end, int(ext[i+1].Member))
		}
		if start >= end {
			continue
		}
		j := c.intervalRow(fi, e.Interval)
		if j < 0 || j == res.Top[1] {
			continue // j < 0 cannot be: the run stays in FDE fi
		}
		k := uint64(end - start)
		*m.hits -= k
		hits[j] += k
	}
}

// callEndedCause explains a problem in a caller frame whose PC, the
// return address its callee's call left, is the first byte of a function
// of the SFrame data: that call was the last instruction of the code it
// was in (a call that does not return: abort, exit, longjmp, a noreturn
// function), so an unwinder that looks the return address up, as SFrame
// consumers do, reads the next function's first row, whatever the
// caller's rows say. An early end (EndedEarly: the return address in
// padding) says so itself; "" if the problem is another.
func callEndedCause(res *Result, sym string) string {
	f := &res.Frame
	if res.Depth == 0 || res.Kind == EndedEarly || res.Kind == SignalGap || !f.HasRow || f.Section == nil ||
		f.Row.FDE < 0 || f.Row.FDE >= len(f.Section.FDEs) || f.Section.FDEs[f.Row.FDE].Start != f.PC {
		return ""
	}
	return fmt.Sprintf("the return address %#x is the first byte of %s: the call before it ended the function it was in "+
		"(a call that does not return, as to abort or longjmp), and looking the return address up gives the next function's first row, "+
		"not the caller's", f.PC, symbols.Demangle(sym))
}

// maxThreadStats bounds the threads counted one by one (pruneThreads): a
// program that creates threads without end costs no memory per past
// thread. It is above what linux.Process.Threads lists at most (the
// threads alive and 1024 that exited), so that each pruning frees some.
const maxThreadStats = 8192

// thread returns the counter of the instructions checked in thread tid.
func (c *collector) thread(tid int) *uint64 {
	n := c.threads[tid]
	if n == nil {
		if len(c.threads) >= maxThreadStats {
			c.pruneThreads()
		}
		n = new(uint64)
		c.threads[tid] = n
	}
	return n
}

// pruneThreads folds the counts of the threads the report will not list
// (exited, past those linux.Process.Threads keeps) into others. The
// running thread, whose counter the observer holds, is listed.
func (c *collector) pruneThreads() {
	listed := map[int]bool{}
	for _, th := range c.p.Threads() {
		listed[th.TID] = true
	}
	for tid, n := range c.threads {
		if !listed[tid] {
			c.others += *n
			delete(c.threads, tid)
		}
	}
}

func (c *collector) finish() *Report {
	rep := c.rep
	rep.Instructions = c.insns
	c.pruneThreads() // what is left is what the report lists
	for _, th := range c.p.Threads() {
		var n uint64
		if k := c.threads[th.TID]; k != nil {
			n = *k
		}
		rep.PerThread = append(rep.PerThread, ThreadStat{TID: th.TID, Instructions: n})
	}
	total, unlisted, _ := c.p.ThreadCount()
	rep.Threads, rep.UnlistedThreads, rep.UnlistedInstructions = total, unlisted, c.others
	for sig, n := range c.p.SignalsDelivered() {
		if rep.Signals == nil {
			rep.Signals = map[string]uint64{}
		}
		rep.Signals[linux.SignalName(sig)] += n
		rep.SignalsDelivered += n
	}
	rep.SignalFrames = c.sigs
	for k, n := range c.kinds {
		if n > 0 {
			rep.Counts[Kind(k).String()] = n
		}
	}
	for i, hits := range c.rowHits {
		for j, n := range hits {
			if n > 0 {
				c.rows[[2]int{i, j}] = n
			}
		}
	}
	rep.rowHits = c.rows
	c.objs.finish(rep)
	for _, p := range c.problems {
		p.pr.PCs = 1
		if p.pcs != nil {
			p.pr.PCs = len(p.pcs.m)
		}
		rep.Problems = append(rep.Problems, *p.pr)
	}
	for key, lt := range c.lost {
		lt.PCs = len(c.lostPCs[key])
		rep.LostTrack = append(rep.LostTrack, *lt)
	}
	sort.Slice(rep.LostTrack, func(i, j int) bool {
		a, b := &rep.LostTrack[i], &rep.LostTrack[j]
		switch {
		case a.Hits != b.Hits:
			return a.Hits > b.Hits
		case a.CallSite != b.CallSite:
			return a.CallSite < b.CallSite
		}
		return a.Entry < b.Entry
	})
	rep.Anomalies = c.anomalies()
	sort.Slice(rep.Problems, func(i, j int) bool {
		a, b := &rep.Problems[i], &rep.Problems[j]
		// Two problems may share their hits and first PC (frames at
		// several depths wrong at once): the rest of their key orders
		// them, never the map's iteration order.
		switch {
		case a.Hits != b.Hits:
			return a.Hits > b.Hits
		case a.PC != b.PC:
			return a.PC < b.PC
		case a.Depth != b.Depth:
			return a.Depth < b.Depth
		case a.FramePC != b.FramePC:
			return a.FramePC < b.FramePC
		case a.kind != b.kind:
			return a.kind < b.kind
		case a.FDE != b.FDE:
			return a.FDE < b.FDE
		}
		return a.FRE < b.FRE
	})
	for _, fs := range c.funcs {
		rep.Functions = append(rep.Functions, *fs)
	}
	sort.Slice(rep.Functions, func(i, j int) bool {
		a, b := &rep.Functions[i], &rep.Functions[j]
		if a.Problems != b.Problems {
			return a.Problems > b.Problems
		}
		return a.Name < b.Name
	})
	// FRE coverage over the functions that ran.
	for i := range c.sec.FDEs {
		f := &c.sec.FDEs[i]
		ran := false
		for j := range f.FREs {
			if c.rows[[2]int{i, j}] > 0 {
				ran = true
			}
		}
		if !ran {
			continue
		}
		for j := range f.FREs {
			rep.RowsInRunFunctions++
			if c.rows[[2]int{i, j}] > 0 {
				rep.RowsExercised++
			} else if len(rep.RowsNeverReached) < 200 {
				sym := c.s.Syms.Format(f.Start + uint64(f.FREs[j].Start))
				rep.RowsNeverReached = append(rep.RowsNeverReached, RowRef{FDE: i, FRE: j,
					Symbol: sym, SymbolDemangled: symbols.Demangled(sym), Row: c.sec.FormatRow(i, j)})
			}
		}
	}
	rep.RowsTotal = int(c.sec.Header.NumFREs)
	for row, n := range c.rowFail {
		n := *n
		f := &c.sec.FDEs[row[0]]
		sym := c.s.Syms.Format(f.Start + uint64(f.FREs[row[1]].Start))
		rep.RowFailures = append(rep.RowFailures, RowStat{RowRef: RowRef{FDE: row[0], FRE: row[1],
			Symbol: sym, SymbolDemangled: symbols.Demangled(sym), Row: c.sec.FormatRow(row[0], row[1])},
			Failures: n, Used: c.rows[row]})
	}
	sort.Slice(rep.RowFailures, func(i, j int) bool {
		a, b := &rep.RowFailures[i], &rep.RowFailures[j]
		if a.Failures != b.Failures {
			return a.Failures > b.Failures
		}
		return a.FDE < b.FDE || a.FDE == b.FDE && a.FRE < b.FRE
	})
	for _, pr := range rep.Problems {
		if pr.kind.Failure() {
			rep.Failures += pr.Hits
		}
	}
	return rep
}

// anomalies summarizes the departures from call/return nesting the
// shadow stacks of the run's threads saw (shadow.Stack.Anomalies), by
// kind, with the first of each (thread by thread, in tid order).
func (c *collector) anomalies() []ShadowAnomaly {
	var out []ShadowAnomaly
	at := map[string]int{}
	c.s.EachAnomalyKind(func(tid int, k shadow.AnomalyKind) {
		a := &k.First
		i, ok := at[a.Kind]
		if !ok {
			sym := c.s.Syms.Format(a.PC)
			i = len(out)
			at[a.Kind] = i
			out = append(out, ShadowAnomaly{Kind: a.Kind, TID: tid, Insn: a.Insn, PC: a.PC, Symbol: sym,
				SymbolDemangled: symbols.Demangled(sym), Detail: a.Detail})
		}
		out[i].Count += k.Count
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
