//go:build cgo

package tui

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/unwind"
	"github.com/sframesim/sframesim/verify"
)

// State is everything the screen shows at a stop, computed by the
// Debugger between commands and rendered by the model: the UI goroutine
// never touches the emulator.
type State struct {
	Binary string
	Arch   string
	// Malformed counts the rules of the format the SFrame section breaks
	// (opened with OpenMalformed; 0 for a well-formed one).
	Malformed int
	Insns     uint64
	PC        uint64
	Symbol    string // PC as symbol+offset
	Source    string // file:line of the PC, "" without DWARF
	Exit      string // how the program ended, "" while it runs

	Regs   []Reg
	Disasm []Line

	HasRow    bool
	FDE       string   // "func idx [3]: pc = 0x401120, size = 50 bytes"
	RowHeader string   // objdump's column header
	Row       string   // the active FRE row as objdump prints it
	Calc      []string // CFA, RA and FP with their arithmetic
	NoRow     string   // why there is no row

	Frames  []StackRow
	Kind    verify.Kind // the verification outcome at this instruction
	Verdict string      // in words
	Stopped string      // why the unwind stopped

	TID     int         // the running thread
	Threads []ThreadRow // every thread so far, in tid order
	// View is the thread the screen shows (PC, disassembly, registers,
	// row and stacks) when it is not the running one (0: the running
	// one); ViewState is its state, RunningAt the running thread's PC as
	// symbol+offset.
	View      int
	ViewState string
	RunningAt string

	// Signal is the last signal delivery or rt_sigreturn the last command
	// ran through, in words ("SIGUSR1 delivered to tid 4242: handler at
	// on_usr1"), "" if none.
	Signal string

	Breakpoints []string // symbol (address)
	Checkpoints int
	Output      string // the last line the program wrote
}

// ThreadRow is one thread of the threads pane.
type ThreadRow struct {
	TID     int
	State   string // running, runnable, blocked: why, exited
	PC      uint64
	Where   string // PC as symbol+offset; "" once exited
	Depth   int    // of its shadow stack
	Callers []string
	Running bool
	Viewed  bool // the screen shows it (View), not the running thread
}

// Reg is one register.
type Reg struct {
	Name    string
	Val     uint64
	Changed bool // by the last command
}

// Line is one disassembled instruction.
type Line struct {
	PC      uint64
	Where   string // symbol+offset
	Text    string
	Current bool
	Break   bool
	FRE     int // index of the FRE row starting here, or -1
}

// StackRow is frame k of the unwound stack beside the true frame k.
type StackRow struct {
	Depth int
	// The unwind (HasUnwound): the frame's function and what its row gives.
	HasUnwound  bool
	Func        string
	CFA, RA, FP uint64
	HasRA       bool // RA and FP were recovered (not the outermost frame or an error)
	Err         string
	// The truth (HasTrue): the shadow stack's frame.
	HasTrue              bool
	TrueFunc             string
	TCFA, TRA, TFP       uint64
	BadCFA, BadRA, BadFP bool
	TrueNote             string // no true frame: "outermost: main", "beyond the true stack"
	// TrueSignal marks the true frame of a signal delivery (the kernel's
	// signal frame, between the handler and the interrupted frame):
	// "[signal SIGSEGV]"; the unwound frame of a signal trampoline has
	// it in Func too.
	TrueSignal string
	Decisive   bool // the frame where the verdict was reached
}

// Mismatch reports whether any compared value differs.
func (r *StackRow) Mismatch() bool { return r.BadCFA || r.BadRA || r.BadFP }

