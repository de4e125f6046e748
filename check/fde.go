package check

import (
	"fmt"
	"sort"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/sframe"
)

// An opinion is what one source (CFI or code) says at a PC.
type opinion struct {
	present     bool   // the source has a row here
	why         string // why not, when !present
	cfa, ra, fp cfi.Value
	signed      bool
	hasSigned   bool     // the source tracks the RA's signing (CFI on AArch64)
	cf          *cfi.FDE // the CFI's FDE, named in reports
}

func (o *opinion) outermost() bool {
	return o.present && o.ra.Known() && o.ra.Rule.Kind == sframe.RuleUndefined
}

// text renders the opinion for a report.
func (o *opinion) text(abi sframe.ABI, pac bool) string {
	if !o.present {
		return "nothing (" + o.why + ")"
	}
	if o.outermost() {
		return "RA undefined: the outermost frame" + o.suffix()
	}
	s := fmt.Sprintf("cfa %s, ra %s, fp %s", o.cfa.Format(abi), o.ra.Format(abi), o.fp.Format(abi))
	if pac && o.hasSigned && o.signed {
		s += ", RA signed"
	}
	return s + o.suffix()
}

func (o *opinion) suffix() string {
	if o.cf == nil {
		return ""
	}
	return fmt.Sprintf(" (%s FDE at %#x)", o.cf.Section, o.cf.Off)
}

// sframeText renders an SFrame row like an opinion.
func sframeText(r *sframe.Row, abi sframe.ABI, pac bool) string {
	if r.Outermost {
		return "RA undefined: the outermost frame"
	}
	s := fmt.Sprintf("cfa %s, ra %s, fp %s", r.CFA.Format(abi), r.RA.Format(abi), r.FP.Format(abi))
	if pac && r.MangledRA {
		s += ", RA signed"
	}
	return s
}

// fdeState is the per-FDE cursor state of the PC loop.
type fdeState struct {
	i     int
	f     *sframe.FDE
	j     int // FRE of row
	row   sframe.Row
	rowOK bool
	cf    *cfi.FDE
	code  []CodeRow
	k     int // next code row
	pad   bool
	// last is the outcome at the previous PC, lastKey what it depended
	// on: a PC with the same key has the same outcome.
	last    outcome
	lastKey pcKey
	lastOK  bool
}

// pcKey is what the outcome at a PC depends on: the SFrame row, the CFI
// FDE and row (when its rules do not depend on the PC) and the code
// analysis's row.
type pcKey struct {
	j       int
	cf      *cfi.FDE
	ri      int
	hasCode bool
	code    CodeRow // without Addr and Len
}

// outcome is the verdict at one PC: the problems found there, or the
// reason it is unknown, or proven.
type outcome struct {
	problems []*Problem
	unknown  string
	limited  bool
}

// count adds the PC pc, under row j of FDE st.i (-1: none), with outcome
// o to the report.
func (c *checker) count(st *fdeState, pc uint64, j int, o *outcome) {
	rep := c.rep
	var rv *RowVerdict
	if j >= 0 {
		rv = c.row(st.i, j)
		rv.PCs++
	}
	switch {
	case len(o.problems) > 0:
		rep.ProblemPCs++
		for _, p := range o.problems {
			p.PCs++
		}
	case o.unknown != "":
		rep.UnknownPCs++
		rep.Unknown[o.unknown]++
		if rv != nil {
			if rv.Unknown++; rv.Why == "" {
				rv.Why = o.unknown
			}
		}
	default:
		rep.Proven++
		if o.limited {
			rep.Limited++
		}
		if rv != nil {
			rv.Proven++
		}
	}
	if c.opt.EachPC != nil {
		r := PCResult{PC: pc, FDE: st.i, FRE: j, Unknown: o.unknown, Limited: o.limited && len(o.problems) == 0 && o.unknown == ""}
		for _, p := range o.problems {
			r.Kinds = append(r.Kinds, p.kind)
		}
		c.opt.EachPC(r)
	}
}

