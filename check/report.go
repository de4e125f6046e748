package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sframesim/sframesim/internal/atomicfile"
	"github.com/sframesim/sframesim/symbols"
)

// Report is the outcome of checking one file.
type Report struct {
	Binary        string `json:"binary"`
	Arch          string `json:"arch"`
	SFrameVersion int    `json:"sframe_version"`
	// Malformed lists the rules of the format the section breaks
	// (sframe.Section.Validate's errors) when it was checked anyway
	// (Options.CheckMalformed): the Linux kernel refuses such a section,
	// so the verdict is MALFORMED whatever the rows show.
	Malformed []string `json:"malformed,omitempty"`
	// CFI names the CFI sections read ("none" without any); CFIErrors
	// lists the CFI entries that could not be read (their PCs have no CFI).
	CFI       string   `json:"cfi"`
	CFIErrors []string `json:"cfi_errors,omitempty"`
	// Sources are the sources SFrame was compared with: "cfi", "code".
	Sources []string `json:"sources"`
	Seconds float64  `json:"seconds"`

	Functions         int `json:"functions"`           // SFrame FDEs
	FunctionsWithRows int `json:"functions_with_rows"` // of those, with FREs
	PCMaskFDEs        int `json:"pcmask_fdes"`
	// FunctionsWithoutSFrame counts the function symbols of executable
	// sections no FDE covers at all (Notes says why).
	FunctionsWithoutSFrame int `json:"functions_without_sframe"`

	PCs        uint64 `json:"pcs"`         // instructions checked; where none can be decoded, bytes (see Unknown)
	Proven     uint64 `json:"proven"`      // every source with an opinion agrees, and each value has one
	ProblemPCs uint64 `json:"problem_pcs"` // with at least one per-PC problem
	UnknownPCs uint64 `json:"unknown_pcs"` // no source could tell
	// Unknown counts the unknown PCs by reason.
	Unknown map[string]uint64 `json:"unknown"`
	// ProvenByCode counts the proven PCs where the code analysis knew
	// every value compared (the others were proven, for some value, by
	// the CFI alone).
	ProvenByCode uint64 `json:"proven_by_code"`
	// Limited counts proven PCs whose CFA is based on a register other
	// than SP and FP (V3 FLEX): right, but usable only in the topmost frame.
	Limited uint64 `json:"limited"`
	// Counts is the number of distinct problems per kind.
	Counts   map[string]int `json:"counts"`
	Problems []Problem      `json:"problems"` // each distinct problem once, in address order
	// CFIWrong lists where the CFI disagrees with the code while SFrame
	// follows the code (the code is what the CPU does): not problems of
	// the SFrame data, each distinct one once, in address order;
	// CFIWrongPCs counts their PCs.
	CFIWrong    []Problem `json:"cfi_wrong"`
	CFIWrongPCs uint64    `json:"cfi_wrong_pcs"`
	// RuleDiffers lists where SFrame's rule for a value differs from the
	// CFI's and the code shows both recover the right value (a slot that
	// still holds the caller's FP after the CFI says the register was
	// restored; fp+16 for sp+16 once the frame pointer is set up): the
	// unwind is right, so these are not problems (the PCs count as
	// proven), each distinct one once, in address order; RuleDiffersPCs
	// counts their PCs.
	RuleDiffers    []Problem `json:"rule_differs"`
	RuleDiffersPCs uint64    `json:"rule_differs_pcs"`
	Notes          []Note    `json:"notes"` // coverage notes: not problems

	rows [][]RowVerdict // [FDE][FRE]
}

// RowVerdict is the verdict on one SFrame row (an FRE of an FDE) over the
// instructions under it.
type RowVerdict struct {
	PCs     uint64 // instructions checked under the row
	Proven  uint64 // of those, proven right
	Unknown uint64 // could not be told, or not checked (each byte of the FDE's rest after an undecodable instruction)
	Why     string // why the first unknown one is unknown
	// Problems are the indexes in Report.Problems of the problems found
	// at instructions under the row, and the findings about it (a call
	// ending its function, padding, a PCMASK size, the signal bit).
	Problems []int
}

