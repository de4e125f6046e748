package sframe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// onlyReaderAt hides the size of a reader: ELFError then probes the file.
type onlyReaderAt struct{ r io.ReaderAt }

func (o onlyReaderAt) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off) }

// TestELFErrorTruncated: a file that ends in its ELF headers gets a message
// that says which part runs past the end and where, not debug/elf's bare
// "EOF", from Open, NewFile and ELFError on a reader of unknown size.
func TestELFErrorTruncated(t *testing.T) {
	// 64-byte ELF header, 2 program headers at 0x40, the .sframe section,
	// .shstrtab (25 bytes), 4 section headers.
	sec := mustHex(t, workedExample)
	full := minimalELF(elf.EM_X86_64, binary.LittleEndian, sec, 0x2000, AddrRange{0x1000, 0x1100})
	shoff := binary.LittleEndian.Uint64(full[40:])
	strOff := 64 + 2*56 + len(sec)
	// The string table moved past the end of the file.
	strPast := bytes.Clone(full)
	binary.LittleEndian.PutUint64(strPast[shoff+3*64+24:], 0x10000)
	// Compressed .sframe whose compression header is past the end.
	chdrPast := bytes.Clone(full)
	binary.LittleEndian.PutUint64(chdrPast[shoff+2*64+8:], uint64(elf.SHF_ALLOC|elf.SHF_COMPRESSED))
	binary.LittleEndian.PutUint64(chdrPast[shoff+2*64+24:], 0x10000)
	tests := []struct {
		name string
		data []byte
		want string // with the size, which a reader of unknown size lacks
	}{
		{"identification", full[:10], "truncated ELF: the 16-byte ELF identification runs past the end of the file (size 0xa)"},
		{"header", full[:40], "truncated ELF: the 64-byte ELF header runs past the end of the file (size 0x28)"},
		{"program headers", full[:100], "truncated ELF: program header table at offset 0x40 (2 entries of 56 bytes) runs past the end of the file (size 0x64)"},
		{"section headers", full[:shoff+100], "truncated ELF: section header table at offset 0x" + hexOf(shoff) + " (4 entries of 64 bytes) runs past the end of the file (size 0x" + hexOf(shoff+100) + ")"},
		{"string table", strPast, "truncated ELF: the section name string table (section 3, 25 bytes at offset 0x10000) runs past the end of the file (size 0x" + hexOf(uint64(len(full))) + ")"},
		{"compression header", chdrPast, "truncated ELF: the compression header of section 2 at offset 0x10000 runs past the end of the file (size 0x" + hexOf(uint64(len(full))) + ")"},
	}
	if got := string(full[strOff+1 : strOff+6]); got != ".text" {
		t.Fatalf("minimalELF's layout changed: %q at the string table's offset", got)
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path)
			if err == nil || err.Error() != path+": "+tt.want {
				t.Errorf("Open: %v\nwant %s: %s", err, path, tt.want)
			}
			_, err = NewFile(bytes.NewReader(tt.data))
			if err == nil || err.Error() != tt.want {
				t.Errorf("NewFile: %v\nwant %s", err, tt.want)
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%v does not wrap debug/elf's EOF", err)
			}
			r := onlyReaderAt{bytes.NewReader(tt.data)}
			_, eerr := elf.NewFile(r)
			want := tt.want[:bytes.LastIndex([]byte(tt.want), []byte(" (size "))]
			if err := ELFError(r, eerr); err == nil || err.Error() != want {
				t.Errorf("ELFError without the size: %v\nwant %s", err, want)
			}
		})
	}
}

// TestELFErrorOther: a file that is not ELF says so; debug/elf's other
// errors pass unchanged.
func TestELFErrorOther(t *testing.T) {
	for _, tt := range []struct {
		data string
		want string
	}{
		{"#!/bin/sh\n", `not an ELF file (it begins "#!/b")`},
		{"\x7fE", "not an ELF file (2 bytes)"},
	} {
		_, eerr := elf.NewFile(bytes.NewReader([]byte(tt.data)))
		err := ELFError(bytes.NewReader([]byte(tt.data)), eerr)
		if !errors.Is(err, ErrNotELF) || err.Error() != tt.want {
			t.Errorf("ELFError(%q): %v, want %s", tt.data, err, tt.want)
		}
	}
	full := minimalELF(elf.EM_X86_64, binary.LittleEndian, mustHex(t, workedExample), 0x2000, AddrRange{0x1000, 0x1100})
	full[54] = 12 // phentsize
	_, eerr := elf.NewFile(bytes.NewReader(full))
	var fe *elf.FormatError
	if err := ELFError(bytes.NewReader(full), eerr); err != eerr || !errors.As(err, &fe) {
		t.Errorf("ELFError(phentsize 12): %v, want debug/elf's %v", err, eerr)
	}
	if _, err := NewFile(bytes.NewReader(full)); err == nil || err.Error() != "malformed ELF: "+eerr.Error() {
		t.Errorf("NewFile(phentsize 12): %v", err)
	}
}

func hexOf(v uint64) string { return fmt.Sprintf("%x", v) }
