package sframe

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// largestCorpusSections returns, per SFrame version, the corpus section
// with the most FREs and the binary it comes from.
func largestCorpusSections(b *testing.B) map[Version]*RawSection {
	dir := testcorpus.Dir(b)
	best := map[Version]*RawSection{}
	most := map[Version]uint32{}
	names := map[Version]string{}
	for _, e := range testcorpus.Entries(b) {
		f, err := Open(filepath.Join(dir, e.Path))
		if err != nil {
			continue
		}
		v := f.Section.Header.Version
		if n := f.Section.Header.NumFREs; n > most[v] {
			best[v], most[v], names[v] = f.Raw, n, e.Path
		}
		f.Close()
	}
	if len(best) != 3 {
		b.Fatalf("corpus lacks a version: %v", names)
	}
	for v, n := range names {
		b.Logf("V%d: %s (%d FREs)", v, n, most[v])
	}
	return best
}

// BenchmarkLookup measures PC → FDE → FRE → rules on uniformly random PCs
// inside the functions of the largest corpus section of each version (the
// 3000-function "many" program).
func BenchmarkLookup(b *testing.B) {
	for v, raw := range largestCorpusSections(b) {
		b.Run(fmt.Sprintf("V%d", v), func(b *testing.B) {
			s, err := Decode(raw.Data, raw.Addr)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			pcs := make([]uint64, 1<<16)
			for i := range pcs {
				f := &s.FDEs[rng.IntN(len(s.FDEs))]
				pcs[i] = f.Start + rng.Uint64N(uint64(max(f.Size, 1)))
			}
			var sink int
			for i := 0; b.Loop(); i++ {
				row, err := s.Lookup(pcs[i&(len(pcs)-1)])
				if err == nil {
					sink += row.FRE
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlookups/s")
			_ = sink
		})
	}
}

// BenchmarkDecode measures decoding the largest corpus section of each
// version.
func BenchmarkDecode(b *testing.B) {
	for v, raw := range largestCorpusSections(b) {
		b.Run(fmt.Sprintf("V%d", v), func(b *testing.B) {
			b.SetBytes(int64(len(raw.Data)))
			for b.Loop() {
				if _, err := Decode(raw.Data, raw.Addr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