// Status is "problem" when a problem was found under the row, else
// "unknown" when an instruction under it could not be proven, "proven"
// when every one was, and "empty" when no instruction starts under it
// (another row with the same start, or one past its function's end).
func (v *RowVerdict) Status() string {
	switch {
	case len(v.Problems) > 0:
		return "problem"
	case v.Unknown > 0:
		return "unknown"
	case v.PCs == 0:
		return "empty"
	}
	return "proven"
}

// Row returns the verdict on row fre of FDE fde.
func (r *Report) Row(fde, fre int) RowVerdict {
	if fde < 0 || fde >= len(r.rows) || fre < 0 || fre >= len(r.rows[fde]) {
		return RowVerdict{}
	}
	return r.rows[fde][fre]
}

// Problem is one distinct problem: a kind at one SFrame row, with what
// SFrame and each source say (per-PC kinds), or a finding about the
// binary with its explanation (Detail).
//
// Symbols are mangled as in the symbol table; *Demangled holds the C++
// demangling (symbols.Demangled), left out for names that are not
// mangled. The text report prints demangled names.
type Problem struct {
	kind            Kind
	Kind            string `json:"kind"`
	PC              uint64 `json:"pc"` // the first PC where it was seen
	Symbol          string `json:"symbol"`
	SymbolDemangled string `json:"symbol_demangled,omitempty"`
	Source          string `json:"source,omitempty"`
	Insn            string `json:"insn"`
	FDE             int    `json:"fde"` // -1: none
	FRE             int    `json:"fre"` // -1: none
	FDEText         string `json:"fde_text,omitempty"`
	Row             string `json:"row,omitempty"` // as objdump --sframe prints it
	SFrame          string `json:"sframe,omitempty"`
	CFI             string `json:"cfi,omitempty"`
	Code            string `json:"code,omitempty"`
	Detail          string `json:"detail,omitempty"`
	PCs             int    `json:"pcs"` // distinct PCs affected
}

// Note is a coverage note: functions without SFrame data, by reason.
type Note struct {
	Reason    string   `json:"reason"`
	Functions int      `json:"functions"`
	Examples  []string `json:"examples"` // the first few
}

// problemKey identifies a distinct problem.
type problemKey struct {
	kind     Kind
	fde, fre int
	texts    string
	pc       uint64 // whole-binary findings: where
	class    findingClass
}

// findingClass says which list of the report a per-PC finding goes to.
type findingClass uint8

const (
	classProblem findingClass = iota // Report.Problems
	classCFI                         // Report.CFIWrong
	classDiffers                     // Report.RuleDiffers
)

// problem returns the per-PC problem at pc, recorded on first sight
// (count adds the PCs): sframeText is what SFrame says, srcs what the CFI
// and the code say, detail which is right and why.
//
// A problem is distinct by its kind, row and what SFrame and the CFI say:
// what the code says and the detail are those at its first PC (the
// code's rules change along a row where SFrame's and the CFI's do not).
func (c *checker) problem(k Kind, fde, fre int, pc uint64, sframeText string, srcs []string, detail string) *Problem {
	return c.perPC(problemKey{kind: k, fde: fde, fre: fre, texts: sframeText + "\x00" + srcs[0]}, pc, sframeText, srcs, detail)
}

// cfiFinding returns the CFI finding at pc (Report.CFIWrong), recorded
// on first sight.
func (c *checker) cfiFinding(k Kind, fde, fre int, pc uint64, sframeText string, srcs []string, detail string) *Problem {
	return c.perPC(problemKey{kind: k, fde: fde, fre: fre, texts: sframeText + "\x00" + srcs[0], class: classCFI}, pc, sframeText, srcs, detail)
}

// differsFinding returns the finding at pc that SFrame's rule differs
// from the CFI's while the code shows it right (Report.RuleDiffers),
// recorded on first sight.
func (c *checker) differsFinding(k Kind, fde, fre int, pc uint64, sframeText string, srcs []string, detail string) *Problem {
	return c.perPC(problemKey{kind: k, fde: fde, fre: fre, texts: sframeText + "\x00" + srcs[0], class: classDiffers}, pc, sframeText, srcs, detail)
}

