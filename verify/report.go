package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/internal/atomicfile"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/symbols"
)

// Report is the outcome of verifying one program.
type Report struct {
	Binary        string `json:"binary"`
	Arch          string `json:"arch"`
	SFrameVersion int    `json:"sframe_version"`
	// Malformed lists the rules of the format the program's SFrame
	// section breaks (sframe.Section.Validate's errors, as validate
	// prints them) when it was checked anyway (Options.CheckMalformed):
	// the Linux kernel refuses such a section, so the verdict is
	// MALFORMED whatever the run found.
	Malformed []string `json:"malformed,omitempty"`
	Stop      string   `json:"stop"` // how the run ended
	// Complete: the program ran to its end (exit, or killed by a signal it
	// sent itself) and every instruction was checked. Otherwise
	// Incomplete says why not, and the verdict is never OK.
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	// ranToEnd: the program ran to its end, and only cut walks (Cut)
	// make the run incomplete.
	ranToEnd bool
	// rowHits: the instructions that had each row of the program's
	// section as the topmost, by (FDE, FRE) (not reported: the tests
	// comparing reports of batched and exact runs compare these too).
	rowHits    map[[2]int]uint64
	Exited     bool    `json:"exited"`
	ExitStatus int     `json:"exit_status"`
	Seconds    float64 `json:"seconds"`
	// Denied counts the system calls the sandbox denied (network calls,
	// answered with EACCES: linux.Process.Denied), by name.
	Denied map[string]uint64 `json:"denied,omitempty"`

	Instructions uint64            `json:"instructions"` // checked
	Covered      uint64            `json:"covered"`      // with SFrame data for the topmost PC
	Counts       map[string]uint64 `json:"counts"`       // per outcome kind
	Failures     uint64            `json:"failures"`     // instructions with a failure outcome
	// Threads is how many threads the program ran (the main thread
	// included); PerThread the instructions checked in each, in tid order:
	// every thread that has not exited and the first 1024 that did
	// (linux.Process.Threads). The others are only counted, with the
	// instructions checked in them: UnlistedThreads, UnlistedInstructions.
	Threads              int          `json:"threads"`
	PerThread            []ThreadStat `json:"per_thread"`
	UnlistedThreads      int          `json:"unlisted_threads,omitempty"`
	UnlistedInstructions uint64       `json:"unlisted_instructions,omitempty"`
	// SignalsDelivered counts the signals delivered to handlers, Signals
	// the same by name ("SIGSEGV"). SignalFrames counts the signal frames
	// unwound through and found right, summed over the instructions
	// checked (an instruction whose unwind goes through two nested
	// deliveries counts two); the "signal-gap" outcome counts the
	// instructions whose unwind stopped at a signal trampoline the SFrame
	// data does not mark.
	SignalsDelivered uint64            `json:"signals_delivered"`
	Signals          map[string]uint64 `json:"signals,omitempty"`
	SignalFrames     uint64            `json:"signal_frames_unwound"`

	Problems  []Problem  `json:"problems"`  // each distinct problem once, most hits first
	Functions []FuncStat `json:"functions"` // per function, most problems first

	RowsTotal          int      `json:"rows_total"`            // FREs in the section
	RowsInRunFunctions int      `json:"rows_in_run_functions"` // FREs of functions that ran
	RowsExercised      int      `json:"rows_exercised"`        // of those, used as the topmost row
	RowsNeverReached   []RowRef `json:"rows_never_reached"`    // up to 200
	// RowFailures counts, per FRE row, the failures of frames unwound with
	// it (at any depth), most first.
	RowFailures []RowStat `json:"row_failures"`
	// Objects: per ELF file of a dynamically linked program (objects.go).
	Objects []ObjectStat `json:"objects,omitempty"`
	// Static: with Options.Static, what check proves about the rows of
	// the program's section the run did not execute.
	Static *Static `json:"static,omitempty"`
	// LostTrack lists the true frames the shadow stack could not vouch
	// for (the "untracked" outcome: the unwind was compared up to such a
	// frame), most instructions first. Any makes the run incomplete.
	LostTrack []LostTrack `json:"lost_track,omitempty"`
	// Anomalies counts the departures from call/return nesting the shadow
	// stack followed (shadow.Anomaly: returns to an address no frame
	// expected, as libgcc's into a landing pad, a retpoline's or push and
	// ret; returns past frames), by kind, with the first of each.
	// Informational: the frames such a return leaves are dropped by
	// their stack pointer, and what the stack could not tell is in
	// LostTrack.
	Anomalies []ShadowAnomaly `json:"shadow_anomalies,omitempty"`
}

