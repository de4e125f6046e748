package corpus

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sframesim/sframesim/internal/atomicfile"
	"github.com/sframesim/sframesim/linux"
)

// Summary is the corpus-wide outcome of a run.
type Summary struct {
	Input string `json:"input"`
	// Setup is what the verdicts rest on besides the binaries themselves:
	// shard reports merge only when theirs are equal.
	Setup Setup  `json:"setup"`
	Shard string `json:"shard,omitempty"` // "i/n"
	// ShardSource says where Shard came from: "--shard", or the
	// environment variables that gave it.
	ShardSource string `json:"shard_source,omitempty"`
	// CostsSHA256 is the SHA-256 of the --costs report the shard was split
	// by, "" if none.
	CostsSHA256 string `json:"costs_sha256,omitempty"`
	// Shards lists, in a merged report, the shard reports combined.
	Shards      []ShardInfo `json:"shards,omitempty"`
	Workers     int         `json:"workers"` // merged: all shards' workers
	Seconds     float64     `json:"seconds"` // wall-clock time of the whole run (merged: of the slowest shard)
	Interrupted bool        `json:"interrupted,omitempty"`

	Binaries int            `json:"binaries"`
	Statuses map[Status]int `json:"statuses"`
	// Unexpected is the number of binaries whose verdict is not OK.
	Unexpected int `json:"unexpected"`

	Instructions uint64            `json:"instructions"` // checked, over all binaries
	Covered      uint64            `json:"covered"`      // with SFrame data for the topmost PC
	Failures     uint64            `json:"failures"`     // instructions with a wrong unwind
	Counts       map[string]uint64 `json:"counts"`       // instructions per outcome kind
	// ProblemBinaries counts, per problem kind, the binaries that showed it.
	ProblemBinaries map[string]int `json:"problem_binaries"`
	VerifySecs      float64        `json:"verify_seconds"`

	RowsInRunFunctions int `json:"rows_in_run_functions"`
	RowsExercised      int `json:"rows_exercised"`
	// Denied counts, over all binaries, the system calls the sandbox
	// denied (network calls: EACCES), by name.
	Denied map[string]uint64 `json:"denied,omitempty"`

	Groups  []GroupStat `json:"groups"`  // per SFrame version and arch
	Slowest []Slow      `json:"slowest"` // up to 5
	Skipped []Skipped   `json:"skipped,omitempty"`
	// Stale lists expectations of binaries the input does not have.
	Stale []string `json:"stale_expectations,omitempty"`
}

// Setup is what a run's verdicts rest on besides the binaries: the
// program, the input, the expectations, the options that change outcomes,
// and the binaries selected (before sharding).
type Setup struct {
	Version      string `json:"version"`                 // of sframesim
	InputSHA256  string `json:"input_sha256,omitempty"`  // the manifest's bytes ("" for a directory)
	ExpectSHA256 string `json:"expect_sha256,omitempty"` // the --expect file's bytes ("" without one)
	Run          string `json:"run,omitempty"`           // --run
	MaxInsns     uint64 `json:"max_insns,omitempty"`
	Timeout      string `json:"timeout,omitempty"`
	// Selected and SelectedSHA256 are the number and digest
	// ([SelectionDigest]) of the binaries selected: all of the input's,
	// or those --run matched. The shards of a split cover exactly these.
	Selected       int    `json:"selected"`
	SelectedSHA256 string `json:"selected_sha256"`
}