func (c *checker) perPC(key problemKey, pc uint64, sframeText string, srcs []string, detail string) *Problem {
	if pr := c.problems[key]; pr != nil {
		return pr
	}
	pr := c.newProblem(key.kind, key.fde, key.fre, pc)
	pr.PCs = 0
	pr.SFrame = sframeText
	pr.Detail = detail
	if len(srcs) == 1 && sframeText == "" {
		pr.Detail = srcs[0]
	} else {
		if len(srcs) > 0 {
			pr.CFI = srcs[0]
		}
		if len(srcs) > 1 {
			pr.Code = srcs[1]
		}
	}
	c.problems[key] = pr
	c.order = append(c.order, key)
	return pr
}

// wholeProblem records a finding about a function or the binary.
func (c *checker) wholeProblem(k Kind, fde, fre int, pc uint64, detail string) {
	key := problemKey{kind: k, fde: fde, fre: fre, pc: pc, texts: detail}
	if c.problems[key] != nil {
		return
	}
	pr := c.newProblem(k, fde, fre, pc)
	pr.Detail = detail
	c.problems[key] = pr
	c.order = append(c.order, key)
}

func (c *checker) newProblem(k Kind, fde, fre int, pc uint64) *Problem {
	sym := c.symFormat(pc)
	pr := &Problem{kind: k, Kind: k.String(), PC: pc, Symbol: sym, SymbolDemangled: symbols.Demangled(sym),
		Source: c.source(pc), FDE: -1, FRE: -1, PCs: 1}
	if code := c.codeAt(pc, pc+16); code != nil {
		pr.Insn, _ = c.a.Disasm(code, pc, c.resolver())
	}
	if fde >= 0 {
		f := &c.sec.FDEs[fde]
		pr.FDE = fde
		pr.FDEText = fmt.Sprintf("func idx [%d]: pc = 0x%x, size = %d bytes", fde, f.Start, f.Size)
		if fre >= 0 && fre < len(f.FREs) {
			pr.FRE = fre
			pr.Row = c.sec.FormatRow(fde, fre)
		}
	}
	return pr
}

func (c *checker) finish(d time.Duration) {
	rep := c.rep
	rep.Seconds = d.Seconds()
	rep.Sources = []string{"cfi"}
	if !c.opt.CFIOnly {
		rep.Sources = append(rep.Sources, "code")
	}
	rep.Counts = map[string]int{}
	for _, key := range c.order {
		pr := c.problems[key]
		switch key.class {
		case classCFI:
			rep.CFIWrong = append(rep.CFIWrong, *pr)
			continue
		case classDiffers:
			rep.RuleDiffers = append(rep.RuleDiffers, *pr)
			continue
		}
		rep.Problems = append(rep.Problems, *pr)
		rep.Counts[pr.Kind]++
	}
	byAddr := func(a, b Problem) int {
		if a.PC != b.PC {
			return cmp.Compare(a.PC, b.PC)
		}
		return cmp.Compare(a.kind, b.kind)
	}
	slices.SortStableFunc(rep.Problems, byAddr)
	slices.SortStableFunc(rep.CFIWrong, byAddr)
	slices.SortStableFunc(rep.RuleDiffers, byAddr)
	sort.SliceStable(rep.Notes, func(i, j int) bool { return rep.Notes[i].Functions > rep.Notes[j].Functions })
	for k := range rep.Problems {
		if p := &rep.Problems[k]; p.FDE >= 0 && p.FRE >= 0 {
			rv := c.row(p.FDE, p.FRE)
			rv.Problems = append(rv.Problems, k)
		}
	}
}

// Clean reports whether no problem was found and the section broke no
// rule of the format.
func (r *Report) Clean() bool { return len(r.Problems) == 0 && len(r.Malformed) == 0 }

