package sframe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// corpusSection opens a corpus binary; ok is false when it has no .sframe.
func corpusSection(t *testing.T, dir string, e testcorpus.Entry) (*File, bool) {
	t.Helper()
	f, err := Open(filepath.Join(dir, e.Path))
	if errors.Is(err, ErrNoSection) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f, true
}

// TestCorpusDump checks that the dump of every corpus binary equals the
// golden output of its own toolchain's objdump --sframe, byte for byte.
func TestCorpusDump(t *testing.T) {
	dir := testcorpus.Dir(t)
	versions := map[int]int{}
	for _, e := range testcorpus.Entries(t) {
		t.Run(e.Path, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, e.Golden()))
			if err != nil {
				t.Fatalf("golden: %v", err)
			}
			f, ok := corpusSection(t, dir, e)
			if !ok {
				if len(want) != 0 && e.ObjdumpStatus == 0 && bytes.Contains(want, []byte("Contents of the SFrame")) {
					t.Fatalf("no .sframe found, but objdump dumped one")
				}
				return
			}
			var got bytes.Buffer
			// The golden was made in the corpus directory with this name.
			if err := DumpFile(&got, e.Path, f, DumpAuto); err != nil {
				t.Fatal(err)
			}
			if d := golden.Diff(want, got.Bytes()); d != "" {
				t.Errorf("dump differs from %s's objdump:\n%s", e.Toolchain, d)
			}
			if int(f.Section.Header.Version) != e.SFrameVersion {
				t.Errorf("version %d, manifest says %d", f.Section.Header.Version, e.SFrameVersion)
			}
			versions[e.SFrameVersion]++
		})
	}
	for v := 1; v <= 3; v++ {
		if versions[v] == 0 {
			t.Errorf("no corpus binary with SFrame V%d was dumped", v)
		}
	}
}

// TestCorpusValidate: real toolchain output must not violate any rule.
// Warnings are logged.
func TestCorpusValidate(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, e := range testcorpus.Entries(t) {
		t.Run(e.Path, func(t *testing.T) {
			f, ok := corpusSection(t, dir, e)
			if !ok {
				return
			}
			for _, p := range f.Section.Validate(f.ValidateOptions()) {
				if p.Warn {
					t.Logf("%v", p)
				} else {
					t.Errorf("%v", p)
				}
			}
		})
	}
}

// distinctSections returns the raw .sframe of every corpus binary, one per
// distinct content.
func distinctSections(t *testing.T) map[string]*RawSection {
	dir := testcorpus.Dir(t)
	seen := map[string]*RawSection{}
	for _, e := range testcorpus.Entries(t) {
		f, ok := corpusSection(t, dir, e)
		if !ok {
			continue
		}
		key := string(f.Raw.Data)
		if _, dup := seen[key]; !dup {
			seen[key] = f.Raw
			f.Raw.Data = f.Raw.Data[:len(f.Raw.Data):len(f.Raw.Data)]
		}
	}
	if len(seen) == 0 {
		t.Fatal("no corpus section")
	}
	out := map[string]*RawSection{}
	i := 0
	for _, r := range seen {
		out[fmt.Sprintf("%03d-%#x", i, r.Addr)] = r
		i++
	}
	return out
}

// TestCorpusTruncated decodes prefixes of every corpus section: each must
// fail (it cuts data the header promises) without panicking, and whatever
// was decoded must still dump, validate and look up safely. Sections up to
// 2 KiB are cut at every length; larger ones at every length of their first
// 512 and last 128 bytes, at 256 random FDE and FRE boundaries and one byte
// either side of them, and at 128 random lengths.
func TestCorpusTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for name, raw := range distinctSections(t) {
		full, err := Decode(raw.Data, raw.Addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		size := len(raw.Data)
		var lengths []int
		if size <= 2<<10 {
			for n := range size {
				lengths = append(lengths, n)
			}
		} else {
			for n := range 512 {
				lengths = append(lengths, n)
			}
			for n := size - 128; n < size; n++ {
				lengths = append(lengths, n)
			}
			var bounds []int64
			for i := range full.FDEs {
				f := &full.FDEs[i]
				bounds = append(bounds, f.Off, f.AttrOff)
				for j := range f.FREs {
					bounds = append(bounds, f.FREs[j].Off)
				}
			}
			for range 256 {
				b := int(bounds[rng.IntN(len(bounds))])
				lengths = append(lengths, b-1, b, b+1)
			}
			for range 128 {
				lengths = append(lengths, rng.IntN(size))
			}
		}
		for _, n := range lengths {
			if n < 0 || n >= size {
				continue
			}
			s, err := Decode(raw.Data[:n], raw.Addr)
			if int64(n) < full.Len && err == nil {
				t.Errorf("%s: prefix of %d bytes (of %d needed) decoded without error", name, n, full.Len)
			}
			if s == nil {
				continue
			}
			if n%8 == 0 || size-n < 16 { // dumping is the slow part
				s.Dump(io.Discard, SectionName, DumpAuto)
			}
			s.Validate(ValidateOptions{})
			for i := 0; i < len(s.FDEs); i += 1 + len(s.FDEs)/64 {
				s.Lookup(s.FDEs[i].Start)
			}
		}
	}
}

