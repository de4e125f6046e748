package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/sframesim/sframesim/internal/atomicfile"
	"github.com/sframesim/sframesim/internal/hostfile"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/verify"
)

// Expectations is the baseline of a corpus: what each binary that does not
// verify clean is known to show. A binary not listed must verify clean.
//
// The file is JSON:
//
//	{
//	  "comment": "...",
//	  "binaries": {
//	    "v1/x86-64/asm-O2-static": {
//	      "problems": [
//	        {"kind": "cfa", "function": "asm_regcfa_call",
//	         "row": "000000000040183e  sp+16     u         u",
//	         "reason": "gas 2.40 keeps sp+16 for a CFA on rbx"}
//	      ]
//	    },
//	    "s390x/prog": {"unsupported": "is not one sframesim unwinds", "reason": "..."}
//	  }
//	}
//
// An expected problem names a problem kind as verify reports it (cfa, ra,
// fp, unwind-error, too-short, limited, unterminated, ended-early), the function whose
// FRE row gave it and that row as objdump --sframe prints it. An empty
// function or row matches any. A C++ function may be named mangled, as in
// the symbol table ("_ZN3foo3barEv"), or demangled, as reports print it
// ("foo::bar()"). An unsupported binary is one verify cannot
// run; the entry gives a piece of verify's error message and the reason.
type Expectations struct {
	Comment  string             `json:"comment,omitempty"`
	Binaries map[string]*Expect `json:"binaries"`
	// SHA256 is the hex SHA-256 of the file's bytes as read ("" when not
	// read from a file): shard reports judged against different files do
	// not merge.
	SHA256 string `json:"-"`
}

// Expect is one binary's expected outcome: unsupported, or known problems.
type Expect struct {
	// Unsupported, when set, says verify cannot run the binary: its error
	// contains this text.
	Unsupported string `json:"unsupported,omitempty"`
	// Malformed, when set, says the binary's SFrame section breaks rules
	// of the format, checked anyway (corpus --check-malformed): one of
	// the rules it breaks (verify.Report.Malformed) contains this text.
	Malformed string            `json:"malformed,omitempty"`
	Reason    string            `json:"reason,omitempty"` // for Unsupported or Malformed
	Problems  []ExpectedProblem `json:"problems,omitempty"`
}

// ExpectedProblem is one known problem.
type ExpectedProblem struct {
	Kind     string `json:"kind"`
	Function string `json:"function,omitempty"`
	Row      string `json:"row,omitempty"`
	Reason   string `json:"reason"`
}

// problemKinds are the outcome kinds a report lists as problems.
var problemKinds = func() map[string]bool {
	m := map[string]bool{}
	for k := verify.Kind(0); !strings.HasPrefix(k.String(), "Kind("); k++ {
		if k.Problem() {
			m[k.String()] = true
		}
	}
	return m
}()

// ReadExpectations reads an expectations file. A missing file is an error
// wrapping fs.ErrNotExist.
func ReadExpectations(path string) (*Expectations, error) {
	data, err := hostfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Expectations
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
	}
	if e.Binaries == nil {
		e.Binaries = map[string]*Expect{}
	}
	e.SHA256 = sha256Hex(data)
	for _, key := range e.keys() {
		if err := e.Binaries[key].check(); err != nil {
			return nil, fmt.Errorf("%s: binary %s: %w", path, key, err)
		}
	}
	return &e, nil
}

// NewExpectations returns an empty baseline: every binary must verify
// clean.
func NewExpectations() *Expectations {
	return &Expectations{Binaries: map[string]*Expect{}}
}

// ReadOrNew reads an expectations file, or returns an empty one if there
// is no file at path yet.
func ReadOrNew(path string) (*Expectations, error) {
	e, err := ReadExpectations(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewExpectations(), nil
	}
	return e, err
}

