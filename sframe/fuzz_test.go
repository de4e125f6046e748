package sframe

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// exercise runs everything that reads a decoded section; none of it may
// panic, whatever the input.
func exercise(t *testing.T, s *Section) {
	s.Dump(&bytes.Buffer{}, SectionName, DumpAuto)
	for _, st := range []DumpStyle{Dump240, Dump244, DumpLatest} {
		s.Dump(&bytes.Buffer{}, SectionName, st)
	}
	errs := s.Validate(ValidateOptions{})
	for i := range s.FDEs {
		f := &s.FDEs[i]
		for _, pc := range []uint64{f.Start, f.Start + uint64(f.Size)/2, f.End() - 1, f.End()} {
			s.Lookup(pc)
		}
		for j := range f.FREs {
			s.Rules(i, j)
		}
	}
	// A valid section survives re-encoding with its content intact.
	if len(s.DecodeErrors()) > 0 || errs.HasErrors() {
		return
	}
	enc, err := s.Encode()
	if err != nil {
		return // e.g. a start field out of reach after canonical layout
	}
	s2, err := Decode(enc, s.Addr)
	if err != nil {
		t.Fatalf("re-encoded valid section does not decode: %v", err)
	}
	if d := diffSections(s, s2); d != "" {
		t.Fatalf("re-encoded valid section differs: %s", d)
	}
}

// addSeeds adds every distinct corpus section (raw, and wrapped into a
// minimal ELF file) and every hand-made section.
func addSeeds(f *testing.F, addRaw func(data []byte, addr uint64), addFile func(data []byte)) {
	dir := testcorpus.Dir(f)
	seen := map[string]bool{}
	for _, e := range testcorpus.Entries(f) {
		file, err := Open(filepath.Join(dir, e.Path))
		if err != nil {
			continue
		}
		raw := file.Raw
		if !seen[string(raw.Data)] {
			seen[string(raw.Data)] = true
			if addRaw != nil {
				addRaw(raw.Data, raw.Addr)
			}
			if addFile != nil {
				opts := file.ValidateOptions()
				text := AddrRange{raw.Addr, raw.Addr}
				if len(opts.Text) > 0 {
					text = opts.Text[0]
				}
				addFile(minimalELF(file.ELF.Machine, file.ELF.ByteOrder, raw.Data, raw.Addr, text))
			}
		}
		file.Close()
	}
	hm, _ := filepath.Glob(filepath.Join("testdata", "handmade", "*.sframe"))
	for _, p := range hm {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if addRaw != nil {
			addRaw(data, 0x10000)
		}
	}
	if addFile != nil {
		for _, p := range []string{"testdata/handmade/s390x-real.elf", "testdata/objects/calls-v3.o", "testdata/objects/calls-v3-aarch64.o"} {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			addFile(data)
		}
	}
}

// FuzzDecode feeds arbitrary section bytes to the decoder, validator,
// dumper, lookup and encoder. Seeds: every corpus section and hand-made case.
func FuzzDecode(f *testing.F) {
	f.Add(mustHex(f, workedExample), uint64(0x2000))
	addSeeds(f, func(data []byte, addr uint64) { f.Add(data, addr) }, nil)
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		s, err := Decode(data, addr)
		if s == nil {
			if err == nil {
				t.Fatal("nil section without error")
			}
			return
		}
		exercise(t, s)
	})
}

// FuzzELF feeds arbitrary files to the ELF loader. Seeds: every distinct
// corpus section wrapped into a minimal ELF file, a real s390x binary and
// relocatable objects.
func FuzzELF(f *testing.F) {
	addSeeds(f, nil, func(data []byte) { f.Add(data) })
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		defer ef.Close()
		ELFValidateOptions(ef)
		FormatName(ef)
		s, err := FromELF(ef)
		if s == nil {
			if err == nil {
				t.Fatal("nil section without error")
			}
			return
		}
		exercise(t, s)
	})
}
