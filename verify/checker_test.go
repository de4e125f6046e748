//go:build cgo

package verify

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// TestCheckerEqualsCheck: the memoizing Checker gives exactly the result of
// a full unwind at every instruction, on clean and fault-injected sections,
// checking instruction by instruction and in batches (memory replayed).
func TestCheckerEqualsCheck(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, prog := range []string{"v3/x86-64/nolibc-O0", "v3/aarch64/nolibc-O2-pac-standard", "v2/x86-64/setjmp-O2-static", "v3/x86-64/recurse-O2-static"} {
		for _, mutate := range []bool{false, true} {
			for _, batch := range []int{1, DefaultBatch} {
				t.Run(prog, func(t *testing.T) {
					path := filepath.Join(dir, prog)
					f, err := sframe.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					sec := f.Section
					if mutate {
						// The second row of the first function with two.
						for i := range sec.FDEs {
							if len(sec.FDEs[i].FREs) > 1 && sec.Apply(sframe.Mutation{FDE: i, FRE: 1, Field: sframe.MutateCFA, Delta: 8}) == nil {
								break
							}
						}
					}
					tg, err := OpenSection(path, sec, linux.Config{Args: []string{"x"}})
					if err != nil {
						t.Fatal(err)
					}
					defer tg.Close()
					if err := tg.Batch(batch); err != nil {
						t.Fatal(err)
					}
					p, s, u, c := tg.Process, tg.Session, tg.Unwinder, tg.Checker
					mem, regs := Memory{p.Engine}, EngineRegs(p.Engine)
					n := 0
					s.Observe(func(r shadow.Record) bool {
						want := Check(u, r, mem, s.Shadow.Frames(), regs)
						got := c.CheckStack(r, s.Shadow)
						if !reflect.DeepEqual(got, want) && n < 5 {
							n++
							t.Errorf("at %s: Checker %+v, Check %+v", s.Syms.Format(r.PC), got, want)
						}
						return true
					})
					if _, err := p.Run(); err != nil {
						t.Fatal(err)
					}
					if c.Reused == 0 || c.TailReused == 0 {
						t.Errorf("the memo was never used (%d results and %d tails reused, %d walks)", c.Reused, c.TailReused, c.Walked)
					}
					t.Logf("batch %d: %d results and %d tails reused, %d tails unwound in %d steps", batch, c.Reused, c.TailReused, c.Walked, c.Steps)
				})
			}
		}
	}
}
