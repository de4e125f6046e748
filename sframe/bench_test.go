package sframe

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/corpus"
)

// largestCorpusSection returns the corpus section with the most FREs.
func largestCorpusSection(b *testing.B) (*RawSection, string) {
	dir := corpus.Dir(b)
	var best *RawSection
	var bestName string
	var most uint32
	for _, e := range corpus.Entries(b) {
		f, err := Open(filepath.Join(dir, e.Path))
		if err != nil {
			continue
		}
		if n := f.Section.Header.NumFREs; n > most {
			best, bestName, most = f.Raw, e.Path, n
		}
		f.Close()
	}
	if best == nil {
		b.Fatal("no corpus section")
	}
	return best, bestName
}

// BenchmarkLookup measures PC → FDE → FRE → rules on uniformly random PCs
// inside the functions of the largest corpus section.
func BenchmarkLookup(b *testing.B) {
	raw, name := largestCorpusSection(b)
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
	b.Logf("%s: %d FDEs, %d FREs", name, len(s.FDEs), s.Header.NumFREs)
	var sink int
	for i := 0; b.Loop(); i++ {
		row, err := s.Lookup(pcs[i&(len(pcs)-1)])
		if err == nil {
			sink += row.FRE
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlookups/s")
	_ = sink
}

// BenchmarkDecode measures decoding the largest corpus section.
func BenchmarkDecode(b *testing.B) {
	raw, _ := largestCorpusSection(b)
	b.SetBytes(int64(len(raw.Data)))
	for b.Loop() {
		if _, err := Decode(raw.Data, raw.Addr); err != nil {
			b.Fatal(err)
		}
	}
}
