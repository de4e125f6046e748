package check

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/codeflow"
	"github.com/sframesim/sframesim/sframe"
)

// changedPCs returns the instruction PCs of FDE i where the rules of
// sections a and b differ and b's are wrong: the code analysis of base
// (a check of a) does not accept b's rules there (where it knows the
// values: elsewhere the CFI decides, and a changed rule differs from it).
// A changed rule can be right too: fp+16 for sp+16 once the frame
// pointer is set up.
func changedPCs(t *testing.T, a, b *sframe.Section, base *checker, i int) []uint64 {
	var pcs []uint64
	for k := range base.cs.fdes[i].insns {
		in := &base.cs.fdes[i].insns[k]
		pc := in.Addr
		ra, erra := a.Lookup(pc)
		rb, errb := b.Lookup(pc)
		ra.FRE, rb.FRE = 0, 0
		if (erra == nil) == (errb == nil) && ra == rb {
			continue
		}
		if errb == nil && base.cs.fdes[i].why == "" && !rb.Outermost && accepts(in, &rb) {
			continue // the changed rules are right here too
		}
		pcs = append(pcs, pc)
	}
	return pcs
}

// accepts reports whether the code analysis knows every value at in and
// accepts the row's rules for them.
func accepts(in *codeflow.Insn, r *sframe.Row) bool {
	return in.KnownValue(codeflow.CFA) && in.Accepts(codeflow.CFA, r.CFA, false) &&
		in.KnownValue(codeflow.RA) && in.Accepts(codeflow.RA, r.RA, r.MangledRA) &&
		in.KnownValue(codeflow.FP) && in.Accepts(codeflow.FP, r.FP, false)
}

