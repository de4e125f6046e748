package sframe

import (
	"debug/elf"
	"fmt"
)

// Relocations of the function start fields in relocatable objects: gas
// always stores "target − own location" through a PC-relative relocation
// [SFrame §2.5, PR ld/32666].
var pcrelRelocs = map[elf.Machine]map[uint32]int{ // type → field size
	elf.EM_X86_64:  {uint32(elf.R_X86_64_PC32): 4, uint32(elf.R_X86_64_PC64): 8},
	elf.EM_AARCH64: {uint32(elf.R_AARCH64_PREL32): 4, uint32(elf.R_AARCH64_PREL64): 8},
	elf.EM_S390:    {uint32(elf.R_390_PC32): 4, uint32(elf.R_390_PC64): 8},
}

// relocate applies the RELA relocations of the .sframe section s of a
// relocatable object to data, as newest objdump does before dumping a
// section whose starts are field-relative (V3, V2 with PCREL). Older
// binutils dump .o files unrelocated, and a section-relative reading of a
// relocated field would be meaningless, so other sections are left alone.
func relocate(ef *elf.File, s *elf.Section, data []byte) error {
	if ef.Type != elf.ET_REL || len(data) < HeaderSize {
		return nil
	}
	if !(Version(data[2]) >= Version2 && Flags(data[3])&FlagFDEFuncStartPCRel != 0) {
		return nil
	}
	var rela *elf.Section
	for _, r := range ef.Sections {
		if r.Type == elf.SHT_RELA && int(r.Info) < len(ef.Sections) && ef.Sections[r.Info] == s {
			rela = r
		}
	}
	if rela == nil {
		return nil
	}
	if ef.Class != elf.ELFCLASS64 {
		return fmt.Errorf("relocations of %s: only ELFCLASS64 objects are supported", SectionName)
	}
	types := pcrelRelocs[ef.Machine]
	rdata, err := rela.Data()
	if err != nil {
		return fmt.Errorf("reading %s: %w", rela.Name, err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		return fmt.Errorf("reading symbols for %s: %w", rela.Name, err)
	}
	order := ef.ByteOrder
	for off := 0; off+24 <= len(rdata); off += 24 {
		rOff := order.Uint64(rdata[off:])
		info := order.Uint64(rdata[off+8:])
		addend := int64(order.Uint64(rdata[off+16:]))
		typ, symIdx := uint32(info), info>>32
		size, ok := types[typ]
		if !ok {
			return fmt.Errorf("%s entry %d: relocation type %d is not a PC-relative start field relocation for %v", rela.Name, off/24, typ, ef.Machine)
		}
		if symIdx == 0 || symIdx > uint64(len(syms)) {
			return fmt.Errorf("%s entry %d: symbol index %d out of range", rela.Name, off/24, symIdx)
		}
		if rOff > uint64(len(data)) || uint64(len(data))-rOff < uint64(size) {
			return fmt.Errorf("%s entry %d: offset %#x outside the %d-byte section", rela.Name, off/24, rOff, len(data))
		}
		sym := syms[symIdx-1]
		symAddr := sym.Value
		if int(sym.Section) > 0 && int(sym.Section) < len(ef.Sections) {
			symAddr += ef.Sections[sym.Section].Addr
		}
		v := symAddr + uint64(addend) - (s.Addr + rOff)
		if size == 4 {
			order.PutUint32(data[rOff:], uint32(v))
		} else {
			order.PutUint64(data[rOff:], v)
		}
	}
	return nil
}
