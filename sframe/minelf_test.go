package sframe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

// minimalELF wraps an .sframe section into the smallest ELF64 file that
// still has everything the loader looks at: a PT_LOAD for the code range
// text, a PT_GNU_SFRAME segment, and .text (SHT_NOBITS), .sframe and
// .shstrtab sections. Fuzz seeds built this way are a few KiB instead of the
// tens of KiB of a real binary, which keeps the fuzzer's mutation and
// minimization fast.
func minimalELF(m elf.Machine, order binary.ByteOrder, sframe []byte, addr uint64, text AddrRange) []byte {
	const ehsize, phsize, shsize = 64, 56, 64
	shstr := []byte("\x00.text\x00.sframe\x00.shstrtab\x00")
	sfOff := uint64(ehsize + 2*phsize)
	strOff := sfOff + uint64(len(sframe))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	out := make([]byte, shOff+4*shsize)

	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	if order == binary.BigEndian {
		out[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	} else {
		out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	}
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	order.PutUint16(out[16:], uint16(elf.ET_EXEC))
	order.PutUint16(out[18:], uint16(m))
	order.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	order.PutUint64(out[24:], text.Lo) // entry
	order.PutUint64(out[32:], ehsize)  // phoff
	order.PutUint64(out[40:], shOff)
	order.PutUint16(out[52:], ehsize)
	order.PutUint16(out[54:], phsize)
	order.PutUint16(out[56:], 2)
	order.PutUint16(out[58:], shsize)
	order.PutUint16(out[60:], 4)
	order.PutUint16(out[62:], 3) // shstrndx

	ph := func(i int, typ elf.ProgType, flags elf.ProgFlag, off, vaddr, filesz, memsz uint64) {
		p := out[ehsize+i*phsize:]
		order.PutUint32(p[0:], uint32(typ))
		order.PutUint32(p[4:], uint32(flags))
		order.PutUint64(p[8:], off)
		order.PutUint64(p[16:], vaddr)
		order.PutUint64(p[24:], vaddr)
		order.PutUint64(p[32:], filesz)
		order.PutUint64(p[40:], memsz)
		order.PutUint64(p[48:], 8)
	}
	ph(0, elf.PT_LOAD, elf.PF_R|elf.PF_X, 0, text.Lo, 0, text.Hi-text.Lo)
	ph(1, PT_GNU_SFRAME, elf.PF_R, sfOff, addr, uint64(len(sframe)), uint64(len(sframe)))
	copy(out[sfOff:], sframe)
	copy(out[strOff:], shstr)

	sh := func(i int, name uint32, typ elf.SectionType, flags elf.SectionFlag, addr, off, size uint64) {
		p := out[shOff+uint64(i*shsize):]
		order.PutUint32(p[0:], name)
		order.PutUint32(p[4:], uint32(typ))
		order.PutUint64(p[8:], uint64(flags))
		order.PutUint64(p[16:], addr)
		order.PutUint64(p[24:], off)
		order.PutUint64(p[32:], size)
		order.PutUint64(p[48:], 1)
	}
	sh(1, 1, elf.SHT_NOBITS, elf.SHF_ALLOC|elf.SHF_EXECINSTR, text.Lo, 0, text.Hi-text.Lo)
	sh(2, 7, SHT_GNU_SFRAME, elf.SHF_ALLOC, addr, sfOff, uint64(len(sframe)))
	sh(3, 15, elf.SHT_STRTAB, 0, 0, strOff, uint64(len(shstr)))
	return out
}

func TestMinimalELF(t *testing.T) {
	data := mustHex(t, workedExample)
	file := minimalELF(elf.EM_X86_64, binary.LittleEndian, data, 0x2000, AddrRange{0x1000, 0x2000})
	f, err := NewFile(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if f.Raw.FromSegment || f.Raw.Addr != 0x2000 || !bytes.Equal(f.Raw.Data, data) {
		t.Fatalf("raw section = %+v", f.Raw)
	}
	if errs := f.Section.Validate(f.ValidateOptions()); len(errs) != 0 {
		t.Errorf("Validate: %v", errs)
	}
}