// LostTrack is one true frame the shadow stack could not vouch for
// (shadow.Frame.Unsure): the call that made it, why, and the instructions
// whose unwind was compared only up to it.
type LostTrack struct {
	CallSite    uint64 `json:"call_site"`
	CallSymbol  string `json:"call_symbol"`
	Entry       uint64 `json:"entry"` // the callee's first instruction
	EntrySymbol string `json:"entry_symbol"`
	Why         string `json:"why"`
	// PC, Symbol, Source, Insn: the first instruction whose check
	// stopped at the frame, at depth Depth.
	PC     uint64 `json:"pc"`
	Symbol string `json:"symbol"`
	Source string `json:"source,omitempty"`
	Insn   string `json:"insn"`
	Depth  int    `json:"depth"`
	PCs    int    `json:"pcs"`  // distinct instruction PCs affected
	Hits   uint64 `json:"hits"` // instructions affected
}

// ShadowAnomaly counts one kind of shadow.Anomaly over a run's threads,
// with the first one seen (in thread TID, at instruction Insn of it).
type ShadowAnomaly struct {
	Kind            string `json:"kind"`
	Count           uint64 `json:"count"`
	TID             int    `json:"tid"`
	Insn            uint64 `json:"insn"`
	PC              uint64 `json:"pc"`
	Symbol          string `json:"symbol"`
	SymbolDemangled string `json:"symbol_demangled,omitempty"`
	Detail          string `json:"detail"`
}

// RowStat is one FRE row's failure count.
type RowStat struct {
	RowRef
	Failures uint64 `json:"failures"`
	Used     uint64 `json:"used_topmost"` // instructions that ran with it as the topmost row
}

// ObjectStat is what one mapped ELF file (the program, ld.so, a shared
// library) contributed to a run: the instructions executed in it, how many
// of them had SFrame data, and how often the SFrame chain of a covered
// instruction ended at a frame in it (a caller without SFrame data: a
// coverage gap, not an error), with the function where that happened most.
type ObjectStat struct {
	Name         string `json:"name"`
	Base         uint64 `json:"base"`
	SFrame       bool   `json:"sframe"`
	Instructions uint64 `json:"instructions"`
	Covered      uint64 `json:"covered"`
	ChainEnds    uint64 `json:"chain_ends"`
	ChainEndAt   string `json:"chain_end_at,omitempty"` // the most frequent function
	// ChainEndAtDemangled is ChainEndAt demangled (symbols.Demangled).
	ChainEndAtDemangled string `json:"chain_end_at_demangled,omitempty"`
}