// TestMutate injects a fault into every field kind of every row of the
// functions a run of the program never executes (verify tells which: a
// run finds faults in the others itself) in several binaries
// (sframe.Mutation, as `sframesim mutate` does: the section re-encoded and
// decoded again), and checks that check reports it at exactly the PCs
// whose rules it made wrong.
func TestMutate(t *testing.T) {
	// Binaries with functions their runs never execute: destructors,
	// error paths, .cold parts, std::thread's and std::future's machinery.
	bins := []string{"v3/x86-64/stdthread-O2-static", "v3/aarch64/cold-O2-static", "v2/x86-64/except-O2-dynamic",
		"v2/aarch64/files-O2-static", "v1/x86-64/cold-O0-static", "v1/aarch64/except-O0-dynamic"}
	if testing.Short() {
		bins = bins[:2]
	}
	if RunPCs == nil {
		t.Skip("telling the functions a run never executes needs verify (cgo)")
	}
	for _, bin := range bins {
		t.Run(bin, func(t *testing.T) {
			ef, sec := openSection(t, bin)
			baseBad := map[uint64]bool{}
			base, err := Section(bin, ef, sec, Options{EachPC: func(r PCResult) {
				if len(r.Kinds) > 0 {
					baseBad[r.PC] = true
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			known := map[[2]int]bool{}
			for _, p := range base.Problems {
				known[[2]int{p.FDE, p.FRE}] = true
			}
			c := baseChecker(t, bin, ef, sec)
			// Only functions the program never runs: a run finds a
			// fault in the others (verify's TestCheckAgreesMutated).
			ran := RunPCs(t, bin)
			caught, tried, notRun := 0, 0, 0
			for i := range sec.FDEs {
				f := &sec.FDEs[i]
				if f.PCType() != sframe.PCInc || slices.ContainsFunc(c.cs.fdes[i].insns, func(in codeflow.Insn) bool { return ran[in.Addr] }) {
					continue
				}
				notRun++
				for j := range f.FREs {
					if known[[2]int{i, j}] {
						continue
					}
					for _, m := range []sframe.Mutation{
						{FDE: i, FRE: j, Field: sframe.MutateCFA, Delta: 8},
						{FDE: i, FRE: j, Field: sframe.MutateRA, Delta: -8},
						{FDE: i, FRE: j, Field: sframe.MutateFP, Delta: 8},
						{FDE: i, FRE: j, Field: sframe.MutateBase},
						{FDE: i, FRE: j, Field: sframe.MutateStart, Delta: 2},
					} {
						if m.Field == sframe.MutateStart && (j == 0 || j+1 < len(f.FREs) && f.FREs[j+1].Start <= f.FREs[j].Start+2) {
							continue // the first row moved leaves PCs without a row; rows must stay in order
						}
						mut, ok := mutated(t, sec, m)
						if !ok {
							continue // the row has no such field
						}
						want := changedPCs(t, sec, mut, c, i)
						if len(want) == 0 {
							continue // the change gives the same rules
						}
						tried++
						var bad []uint64
						rep, err := Section(bin, ef, mut, Options{SkipNotes: true, EachPC: func(r PCResult) {
							if len(r.Kinds) > 0 && !baseBad[r.PC] {
								bad = append(bad, r.PC)
							}
						}})
						if err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(bad) != fmt.Sprint(want) {
							t.Errorf("%v: EachPC: problems at %#x, want %#x", m, bad, want)
						}
						if err := rowsCaught(rep, base, mut, m, want); err != nil {
							t.Errorf("%v: %v", m, err)
						}
						if err := caughtAt(rep, base, m, want); err != nil {
							t.Errorf("%v: %v", m, err)
							continue
						}
						caught++
					}
				}
			}
			t.Logf("%d functions never run, %d of %d faults injected into them caught at the right PCs", notRun, caught, tried)
			if tried == 0 {
				t.Error("no fault injected")
			}
		})
	}
}

// mutated returns sec with m applied, re-encoded and decoded, or false
// when the row has no field m changes.
func mutated(t *testing.T, sec *sframe.Section, m sframe.Mutation) (*sframe.Section, bool) {
	cp, err := sframe.Decode(sec.Data, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Apply(m); err != nil {
		return nil, false
	}
	data, err := cp.Encode()
	if err != nil {
		t.Fatalf("%v: encode: %v", m, err)
	}
	out, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		t.Fatalf("%v: decode: %v", m, err)
	}
	return out, true
}

// caughtAt checks that rep has, beyond base's problems, problems in the
// FDE of m only, first at want[0] and at exactly the PCs want.
func caughtAt(rep, base *Report, m sframe.Mutation, want []uint64) error {
	old := map[string]bool{}
	for _, p := range base.Problems {
		old[fmt.Sprintf("%s %d %d %#x", p.Kind, p.FDE, p.FRE, p.PC)] = true
	}
	first := ^uint64(0)
	for _, p := range rep.Problems {
		if old[fmt.Sprintf("%s %d %d %#x", p.Kind, p.FDE, p.FRE, p.PC)] || p.Kind == "call-at-end" {
			continue // a changed row at a final call is found there too
		}
		if p.FDE != m.FDE {
			return fmt.Errorf("problem %s at %#x in FDE %d", p.Kind, p.PC, p.FDE)
		}
		first = min(first, p.PC)
	}
	if first != want[0] {
		return fmt.Errorf("first new problem at %#x, want %#x", first, want[0])
	}
	if n := rep.ProblemPCs - base.ProblemPCs; n != uint64(len(want)) {
		return fmt.Errorf("%d more PCs with problems, want the %d whose rules changed", n, len(want))
	}
	return nil
}

// rowsCaught checks the row verdicts of the mutated FDE: a row holding a
// changed PC has a problem, and the others keep base's verdict.
func rowsCaught(rep, base *Report, mut *sframe.Section, m sframe.Mutation, want []uint64) error {
	hit := map[int]bool{}
	for _, pc := range want {
		j, err := mut.FindFRE(&mut.FDEs[m.FDE], pc)
		if err != nil {
			return err
		}
		hit[j] = true
	}
	for j := range mut.FDEs[m.FDE].FREs {
		got, was := rep.Row(m.FDE, j), base.Row(m.FDE, j)
		switch {
		case hit[j] && got.Status() != "problem":
			return fmt.Errorf("row %d holds a changed PC, verdict %s", j, got.Status())
		case !hit[j] && m.Field != sframe.MutateStart && got.Status() != was.Status():
			return fmt.Errorf("row %d: verdict %s, %s before", j, got.Status(), was.Status())
		}
	}
	return nil
}

// baseChecker runs a check of sec and returns its checker, with the code
// analysis of every FDE.
func baseChecker(t *testing.T, name string, ef *elf.File, sec *sframe.Section) *checker {
	c := &checker{name: name, ef: ef, sec: sec, a: arch.ForABI(sec.Header.ABI), problems: map[problemKey]*Problem{},
		rep: &Report{Unknown: map[string]uint64{}, rows: make([][]RowVerdict, len(sec.FDEs))}}
	tab, err := cfi.Load(ef)
	if err != nil {
		t.Fatal(err)
	}
	c.cfi = tab
	c.loadCode()
	c.loadFuncs()
	order := make([]int, len(sec.FDEs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(sec.FDEs[x].Start, sec.FDEs[y].Start) })
	c.analyzeCode(order)
	return c
}
