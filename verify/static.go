package verify

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/symbols"
)

// Static is what package check proves about the rows of the program's
// SFrame section the run did not execute (Options.Static): a row (an FRE
// of an FDE) executed when the run checked at least one instruction with
// it as the topmost row. Check compares every instruction under a row
// with the rules the function's machine code gives and with the file's
// own CFI, without running it (`sframesim check`).
//
// Its addresses are the file's, as objdump and `sframesim check` print
// them: add Base for the run's.
type Static struct {
	Base    uint64        `json:"base"`
	CFI     string        `json:"cfi"` // the CFI sections compared with ("none")
	Seconds float64       `json:"seconds"`
	cpu     time.Duration // the process's CPU time spent (for benchmarks)
	// Error, when set, is why check could not run: nothing about the
	// rows that did not run is known.
	Error string `json:"error,omitempty"`

	RowsNotRun int `json:"rows_not_run"` // FREs of the program's section the run did not execute
	Proven     int `json:"proven"`       // of those, proven right at every instruction under them
	Wrong      int `json:"wrong"`        // with a problem (Problems)
	Unknown    int `json:"unknown"`      // some instruction under them could not be proven (UnknownRows)
	Empty      int `json:"empty"`        // no instruction starts under them: nothing to prove
	// Problems are what check found that the run did not report: the
	// problems at instructions under rows the run did not execute (or
	// under no row), and its findings about the whole binary (a call
	// ending its function, unless the run found a problem at its return
	// address; FDEs that overlap, cover padding, or leave part of a
	// function with CFI uncovered; PCMASK sizes; signal-frame bits).
	Problems []check.Problem `json:"problems"`
	// UnknownRows lists the rows that could not be proven (up to 200).
	UnknownRows []StaticRow `json:"unknown_rows"`
}

// StaticRow is a row check could not prove, with the reason.
type StaticRow struct {
	RowRef
	Unknown uint64 `json:"unknown_pcs"`
	Why     string `json:"why"`
}

// complete reports whether nothing about the rows that did not run is
// unknown (true without a static check).
func (s *Static) complete() bool { return s == nil || s.Error == "" && s.Unknown == 0 }

// clean reports whether check found no problem in what the run did not
// execute (true without a static check).
func (s *Static) clean() bool { return s == nil || len(s.Problems) == 0 }

// writeSummary prints the static lines of the summary.
func (s *Static) writeSummary(w io.Writer) {
	if s.Error != "" {
		fmt.Fprintf(w, "  static:       check could not run: %s\n", s.Error)
		return
	}
	fmt.Fprintf(w, "  static:       %d rows did not run; check (SFrame vs CFI: %s, and the code, %.2fs) proved %d right, %d wrong, %d unknown, %d hold no instruction\n",
		s.RowsNotRun, s.CFI, s.Seconds, s.Proven, s.Wrong, s.Unknown, s.Empty)
	if s.Unknown == 0 {
		return
	}
	type group struct {
		why  string
		rows []string
	}
	var groups []*group
	byWhy := map[string]*group{}
	for _, r := range s.UnknownRows {
		g := byWhy[r.Why]
		if g == nil {
			g = &group{why: r.Why}
			byWhy[r.Why] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, fmt.Sprintf("%s [%d/%d]", symbols.Demangle(r.Symbol), r.FDE, r.FRE))
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].rows) > len(groups[j].rows) })
	for _, g := range groups {
		ex := g.rows
		more := ""
		if len(ex) > 3 {
			ex, more = ex[:3], ", ..."
		}
		fmt.Fprintf(w, "  unknown rows: %d: %s (%s%s)\n", len(g.rows), g.why, strings.Join(ex, ", "), more)
	}
	if s.Unknown > len(s.UnknownRows) {
		fmt.Fprintf(w, "  unknown rows: %d more (not listed)\n", s.Unknown-len(s.UnknownRows))
	}
}

// incompleteText says what about the rows that did not run is unknown.
func (s *Static) incompleteText() string {
	if s.Error != "" {
		return "check could not run on the rows that did not run: " + s.Error
	}
	return fmt.Sprintf("check could not prove %d of the rows that did not run", s.Unknown)
}

// writeProblems prints check's problems, at most max.
func (s *Static) writeProblems(w io.Writer, max int) {
	if len(s.Problems) == 0 {
		return
	}
	fmt.Fprintf(w, "\nFound by check, not by the run (addresses as in the file):\n")
	for i, p := range s.Problems {
		if i == max {
			fmt.Fprintf(w, "\n(%d more problems found by check: see --json)\n", len(s.Problems)-i)
			break
		}
		fmt.Fprintln(w)
		p.WriteText(w)
	}
}
