//go:build cgo

package verify

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// runVerdicts is what a run found at the PCs of the program's own code
// (PCs with an FDE of its section), at file addresses: at each PC it
// executed, whether the topmost frame's unwind (the row at that PC) was
// right and the kinds of the problems found in it; and at the PCs of
// deeper frames (return addresses), the kinds of the problems found there.
type runVerdicts struct {
	right map[uint64]bool
	wrong map[uint64][]string // topmost
	deep  map[uint64][]string // frames below the topmost, by frame PC
}

// runCorpusProgram runs a corpus program with its SFrame section sec (which
// it relocates) and a checker at every instruction, as verify does.
func runCorpusProgram(t *testing.T, e *testcorpus.Entry, path string, sec *sframe.Section) runVerdicts {
	t.Helper()
	tg, err := OpenSection(path, sec, linux.Config{Args: []string{path}, Sysroot: testcorpus.Sysroot(t, e), Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Batch(0); err != nil {
		t.Fatal(err)
	}
	base, sec, s := tg.Process.Base, tg.Section, tg.Session
	v := runVerdicts{right: map[uint64]bool{}, wrong: map[uint64][]string{}, deep: map[uint64][]string{}}
	add := func(m map[uint64][]string, pc uint64, kind string) {
		if !slices.Contains(m[pc], kind) {
			m[pc] = append(m[pc], kind)
		}
	}
	s.Observe(func(r shadow.Record) bool {
		res := tg.Checker.CheckStack(r, s.Shadow)
		own := res.TopSection == sec
		switch {
		case res.Kind.Problem() && res.Depth > 0:
			if res.Frame.Section == sec {
				add(v.deep, res.Frame.PC-base, res.Kind.String())
			}
			if own {
				v.right[r.PC-base] = true // the topmost frame was right
			}
		case res.Kind.Problem() && own:
			add(v.wrong, r.PC-base, res.Kind.String())
		case own:
			v.right[r.PC-base] = true
		}
		return true
	})
	exit, _, err := s.RunUntil(nil, 0)
	if err != nil || exit == nil || exit.Reason != linux.StopExited {
		t.Fatalf("run: %v %v", exit, err)
	}
	return v
}

// TestCheckAgreesWithRun compares check's verdict with verify's at every
// PC of the program's own code a corpus run executed: where the run found
// the topmost frame's row wrong, check reports a problem of the same kind
// there; where the run found it right (and never wrong), check proves it
// right. Problems the run finds in deeper frames are found by check at
// the frame's PC too, or as the noreturn call whose return address it is.
// Check finds every problem the run finds (with the code analysis: GCC
// 16's DRAP epilogue FP rows are wrong in the CFI too); the one exception,
// a wrong rule that gives the right value at some PCs (coincide), is
// logged with its reason. In -short mode, the static and nolibc
// binaries of the V3 toolchain only.
func TestCheckAgreesWithRun(t *testing.T) {
	dir := testcorpus.Dir(t)
	var mu sync.Mutex
	var total agreeStats
	binaries := 0
	expected := map[string]int{}
	for _, e := range testcorpus.Entries(t) {
		if testing.Short() && (e.SFrameVersion != 3 || e.Link == "dynamic") {
			continue
		}
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, e.Path)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st := agree(t, &e, path, f, f.Section.Data)
			mu.Lock()
			defer mu.Unlock()
			binaries++
			total.pcs += st.pcs
			total.wrong += st.wrong
			total.deep += st.deep
			for _, why := range st.expected {
				expected[why]++
				t.Logf("expected for now: %s", why)
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d binaries, %d executed PCs of their own code compared (%d where the run found the topmost row wrong); %d frame PCs of deeper problems",
			binaries, total.pcs, total.wrong, total.deep)
		if binaries > 0 && (total.pcs == 0 || !testing.Short() && (total.wrong == 0 || total.deep == 0)) {
			t.Errorf("nothing to compare")
		}
		for why, n := range expected {
			t.Logf("expected for now, in %d binaries: %s", n, why)
		}
	})
}

// TestCheckAgreesMutated injects faults (CFA, FP, RA) into rows a run
// executes and compares again: the run and check find each at the same
// PCs.
func TestCheckAgreesMutated(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, prog := range []string{"v3/x86-64/nolibc-O2", "v3/aarch64/nolibc-O2"} {
		t.Run(prog, func(t *testing.T) {
			e := testcorpus.Lookup(t, prog)
			path := filepath.Join(dir, prog)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ran := map[[2]int]bool{}
			for _, s := range trace(t, path, mustDecode(t, f.Section.Data, f.Section.Addr)) {
				if s.row[0] >= 0 && !f.Section.FDEs[s.row[0]].FREs[s.row[1]].RAUndefined() {
					ran[s.row] = true
				}
			}
			var rows [][2]int
			for r := range ran {
				rows = append(rows, r)
			}
			slices.SortFunc(rows, func(a, b [2]int) int { return cmp.Compare(a[0]*1000+a[1], b[0]*1000+b[1]) })
			faults := 0
			for _, r := range rows[:min(len(rows), 4)] {
				for _, m := range []sframe.Mutation{
					{FDE: r[0], FRE: r[1], Field: sframe.MutateCFA, Delta: 16},
					{FDE: r[0], FRE: r[1], Field: sframe.MutateFP, Delta: 8},
					{FDE: r[0], FRE: r[1], Field: sframe.MutateRA, Delta: 8},
				} {
					sec := mustDecode(t, f.Section.Data, f.Section.Addr)
					if sec.Apply(m) != nil {
						continue // the row has no such field
					}
					data, err := sec.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if st := agree(t, &e, path, f, data); st.wrong+st.deep > 0 {
						faults++
					}
				}
			}
			if faults < 4 {
				t.Errorf("%d faults seen by the run", faults)
			}
		})
	}
}

