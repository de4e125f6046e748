//go:build cgo

package verify

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/internal/sframetest"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestMalformedAgree: sections corrupted at random (FDE starts moved onto
// others, sizes up to 4 GiB, empty FDEs: overlaps and repeated starts,
// which break the format's rules but decode) are checked anyway
// (Options.CheckMalformed) without a panic, never OK, and batched checking
// agrees with --exact however the FDEs overlap: the merge intervals follow
// the unwinder's lookups.
func TestMalformedAgree(t *testing.T) {
	src := filepath.Join(testcorpus.Dir(t), "v3/x86-64/recurse-O2-static")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 4; i++ {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		err := sframetest.Rewrite(src, out, func(sec *sframe.Section) error {
			for k := 0; k < 3; k++ {
				f := &sec.FDEs[r.IntN(len(sec.FDEs))]
				switch r.IntN(4) {
				case 0:
					f.Size = r.Uint32()
				case 1:
					f.Start = sec.FDEs[r.IntN(len(sec.FDEs))].Start + uint64(r.IntN(64))
				case 2:
					f.Size = 0
				case 3:
					f.Start -= uint64(r.IntN(4096))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			run := func(batch int) *Report {
				rep, err := Run(out, Options{Batch: batch, CheckMalformed: true})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep
			}
			rep := run(0)
			if rep.OK() || rep.Verdict() != "MALFORMED" || len(rep.Malformed) == 0 || !rep.Complete {
				t.Fatalf("verdict %s, malformed %q, stop %s", rep.Verdict(), rep.Malformed, rep.Stop)
			}
			if exact := run(1); !reflect.DeepEqual(exact, rep) {
				t.Errorf("exact run differs: %d failures, %d problems; batched %d, %d", exact.Failures, len(exact.Problems), rep.Failures, len(rep.Problems))
			}
		})
	}
}
