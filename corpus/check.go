package corpus

import (
	"fmt"
	"strings"
	"time"

	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/verify"
)

// Status is the verdict on one binary.
type Status string

// Verdicts. Clean, Known and Unsupported are as expected; Fail and Error
// are not; Interrupted binaries were not (fully) run.
const (
	StatusClean       Status = "clean"       // verified, no problem, as expected
	StatusKnown       Status = "known"       // verified, exactly the expected problems
	StatusUnsupported Status = "unsupported" // cannot be verified, as expected
	StatusFail        Status = "fail"        // an unexpected outcome (see Result.Findings)
	StatusError       Status = "error"       // could not be verified, unexpectedly
	StatusInterrupted Status = "interrupted" // Ctrl-C came first
)

// OK reports whether the verdict is as expected.
func (s Status) OK() bool {
	return s == StatusClean || s == StatusKnown || s == StatusUnsupported
}

// Result is the outcome of one binary, judged against its expectation.
type Result struct {
	Key           string  `json:"binary"`
	Path          string  `json:"path"`
	Arch          string  `json:"arch,omitempty"`
	SFrameVersion int     `json:"sframe_version,omitempty"`
	Status        Status  `json:"status"`
	Seconds       float64 `json:"seconds"`
	// Findings are the unexpected outcomes, each a one-line message naming
	// the binary and, for problems, the PC, symbol and FRE row.
	Findings []Finding `json:"unexpected,omitempty"`
	// Groups are the problems observed, grouped by kind, function and row.
	Groups      []Group `json:"problems,omitempty"`
	Unsupported string  `json:"unsupported,omitempty"` // the expectation that verify's error matched
	Error       string  `json:"error,omitempty"`       // why verify could not run it
	// Incomplete says why the run did not reach the program's end (budget,
	// timeout, a stop); missing problems and the exit status are then not
	// judged.
	Incomplete string         `json:"incomplete,omitempty"`
	Report     *verify.Report `json:"report,omitempty"`
}

// Finding is one unexpected outcome.
type Finding struct {
	// What: new-problem, missing-problem, now-runs, malformed (the
	// section breaks rules of the format, unexpectedly), now-well-formed,
	// exit-status, stdout,
	// stopped, timeout, lost-track (the shadow stack lost track of true
	// frames: verify.Report.LostTrack), unsupported or error.
	What    string `json:"what"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"` // more lines: the problem as verify prints it
}

// Group is the problems of one kind that one FRE row (of one function)
// gave, at any depth and PC.
type Group struct {
	Kind     string `json:"kind"`
	Function string `json:"function"`
	// FunctionDemangled is Function demangled, when it is a mangled C++
	// name (symbols.Demangled).
	FunctionDemangled string `json:"function_demangled,omitempty"`
	Row               string `json:"row,omitempty"` // as objdump --sframe prints it
	Hits              uint64 `json:"hits"`          // instructions affected
	Expected          bool   `json:"expected"`
	Reason            string `json:"reason,omitempty"` // the expectation's
	// first is the problem with most hits, for messages.
	first *verify.Problem
}

// Outcome is what running one binary gave.
type Outcome struct {
	Report      *verify.Report // nil when verify could not run it
	Err         error          // why not
	Stdout      string         // what the program printed (when Report is set)
	Budget      bool           // stopped by the instruction budget
	TimedOut    bool           // stopped by the timeout
	Interrupted bool           // stopped by Ctrl-C
	Timeout     time.Duration  // the timeout, for messages
}

// groups gathers a report's problems by kind, function and row, most hits
// first (the report's order).
func groups(rep *verify.Report) []Group {
	var gs []Group
	index := map[[3]string]int{}
	for i := range rep.Problems {
		p := &rep.Problems[i]
		fn := p.FrameSymbol
		if i := strings.LastIndex(fn, "+0x"); i > 0 {
			fn = fn[:i]
		}
		key := [3]string{p.Kind, fn, strings.TrimSpace(p.Row)}
		if j, ok := index[key]; ok {
			gs[j].Hits += p.Hits
			continue
		}
		index[key] = len(gs)
		gs = append(gs, Group{Kind: p.Kind, Function: fn, FunctionDemangled: symbols.Demangled(fn), Row: key[2], Hits: p.Hits, first: p})
	}
	return gs
}

