//go:build cgo

package verify

import (
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
)

// TestMergeBounds: within a mergeable interval of Target.mergeBounds,
// everything a merged run's result rests on besides the registers and
// memory is the same at every PC: the unwinder's FDE and FRE row (or no
// FDE), the row's extent, the symbol and the object — checked at every PC
// of every interval (of a static program, and of a dynamic one with its
// libraries mapped); and PCMASK FDEs (PLT rows) are never mergeable.
func TestMergeBounds(t *testing.T) {
	for _, rel := range []string{"v3/x86-64/many-O2-static", "v3/aarch64/cold-O2-dynamic", "v2/x86-64/recurse-O2-dynamic"} {
		t.Run(rel, func(t *testing.T) {
			e := testcorpus.Lookup(t, rel)
			path := filepath.Join(testcorpus.Dir(t), rel)
			tg, err := Open(path, linux.Config{Args: []string{path}, Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if _, err := tg.Process.Run(); err != nil {
				t.Fatal(err)
			}
			bounds, mergeable := tg.mergeBounds()
			type key struct {
				fde, fre int
				err      bool
				lo, hi   uint64
				ok       bool
				sym      string
				obj      *linux.Object
			}
			at := func(pc uint64) key {
				var k key
				sec, row, err := tg.Unwinder.Lookup(pc)
				k.err = err != nil
				if err == nil {
					k.fde, k.fre = row.FDE, row.FRE
					k.lo, k.hi, k.ok = sec.RowExtent(pc)
				}
				k.sym, _, _ = tg.Symbols.Lookup(pc)
				k.obj = tg.Process.ObjectAt(pc)
				return k
			}
			pcs, masked := 0, 0
			for i := 0; i+1 < len(bounds); i++ {
				if !mergeable[i] {
					masked++
					continue
				}
				lo, hi := bounds[i], min(bounds[i+1], bounds[i]+1<<16)
				want := at(lo)
				for pc := lo + 1; pc < hi; pc++ {
					if got := at(pc); got != want {
						t.Fatalf("interval [%#x, %#x): at %#x %+v, at %#x %+v", bounds[i], bounds[i+1], lo, want, pc, got)
					}
					pcs++
				}
			}
			plt := 0
			for _, sec := range tg.Unwinder.Sections() {
				for j := range sec.FDEs {
					f := &sec.FDEs[j]
					if f.PCType() != sframe.PCMask {
						continue
					}
					for pc := f.Start; pc < f.Start+uint64(f.Size); pc++ {
						k, _ := slices.BinarySearch(bounds, pc+1)
						if k--; k >= 0 && mergeable[k] {
							t.Fatalf("%#x in the PCMASK FDE at %#x is in a mergeable interval [%#x, %#x)", pc, f.Start, bounds[k], bounds[k+1])
						}
						plt++
					}
				}
			}
			if e.Link == "dynamic" && e.Arch == "x86-64" && plt == 0 {
				t.Error("no PCMASK FDE checked")
			}
			t.Logf("%d intervals, %d not mergeable, %d PCs checked", len(bounds)-1, masked, pcs)
		})
	}
}