// agreeStats counts what agree compared.
type agreeStats struct {
	pcs, wrong, deep int
	expected         []string // the reasons of the exceptions met
}

// agree runs the program at path with the SFrame section data (at f's
// section address) and compares the run's verdicts with check's.
func agree(t *testing.T, e *testcorpus.Entry, path string, f *sframe.File, data []byte) agreeStats {
	t.Helper()
	sec := mustDecode(t, data, f.Section.Addr)
	got := map[uint64]check.PCResult{}
	rep, err := check.Section(e.Path, f.ELF, sec, check.Options{EachPC: func(r check.PCResult) { got[r.PC] = r }})
	if err != nil {
		t.Fatal(err)
	}
	// The return addresses of noreturn calls ending functions.
	callEnd := map[uint64]bool{}
	for _, p := range rep.Problems {
		if p.Kind == check.KindCallAtEnd.String() {
			callEnd[sec.FDEs[p.FDE].End()] = true
		}
	}
	sym := func(pc uint64) string {
		if i, err := sec.FindFDE(pc); err == nil {
			return fmt.Sprintf("func idx [%d]+%#x", i, pc-sec.FDEs[i].Start)
		}
		return fmt.Sprintf("%#x", pc)
	}
	run := runCorpusProgram(t, e, path, mustDecode(t, data, f.Section.Addr))
	var exp []string
	for pc, kinds := range run.wrong {
		c, ok := got[pc]
		if !ok {
			t.Errorf("%#x %s: executed, but check has no instruction there", pc, sym(pc))
			continue
		}
		for _, k := range kinds {
			if !agreeKind(k, c) {
				t.Errorf("%#x %s: the run found %s, check %v %s", pc, sym(pc), k, c.Kinds, c.Unknown)
			}
		}
	}
	// The kinds of problems the run found under each row.
	rowWrong := map[[2]int][]string{}
	for pc, kinds := range run.wrong {
		if c, ok := got[pc]; ok {
			rowWrong[[2]int{c.FDE, c.FRE}] = append(rowWrong[[2]int{c.FDE, c.FRE}], kinds...)
		}
	}
	for pc := range run.right {
		if len(run.wrong[pc]) > 0 {
			continue
		}
		c, ok := got[pc]
		switch {
		case !ok:
			t.Errorf("%#x %s: executed, but check has no instruction there", pc, sym(pc))
		case c.Unknown != "":
			t.Errorf("%#x %s: right in the run, unknown to check: %s", pc, sym(pc), c.Unknown)
		case len(c.Kinds) > 0:
			// The run compares values, check rules: a wrong rule
			// can give the right value at some PCs (right after
			// mov %rsp,%rbx, rbx+16 = rsp+16). Such a row must be
			// found wrong by the run at another PC.
			same := true
			for _, k := range c.Kinds {
				same = same && slices.Contains(rowWrong[[2]int{c.FDE, c.FRE}], k.String())
			}
			if !same {
				t.Errorf("%#x %s: right in the run, check %v", pc, sym(pc), c.Kinds)
				continue
			}
			exp = append(exp, coincide)
		}
	}
	for pc, kinds := range run.deep {
		c := got[pc]
		for _, k := range kinds {
			switch {
			case callEnd[pc] && (k == "cfa" || k == "ended-early" || k == "unwind-error"):
			case k == "limited" && c.Limited:
			case k != "limited" && agreeKind(k, c):
			default:
				t.Errorf("frame PC %#x %s: the run found %s, check %v %s", pc, sym(pc), k, c.Kinds, c.Unknown)
			}
		}
	}
	sort.Strings(exp)
	return agreeStats{pcs: len(run.right) + len(run.wrong), wrong: len(run.wrong), deep: len(run.deep), expected: slices.Compact(exp)}
}

// coincide explains a PC check finds wrong and the run right.
const coincide = "a wrong rule gives the right value at some PCs of its row (gas 2.40 keeps sp+16 where the CFA is rbx+16 / x19+16: equal until the stack is realigned); the run finds the same row wrong at the PCs after, check at all of them"

// agreeKind reports whether check's verdict c has the problem the run
// calls kind: the same kind for the CFA, RA, FP and an unterminated
// stack, any problem for the others.
func agreeKind(kind string, c check.PCResult) bool {
	switch kind {
	case "cfa", "ra", "fp", "unterminated":
		return slices.ContainsFunc(c.Kinds, func(k check.Kind) bool { return k.String() == kind })
	case "limited":
		return c.Limited
	}
	return len(c.Kinds) > 0
}