// State computes the screen state, with about lines of disassembly: of
// the running thread, or of the thread View chose.
func (d *Debugger) State(lines int) State {
	s := State{Binary: filepath.Base(d.Path), Arch: d.p.Arch.Name, Malformed: len(d.tg.Malformed), Insns: d.s.Executed(), Checkpoints: len(d.hist.cps)}
	if d.exit != nil {
		s.Exit = d.exit.String()
	}
	for a := range d.bps {
		s.Breakpoints = append(s.Breakpoints, fmt.Sprintf("%s (%#x)", d.symbol(a), a))
	}
	slices.Sort(s.Breakpoints)
	out := strings.TrimRight(d.out.String(), "\n")
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	s.Output = out
	s.Signal = d.lastSignal()
	s.TID = d.s.Thread()
	s.Threads = d.threads()

	// The thread shown: the running one, with the engine's registers, or
	// another with those saved when it was switched out.
	st := d.s.State()
	vals, prev := d.regs, d.prevRegs
	regs := verify.EngineRegs(d.p.Engine)
	base := func(r sframe.Reg) (uint64, bool) {
		v, err := d.p.Engine.ReadDWARF(r)
		return v, err == nil
	}
	trueStack := d.s.Shadow.Frames()
	if v := d.viewed(); v != 0 {
		tr, err := d.p.ThreadRegs(v)
		if err != nil {
			d.view = 0
		} else {
			get := func(r sframe.Reg) uint64 { x, _ := tr.Get(r); return x }
			a := d.p.Arch
			st = shadow.Record{PC: get(a.PC), SP: get(a.SP), FP: get(a.FP)}
			if a.HasLinkRegister() {
				st.RA = get(a.LR)
			}
			vals, prev, regs, base = tr.Vals, tr.Vals, tr.Get, tr.Get
			trueStack = nil
			if sh := d.s.ShadowOf(v); sh != nil {
				trueStack = sh.Frames()
			}
			s.View = v
			for _, t := range s.Threads {
				switch {
				case t.TID == v:
					s.ViewState = t.State
				case t.Running:
					s.RunningAt = t.Where
				}
			}
		}
	}
	for i := range s.Threads {
		s.Threads[i].Viewed = s.Threads[i].TID == s.View
	}
	pc := st.PC
	s.PC, s.Symbol, s.Source = pc, d.symbol(pc), d.lines.Lookup(pc)
	for i, r := range d.p.Arch.Registers {
		s.Regs = append(s.Regs, Reg{Name: d.p.Arch.RegName(r), Val: vals[i], Changed: vals[i] != prev[i]})
	}
	s.Disasm = d.disasm(pc, lines)

	// The unwind, frame by frame, and the verdict: as the verifier checks
	// the thread at this instruction.
	it := d.u.Walk(unwind.Registers{PC: st.PC, SP: st.SP, FP: st.FP, LR: st.RA, Get: regs}, verify.Memory{E: d.p.Engine})
	var frames []unwind.Frame
	for it.Next() {
		frames = append(frames, it.Frame())
	}
	walkErr := it.Err()
	res := verify.Check(d.u, st, verify.Memory{E: d.p.Engine}, trueStack, regs)
	s.Kind = res.Kind
	s.Verdict = verdict(res)
	s.Stopped = stopReason(frames, walkErr)
	if len(frames) > 0 {
		d.rowPane(&s, &frames[0], st, base)
	} else {
		s.NoRow = "no frame"
	}
	n := len(trueStack)
	rows := max(len(frames), n+1)
	for k := 0; k < rows; k++ {
		r := StackRow{Depth: k}
		// A delivery's signal frame, between its handler and the
		// interrupted frame, in both stacks.
		trueSig := ""
		if k < n && trueStack[n-1-k].SignalFrame {
			r.TrueSignal = "[signal " + linux.SignalName(trueStack[n-1-k].Signal) + "]"
			trueSig = r.TrueSignal + " "
		}
		if k < len(frames) {
			f := &frames[k]
			r.HasUnwound, r.Func = true, d.symbol(f.PC)
			if f.Signal {
				r.Func = cmp.Or(trueSig, "[signal] ") + r.Func
			}
			if f.Err != nil {
				r.Err = shortErr(f.Err)
			} else if f.HasRow || f.Signal {
				r.CFA = f.CFA
				if !f.Outermost {
					r.RA, r.FP, r.HasRA = f.RA, f.CallerFP, true
				}
			}
		}
		truePC := pc
		if k > 0 && k <= n {
			truePC = trueStack[n-k].ReturnAddr
		}
		r.TrueFunc = trueSig + d.symbol(truePC)
		if k < n {
			t := trueStack[n-1-k]
			r.HasTrue, r.TCFA, r.TRA, r.TFP = true, t.CFA, t.ReturnAddr, t.CallerFP
			if r.HasUnwound && r.Err == "" && (frames[k].HasRow || frames[k].Signal) {
				r.BadCFA = r.CFA != r.TCFA
				r.BadRA = r.HasRA && r.RA != r.TRA
				r.BadFP = r.HasRA && r.FP != r.TFP
			}
		}
		switch {
		case k == n:
			r.TrueNote = "outermost: " + r.TrueFunc
		case k > n:
			r.TrueNote = "beyond the true stack"
		}
		r.Decisive = res.Kind != verify.OK && k == res.Depth
		s.Frames = append(s.Frames, r)
	}
	return s
}