// Complete reports whether every PC checked had an opinion.
func (r *Report) Complete() bool { return r.UnknownPCs == 0 }

// OK reports whether every PC was proven right and nothing was found.
func (r *Report) OK() bool { return r.Clean() && r.Complete() }

// Verdict is the report's one-word result: OK, MALFORMED (the section
// breaks rules of the format, whatever the rows show), PROBLEMS, or
// INCOMPLETE (no problem, but some PCs could not be proven).
func (r *Report) Verdict() string {
	switch {
	case len(r.Malformed) > 0:
		return "MALFORMED"
	case !r.Clean():
		return "PROBLEMS"
	case !r.Complete():
		return "INCOMPLETE"
	}
	return "OK"
}

// WriteText prints the summary and the first maxProblems problems.
func (r *Report) WriteText(w io.Writer, maxProblems int) {
	pct := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Fprintf(w, "%s: %s, SFrame V%d\n", r.Binary, r.Arch, r.SFrameVersion)
	fmt.Fprintf(w, "  compared:     SFrame with %s (CFI: %s), in %.2fs\n", strings.Join(r.Sources, ", "), r.CFI, r.Seconds)
	if len(r.CFIErrors) > 0 {
		fmt.Fprintf(w, "  CFI errors:   %d entries could not be read, e.g. %s\n", len(r.CFIErrors), r.CFIErrors[0])
	}
	fmt.Fprintf(w, "  functions:    %d FDEs (%d with rows, %d PCMASK); %d function symbols have no FDE\n",
		r.Functions, r.FunctionsWithRows, r.PCMaskFDEs, r.FunctionsWithoutSFrame)
	fmt.Fprintf(w, "  PCs:          %d checked, %d proven right (%.1f%%), %d with problems, %d unknown\n",
		r.PCs, r.Proven, pct(r.Proven, r.PCs), r.ProblemPCs, r.UnknownPCs)
	if len(r.Sources) > 1 {
		fmt.Fprintf(w, "  by the code:  %d proven PCs (%.1f%%) had the code's rule for every value; the CFI decided the others\n",
			r.ProvenByCode, pct(r.ProvenByCode, r.PCs))
	}
	if len(r.CFIWrong) > 0 {
		fmt.Fprintf(w, "  CFI wrong:    %d distinct (%d PCs): the CFI disagrees with the code, SFrame follows the code (not problems)\n",
			len(r.CFIWrong), r.CFIWrongPCs)
	}
	if len(r.RuleDiffers) > 0 {
		fmt.Fprintf(w, "  rule differs: %d distinct (%d PCs): SFrame's rule differs from the CFI's, the code shows its value is still right (not problems)\n",
			len(r.RuleDiffers), r.RuleDiffersPCs)
	}
	if r.Limited > 0 {
		fmt.Fprintf(w, "  limited:      %d proven PCs have a CFA on a register other than SP/FP: usable only in the topmost frame\n", r.Limited)
	}
	for _, reason := range sortedKeys(r.Unknown) {
		fmt.Fprintf(w, "  unknown:      %d PCs: %s\n", r.Unknown[reason], reason)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  not covered:  %d functions: %s (%s", n.Functions, n.Reason, symbols.Demangle(strings.Join(n.Examples, ", ")))
		if n.Functions > len(n.Examples) {
			fmt.Fprintf(w, ", ...")
		}
		fmt.Fprintf(w, ")\n")
	}
	switch {
	case r.OK():
		fmt.Fprintf(w, "  result:       OK, every PC proven right\n")
	case r.Clean():
		fmt.Fprintf(w, "  result:       INCOMPLETE, no problem, but %d PCs could not be proven\n", r.UnknownPCs)
	default:
		var kinds []string
		for k := Kind(0); k < numKinds; k++ {
			if n := r.Counts[k.String()]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
		}
		r.writeMalformed(w)
		switch {
		case len(r.Malformed) == 0:
			fmt.Fprintf(w, "  result:       PROBLEMS, %d distinct (%s)", len(r.Problems), strings.Join(kinds, ", "))
		case len(r.Problems) == 0:
			fmt.Fprintf(w, "  result:       MALFORMED section, checked anyway: no problem")
		default:
			fmt.Fprintf(w, "  result:       MALFORMED section, checked anyway: %d distinct problems (%s)", len(r.Problems), strings.Join(kinds, ", "))
		}
		if !r.Complete() {
			fmt.Fprintf(w, "; and %d PCs could not be proven", r.UnknownPCs)
		}
		fmt.Fprintln(w)
	}
	writeFindings(w, r.Problems, maxProblems, "", "problems")
	writeFindings(w, r.CFIWrong, maxProblems, "CFI WRONG, SFrame right: ", "where the CFI is wrong")
	writeFindings(w, r.RuleDiffers, maxProblems, "RULE DIFFERS FROM CFI, value still right: ", "where SFrame's rule differs from the CFI's with the value still right")
}

// maxMalformed bounds the format errors a text report lists.
const maxMalformed = 5

// writeMalformed prints the rules of the format the section breaks.
func (r *Report) writeMalformed(w io.Writer) {
	WriteMalformed(w, r.Malformed, "its rows as read")
}

// WriteMalformed prints the rules of the format a section checked anyway
// (--check-malformed) breaks, as check's and verify's text reports list
// them: how says how the section was read.
func WriteMalformed(w io.Writer, rules []string, how string) {
	if len(rules) == 0 {
		return
	}
	fmt.Fprintf(w, "  malformed:    the SFrame section breaks %d rule(s) of the format, which the Linux kernel refuses; checked anyway (--check-malformed), %s:\n", len(rules), how)
	for i, m := range rules {
		if i == maxMalformed {
			fmt.Fprintf(w, "                (%d more: see --json or 'sframesim validate')\n", len(rules)-i)
			break
		}
		fmt.Fprintf(w, "                %s\n", m)
	}
}

// writeFindings prints the findings of one list, each after a blank line
// and label, at most max, then how many more ("(N more WHAT: see --json)").
func writeFindings(w io.Writer, ps []Problem, max int, label, what string) {
	for i := range ps {
		if i == max {
			fmt.Fprintf(w, "\n(%d more %s: see --json)\n", len(ps)-i, what)
			break
		}
		fmt.Fprintln(w)
		fmt.Fprint(w, label)
		ps[i].WriteText(w)
	}
}

// PerPC reports whether the problem was found by comparing rows at
// instructions (cfa, ra, fp, mangled-ra, unterminated, outermost, no-row);
// the others are findings about functions or the whole binary.
func (p *Problem) PerPC() bool { return p.kind.perPC() }

// WriteText prints the problem as the text report does: a heading line,
// then the instruction, the FDE and FRE row, what each source says.
func (p *Problem) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s at %#x %s", strings.ToUpper(p.Kind), p.PC, symbols.Demangle(p.Symbol))
	if p.Source != "" {
		fmt.Fprintf(w, " (%s)", p.Source)
	}
	if p.kind.perPC() {
		fmt.Fprintf(w, ": %d PCs", p.PCs)
	}
	fmt.Fprintln(w)
	if p.Insn != "" {
		fmt.Fprintf(w, "  instruction:  %s\n", symbols.Demangle(p.Insn))
	}
	if p.FDEText != "" {
		fmt.Fprintf(w, "  %s\n", p.FDEText)
	}
	if p.Row != "" {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(p.Row))
	}
	if p.SFrame != "" {
		fmt.Fprintf(w, "  SFrame says:  %s\n", p.SFrame)
	}
	if p.CFI != "" {
		fmt.Fprintf(w, "  CFI says:     %s\n", p.CFI)
	}
	if p.Code != "" {
		fmt.Fprintf(w, "  code says:    %s\n", p.Code)
	}
	if p.Detail != "" {
		fmt.Fprintf(w, "  %s\n", p.Detail)
	}
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// WriteJSONFile writes the report as JSON atomically: to a temporary file
// in the same directory, renamed over path.
func (r *Report) WriteJSONFile(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}