// Problem is one distinct problem: a kind at one frame's row.
//
// Symbols are mangled as in the symbol table; a *Demangled field beside
// one holds its C++ demangling (symbols.Demangled), left out for names
// that are not mangled. The text report prints demangled names.
type Problem struct {
	kind                 Kind
	Kind                 string `json:"kind"`
	PC                   uint64 `json:"pc"` // first instruction where it was seen
	Symbol               string `json:"symbol"`
	SymbolDemangled      string `json:"symbol_demangled,omitempty"`
	Source               string `json:"source,omitempty"`
	Insn                 string `json:"insn"`
	Depth                int    `json:"depth"`    // frame (0: topmost)
	FramePC              uint64 `json:"frame_pc"` // that frame's PC
	FrameSymbol          string `json:"frame_symbol"`
	FrameSymbolDemangled string `json:"frame_symbol_demangled,omitempty"`
	FrameSource          string `json:"frame_source,omitempty"`
	FDE                  int    `json:"fde"` // -1: none
	FRE                  int    `json:"fre"`
	FDEText              string `json:"fde_text,omitempty"`
	Row                  string `json:"row,omitempty"` // as objdump --sframe prints it
	Want                 uint64 `json:"want"`
	Got                  uint64 `json:"got"`
	Error                string `json:"error,omitempty"`
	// Cause explains a problem whose cause the tool recognizes (a caller
	// frame whose return address is a function's first byte).
	Cause string `json:"cause,omitempty"`
	PCs   int    `json:"pcs"`  // distinct instruction PCs affected
	Hits  uint64 `json:"hits"` // instructions affected
}

// ThreadStat counts the instructions checked in one thread; each is
// checked against that thread's own shadow stack.
type ThreadStat struct {
	TID          int    `json:"tid"`
	Instructions uint64 `json:"instructions"`
}

// FuncStat counts per function.
type FuncStat struct {
	Name          string `json:"name"`
	NameDemangled string `json:"name_demangled,omitempty"`
	Instructions  uint64 `json:"instructions"`
	Covered       uint64 `json:"covered"`
	Problems      uint64 `json:"problems"`
}

// RowRef names one FRE.
type RowRef struct {
	FDE             int    `json:"fde"`
	FRE             int    `json:"fre"`
	Symbol          string `json:"symbol"`
	SymbolDemangled string `json:"symbol_demangled,omitempty"`
	Row             string `json:"row"`
}

// Clean reports whether the run had no failure, the section broke no
// rule of the format and, with a static check, check found no problem in
// the rows the run did not execute.
func (r *Report) Clean() bool { return r.Failures == 0 && len(r.Malformed) == 0 && r.Static.clean() }

// OK reports whether the program ran to its end and every instruction
// checked was right (and, with a static check, every row the run did not
// execute was proven right): the only report that earns an OK.
func (r *Report) OK() bool { return r.Complete && r.Clean() && r.Static.complete() }

// Verdict is the report's one-word result: OK, MALFORMED (the section
// breaks rules of the format, whatever the run found), MISMATCH (failures
// found, or problems check found in rows that did not run), or INCOMPLETE
// (no problem, but the run stopped before the program's end, or check
// could not prove some rows that did not run).
func (r *Report) Verdict() string {
	switch {
	case len(r.Malformed) > 0:
		return "MALFORMED"
	case !r.Clean():
		return "MISMATCH"
	case !r.OK():
		return "INCOMPLETE"
	}
	return "OK"
}

// textThreads is how many threads the text report lists one by one.
const textThreads = 16

