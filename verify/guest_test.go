//go:build cgo

package verify

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// A guestFunc is one function of a hand-assembled test guest: its offset
// and size in the code and its SFrame rows (FRE starts relative to it).
type guestFunc struct {
	name      string
	off, size uint32
	fres      []sframe.FRE
}

// guestCode decodes the machine code of a test guest written as hex, one
// instruction a line with its assembly in a comment after "//".
func guestCode(t *testing.T, listing string) []byte {
	t.Helper()
	var code []byte
	for _, line := range strings.Split(listing, "\n") {
		line, _, _ = strings.Cut(line, "//")
		b, err := hex.DecodeString(strings.Join(strings.Fields(line), ""))
		if err != nil {
			t.Fatalf("guest code %q: %v", line, err)
		}
		code = append(code, b...)
	}
	return code
}

// Rows of hand-written SFrame data: CFA = SP or FP + cfa, the RA (AArch64
// only: AMD64 has it at the fixed CFA-8) and the caller's FP saved at the
// given CFA offsets (0: not saved).
func spRow(start uint32, words ...int32) sframe.FRE {
	return sframe.FRE{Start: start, Info: sframe.FREInfo(sframe.BaseSP, false), Words: words}
}

func fpRow(start uint32, words ...int32) sframe.FRE {
	return sframe.FRE{Start: start, Info: sframe.FREInfo(sframe.BaseFP, false), Words: words}
}

// outermostRow marks the outermost frame (RA undefined: no words).
func outermostRow() sframe.FRE { return sframe.FRE{Info: sframe.FREInfo(sframe.BaseSP, false)} }

// guestELF writes a static ELF executable for a (ET_EXEC at 0x400000)
// whose one PT_LOAD holds the headers, code and an .sframe section (SFrame
// V2) describing funcs, with a symbol table naming them. The first
// function is the entry point. writable makes the segment RWX, for self-
// modifying code.
func guestELF(t *testing.T, a *arch.Arch, code []byte, funcs []guestFunc, writable bool) string {
	t.Helper()
	const base = 0x400000
	const ehsize, phsize, symsize, shsize = 64, 56, 24, 64
	codeOff := uint64(ehsize + phsize)
	sfOff := (codeOff + uint64(len(code)) + 7) &^ 7

	sec := &sframe.Section{Addr: base + sfOff, Order: binary.LittleEndian,
		Header: sframe.Header{Version: sframe.Version2, Flags: sframe.FlagFDESorted}}
	if a == arch.AMD64 {
		sec.Header.ABI, sec.Header.CFAFixedRAOffset = sframe.ABIAMD64LE, -8
	} else {
		sec.Header.ABI = sframe.ABIAArch64LE
	}
	strtab := []byte{0}
	syms := []elf.Sym64{{}}
	for _, f := range funcs {
		sec.FDEs = append(sec.FDEs, sframe.FDE{Start: base + codeOff + uint64(f.off), Size: f.size,
			Info: sframe.FDEInfo(sframe.FREAddr1, sframe.PCInc, false, false), FREs: f.fres})
		syms = append(syms, elf.Sym64{Name: uint32(len(strtab)), Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC),
			Shndx: 1, Value: base + codeOff + uint64(f.off), Size: uint64(f.size)})
		strtab = append(append(strtab, f.name...), 0)
	}
	sf, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	shstrtab := []byte("\x00.text\x00.sframe\x00.symtab\x00.strtab\x00.shstrtab\x00")
	loadEnd := sfOff + uint64(len(sf))
	symOff := (loadEnd + 7) &^ 7
	strOff := symOff + uint64(len(syms))*symsize
	shstrOff := strOff + uint64(len(strtab))
	shOff := (shstrOff + uint64(len(shstrtab)) + 7) &^ 7

	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(a.Machine), Version: 1, Entry: base + codeOff,
		Phoff: ehsize, Shoff: shOff, Ehsize: ehsize, Phentsize: phsize, Phnum: 1,
		Shentsize: shsize, Shnum: 6, Shstrndx: 5,
	}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	binary.Write(&b, le, hdr)
	flags := elf.PF_R | elf.PF_X
	if writable {
		flags |= elf.PF_W
	}
	binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(flags), Vaddr: base, Paddr: base,
		Filesz: loadEnd, Memsz: loadEnd, Align: 0x1000})
	b.Write(code)
	b.Write(make([]byte, sfOff-uint64(b.Len())))
	b.Write(sf)
	b.Write(make([]byte, symOff-uint64(b.Len())))
	for _, s := range syms {
		binary.Write(&b, le, s)
	}
	b.Write(strtab)
	b.Write(shstrtab)
	b.Write(make([]byte, shOff-uint64(b.Len())))
	for _, s := range []elf.Section64{
		{},
		{Name: 1, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR), Addr: base + codeOff, Off: codeOff, Size: uint64(len(code)), Addralign: 4},
		{Name: 7, Type: uint32(sframe.SHT_GNU_SFRAME), Flags: uint64(elf.SHF_ALLOC), Addr: base + sfOff, Off: sfOff, Size: uint64(len(sf)), Addralign: 8},
		{Name: 15, Type: uint32(elf.SHT_SYMTAB), Off: symOff, Size: uint64(len(syms)) * symsize, Link: 4, Info: 1, Addralign: 8, Entsize: symsize},
		{Name: 23, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(strtab)), Addralign: 1},
		{Name: 31, Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstrtab)), Addralign: 1},
	} {
		binary.Write(&b, le, s)
	}
	path := filepath.Join(t.TempDir(), funcs[0].name+"-"+a.Name)
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
