//go:build cgo

package verify

import (
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// trace runs a corpus program, checking every instruction against sec, and
// returns per instruction the topmost row and the failures found.
type step struct {
	row      [2]int // topmost (FDE, FRE), or {-1, -1}
	pc       uint64
	failRow  [2]int // row of the frame a failure was attributed to
	failures bool
	depth    int
}

func trace(t *testing.T, path string, sec *sframe.Section) []step {
	t.Helper()
	tg, err := OpenSection(path, sec, linux.Config{Args: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	p, s, checker := tg.Process, tg.Session, tg.Checker
	var steps []step
	s.Observe(func(r shadow.Record) bool {
		st := step{row: [2]int{-1, -1}, pc: r.PC}
		if i, err := sec.FindFDE(r.PC); err == nil {
			if j, err := sec.FindFRE(&sec.FDEs[i], r.PC); err == nil {
				st.row = [2]int{i, j}
			}
		}
		res := checker.Check(r, s.Shadow.Frames())
		if res.Kind.Failure() {
			st.failures, st.depth = true, res.Depth
			st.failRow = [2]int{res.Frame.Row.FDE, res.Frame.Row.FRE}
		}
		steps = append(steps, st)
		return true
	})
	if exit, err := p.Run(); err != nil || exit.Reason != linux.StopExited {
		t.Fatalf("run: %v %v", exit, err)
	}
	return steps
}

// TestFaultInjection mutates rows of fully covered corpus programs one at a
// time (CFA offset, saved FP and RA offsets, CFA base register) and checks
// that verification catches each exactly: a CFA change is reported at every
// instruction that ran with that row on top, and every reported failure is
// attributed to the mutated row.
func TestFaultInjection(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, prog := range []string{"v3/x86-64/nolibc-O2", "v3/aarch64/nolibc-O2", "v3/aarch64/nolibc-O2-pac-standard"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, prog)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			base := trace(t, path, f.Section)
			ran := map[[2]int]int{}
			for _, st := range base {
				if st.failures {
					t.Fatalf("baseline fails at %#x", st.pc)
				}
				if st.row[0] >= 0 {
					ran[st.row]++
				}
			}
			mutations := 0
			for row := range ran {
				fre := &f.Section.FDEs[row[0]].FREs[row[1]]
				if fre.RAUndefined() {
					continue
				}
				for _, m := range []sframe.Mutation{
					{FDE: row[0], FRE: row[1], Field: sframe.MutateCFA, Delta: 16},
					{FDE: row[0], FRE: row[1], Field: sframe.MutateFP, Delta: 8},
					{FDE: row[0], FRE: row[1], Field: sframe.MutateRA, Delta: 8},
					{FDE: row[0], FRE: row[1], Field: sframe.MutateBase},
				} {
					data, err := f.Section.Encode()
					if err != nil {
						t.Fatal(err)
					}
					sec, err := sframe.Decode(data, f.Section.Addr)
					if err != nil {
						t.Fatal(err)
					}
					if sec.Apply(m) != nil {
						continue // the row has no such field
					}
					enc, err := sec.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if sec, err = sframe.Decode(enc, f.Section.Addr); err != nil {
						t.Fatal(err)
					}
					mutations++
					steps := trace(t, path, sec)
					caught := 0
					for i, st := range steps {
						if !st.failures {
							if m.Field == sframe.MutateCFA && base[i].row == row {
								t.Errorf("%v: instruction %d at %#x ran with the row on top, not reported", m, i, st.pc)
							}
							continue
						}
						if st.failRow != row {
							t.Errorf("%v: failure at %#x attributed to row %v (depth %d)", m, st.pc, st.failRow, st.depth)
						}
						if st.depth == 0 {
							caught++
						}
					}
					if caught == 0 && m.Field == sframe.MutateCFA {
						t.Errorf("%v: not caught", m)
					}
				}
			}
			t.Logf("%d rows ran, %d mutations", len(ran), mutations)
			if mutations < 20 {
				t.Errorf("only %d mutations", mutations)
			}
		})
	}
}