// Judge compares what running job gave with its expectation (nil: it
// must verify clean).
func Judge(job Job, o Outcome, exp *Expect) Result {
	r := Result{Key: job.Key, Path: job.Path, Arch: job.Arch, SFrameVersion: job.SFrameVersion, Report: o.Report}
	add := func(what, detail, format string, a ...any) {
		r.Findings = append(r.Findings, Finding{What: what, Message: job.Key + ": " + fmt.Sprintf(format, a...), Detail: detail})
	}
	if o.Report == nil {
		r.Error = fmt.Sprint(o.Err)
		if exp != nil && exp.Malformed != "" {
			r.Status = StatusError
			add("error", "", "could not be verified: %v (its expectations say its section is malformed: run with --check-malformed)", o.Err)
			return r
		}
		switch {
		case exp != nil && exp.Unsupported != "" && strings.Contains(r.Error, exp.Unsupported):
			r.Status, r.Unsupported = StatusUnsupported, exp.Unsupported
		case exp != nil && exp.Unsupported != "":
			r.Status = StatusError
			add("error", "", "could not be verified: %v (expected an error saying %q)", o.Err, exp.Unsupported)
		default:
			r.Status = StatusError
			add("error", "", "could not be verified: %v", o.Err)
		}
		return r
	}
	rep := o.Report
	r.Seconds = rep.Seconds
	r.Arch, r.SFrameVersion = rep.Arch, rep.SFrameVersion
	if o.Interrupted {
		r.Status = StatusInterrupted
		r.Incomplete = fmt.Sprintf("interrupted after %d instructions", rep.Instructions)
		return r
	}
	finished := rep.Exited || rep.ExitStatus > 128 // exit, or killed by its own signal (128+N)
	switch {
	case o.Budget:
		r.Incomplete = "stopped by the instruction budget: " + rep.Stop
	case o.TimedOut:
		r.Incomplete = "timed out: " + rep.Stop
		add("timeout", "", "timed out after %v (%d instructions checked): raise --timeout, or set --max-insns", o.Timeout, rep.Instructions)
	case !finished:
		r.Incomplete = "stopped: " + rep.Stop
		add("stopped", "", "the run stopped before the program ended, after %d instructions: %s", rep.Instructions, symbols.Demangle(rep.Stop))
	}
	if n := rep.Counts[verify.Untracked.String()]; n > 0 && len(rep.LostTrack) > 0 {
		lt := &rep.LostTrack[0]
		add("lost-track", "", "the shadow stack lost track of %d true frame(s) (first: the call at %#x, %s): at %d instructions the unwind was compared only up to such a frame",
			len(rep.LostTrack), lt.CallSite, lt.Why, n)
	}
	if exp != nil && exp.Unsupported != "" {
		add("now-runs", "", "expected to be unsupported (%q), but verify ran it: update the expectations", exp.Unsupported)
		exp = nil // judge its problems as if it had to be clean
	}
	switch {
	case len(rep.Malformed) > 0 && (exp == nil || exp.Malformed == "" || !anyContains(rep.Malformed, exp.Malformed)):
		add("malformed", strings.Join(rep.Malformed, "\n"), "the SFrame section breaks %d rule(s) of the format, which the Linux kernel refuses (checked anyway): %s", len(rep.Malformed), rep.Malformed[0])
	case len(rep.Malformed) == 0 && exp != nil && exp.Malformed != "":
		add("now-well-formed", "", "expected a malformed SFrame section (%q), but it breaks no rule of the format: if it is fixed, update the expectations", exp.Malformed)
	}
	r.Groups = groups(rep)
	var want []ExpectedProblem
	if exp != nil {
		want = exp.Problems
	}
	seen := make([]bool, len(want))
	for i := range r.Groups {
		g := &r.Groups[i]
		for j := range want {
			if want[j].matches(g) {
				seen[j] = true
				if !g.Expected {
					g.Expected, g.Reason = true, want[j].Reason
				}
			}
		}
		if !g.Expected {
			add("new-problem", problemDetail(g.first), "%s", problemLine(g))
		}
	}
	if r.Incomplete == "" {
		for j, p := range want {
			if !seen[j] {
				where := symbols.Demangle(p.Function)
				if where == "" {
					where = "any function"
				}
				if p.Row != "" {
					where += ", row " + p.Row
				}
				add("missing-problem", "", "expected %s problem (%s) did not occur: %s; if it is fixed, update the expectations", p.Kind, where, orNone(p.Reason))
			}
		}
		if job.ExitStatus != nil && rep.ExitStatus != *job.ExitStatus {
			add("exit-status", "", "%s, but the manifest says exit status %d", rep.Stop, *job.ExitStatus)
		}
		if job.Stdout != nil && o.Stdout != *job.Stdout {
			add("stdout", "", "%s", stdoutDiff(o.Stdout, *job.Stdout))
		}
	}
	switch {
	case len(r.Findings) > 0:
		r.Status = StatusFail
	case len(r.Groups) > 0 || len(rep.Malformed) > 0:
		r.Status = StatusKnown
	default:
		r.Status = StatusClean
	}
	return r
}