// ShardInfo describes one shard report of a merged report.
type ShardInfo struct {
	Report      string  `json:"report"` // the file, as given to merge
	Shard       string  `json:"shard"`  // "i/n"
	Source      string  `json:"source,omitempty"`
	CostsSHA256 string  `json:"costs_sha256,omitempty"`
	Binaries    int     `json:"binaries"`
	Workers     int     `json:"workers"`
	Seconds     float64 `json:"seconds"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// GroupStat sums the binaries of one SFrame version and arch.
type GroupStat struct {
	SFrameVersion int            `json:"sframe_version"`
	Arch          string         `json:"arch"`
	Binaries      int            `json:"binaries"`
	Statuses      map[Status]int `json:"statuses"`
	Instructions  uint64         `json:"instructions"`
	Covered       uint64         `json:"covered"`
	Failures      uint64         `json:"failures"`
}

// Slow is one of the slowest binaries.
type Slow struct {
	Binary       string  `json:"binary"`
	Seconds      float64 `json:"seconds"`
	Instructions uint64  `json:"instructions"`
}

// Document is the JSON output: the summary and every result.
type Document struct {
	Summary
	Results []Result `json:"results"`
}

// statusOrder is the order of the verdict columns.
var statusOrder = []Status{StatusClean, StatusKnown, StatusUnsupported, StatusFail, StatusError, StatusInterrupted}

// Summarize adds up results. s's run fields (Input, Setup, the shard
// fields, Workers, Seconds, Interrupted, Skipped, Stale) are the caller's.
func Summarize(s Summary, results []Result) Summary {
	s.Binaries = len(results)
	s.Statuses = map[Status]int{}
	s.Counts = map[string]uint64{}
	s.ProblemBinaries = map[string]int{}
	groups := map[[2]string]*GroupStat{}
	for i := range results {
		r := &results[i]
		s.Statuses[r.Status]++
		if !r.Status.OK() && r.Status != StatusInterrupted {
			s.Unexpected++
		}
		key := [2]string{fmt.Sprint(r.SFrameVersion), r.Arch}
		g := groups[key]
		if g == nil {
			g = &GroupStat{SFrameVersion: r.SFrameVersion, Arch: r.Arch, Statuses: map[Status]int{}}
			groups[key] = g
		}
		g.Binaries++
		g.Statuses[r.Status]++
		s.VerifySecs += r.Seconds
		rep := r.Report
		if rep == nil {
			continue
		}
		s.Instructions += rep.Instructions
		s.Covered += rep.Covered
		s.Failures += rep.Failures
		g.Instructions += rep.Instructions
		g.Covered += rep.Covered
		g.Failures += rep.Failures
		for k, n := range rep.Counts {
			s.Counts[k] += n
			if problemKinds[k] && n > 0 {
				s.ProblemBinaries[k]++
			}
		}
		for name, n := range rep.Denied {
			if s.Denied == nil {
				s.Denied = map[string]uint64{}
			}
			s.Denied[name] += n
		}
		s.RowsInRunFunctions += rep.RowsInRunFunctions
		s.RowsExercised += rep.RowsExercised
		s.Slowest = append(s.Slowest, Slow{r.Key, r.Seconds, rep.Instructions})
	}
	s.Groups = s.Groups[:0]
	for _, g := range groups {
		s.Groups = append(s.Groups, *g)
	}
	sort.Slice(s.Groups, func(i, j int) bool {
		a, b := s.Groups[i], s.Groups[j]
		if a.SFrameVersion != b.SFrameVersion {
			return a.SFrameVersion < b.SFrameVersion
		}
		return a.Arch < b.Arch
	})
	sort.SliceStable(s.Slowest, func(i, j int) bool { return s.Slowest[i].Seconds > s.Slowest[j].Seconds })
	if len(s.Slowest) > 5 {
		s.Slowest = s.Slowest[:5]
	}
	return s
}

// OK reports whether every binary was as expected and the baseline has no
// stale entries.
func (s *Summary) OK() bool { return s.Unexpected == 0 && len(s.Stale) == 0 && !s.Interrupted }

// WriteText prints the summary table, then every unexpected outcome, then
// the verdict line.
func (s *Summary) WriteText(w io.Writer, results []Result) {
	fmt.Fprintf(w, "sframesim corpus %s", s.Input)
	switch {
	case s.Shard != "" && s.ShardSource != "":
		fmt.Fprintf(w, " (shard %s, from %s)", s.Shard, s.ShardSource)
	case s.Shard != "":
		fmt.Fprintf(w, " (shard %s)", s.Shard)
	case len(s.Shards) > 0:
		fmt.Fprintf(w, " (%d shards merged)", len(s.Shards))
	}
	fmt.Fprintf(w, ": %s, %d workers, %.1fs (%.1fs of verification)\n\n", binaries(s.Binaries), s.Workers, s.Seconds, s.VerifySecs)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-10s\tbinaries\t", "")
	for _, st := range statusOrder {
		if st != StatusInterrupted || s.Statuses[st] > 0 {
			fmt.Fprintf(tw, "%s\t", st)
		}
	}
	fmt.Fprint(tw, "instructions\tcovered\tfailures\t\n")
	row := func(name string, n int, statuses map[Status]int, insns, covered, failures uint64) {
		fmt.Fprintf(tw, "%-10s\t%d\t", name, n)
		for _, st := range statusOrder {
			if st != StatusInterrupted || s.Statuses[st] > 0 {
				fmt.Fprintf(tw, "%d\t", statuses[st])
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t\n", insns, percent(covered, insns), failures)
	}
	for _, g := range s.Groups {
		name := "?"
		if g.SFrameVersion > 0 {
			name = fmt.Sprintf("V%d", g.SFrameVersion)
		}
		if g.Arch != "" {
			name += " " + g.Arch
		}
		row(name, g.Binaries, g.Statuses, g.Instructions, g.Covered, g.Failures)
	}
	row("total", s.Binaries, s.Statuses, s.Instructions, s.Covered, s.Failures)
	tw.Flush()

	var kinds, problems []string
	for _, k := range sortedKeys(s.Counts) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, s.Counts[k]))
		if n := s.ProblemBinaries[k]; n > 0 {
			problems = append(problems, fmt.Sprintf("%s in %s (%d instructions)", k, binaries(n), s.Counts[k]))
		}
	}
	fmt.Fprintf(w, "\noutcomes (instructions): %s\n", orDash(strings.Join(kinds, ", ")))
	fmt.Fprintf(w, "problems by kind: %s\n", orDash(strings.Join(problems, ", ")))
	fmt.Fprintf(w, "FRE rows: %d of %d rows of the functions that ran were the topmost row at least once\n", s.RowsExercised, s.RowsInRunFunctions)
	if len(s.Denied) > 0 {
		fmt.Fprintf(w, "denied calls: %s\n", linux.DeniedSummary(s.Denied))
	}
	if len(s.Slowest) > 0 {
		fmt.Fprintf(w, "slowest:\n")
		for _, sl := range s.Slowest {
			fmt.Fprintf(w, "  %6.2fs %10d instructions  %s\n", sl.Seconds, sl.Instructions, sl.Binary)
		}
	}
	if len(s.Skipped) > 0 {
		byReason := map[string][]string{}
		for _, sk := range s.Skipped {
			byReason[sk.Reason] = append(byReason[sk.Reason], sk.Key)
		}
		fmt.Fprintf(w, "skipped: %d files\n", len(s.Skipped))
		for _, reason := range sortedKeys(byReason) {
			keys := byReason[reason]
			fmt.Fprintf(w, "  %d %s", len(keys), reason)
			if reason != SkipNotELF {
				// ELF files left out are worth naming; other files are not.
				for i, k := range keys {
					if i == 10 {
						fmt.Fprintf(w, " ... (see --json)")
						break
					}
					fmt.Fprintf(w, " %s", k)
				}
			}
			fmt.Fprintln(w)
		}
	}
	for _, key := range s.Stale {
		fmt.Fprintf(w, "stale expectation: %s is not in the input (renamed or removed? update the expectations)\n", key)
	}
	if s.Unexpected > 0 {
		fmt.Fprintf(w, "\nUNEXPECTED (%s):\n", binaries(s.Unexpected))
		for i := range results {
			for _, f := range results[i].Findings {
				fmt.Fprintf(w, "  %s\n", f.Message)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, s.Verdict())
}

// Verdict is the one-line result.
func (s *Summary) Verdict() string {
	ok := s.Statuses[StatusClean] + s.Statuses[StatusKnown] + s.Statuses[StatusUnsupported]
	expected := fmt.Sprintf("%d of %d binaries as expected (%d clean, %d with known problems, %d unsupported)",
		ok, s.Binaries, s.Statuses[StatusClean], s.Statuses[StatusKnown], s.Statuses[StatusUnsupported])
	var bad []string
	if n := s.Statuses[StatusFail]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d with unexpected outcomes", n))
	}
	if n := s.Statuses[StatusError]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d could not be verified", n))
	}
	if n := len(s.Stale); n > 0 {
		bad = append(bad, fmt.Sprintf("%d stale expectations", n))
	}
	if s.Interrupted {
		bad = append(bad, fmt.Sprintf("interrupted: %d not (fully) run", s.Statuses[StatusInterrupted]))
	}
	if len(bad) == 0 {
		return "OK: " + expected
	}
	return "FAIL: " + strings.Join(bad, ", ") + "; " + expected
}

func binaries(n int) string {
	if n == 1 {
		return "1 binary"
	}
	return fmt.Sprintf("%d binaries", n)
}

func percent(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteJSON writes the summary and every result (with its full verify
// report) to path, atomically.
func WriteJSON(path string, s Summary, results []Result) error {
	data, err := json.MarshalIndent(Document{Summary: s, Results: results}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}
