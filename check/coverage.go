package check

import (
	"fmt"
	"sort"

	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/sframe"
)

// coverage looks at every sized function symbol in executable sections:
// a function no SFrame FDE covers is a coverage note, with the reason;
// one whose FDE leaves a part with CFI uncovered is a problem.
func (c *checker) coverage() {
	type span struct{ start, end uint64 }
	var spans []span
	for i := range c.sec.FDEs {
		f := &c.sec.FDEs[i]
		if len(f.FREs) > 0 && f.Size > 0 {
			spans = append(spans, span{f.Start, f.End()})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	// last returns the index of the last span starting at or below pc.
	last := func(pc uint64) int {
		return sort.Search(len(spans), func(i int) bool { return spans[i].start > pc }) - 1
	}
	// firstGap returns the first byte of [lo, hi) no FDE covers, or hi.
	firstGap := func(lo, hi uint64) uint64 {
		pos := lo
		for pos < hi {
			i := last(pos)
			if i < 0 || spans[i].end <= pos {
				return pos
			}
			pos = spans[i].end
		}
		return hi
	}
	anyCovered := func(lo, hi uint64) bool {
		i := last(hi - 1)
		return i >= 0 && spans[i].end > lo
	}
	for _, fn := range c.funcs {
		gap := firstGap(fn.start, fn.end)
		if gap == fn.end {
			continue // covered whole
		}
		if !anyCovered(fn.start, fn.end) {
			c.rep.FunctionsWithoutSFrame++
			if !c.opt.SkipNotes {
				c.note(c.whyNoSFrame(fn.start), fn.name)
			}
			continue
		}
		if cf := c.cfi.Find(gap); cf != nil {
			c.wholeProblem(KindUncovered, -1, -1, gap, fmt.Sprintf("function %s [%#x, %#x) has SFrame rows, but not at %#x, which its CFI (%s FDE at %#x) covers", fn.name, fn.start, fn.end, gap, cf.Section, cf.Off))
		}
	}
}

// whyNoSFrame says why a function at pc may have no SFrame FDE.
func (c *checker) whyNoSFrame(pc uint64) string {
	cf := c.cfi.Find(pc)
	if cf == nil {
		return "no SFrame FDE and no CFI"
	}
	if why := c.expressible(cf); why != "" {
		return fmt.Sprintf("no SFrame FDE: its CFI cannot be encoded in SFrame V%d (%s)", c.sec.Header.Version, why)
	}
	return "no SFrame FDE, though its CFI could be encoded (an object assembled without --gsframe?)"
}

// expressible says why a CFI FDE's rows cannot be encoded in the
// section's SFrame version, or "" [SFrame §4.3, §4.4, §8].
func (c *checker) expressible(cf *cfi.FDE) string {
	flex := c.sec.Header.Version >= sframe.Version3 && c.sec.Header.CFAFixedRAOffset != 0 // FLEX: AMD64 (and s390x)
	rows := c.cfi.Eval(cf, &c.cfiRows).Rows
	for i := range rows {
		r := c.cfi.RowRules(&rows[i], rows[i].Addr)
		if r.Outermost() {
			continue
		}
		switch {
		case !r.CFA.Known():
			return "CFA: " + r.CFA.Why
		case !flex && r.CFA.Rule.Deref:
			return "a CFA loaded from memory (DRAP)"
		case !flex && r.CFA.Rule.Reg != c.a.SP && r.CFA.Rule.Reg != c.a.FP:
			return fmt.Sprintf("a CFA based on %s", c.a.RegName(r.CFA.Rule.Reg))
		case !r.RA.Known():
			return "RA: " + r.RA.Why
		case !r.FP.Known():
			return "FP: " + r.FP.Why
		}
		for _, v := range []struct {
			name string
			rule sframe.Rule
		}{{"RA", r.RA.Rule}, {"FP", r.FP.Rule}} {
			if v.rule.Kind == sframe.RuleExpr && (v.rule.Reg != sframe.RegCFA || !v.rule.Deref) && !flex {
				return fmt.Sprintf("the %s kept in a register or as a value", v.name)
			}
		}
		if c.sec.Header.CFAFixedRAOffset != 0 && r.RA.Rule != (sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int32(c.sec.Header.CFAFixedRAOffset), Deref: true}) && !flex {
			return "an RA not at the fixed offset"
		}
	}
	return ""
}

// note counts a function under a coverage note.
func (c *checker) note(reason, fn string) {
	for i := range c.rep.Notes {
		n := &c.rep.Notes[i]
		if n.Reason == reason {
			n.Functions++
			if len(n.Examples) < maxExamples {
				n.Examples = append(n.Examples, fn)
			}
			return
		}
	}
	c.rep.Notes = append(c.rep.Notes, Note{Reason: reason, Functions: 1, Examples: []string{fn}})
}

// maxExamples bounds the function names listed per note.
const maxExamples = 5