func (x *Expect) check() error {
	switch {
	case x == nil || (x.Unsupported == "" && x.Malformed == "" && len(x.Problems) == 0):
		return errors.New(`lists neither "unsupported" nor "malformed" nor "problems" (a binary that is not listed must verify clean)`)
	case x.Unsupported != "" && (len(x.Problems) > 0 || x.Malformed != ""):
		return errors.New(`lists "unsupported" with "problems" or "malformed"`)
	}
	for i, p := range x.Problems {
		if !problemKinds[p.Kind] {
			return fmt.Errorf("problem %d: kind %q is not one of %s", i, p.Kind, strings.Join(sortedKeys(problemKinds), ", "))
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (e *Expectations) keys() []string { return sortedKeys(e.Binaries) }

// Merge adds the entries of other for binaries e does not list: e (an
// expectations file) overrides other (a manifest's inline expectations).
func (e *Expectations) Merge(other *Expectations) {
	if other == nil {
		return
	}
	for key, x := range other.Binaries {
		if _, ok := e.Binaries[key]; !ok {
			e.Binaries[key] = x
		}
	}
}

// Lookup returns the expectation of a binary, nil if it must be clean.
func (e *Expectations) Lookup(key string) *Expect {
	if e == nil {
		return nil
	}
	return e.Binaries[key]
}

// Stale returns the keys of listed binaries that are not in jobs: the
// binary was removed or renamed, and the baseline says nothing true.
func (e *Expectations) Stale(jobs []Job) []string {
	have := map[string]bool{}
	for _, j := range jobs {
		have[j.Key] = true
	}
	var stale []string
	for _, key := range e.keys() {
		if !have[key] {
			stale = append(stale, key)
		}
	}
	return stale
}

// Write writes the baseline atomically, with sorted keys and 2-space
// indent.
func (e *Expectations) Write(path string) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}

// Unexplained counts the expected problems, and the expected malformed
// sections, without a reason.
func (e *Expectations) Unexplained() int {
	n := 0
	for _, x := range e.Binaries {
		if x.Malformed != "" && x.Reason == "" {
			n++
		}
		for _, p := range x.Problems {
			if p.Reason == "" {
				n++
			}
		}
	}
	return n
}

// matches reports whether an expected problem covers an observed group.
func (p *ExpectedProblem) matches(g *Group) bool {
	return p.Kind == g.Kind && p.namesFunction(g) &&
		(p.Row == "" || normRow(p.Row) == normRow(g.Row))
}

// namesFunction reports whether the expected problem's function is the
// group's, mangled or demangled (or any).
func (p *ExpectedProblem) namesFunction(g *Group) bool {
	return p.Function == "" || p.Function == g.Function || p.Function == symbols.Demangle(g.Function)
}

// normRow compares rows written by hand with any spacing.
func normRow(s string) string { return strings.Join(strings.Fields(s), " ") }

// Update makes the baseline say what results observed, for each result
// that can be a baseline (a complete run, or a binary that is unsupported
// as expected: those entries are written by hand, as only a person can say
// which errors are acceptable).
// Expected problems that still match are kept as they are (with their
// reasons; hand-written ones that match any row stay so); ones that no
// longer occur are dropped; new ones are added with the reason of an old
// one of the same kind and function (the row moved), else none.
// Binaries without a result keep their entries. Stale entries (see
// [Expectations.Stale]) of all are dropped. It returns one line per change,
// and the results it could not record.
func (e *Expectations) Update(results []Result, all []Job) (changes, refused []string) {
	for _, key := range e.Stale(all) {
		delete(e.Binaries, key)
		changes = append(changes, fmt.Sprintf("%s: dropped (no such binary)", key))
	}
	for i := range results {
		r := &results[i]
		if why := r.unbaselinable(); why != "" {
			refused = append(refused, fmt.Sprintf("%s: %s", r.Key, why))
			continue
		}
		old := e.Binaries[r.Key]
		next := r.observed(old)
		if next == nil {
			delete(e.Binaries, r.Key)
		} else {
			e.Binaries[r.Key] = next
		}
		if c := describeChange(old, next); c != "" {
			changes = append(changes, r.Key+": "+c)
		}
	}
	return changes, refused
}

// unbaselinable says why a result cannot become the baseline.
func (r *Result) unbaselinable() string {
	switch {
	case r.Status == StatusError:
		return "could not run: " + r.Error
	case r.Status == StatusInterrupted:
		return "interrupted"
	case r.Incomplete != "":
		return r.Incomplete
	}
	return ""
}

// observed is the expectation that describes r exactly, nil for a clean
// run; old supplies the reasons.
func (r *Result) observed(old *Expect) *Expect {
	if r.Status == StatusUnsupported {
		return old
	}
	malformed := ""
	if r.Report != nil && len(r.Report.Malformed) > 0 {
		malformed = r.Report.Malformed[0]
		if old != nil && old.Malformed != "" && anyContains(r.Report.Malformed, old.Malformed) {
			malformed = old.Malformed
		}
	}
	if len(r.Groups) == 0 && malformed == "" {
		return nil
	}
	x := &Expect{Malformed: malformed}
	if malformed != "" && old != nil && old.Malformed != "" {
		x.Reason = old.Reason
	}
	covered := make([]bool, len(r.Groups))
	if old != nil {
		for _, p := range old.Problems {
			used := false
			for i := range r.Groups {
				if p.matches(&r.Groups[i]) {
					covered[i], used = true, true
				}
			}
			if used {
				x.Problems = append(x.Problems, p)
			}
		}
	}
	for i, g := range r.Groups {
		if !covered[i] {
			x.Problems = append(x.Problems, ExpectedProblem{Kind: g.Kind, Function: g.Function, Row: g.Row, Reason: oldReason(old, &g)})
		}
	}
	return x
}

// oldReason is the reason of an old expected problem of the same kind in
// the same function whose row no longer matches (the binary was rebuilt,
// or loads elsewhere): the same bug at a new address keeps its reason.
func oldReason(old *Expect, g *Group) string {
	if old == nil {
		return ""
	}
	for _, p := range old.Problems {
		if p.Kind == g.Kind && p.namesFunction(g) && p.Reason != "" {
			return p.Reason
		}
	}
	return ""
}

func describeChange(old, next *Expect) string {
	describe := func(x *Expect) string {
		switch {
		case x == nil:
			return "clean"
		case x.Unsupported != "":
			return "unsupported"
		}
		known := "1 known problem"
		if len(x.Problems) != 1 {
			known = fmt.Sprintf("%d known problems", len(x.Problems))
		}
		if x.Malformed != "" {
			known = "malformed, " + known
		}
		return known
	}
	a, b := describe(old), describe(next)
	if a != b {
		return a + " → " + b
	}
	if old == nil || next == nil || len(old.Problems) != len(next.Problems) {
		return ""
	}
	for i := range old.Problems {
		if old.Problems[i] != next.Problems[i] {
			return "known problems changed"
		}
	}
	return ""
}