func orNone(reason string) string {
	if reason == "" {
		return "no reason given"
	}
	return reason
}

// anyContains reports whether one of list contains sub.
func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// problemLine describes a group in one line: kind, first PC and symbol,
// the frame, and the FDE and FRE row as objdump prints them.
func problemLine(g *Group) string {
	p := g.first
	var b strings.Builder
	fmt.Fprintf(&b, "unexpected %s problem at %#x %s", p.Kind, p.PC, symbols.Demangle(p.Symbol))
	if p.Source != "" {
		fmt.Fprintf(&b, " (%s)", p.Source)
	}
	fmt.Fprintf(&b, ", frame %d at %#x %s", p.Depth, p.FramePC, symbols.Demangle(p.FrameSymbol))
	if p.Row != "" {
		fmt.Fprintf(&b, ", %s, row %q", p.FDEText, strings.TrimSpace(p.Row))
	} else {
		b.WriteString(", no FRE row")
	}
	switch p.Kind {
	case "cfa", "ra", "fp":
		fmt.Fprintf(&b, ": expected %#x, SFrame gives %#x", p.Want, p.Got)
	}
	if p.Error != "" {
		fmt.Fprintf(&b, ": %s", p.Error)
	}
	fmt.Fprintf(&b, " (%d instructions)", g.Hits)
	return b.String()
}

// problemDetail is the problem as `sframesim verify` prints it.
func problemDetail(p *verify.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %#x %s", strings.ToUpper(p.Kind), p.PC, symbols.Demangle(p.Symbol))
	if p.Source != "" {
		fmt.Fprintf(&b, " (%s)", p.Source)
	}
	fmt.Fprintf(&b, ": %d instructions at %d PCs\n", p.Hits, p.PCs)
	fmt.Fprintf(&b, "  instruction:  %s\n", symbols.Demangle(p.Insn))
	fmt.Fprintf(&b, "  frame %d at %#x %s", p.Depth, p.FramePC, symbols.Demangle(p.FrameSymbol))
	if p.FrameSource != "" {
		fmt.Fprintf(&b, " (%s)", p.FrameSource)
	}
	b.WriteString("\n")
	if p.Row != "" {
		fmt.Fprintf(&b, "  %s\n  %s\n", p.FDEText, strings.TrimSpace(p.Row))
	}
	switch p.Kind {
	case "cfa", "ra", "fp":
		fmt.Fprintf(&b, "  %s: expected %#x, SFrame gives %#x\n", p.Kind, p.Want, p.Got)
	}
	if p.Error != "" {
		fmt.Fprintf(&b, "  error: %s\n", p.Error)
	}
	return b.String()
}

// stdoutDiff says where got first differs from want.
func stdoutDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := 1 + strings.Count(got[:i], "\n")
	excerpt := func(s string) string {
		start := strings.LastIndexByte(s[:i], '\n') + 1
		end := len(s)
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			end = i + j
		}
		if end-start > 80 {
			end = start + 80
		}
		return fmt.Sprintf("%q", s[start:end])
	}
	return fmt.Sprintf("stdout differs from the manifest's at byte %d (line %d): got %s, want %s (%d and %d bytes)",
		i, line, excerpt(got), excerpt(want), len(got), len(want))
}