// TestCorpusRoundTrip re-encodes every corpus section: the result must
// decode to the same functions and rows, dump identically, and encode again
// to the same bytes.
func TestCorpusRoundTrip(t *testing.T) {
	for name, raw := range distinctSections(t) {
		s, err := Decode(raw.Data, raw.Addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		enc, err := s.Encode()
		if err != nil {
			t.Fatalf("%s: Encode: %v", name, err)
		}
		s2, err := Decode(enc, raw.Addr)
		if err != nil {
			t.Fatalf("%s: decoding the re-encoded section: %v", name, err)
		}
		if d := diffSections(s, s2); d != "" {
			t.Errorf("%s: %s", name, d)
		}
		var d1, d2 bytes.Buffer
		s.Dump(&d1, SectionName, DumpAuto)
		s2.Dump(&d2, SectionName, DumpAuto)
		if d := golden.Diff(d1.Bytes(), d2.Bytes()); d != "" {
			t.Errorf("%s: dump after re-encoding:\n%s", name, d)
		}
		enc2, err := s2.Encode()
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Errorf("%s: second encoding differs (err %v)", name, err)
		}
	}
}

// diffSections compares the content (not the layout) of two sections.
func diffSections(a, b *Section) string {
	ha, hb := a.Header, b.Header
	ha.FDEOff, ha.FREOff, hb.FDEOff, hb.FREOff = 0, 0, 0, 0
	if ha != hb {
		return fmt.Sprintf("header %+v != %+v", ha, hb)
	}
	if len(a.FDEs) != len(b.FDEs) {
		return fmt.Sprintf("%d FDEs != %d", len(a.FDEs), len(b.FDEs))
	}
	for i := range a.FDEs {
		fa, fb := &a.FDEs[i], &b.FDEs[i]
		if fa.Start != fb.Start || fa.Size != fb.Size || fa.Info != fb.Info || fa.Info2 != fb.Info2 ||
			fa.RepSize != fb.RepSize || fa.NumFREs != fb.NumFREs || len(fa.FREs) != len(fb.FREs) {
			return fmt.Sprintf("FDE %d: %+v != %+v", i, *fa, *fb)
		}
		for j := range fa.FREs {
			ra, rb := &fa.FREs[j], &fb.FREs[j]
			if ra.Start != rb.Start || ra.Info != rb.Info || fmt.Sprint(ra.Words) != fmt.Sprint(rb.Words) {
				return fmt.Sprintf("FDE %d FRE %d: %+v != %+v", i, j, *ra, *rb)
			}
		}
	}
	return ""
}

// TestCorpusLookupExhaustive checks Lookup at every byte of every function
// against a linear reference search.
func TestCorpusLookupExhaustive(t *testing.T) {
	for name, raw := range distinctSections(t) {
		s, err := Decode(raw.Data, raw.Addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range s.FDEs {
			f := &s.FDEs[i]
			for pc := f.Start; pc < f.End() && pc-f.Start < 1<<20; pc++ {
				row, err := s.Lookup(pc)
				wantFRE := -1
				off := pc - f.Start
				if f.PCType() == PCMask {
					off %= uint64(s.RepSize(f))
				}
				for j := range f.FREs {
					if uint64(f.FREs[j].Start) <= off {
						wantFRE = j
					}
				}
				if wantFRE < 0 {
					if !errors.Is(err, ErrNoFRE) {
						t.Fatalf("%s: Lookup(%#x) = %+v, %v; want ErrNoFRE", name, pc, row, err)
					}
					continue
				}
				if err != nil || row.FDE != i || row.FRE != wantFRE {
					t.Fatalf("%s: Lookup(%#x) = FDE %d FRE %d, %v; want FDE %d FRE %d", name, pc, row.FDE, row.FRE, err, i, wantFRE)
				}
			}
		}
	}
}