// row returns the verdict of row j of FDE i.
func (c *checker) row(i, j int) *RowVerdict {
	rows := c.rep.rows[i]
	if rows == nil {
		rows = make([]RowVerdict, len(c.sec.FDEs[i].FREs))
		c.rep.rows[i] = rows
	}
	return &rows[j]
}

// stopFDE counts the instruction at pc of FDE st.i as unknown for reason
// and the rest of the FDE with it: the rows from pc's on are unknown.
func (c *checker) stopFDE(st *fdeState, pc uint64, reason string) {
	c.rep.PCs++
	j0 := 0
	if st.f.PCType() == sframe.PCInc {
		if j, err := c.sec.FindFRE(st.f, pc); err == nil {
			j0 = j
		}
	}
	c.count(st, pc, -1, &outcome{unknown: reason})
	for j := j0; j < len(st.f.FREs); j++ {
		rv := c.row(st.i, j)
		if rv.Unknown++; rv.Why == "" {
			rv.Why = reason
		}
	}
}

// checkFDE checks every instruction of FDE i.
func (c *checker) checkFDE(i int) {
	f := &c.sec.FDEs[i]
	rep := c.rep
	rep.Functions++
	if len(f.FREs) == 0 {
		reason := "FDE without rows"
		if f.Signal() {
			reason = "signal-frame FDE without rows (GNU as keeps it when it cannot encode the CFI)"
		}
		c.note(reason, c.symFormat(f.Start))
		return
	}
	rep.FunctionsWithRows++
	if f.PCType() == sframe.PCMask {
		rep.PCMaskFDEs++
		if rs := c.sec.RepSize(f); rs != 0 && f.Size%rs != 0 {
			c.wholeProblem(KindPCMask, i, 0, f.Start, fmt.Sprintf("the PCMASK FDE's size %d is not a multiple of its repetition size %d", f.Size, rs))
		}
	}
	if cf := c.cfi.Find(f.Start); c.sec.Header.Version >= sframe.Version3 && cf != nil && cf.Start == f.Start && cf.Signal != f.Signal() {
		c.wholeProblem(KindSignal, i, 0, f.Start, fmt.Sprintf("the SFrame signal-frame bit is %v, the CFI's 'S' augmentation %v (%s CIE at %#x)", f.Signal(), cf.Signal, cf.Section, cf.CIEOff))
	}
	st := &fdeState{i: i, f: f, j: -1}
	code := c.codeAt(f.Start, f.End())
	if uint64(len(code)) < uint64(f.Size) {
		c.stopFDE(st, f.Start, "code not in an executable section of the file")
		return
	}
	if c.opt.Code != nil {
		name := c.symName(f.Start)
		st.code = c.opt.Code(c.a, Func{Name: name, Start: f.Start, End: f.End(), Code: code, FDE: i})
		sort.SliceStable(st.code, func(x, y int) bool { return st.code[x].Addr < st.code[y].Addr })
	}
	var lastPC uint64
	var lastLen int
	var lastFlow arch.Flow
	for pc := f.Start; pc < f.End(); {
		b := code[pc-f.Start:]
		flow, n := c.classify(b)
		if flow == arch.FlowBad || n <= 0 || n > len(b) {
			c.stopFDE(st, pc, "undecodable instruction (the rest of its function is not checked)")
			return
		}
		rep.PCs++
		c.checkPC(st, pc)
		lastPC, lastLen, lastFlow = pc, n, flow
		pc += uint64(n)
	}
	if lastFlow == arch.FlowCall && lastPC+uint64(lastLen) == f.End() && f.PCType() == sframe.PCInc {
		c.callAtEnd(st, lastPC)
	}
}