// WriteText prints the summary and each distinct problem.
func (r *Report) WriteText(w io.Writer, maxProblems int) {
	pct := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Fprintf(w, "%s: %s, SFrame V%d\n", r.Binary, r.Arch, r.SFrameVersion)
	fmt.Fprintf(w, "  run:          %s, %d instructions checked in %.2fs\n", symbols.Demangle(r.Stop), r.Instructions, r.Seconds)
	if len(r.Denied) > 0 {
		fmt.Fprintf(w, "  denied:       %s\n", linux.DeniedSummary(r.Denied))
	}
	if r.Threads > 1 {
		var per []string
		for _, t := range r.PerThread[:min(len(r.PerThread), textThreads)] {
			per = append(per, fmt.Sprintf("tid %d: %d", t.TID, t.Instructions))
		}
		if n := r.Threads - len(per); n > 0 {
			insns := r.UnlistedInstructions
			for _, t := range r.PerThread[len(per):] {
				insns += t.Instructions
			}
			per = append(per, fmt.Sprintf("%d more threads: %d", n, insns))
		}
		fmt.Fprintf(w, "  threads:      %d, instructions checked per thread: %s\n", r.Threads, strings.Join(per, ", "))
	} else {
		fmt.Fprintf(w, "  threads:      %d\n", r.Threads)
	}
	if r.SignalsDelivered > 0 || r.SignalFrames > 0 {
		fmt.Fprintf(w, "  signals:      %d delivered, %d frames unwound through\n", r.SignalsDelivered, r.SignalFrames)
	}
	fmt.Fprintf(w, "  covered:      %d instructions (%.1f%%) had SFrame data for the current PC\n", r.Covered, pct(r.Covered, r.Instructions))
	var kinds []string
	for _, k := range kindNames {
		if n := r.Counts[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, "  outcomes:     %s\n", strings.Join(kinds, ", "))
	r.writeShadow(w)
	r.writeObjects(w)
	fmt.Fprintf(w, "  FRE coverage: %d of %d rows of the functions that ran were used (%d rows in the section)\n",
		r.RowsExercised, r.RowsInRunFunctions, r.RowsTotal)
	if r.Static != nil {
		r.Static.writeSummary(w)
	}
	switch {
	case r.OK() && r.Static != nil:
		fmt.Fprintf(w, "  result:       OK, no mismatch, and every row that did not run proven right\n")
	case r.OK():
		fmt.Fprintf(w, "  result:       OK, no mismatch\n")
	case r.Clean():
		var why []string
		if !r.Complete {
			why = append(why, r.incompleteText())
		}
		if !r.Static.complete() {
			why = append(why, r.Static.incompleteText())
		}
		fmt.Fprintf(w, "  result:       INCOMPLETE, no mismatch in the %d instructions checked, but %s\n", r.Instructions, strings.Join(why, "; "))
	default:
		if !r.Complete {
			fmt.Fprintf(w, "  incomplete:   %s\n", r.incompleteText())
		}
		if !r.Static.complete() {
			fmt.Fprintf(w, "  incomplete:   %s\n", r.Static.incompleteText())
		}
		r.writeMalformed(w)
		switch {
		case len(r.Malformed) == 0:
			fmt.Fprintf(w, "  result:       MISMATCH, %d instructions with a wrong unwind, %d distinct problems", r.Failures, len(r.Problems))
		case r.Failures == 0:
			fmt.Fprintf(w, "  result:       MALFORMED section, checked anyway: no mismatch in the %d instructions checked", r.Instructions)
		default:
			fmt.Fprintf(w, "  result:       MALFORMED section, checked anyway: %d instructions with a wrong unwind, %d distinct problems", r.Failures, len(r.Problems))
		}
		if !r.Static.clean() {
			fmt.Fprintf(w, "; check found %d more the run did not", len(r.Static.Problems))
		}
		fmt.Fprintln(w)
		if r.Failures == 0 {
			break
		}
		fmt.Fprintf(w, "  worst functions:")
		for i, f := range r.Functions {
			if i == 5 || f.Problems == 0 {
				break
			}
			fmt.Fprintf(w, " %s (%d)", symbols.Demangle(f.Name), f.Problems)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  worst rows:")
		for i, row := range r.RowFailures {
			if i == 3 {
				break
			}
			fmt.Fprintf(w, "\n    %5d failures: %s (%s)", row.Failures, strings.TrimSpace(row.Row), symbols.Demangle(row.Symbol))
		}
		fmt.Fprintln(w)
	}
	for i, p := range r.Problems {
		if i == maxProblems {
			fmt.Fprintf(w, "\n(%d more problems: see --json)\n", len(r.Problems)-i)
			break
		}
		fmt.Fprintf(w, "\n%s at %#x %s", strings.ToUpper(p.Kind), p.PC, symbols.Demangle(p.Symbol))
		if p.Source != "" {
			fmt.Fprintf(w, " (%s)", p.Source)
		}
		fmt.Fprintf(w, ": %d instructions at %d PCs\n", p.Hits, p.PCs)
		fmt.Fprintf(w, "  instruction:  %s\n", symbols.Demangle(p.Insn))
		fmt.Fprintf(w, "  frame %d at %#x %s", p.Depth, p.FramePC, symbols.Demangle(p.FrameSymbol))
		if p.FrameSource != "" {
			fmt.Fprintf(w, " (%s)", p.FrameSource)
		}
		fmt.Fprintln(w)
		if p.Row != "" {
			fmt.Fprintf(w, "  %s\n  %s\n", p.FDEText, strings.TrimSpace(p.Row))
		}
		switch p.kind {
		case MismatchCFA, MismatchRA, MismatchFP:
			fmt.Fprintf(w, "  %s: expected %#x, SFrame gives %#x\n", p.Kind, p.Want, p.Got)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", p.Error)
		}
		if p.Cause != "" {
			fmt.Fprintf(w, "  cause: %s\n", p.Cause)
		}
	}
	if r.Static != nil {
		r.Static.writeProblems(w, maxProblems)
	}
}

// writeMalformed prints the rules of the format the section breaks, and
// how it was read.
func (r *Report) writeMalformed(w io.Writer) {
	check.WriteMalformed(w, r.Malformed, "as an unwinder that looks rows up without validating reads it")
}

// writeShadow prints what the shadow stack followed (anomalies) and the
// frames it lost track of.
func (r *Report) writeShadow(w io.Writer) {
	for i, a := range r.Anomalies {
		label := "  shadow stack:"
		if i > 0 {
			label = "               "
		}
		fmt.Fprintf(w, "%s %d %s (first: %s, in %s)\n", label, a.Count, a.Kind, a.Detail, symbols.Demangle(a.Symbol))
	}
	for i, lt := range r.LostTrack {
		if i == 5 {
			fmt.Fprintf(w, "                (%d more: see --json)\n", len(r.LostTrack)-i)
			break
		}
		label := "  lost track:  "
		if i > 0 {
			label = "               "
		}
		fmt.Fprintf(w, "%s the frame of the call at %s to %s: %s; %d instructions at %d PCs compared only up to it (first at %s, frame %d)\n",
			label, addrSym(lt.CallSite, lt.CallSymbol), addrSym(lt.Entry, lt.EntrySymbol), lt.Why,
			lt.Hits, lt.PCs, addrSym(lt.PC, lt.Symbol), lt.Depth)
	}
}

// addrSym renders an address and its symbol (symbols.Table.Format), the
// symbol left out when it is only the address again.
func addrSym(addr uint64, sym string) string {
	if sym == "" || sym == fmt.Sprintf("%#x", addr) {
		return fmt.Sprintf("%#x", addr)
	}
	return fmt.Sprintf("%#x %s", addr, symbols.Demangle(sym))
}

// incompleteText says why the run is incomplete.
func (r *Report) incompleteText() string {
	if r.ranToEnd {
		return "not every frame was checked: " + r.Incomplete
	}
	return "the run stopped before the program's end: " + r.Incomplete
}

// writeObjects prints the per-object lines of the text report.
func (r *Report) writeObjects(w io.Writer) {
	for i, o := range r.Objects {
		label := "  objects:     "
		if i > 0 {
			label = "               "
		}
		sf := "no SFrame"
		if o.SFrame {
			sf = "SFrame"
		}
		fmt.Fprintf(w, "%s %s (%s): %d instructions, %d covered", label, filepath.Base(o.Name), sf, o.Instructions, o.Covered)
		if o.ChainEnds > 0 {
			fmt.Fprintf(w, "; the SFrame chain ended here %d times (most at %s)", o.ChainEnds, symbols.Demangle(o.ChainEndAt))
		}
		fmt.Fprintln(w)
	}
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
