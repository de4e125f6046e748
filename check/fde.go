package check

import (
	"debug/elf"
	"fmt"
	"slices"
	"strings"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/codeflow"
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
	ev    cfi.Evaluated // cf's rows, in the checker's buffer
	code  *fdeCode
	k     int // index in code.insns of the instruction checked
	pad   bool
	// last is the outcome at the previous PC, lastKey and lastCode what
	// it depended on: a PC with the same key and code rules has the same
	// outcome.
	last     outcome
	lastKey  pcKey
	lastCode *codeflow.Insn
	lastOK   bool
}

// pcKey is what the outcome at a PC depends on besides the code's rules:
// the SFrame row, the CFI FDE and row (when its rules do not depend on
// the PC).
type pcKey struct {
	j  int
	cf *cfi.FDE
	ri int
}

// outcome is the verdict at one PC: the problems found there, or the
// reason it is unknown, or proven; and where the CFI disagrees with the
// code while SFrame follows the code.
type outcome struct {
	problems []*Problem
	cfiWrong []*Problem
	// differs: where SFrame's rule differs from the CFI's and the code
	// accepts both (the PC is proven).
	differs []*Problem
	unknown string
	limited bool
	byCode  bool // every value compared was known to the code
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
		if o.byCode {
			rep.ProvenByCode++
		}
		if rv != nil {
			rv.Proven++
		}
	}
	if len(o.cfiWrong) > 0 {
		rep.CFIWrongPCs++
		for _, p := range o.cfiWrong {
			p.PCs++
		}
	}
	if len(o.differs) > 0 {
		rep.RuleDiffersPCs++
		for _, p := range o.differs {
			p.PCs++
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

// stopFDE counts the PCs of FDE st.i from pc to its end as unknown for
// reason: where the instructions cannot be decoded (an undecodable one on
// x86-64 has no length, code outside the file's executable sections has
// none at all), an instruction may start at any byte, so each byte is
// one unknown PC, under its row, and coverage and INCOMPLETE say how much
// was not checked.
//
// Without a per-PC callback the bytes are counted a row at a time, not
// one at a time: a malformed section checked anyway may have an FDE of
// gigabytes. FindFRE compares a byte's offset (modulo the repetition size
// in a PCMASK FDE) with FRE starts alone, so the row is the same for
// every offset between two starts.
func (c *checker) stopFDE(st *fdeState, pc uint64, reason string) {
	o := &outcome{unknown: reason}
	f := st.f
	if c.opt.EachPC != nil {
		for ; pc < f.End(); pc++ {
			c.rep.PCs++
			c.count(st, pc, c.freAt(f, pc), o)
		}
		return
	}
	lo, hi := pc-f.Start, uint64(f.Size)
	period := hi
	if f.PCType() == sframe.PCMask {
		period = uint64(c.sec.RepSize(f))
	}
	if period == 0 {
		c.countUnknown(st, -1, o, hi-lo) // no row can be found
		return
	}
	cuts := []uint64{0, period}
	for _, fre := range f.FREs {
		if s := uint64(fre.Start); s < period {
			cuts = append(cuts, s)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// below counts the offsets x < n with x modulo period in [a, b).
	below := func(n, a, b uint64) uint64 {
		return n/period*(b-a) + min(max(n%period, a), b) - a
	}
	for k := 0; k+1 < len(cuts); k++ {
		a, b := cuts[k], cuts[k+1]
		if n := below(hi, a, b) - below(lo, a, b); n > 0 {
			c.countUnknown(st, c.freAt(f, f.Start+a), o, n)
		}
	}
}

// freAt is the FRE of FDE f covering pc, -1 for none.
func (c *checker) freAt(f *sframe.FDE, pc uint64) int {
	j, err := c.sec.FindFRE(f, pc)
	if err != nil {
		return -1
	}
	return j
}

// countUnknown is count of n PCs under row j (-1: none) with the unknown
// outcome o.
func (c *checker) countUnknown(st *fdeState, j int, o *outcome, n uint64) {
	rep := c.rep
	rep.PCs += n
	rep.UnknownPCs += n
	rep.Unknown[o.unknown] += n
	if j >= 0 {
		rv := c.row(st.i, j)
		rv.PCs += n
		rv.Unknown += n
		if rv.Why == "" {
			rv.Why = o.unknown
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
	st := &fdeState{i: i, f: f, j: -1, code: &c.cs.fdes[i]}
	insns := st.code.insns
	if f.Size == 0 {
		return
	}
	if insns == nil {
		c.stopFDE(st, f.Start, "code not in an executable section of the file (each byte counts)")
		return
	}
	for k := range insns {
		in := &insns[k]
		// On x86-64 an undecodable instruction has no length: what
		// follows is not checked. On AArch64 only the code has no
		// opinion there.
		if in.Reason == codeflow.ReasonUndecodable && c.a.Machine == elf.EM_X86_64 {
			c.stopFDE(st, in.Addr, "undecodable instruction (the rest of its function is not checked: each byte counts)")
			return
		}
		rep.PCs++
		st.k = k
		c.checkPC(st, in.Addr)
	}
	if last := &insns[len(insns)-1]; last.Addr+uint64(last.Len) == f.End() && f.PCType() == sframe.PCInc {
		if flow, n := c.a.Classify(c.codeAt(last.Addr, f.End())); flow == arch.FlowCall && n == last.Len {
			c.callAtEnd(st, last.Addr)
		}
	}
}

// checkPC compares the SFrame row at pc with every source. Consecutive
// PCs under the same rows of every source share one comparison.
func (c *checker) checkPC(st *fdeState, pc uint64) {
	f := st.f
	j, err := c.sec.FindFRE(f, pc)
	if err != nil {
		c.count(st, pc, -1, &outcome{problems: []*Problem{c.problem(KindNoRow, st.i, -1, pc, "", []string{"no SFrame row covers the PC: " + err.Error()}, "")}})
		st.lastOK = false
		return
	}
	if j != st.j {
		st.j = j
		st.row, err = c.sec.Rules(st.i, j)
		st.rowOK = err == nil
	}
	if !st.rowOK {
		c.count(st, pc, j, &outcome{problems: []*Problem{c.problem(KindNoRow, st.i, j, pc, "", []string{"the SFrame row cannot be evaluated"}, "")}})
		st.lastOK = false
		return
	}
	if st.cf == nil || !st.cf.Contains(pc) {
		st.cf = c.cfi.Find(pc)
		if st.cf != nil && st.ev.FDE != st.cf {
			st.ev = c.cfi.Eval(st.cf, &c.cfiRows)
		}
	}
	key := pcKey{j: j, cf: st.cf, ri: -1}
	reuse := true
	if st.cf == nil {
		if !st.pad && !c.inFunc(pc) {
			st.pad = true
			c.wholeProblem(KindPadding, st.i, j, pc, fmt.Sprintf("the FDE covers %#x, which is in no function symbol and has no CFI: padding", pc))
		}
	} else if key.ri = st.ev.RowAt(pc); key.ri >= 0 && !st.ev.Rows[key.ri].PCInvariant() {
		reuse = false
	}
	in := &st.code.insns[st.k]
	if reuse && st.lastOK && key == st.lastKey && in.SameRules(st.lastCode) {
		c.count(st, pc, j, &st.last)
		return
	}
	st.last = c.evaluate(st, pc, key.ri, in)
	st.lastKey, st.lastCode, st.lastOK = key, in, reuse
	c.count(st, pc, j, &st.last)
}

// Values compared, in codeflow's order.
var values = [3]codeflow.Value{codeflow.CFA, codeflow.RA, codeflow.FP}

// valueKinds are the problem kinds of the three values.
var valueKinds = [3]Kind{KindCFA, KindRA, KindFP}

var undefinedRule = sframe.Rule{Kind: sframe.RuleUndefined}

// evaluate compares the SFrame row at pc with the CFI's row ri (of st.cf)
// and the code analysis's rules in, recording the problems found.
//
// Per value, the code is the ground truth where it knows the value (it
// is what the CPU does): SFrame is wrong when the code does not accept
// its rule, and the CFI, when it disagrees with the code, is wrong too
// (a CFI finding when SFrame follows the code). Where the code does not
// know the value, SFrame is compared with the CFI. A value neither knows
// makes the PC unknown.
func (c *checker) evaluate(st *fdeState, pc uint64, ri int, in *codeflow.Insn) outcome {
	row := &st.row
	j := st.j

	// The CFI's opinion.
	var cf opinion
	switch {
	case st.cf == nil:
		cf.why = "no CFI covers the PC"
	case ri < 0:
		cf.why = "the CFI has no row here"
		if st.ev.Err != nil {
			cf.why = "the CFI's program stops before the PC"
		}
	default:
		r := c.cfi.RowRules(&st.ev.Rows[ri], pc)
		cf = opinion{present: true, cfa: r.CFA, ra: r.RA, fp: r.FP, signed: r.SignedRA, hasSigned: c.a.PACMask != 0, cf: st.cf}
	}
	cfVals := [3]*cfi.Value{&cf.cfa, &cf.ra, &cf.fp}
	codeWhy := st.code.why
	if codeWhy == "" {
		codeWhy = in.Reason
	}

	var bad, cfiBad, differs [numKinds]bool
	any, anyCFI, anyDiffers := false, false, false
	flag := func(k Kind) { bad[k], any = true, true }
	flagCFI := func(k Kind) { cfiBad[k], anyCFI = true, true }
	unknown := ""
	byCode := true

	// The outermost frame: only the RA matters.
	codeRA := in.KnownValue(codeflow.RA)
	codeOuter := codeRA && in.Accepts(codeflow.RA, undefinedRule, false)
	cfiRA := cf.present && cf.ra.Known()
	cfiOuter := cf.outermost()
	switch {
	case codeRA && codeOuter != row.Outermost:
		flag(map[bool]Kind{true: KindOutermost, false: KindUnterminated}[row.Outermost])
	case codeRA && cfiRA && cfiOuter != codeOuter:
		flagCFI(map[bool]Kind{true: KindOutermost, false: KindUnterminated}[cfiOuter])
	case !codeRA && cfiRA && cfiOuter != row.Outermost:
		flag(map[bool]Kind{true: KindOutermost, false: KindUnterminated}[row.Outermost])
	case !codeRA && !cfiRA && row.Outermost:
		unknown = "RA: " + cf.whyValue(1) + "; code: " + codeWhy
	}
	outer := row.Outermost || codeOuter || !codeRA && cfiOuter
	if !codeRA {
		byCode = false
	}
	if !outer {
		sfVals := [3]sframe.Rule{row.CFA, row.RA, row.FP}
		for v := range 3 {
			val, sf := values[v], sfVals[v]
			cfiKnown := cf.present && !cfiOuter && cfVals[v].Known()
			switch {
			case codeJudges(in, val, sf):
				mangled := v == 1 && row.MangledRA
				right := in.Accepts(val, sf, mangled)
				if !right {
					if v == 1 && in.Accepts(val, sf, !mangled) {
						flag(KindMangledRA)
					} else {
						flag(valueKinds[v])
					}
				}
				switch {
				case !cfiKnown:
				case !in.Accepts(val, cfVals[v].Rule, v == 1 && cf.hasSigned && cf.signed):
					k := valueKinds[v]
					if v == 1 && in.Accepts(val, cfVals[v].Rule, !(cf.hasSigned && cf.signed)) {
						k = KindMangledRA
					}
					flagCFI(k)
				case right && !sameRule(cfVals[v].Rule, sf):
					// Both right, by different rules.
					differs[valueKinds[v]], anyDiffers = true, true
				}
			case cfiKnown:
				byCode = false
				if cfVals[v].Rule != sf {
					flag(valueKinds[v])
				}
				if v == 1 && cf.hasSigned && cf.signed != row.MangledRA {
					flag(KindMangledRA)
				}
			default:
				byCode = false
				if unknown == "" {
					unknown = [3]string{"CFA", "RA", "FP"}[v] + ": " + cf.whyValue(v) + "; code: " + codeWhy
				}
			}
		}
	}
	var out outcome
	if any || anyCFI || anyDiffers {
		texts := c.sourceTexts(row, &cf, st, in)
		for k := range bad {
			if bad[k] {
				out.problems = append(out.problems, c.problem(Kind(k), st.i, j, pc, texts[0], texts[1:], c.evidence(st, Kind(k), &cf, in, row)))
			}
		}
		for k := range cfiBad {
			if cfiBad[k] && !any {
				out.cfiWrong = append(out.cfiWrong, c.cfiFinding(Kind(k), st.i, j, pc, texts[0], texts[1:], c.evidence(st, Kind(k), &cf, in, row)))
			}
		}
		for k := range differs {
			if differs[k] && !any && unknown == "" {
				out.differs = append(out.differs, c.differsFinding(Kind(k), st.i, j, pc, texts[0], texts[1:], c.differsEvidence(st, Kind(k), in, row)))
			}
		}
		if any {
			return out
		}
	}
	if unknown != "" {
		out.unknown = unknown
		return out
	}
	out.limited = !row.Outermost && row.CFA.Reg != c.a.SP && row.CFA.Reg != c.a.FP
	out.byCode = byCode
	return out
}

// whyValue says why the CFI has no rule for value v (0 CFA, 1 RA, 2 FP).
func (o *opinion) whyValue(v int) string {
	if !o.present {
		return o.why
	}
	return [3]*cfi.Value{&o.cfa, &o.ra, &o.fp}[v].Why
}

// evidence says, for a disagreement of kind k, which source is right and
// why: the code, since the instruction after which the function's code
// has had its current rules.
func (c *checker) evidence(st *fdeState, k Kind, cf *opinion, in *codeflow.Insn, row *sframe.Row) string {
	v, ok := kindValue(k)
	if !ok || !in.KnownValue(v) {
		if cf.present {
			return "the code analysis cannot tell (" + c.codeReason(st, in) + "): SFrame differs from the CFI"
		}
		return ""
	}
	since := "from the function's entry"
	insns := st.code.insns
	for k := st.k; k > 0; k-- {
		if !insns[k-1].SameRules(&insns[st.k]) {
			p := &insns[k-1]
			text, _ := c.a.Disasm(c.codeAt(p.Addr, p.Addr+uint64(p.Len)), p.Addr, c.resolver())
			since = fmt.Sprintf("since `%s` at %#x", strings.Join(strings.Fields(text), " "), p.Addr)
			break
		}
	}
	cfiSame := false
	if cf.present {
		vals := [3]*cfi.Value{&cf.cfa, &cf.ra, &cf.fp}
		sfVals := [3]sframe.Rule{row.CFA, row.RA, row.FP}
		switch k {
		case KindOutermost, KindUnterminated:
			cfiSame = cf.outermost() == row.Outermost
		case KindMangledRA:
			cfiSame = cf.hasSigned && cf.signed == row.MangledRA
		default:
			cfiSame = vals[v].Known() && vals[v].Rule == sfVals[v]
		}
	}
	right := "the code is right (what the CPU does, by the analysis of the function's instructions " + since + ")"
	if cfiSame {
		return right + ": SFrame and the CFI are both wrong"
	}
	return right
}

// differsEvidence says why SFrame's rule for the value of kind k is
// right though it differs from the CFI's: the code accepts both.
func (c *checker) differsEvidence(st *fdeState, k Kind, in *codeflow.Insn, row *sframe.Row) string {
	v, _ := kindValue(k)
	sf := [3]sframe.Rule{row.CFA, row.RA, row.FP}[v]
	what := "SFrame's rule recovers the right value too"
	if sf.Kind == sframe.RuleExpr && sf.Deref && v != codeflow.CFA {
		what = fmt.Sprintf("the slot SFrame's rule reads still holds the caller's %s", [3]string{"CFA", "RA", "FP"}[v])
	}
	return fmt.Sprintf("%s (by the analysis of the function's instructions %s): the CFI's rule and SFrame's both recover the right value, the unwind is right", what, c.since(st))
}

// since names the instruction after which the function's code has had
// the rules of the instruction checked.
func (c *checker) since(st *fdeState) string {
	insns := st.code.insns
	for k := st.k; k > 0; k-- {
		if !insns[k-1].SameRules(&insns[st.k]) {
			p := &insns[k-1]
			text, _ := c.a.Disasm(c.codeAt(p.Addr, p.Addr+uint64(p.Len)), p.Addr, c.resolver())
			return fmt.Sprintf("since `%s` at %#x", strings.Join(strings.Fields(text), " "), p.Addr)
		}
	}
	if c.cs.how[st.i] == entryPartition {
		return "from where the other parts of the function jump into this one"
	}
	return "from the function's entry"
}

// sameRule compares two rules, ignoring the fields their kind leaves
// unused.
func sameRule(a, b sframe.Rule) bool {
	if a.Kind != b.Kind {
		return false
	}
	return a.Kind != sframe.RuleExpr || a.Reg == b.Reg && a.Offset == b.Offset && a.Deref == b.Deref
}

// kindValue returns the value a per-PC kind is about.
func kindValue(k Kind) (codeflow.Value, bool) {
	switch k {
	case KindCFA:
		return codeflow.CFA, true
	case KindRA, KindMangledRA, KindOutermost, KindUnterminated:
		return codeflow.RA, true
	case KindFP:
		return codeflow.FP, true
	}
	return 0, false
}

// codeReason says why the code has no opinion on the instruction.
func (c *checker) codeReason(st *fdeState, in *codeflow.Insn) string {
	if st.code.why != "" {
		return st.code.why
	}
	return in.Reason
}

// sourceTexts renders what SFrame, the CFI and the code say.
func (c *checker) sourceTexts(row *sframe.Row, cf *opinion, st *fdeState, in *codeflow.Insn) []string {
	abi := c.sec.Header.ABI
	pac := c.a.PACMask != 0
	return []string{sframeText(row, abi, pac), cf.text(abi, pac), c.codeText(st, in)}
}

// codeText renders what the code analysis says: every rule it accepts
// for each value, or why it does not know it.
func (c *checker) codeText(st *fdeState, in *codeflow.Insn) string {
	abi := c.sec.Header.ABI
	if st.code.why != "" {
		return "nothing (" + st.code.why + ")"
	}
	if in.KnownValue(codeflow.RA) && in.Accepts(codeflow.RA, undefinedRule, false) {
		return "RA undefined: the outermost frame"
	}
	var parts []string
	known := false
	for v, val := range values {
		name := [3]string{"cfa", "ra", "fp"}[v]
		if !in.KnownValue(val) {
			parts = append(parts, name+" unknown")
			continue
		}
		known = true
		var rs []string
		for _, r := range in.Rules(val) {
			rs = append(rs, r.Format(abi))
		}
		s := name + " " + strings.Join(rs, " or ")
		if v == 1 && c.a.PACMask != 0 && in.Row().MangledRA {
			s += " (signed)"
		}
		parts = append(parts, s)
	}
	if !known {
		return "nothing (" + in.Reason + ")"
	}
	s := strings.Join(parts, ", ")
	if !in.Known {
		s += " (" + in.Reason + ")"
	}
	return s
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

// codeJudges reports whether the code's rules can refute rule r for value
// v: the code knows v and, when r reads a slot at the CFA, knows the CFA
// too. With the CFA unknown (an SP lowered by a register the analysis
// does not follow: `sub sp, sp, x12` for a large frame), a store through
// the SP lands where the analysis cannot say, so a CFA-based slot rule is
// neither proven nor refuted by the code: CFI decides, as where the code
// knows nothing.
func codeJudges(in *codeflow.Insn, v codeflow.Value, r sframe.Rule) bool {
	if !in.KnownValue(v) {
		return false
	}
	if v == codeflow.CFA || r.Kind != sframe.RuleExpr || r.Reg != sframe.RegCFA {
		return true
	}
	// A slot by the CFA: the code judges it where it knows the CFA and
	// what the slot holds.
	return in.KnownValue(codeflow.CFA) && (!r.Deref || in.SlotKnown(r.Offset))
}