// threads lists the process's threads with their shadow stacks: depth and
// the true callers, innermost first.
func (d *Debugger) threads() []ThreadRow {
	var rows []ThreadRow
	for _, t := range d.p.Threads() {
		r := ThreadRow{TID: t.TID, State: t.State, PC: t.PC, Running: t.TID == d.s.Thread()}
		if t.State != "exited" {
			r.Where = d.symbol(t.PC)
		}
		if sh := d.s.ShadowOf(t.TID); sh != nil {
			fr := sh.Frames()
			r.Depth = len(fr)
			for i := len(fr) - 1; i >= 0; i-- {
				r.Callers = append(r.Callers, d.funcName(fr[i].ReturnAddr))
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// funcName is the function pc is in, without the offset.
func (d *Debugger) funcName(pc uint64) string {
	name, _, ok := d.s.Syms.Lookup(pc)
	if !ok {
		return "0x" + hex(pc)
	}
	return symbols.Demangle(name)
}

// signalPane fills the row pane for a signal trampoline (topmost): its
// FDE has the V3 signal flag, and its frame comes from the signal frame's
// ucontext, whatever rows it has.
func (d *Debugger) signalPane(s *State, f *unwind.Frame) {
	sec, row := f.Section, f.Row
	fde := &sec.FDEs[row.FDE]
	a := d.p.Arch
	s.HasRow = true
	s.FDE = fmt.Sprintf("func idx [%d]: pc = 0x%x, size = %d bytes (%s), attr = \"S\": signal trampoline", row.FDE, fde.Start, fde.Size, d.symbol(fde.Start))
	s.RowHeader = strings.TrimRight(fmt.Sprintf("    %-7s%-8s %-10s%-10s%-13s", "STARTPC", "   ", "CFA", "FP", "RA"), " ")
	s.Row = "    (no rows)"
	if f.HasRow {
		s.Row = fmt.Sprintf("%s   <- FRE [%d] (not used)", sec.FormatRow(row.FDE, row.FRE), row.FRE)
	}
	saved := func(r sframe.Reg) uint64 { addr, _ := a.Signal.Saved(f.Context-a.Signal.MContext, r); return addr }
	s.Calc = []string{
		fmt.Sprintf("the interrupted registers, in uc_mcontext at %#x:", f.Context),
		fmt.Sprintf("CFA = *%#x (%s) = %#x", saved(a.SP), a.RegName(a.SP), f.CFA),
		fmt.Sprintf("RA  = *%#x (%s) = %#x", saved(a.PC), a.RegName(a.PC), f.RA),
		fmt.Sprintf("FP  = *%#x (%s) = %#x", saved(a.FP), a.RegName(a.FP), f.CallerFP),
	}
}

// verdict describes a verification outcome.
func verdict(r verify.Result) string {
	switch r.Kind {
	case verify.OK:
		if r.Checked == 0 {
			return "ok: the outermost function, no frame to compare"
		}
		if r.Signals > 0 {
			return fmt.Sprintf("ok: %d frame(s) match the true stack, through %d signal frame(s)", r.Checked, r.Signals)
		}
		return fmt.Sprintf("ok: %d frame(s) match the true stack", r.Checked)
	case verify.NoFDE:
		return "no SFrame data for the PC (coverage gap)"
	case verify.MismatchCFA, verify.MismatchRA, verify.MismatchFP:
		what := map[verify.Kind]string{verify.MismatchCFA: "CFA", verify.MismatchRA: "RA", verify.MismatchFP: "FP"}[r.Kind]
		return fmt.Sprintf("MISMATCH %s in frame %d: true %#x, SFrame %#x", what, r.Depth, r.Want, r.Got)
	case verify.UnwindError:
		return fmt.Sprintf("UNWIND ERROR at frame %d: %v", r.Depth, r.Err)
	case verify.TooShort:
		return fmt.Sprintf("TOO SHORT: the unwind ends at frame %d, the true stack goes on", r.Depth)
	case verify.Limited:
		return fmt.Sprintf("limited at frame %d: %v", r.Depth, r.Err)
	case verify.Unterminated:
		return fmt.Sprintf("unterminated: frames right, but frame %d's row does not mark the end", r.Depth)
	case verify.Cut:
		return fmt.Sprintf("cut: frames right up to the frame limit at frame %d; the rest was not compared", r.Depth)
	case verify.SignalGap:
		return fmt.Sprintf("signal gap at frame %d: no SFrame signal frame for the trampoline; the interrupted frames were not compared", r.Depth)
	case verify.Untracked:
		return fmt.Sprintf("untracked: frames right up to frame %d, whose true frame (the call at %#x) the shadow stack cannot vouch for; the rest was not compared", r.Depth, r.Lost.CallSite)
	case verify.EndedEarly:
		return fmt.Sprintf("ENDED EARLY at frame %d: no SFrame row for its return address %#x, though its function has SFrame data", r.Depth, r.Frame.PC)
	}
	return r.Kind.String()
}

// stopReason says why the walk ended.
func stopReason(frames []unwind.Frame, walkErr error) string {
	if len(frames) == 0 {
		return "no frame"
	}
	f := &frames[len(frames)-1]
	switch {
	case f.Err != nil && unwind.NoData(f.Err):
		return fmt.Sprintf("#%d no SFrame data at %#x", len(frames)-1, f.PC)
	case f.Err != nil:
		return fmt.Sprintf("#%d %v", len(frames)-1, f.Err)
	case f.Outermost:
		return fmt.Sprintf("#%d outermost (RA undefined)", len(frames)-1)
	case errors.Is(walkErr, unwind.ErrMaxFrames):
		return fmt.Sprintf("cut after frame %d: %v", len(frames)-1, walkErr)
	case walkErr != nil:
		return walkErr.Error()
	}
	return fmt.Sprintf("after frame %d", len(frames)-1)
}

func shortErr(err error) string {
	switch {
	case errors.Is(err, unwind.ErrNoFDE), errors.Is(err, unwind.ErrNoFRE):
		return "no SFrame data"
	}
	return err.Error()
}

// rowPane fills the FDE/FRE pane from the topmost frame.
func (d *Debugger) rowPane(s *State, f *unwind.Frame, st shadow.Record, reg func(sframe.Reg) (uint64, bool)) {
	if f.Signal && f.Err == nil {
		d.signalPane(s, f)
		return
	}
	if !f.HasRow {
		if f.Err != nil {
			s.NoRow = "no row: " + f.Err.Error()
		}
		return
	}
	sec, row := f.Section, f.Row
	fde := &sec.FDEs[row.FDE]
	s.HasRow = true
	s.FDE = fmt.Sprintf("func idx [%d]: pc = 0x%x, size = %d bytes (%s)", row.FDE, fde.Start, fde.Size, d.symbol(fde.Start))
	marker := "   "
	if fde.PCType() == sframe.PCMask {
		marker = "[m]"
	}
	s.RowHeader = strings.TrimRight(fmt.Sprintf("    %-7s%-8s %-10s%-10s%-13s", "STARTPC", marker, "CFA", "FP", "RA"), " ")
	s.Row = fmt.Sprintf("%s   <- FRE [%d]", sec.FormatRow(row.FDE, row.FRE), row.FRE)
	a := d.p.Arch
	base := func(r sframe.Reg) (uint64, bool) {
		switch int(r) {
		case int(sframe.RegCFA):
			return f.CFA, true
		}
		return reg(r)
	}
	expr := func(rule sframe.Rule) (string, uint64, bool) {
		b, ok := base(rule.Reg)
		addr := b + uint64(int64(rule.Offset))
		text := a.RegName(rule.Reg) + fmt.Sprintf("%+d", rule.Offset)
		if rule.Deref {
			return fmt.Sprintf("*(%s) = *%#x", text, addr), addr, ok
		}
		return text, addr, ok
	}
	// CFA.
	if row.CFA.Kind == sframe.RuleUndefined {
		s.Calc = append(s.Calc, "CFA = undefined: outermost frame")
	} else if t, v, ok := expr(row.CFA); ok {
		if row.CFA.Deref {
			v = f.CFA
		}
		s.Calc = append(s.Calc, fmt.Sprintf("CFA = %s = %#x", t, v))
	} else {
		s.Calc = append(s.Calc, fmt.Sprintf("CFA = %s: register not available", row.CFA.Format(sec.Header.ABI)))
	}
	// RA.
	switch row.RA.Kind {
	case sframe.RuleUndefined:
		s.Calc = append(s.Calc, "RA  = undefined: outermost frame")
	case sframe.RuleSame:
		s.Calc = append(s.Calc, fmt.Sprintf("RA  = %s (in the link register) = %#x%s", a.RegName(a.LR), st.RA, pac(f)))
	default:
		t, _, _ := expr(row.RA)
		s.Calc = append(s.Calc, fmt.Sprintf("RA  = %s = %#x%s", t, f.RA, pac(f)))
	}
	// FP.
	fpName := a.RegName(a.FP)
	switch row.FP.Kind {
	case sframe.RuleExpr:
		t, _, _ := expr(row.FP)
		s.Calc = append(s.Calc, fmt.Sprintf("FP  = %s = %#x", t, f.CallerFP))
	case sframe.RuleUndefined:
		s.Calc = append(s.Calc, "FP  = undefined")
	default:
		s.Calc = append(s.Calc, fmt.Sprintf("FP  = %s (unchanged) = %#x", fpName, st.FP))
	}
}

func pac(f *unwind.Frame) string {
	if f.RawRA != f.RA && f.RawRA != 0 {
		return fmt.Sprintf(" (PAC stripped from %#x)", f.RawRA)
	}
	return ""
}

// disasm returns about n instructions around pc: a third before it.
func (d *Debugger) disasm(pc uint64, n int) []Line {
	if n <= 0 {
		return nil
	}
	type insn struct {
		pc   uint64
		text string
		size int
	}
	decode := func(from uint64, until uint64, count int) []insn {
		var out []insn
		for at := from; len(out) < count || at <= until; {
			text, size := d.s.Disasm(at)
			if size <= 0 {
				out = append(out, insn{at, text, 0})
				break
			}
			out = append(out, insn{at, text, size})
			at += uint64(size)
			if len(out) > 4096 {
				break
			}
		}
		return out
	}
	before := n / 3
	var list []insn
	// Decode from the function's start (x86 cannot be decoded backwards),
	// else from pc; AArch64 has fixed-size instructions.
	start := pc
	if d.p.Arch == arch.ARM64 {
		start = pc - 4*uint64(before)
		if _, err := d.readable(start); err != nil {
			start = pc
		}
	} else if _, off, ok := d.s.Syms.Lookup(pc); ok && off < 4096 {
		start = pc - off
	}
	list = decode(start, pc, 0)
	idx := -1
	for i, in := range list {
		if in.pc == pc {
			idx = i
		}
	}
	if idx < 0 {
		list, idx = decode(pc, pc, 0), 0
	}
	from := max(idx-before, 0)
	list = list[from:]
	idx -= from
	if len(list) < n {
		last := list[len(list)-1]
		if last.size > 0 {
			list = append(list, decode(last.pc+uint64(last.size), 0, n-len(list))...)
		}
	}
	if len(list) > n {
		list = list[:n]
	}
	lines := make([]Line, len(list))
	for i, in := range list {
		lines[i] = Line{PC: in.pc, Where: d.symbol(in.pc), Text: symbols.Demangle(in.text), Current: in.pc == pc, Break: d.bps[in.pc], FRE: d.freAt(in.pc)}
	}
	return lines
}

func (d *Debugger) readable(addr uint64) (uint64, error) {
	var b [4]byte
	return addr, d.p.Engine.ReadMem(addr, b[:])
}

// freAt returns the index of the FRE row that starts at pc, or -1.
func (d *Debugger) freAt(pc uint64) int {
	i, err := d.sec.FindFDE(pc)
	if err != nil {
		return -1
	}
	f := &d.sec.FDEs[i]
	if f.PCType() == sframe.PCMask {
		return -1
	}
	for j := range f.FREs {
		if f.Start+uint64(f.FREs[j].Start) == pc {
			return j
		}
	}
	return -1
}
