//go:build cgo

package verify

import (
	"debug/elf"
	"path/filepath"
	"reflect"
	"slices"
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

// TestFaultInjectionSignalHandler mutates, one at a time, the rows of a
// signal handler of the corpus's signals program (V3, both arches, static:
// every frame of the program's own code has SFrame data), which runs on
// top of the kernel's signal frame, calls a recursive function and raises
// a nested signal. Each CFA change must be reported at exactly the PCs
// that ran with the row on top, and every failure, at any depth, must be
// attributed to the mutated row.
func TestFaultInjectionSignalHandler(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, prog := range []string{"v3/x86-64/signals-O2-static", "v3/aarch64/signals-O2-static"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, prog)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fde := functionFDE(t, path, f.Section, "on_usr1")
			base := trace(t, path, f.Section)
			ran := map[int]map[uint64]bool{} // FRE of the handler -> PCs run with it on top
			for _, st := range base {
				if st.failures {
					t.Fatalf("baseline fails at %#x", st.pc)
				}
				if st.row[0] == fde {
					if ran[st.row[1]] == nil {
						ran[st.row[1]] = map[uint64]bool{}
					}
					ran[st.row[1]][st.pc] = true
				}
			}
			if len(ran) < 2 {
				t.Fatalf("only %d rows of on_usr1 ran", len(ran))
			}
			mutations := 0
			for fre, pcs := range ran {
				row := [2]int{fde, fre}
				for _, m := range []sframe.Mutation{
					{FDE: fde, FRE: fre, Field: sframe.MutateCFA, Delta: 16},
					{FDE: fde, FRE: fre, Field: sframe.MutateCFA, Delta: -8},
					{FDE: fde, FRE: fre, Field: sframe.MutateFP, Delta: 8},
					{FDE: fde, FRE: fre, Field: sframe.MutateRA, Delta: 8},
					{FDE: fde, FRE: fre, Field: sframe.MutateBase},
				} {
					sec := mutated(t, f.Section, m)
					if sec == nil {
						continue // the row has no such field
					}
					mutations++
					caught := map[uint64]bool{}
					for _, st := range trace(t, path, sec) {
						if !st.failures {
							continue
						}
						if st.failRow != row {
							t.Errorf("%v: failure at %#x attributed to row %v (depth %d)", m, st.pc, st.failRow, st.depth)
						}
						if st.depth == 0 {
							caught[st.pc] = true
						}
					}
					if m.Field == sframe.MutateCFA && !reflect.DeepEqual(caught, pcs) {
						t.Errorf("%v: caught at %d PCs %v, want the %d PCs that ran with the row on top %v", m, len(caught), sortedPCs(caught), len(pcs), sortedPCs(pcs))
					}
					if len(caught) == 0 && m.Field != sframe.MutateCFA {
						t.Logf("%v: not seen at the row itself (the field is read only in outer frames)", m)
					}
				}
			}
			t.Logf("%d rows of on_usr1 ran, %d mutations", len(ran), mutations)
			if mutations < 2*len(ran) {
				t.Errorf("only %d mutations", mutations)
			}
		})
	}
}

// functionFDE is the index of the FDE of sec that covers function name
// of the ELF file path.
func functionFDE(tb testing.TB, path string, sec *sframe.Section, name string) int {
	tb.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != name || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		i, err := sec.FindFDE(s.Value)
		if err != nil {
			tb.Fatalf("%s at %#x: %v", name, s.Value, err)
		}
		return i
	}
	tb.Fatalf("no symbol %s", name)
	return -1
}

// mutated is sec with m applied (through an encode/decode round trip), or
// nil if the row has no such field.
func mutated(t *testing.T, sec *sframe.Section, m sframe.Mutation) *sframe.Section {
	t.Helper()
	data, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	c, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if c.Apply(m) != nil {
		return nil
	}
	enc, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if c, err = sframe.Decode(enc, sec.Addr); err != nil {
		t.Fatal(err)
	}
	return c
}

func sortedPCs(m map[uint64]bool) []uint64 {
	pcs := make([]uint64, 0, len(m))
	for pc := range m {
		pcs = append(pcs, pc)
	}
	slices.Sort(pcs)
	return pcs
}