// checkPC compares the SFrame row at pc with every source. Consecutive
// PCs under the same rows of every source share one comparison.
func (c *checker) checkPC(st *fdeState, pc uint64) {
	f := st.f
	j, err := c.sec.FindFRE(f, pc)
	if err != nil {
		c.count(st, pc, -1, &outcome{problems: []*Problem{c.problem(KindNoRow, st.i, -1, pc, "", []string{"no SFrame row covers the PC: " + err.Error()})}})
		st.lastOK = false
		return
	}
	if j != st.j {
		st.j = j
		st.row, err = c.sec.Rules(st.i, j)
		st.rowOK = err == nil
	}
	if !st.rowOK {
		c.count(st, pc, j, &outcome{problems: []*Problem{c.problem(KindNoRow, st.i, j, pc, "", []string{"the SFrame row cannot be evaluated"})}})
		st.lastOK = false
		return
	}
	if st.cf == nil || !st.cf.Contains(pc) {
		st.cf = c.cfi.Find(pc)
	}
	key := pcKey{j: j, cf: st.cf, ri: -1}
	reuse := true
	if st.cf == nil {
		if !st.pad && !c.inFunc(pc) {
			st.pad = true
			c.wholeProblem(KindPadding, st.i, j, pc, fmt.Sprintf("the FDE covers %#x, which is in no function symbol and has no CFI: padding", pc))
		}
	} else if key.ri = st.cf.RowAt(pc); key.ri >= 0 && !st.cf.Rows()[key.ri].PCInvariant() {
		reuse = false
	}
	var cr *CodeRow
	if c.opt.Code != nil {
		for st.k < len(st.code) && st.code[st.k].Addr < pc {
			st.k++
		}
		if st.k < len(st.code) && st.code[st.k].Addr == pc {
			cr = &st.code[st.k]
			key.hasCode, key.code = true, *cr
			key.code.Addr, key.code.Len = 0, 0
		}
	}
	if reuse && st.lastOK && key == st.lastKey {
		c.count(st, pc, j, &st.last)
		return
	}
	st.last = c.evaluate(st, pc, key.ri, cr)
	st.lastKey, st.lastOK = key, reuse
	c.count(st, pc, j, &st.last)
}

// evaluate compares the SFrame row at pc with the CFI's row ri (of st.cf)
// and the code analysis's row cr, recording the problems found.
func (c *checker) evaluate(st *fdeState, pc uint64, ri int, cr *CodeRow) outcome {
	row := &st.row
	j := st.j

	// The CFI's opinion.
	var srcs [2]opinion
	cf := &srcs[0]
	switch {
	case st.cf == nil:
		cf.why = "no CFI covers the PC"
	case ri < 0:
		cf.why = "the CFI has no row here"
		if st.cf.Err() != nil {
			cf.why = "the CFI's program stops before the PC"
		}
	default:
		r := c.cfi.Rules(st.cf, ri, pc)
		*cf = opinion{present: true, cfa: r.CFA, ra: r.RA, fp: r.FP, signed: r.SignedRA, hasSigned: c.a.PACMask != 0, cf: st.cf}
	}
	// The code's opinion.
	code := &srcs[1]
	code.why = "no code analysis"
	if c.opt.Code != nil {
		code.why = "the code analysis has no row for the instruction"
		if cr != nil {
			if cr.Known {
				*code = opinion{present: true, cfa: cfi.Value{Rule: cr.CFA}, ra: cfi.Value{Rule: cr.RA}, fp: cfi.Value{Rule: cr.FP}}
			} else {
				code.why = cr.Reason
			}
		}
	}

	// Compare.
	var bad [numKinds]bool
	any := false
	for s := range srcs {
		o := &srcs[s]
		if !o.present {
			continue
		}
		for _, k := range c.compare(row, o) {
			bad[k] = true
			any = true
		}
	}
	if any {
		var out outcome
		texts := c.sourceTexts(row, srcs[:])
		for k := range bad {
			if bad[k] {
				out.problems = append(out.problems, c.problem(Kind(k), st.i, j, pc, texts[0], texts[1:]))
			}
		}
		return out
	}
	// Proven when every value has an opinion.
	outer := srcs[0].outermost() || srcs[1].outermost()
	for v := range 3 {
		if outer && v != 1 {
			continue // only the RA matters in the outermost frame
		}
		known := false
		reason := ""
		for s := range srcs {
			o := &srcs[s]
			val := [3]*cfi.Value{&o.cfa, &o.ra, &o.fp}[v]
			switch {
			case !o.present:
				if reason == "" {
					reason = o.why
				}
			case val.Known():
				known = true
			default:
				reason = [3]string{"CFA", "RA", "FP"}[v] + ": " + val.Why
			}
		}
		if !known {
			return outcome{unknown: reason}
		}
	}
	return outcome{limited: !row.Outermost && row.CFA.Reg != c.a.SP && row.CFA.Reg != c.a.FP}
}

// compare returns the kinds of disagreement between the SFrame row and an
// opinion.
func (c *checker) compare(row *sframe.Row, o *opinion) []Kind {
	if o.outermost() {
		if !row.Outermost {
			return []Kind{KindUnterminated}
		}
		return nil
	}
	if row.Outermost {
		if o.ra.Known() {
			return []Kind{KindOutermost}
		}
		return nil
	}
	var ks []Kind
	if o.cfa.Known() && o.cfa.Rule != row.CFA {
		ks = append(ks, KindCFA)
	}
	if o.ra.Known() && o.ra.Rule != row.RA {
		ks = append(ks, KindRA)
	}
	if o.fp.Known() && o.fp.Rule != row.FP {
		ks = append(ks, KindFP)
	}
	if o.hasSigned && o.signed != row.MangledRA {
		ks = append(ks, KindMangledRA)
	}
	return ks
}

// sourceTexts renders what SFrame and each source say.
func (c *checker) sourceTexts(row *sframe.Row, srcs []opinion) []string {
	abi := c.sec.Header.ABI
	pac := c.a.PACMask != 0
	out := []string{sframeText(row, abi, pac)}
	for s := range srcs {
		o := &srcs[s]
		if s == 1 && c.opt.Code == nil {
			out = append(out, "")
			continue
		}
		out = append(out, o.text(abi, pac))
	}
	return out
}

// callAtEnd checks a call that is the last instruction of FDE st.i:
// its return address is the FDE's end, which consumers that look return
// addresses up unchanged (libsframe, glibc, the kernel) resolve to the
// next function's row, or to none. That is a problem unless the row they
// get there is the caller's row at the call (the frame is the same once
// the call returns).
func (c *checker) callAtEnd(st *fdeState, pc uint64) {
	f := st.f
	ra := f.End()
	j, err := c.sec.FindFRE(f, pc)
	if err != nil {
		return // reported as no-row
	}
	want, err := c.sec.Rules(st.i, j)
	if err != nil {
		return
	}
	abi, pac := c.sec.Header.ABI, c.a.PACMask != 0
	where := "no SFrame FDE covers it (padding, or code without SFrame data): the stack trace ends there"
	if k, err := c.sec.FindFDE(ra); err == nil {
		where = fmt.Sprintf("it is in func idx [%d] (%s)", k, c.symFormat(ra))
		got, err := c.sec.Lookup(ra)
		switch {
		case err != nil:
			where += ", which has no row there: the stack trace ends there"
		case got.CFA == want.CFA && got.RA == want.RA && got.FP == want.FP && got.MangledRA == want.MangledRA && got.Outermost == want.Outermost:
			return // the same rules: the unwind is right
		default:
			where += ", whose row there says " + sframeText(&got, abi, pac) + " instead of the caller's " + sframeText(&want, abi, pac)
		}
	}
	c.wholeProblem(KindCallAtEnd, st.i, j, pc, fmt.Sprintf("the call is the function's last instruction, so its return address %#x lies outside the function; for consumers that look return addresses up unchanged (libsframe, glibc, the kernel) %s", ra, where))
}

// overlaps reports FDEs whose ranges overlap; order is by start.
func (c *checker) overlaps(order []int) {
	end, prev := uint64(0), -1
	for _, i := range order {
		f := &c.sec.FDEs[i]
		if prev >= 0 && f.Start < end && f.Size > 0 {
			p := &c.sec.FDEs[prev]
			c.wholeProblem(KindOverlap, i, -1, f.Start, fmt.Sprintf("func idx [%d] [%#x, %#x) overlaps func idx [%d] [%#x, %#x)", i, f.Start, f.End(), prev, p.Start, p.End()))
		}
		if f.End() > end {
			end, prev = f.End(), i
		}
	}
}
