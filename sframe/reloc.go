package sframe

import (
	"debug/elf"
	"fmt"
)

// Relocations of the function start fields in relocatable objects: gas
// always stores "target − own location" through a PC-relative relocation
// [SFrame §2.5, PR ld/32666], whatever the version and flags; ld -r turns
// those of functions whose section it discarded (a duplicate COMDAT group)
// into the architecture's NONE relocation.
var pcrelRelocs = map[elf.Machine]map[uint32]int{ // type → field size
	elf.EM_X86_64:  {uint32(elf.R_X86_64_PC32): 4, uint32(elf.R_X86_64_PC64): 8},
	elf.EM_AARCH64: {uint32(elf.R_AARCH64_PREL32): 4, uint32(elf.R_AARCH64_PREL64): 8},
	elf.EM_S390:    {uint32(elf.R_390_PC32): 4, uint32(elf.R_390_PC64): 8},
}

// noneReloc reports whether typ is a relocation that does nothing:
// R_X86_64_NONE, R_AARCH64_NONE, R_390_NONE (all 0) and AArch64's
// R_AARCH64_NULL (256).
func noneReloc(m elf.Machine, typ uint32) bool {
	return typ == 0 || m == elf.EM_AARCH64 && typ == uint32(elf.R_AARCH64_NULL)
}

// A StartReloc is one relocation of a relocatable object's .sframe section:
// the function start field at Off refers to offset Target of the ELF
// section with index Section (named SectionName). None marks a NONE
// relocation, which ld -r leaves where it discarded the function's
// section: the FDE describes code that is not in the object.
type StartReloc struct {
	Off         int64
	Section     int
	SectionName string
	Target      uint64
	None        bool
	// Size is how many bytes the relocation writes (4 or 8; 0 for None).
	Size int
}

// A Location says where the function of an FDE of a relocatable object
// is: at Offset in the ELF section with index Section (named Name, Size
// bytes long). Known is false when the FDE's start field has no
// relocation; Discarded when its relocation is a NONE relocation (ld -r
// dropped the function's section, a duplicate COMDAT group).
type Location struct {
	Known     bool
	Discarded bool
	Section   int
	Name      string
	Size      uint64
	Offset    uint64
}

func (l Location) String() string {
	switch {
	case l.Discarded:
		return "(discarded section)"
	case !l.Known:
		return "(no relocation)"
	}
	return fmt.Sprintf("%s+%#x", l.Name, l.Offset)
}

// startRelocs reads the relocations of the .sframe section s of a
// relocatable object, ELFCLASS64 or ELFCLASS32, RELA or REL. It returns
// nil when there are none. Every relocation must be a PC-relative one of a
// start field or a NONE relocation.
func startRelocs(ef *elf.File, s *elf.Section, size int) ([]StartReloc, error) {
	if ef.Type != elf.ET_REL {
		return nil, nil
	}
	var rel *elf.Section
	for _, r := range ef.Sections {
		if (r.Type == elf.SHT_RELA || r.Type == elf.SHT_REL) && int(r.Info) < len(ef.Sections) && ef.Sections[r.Info] == s {
			rel = r
		}
	}
	if rel == nil {
		return nil, nil
	}
	types := pcrelRelocs[ef.Machine]
	rdata, err := rel.Data()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel.Name, err)
	}
	syms, err := ef.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading symbols for %s: %w", rel.Name, err)
	}
	order := ef.ByteOrder
	is64 := ef.Class == elf.ELFCLASS64
	rela := rel.Type == elf.SHT_RELA
	entSize := map[[2]bool]int{{true, true}: 24, {true, false}: 16, {false, true}: 12, {false, false}: 8}[[2]bool{is64, rela}]
	var out []StartReloc
	for off := 0; off+entSize <= len(rdata); off += entSize {
		n := off / entSize
		var rOff uint64
		var typ uint32
		var symIdx uint64
		var addend int64
		if is64 {
			rOff = order.Uint64(rdata[off:])
			info := order.Uint64(rdata[off+8:])
			typ, symIdx = uint32(info), info>>32
			if rela {
				addend = int64(order.Uint64(rdata[off+16:]))
			}
		} else {
			rOff = uint64(order.Uint32(rdata[off:]))
			info := order.Uint32(rdata[off+4:])
			typ, symIdx = info&0xff, uint64(info>>8)
			if rela {
				addend = int64(int32(order.Uint32(rdata[off+8:])))
			}
		}
		if noneReloc(ef.Machine, typ) {
			out = append(out, StartReloc{Off: int64(rOff), None: true})
			continue
		}
		fsize, ok := types[typ]
		if !ok {
			return nil, fmt.Errorf("%s entry %d: relocation type %d is not a PC-relative start field relocation for %v", rel.Name, n, typ, ef.Machine)
		}
		if symIdx == 0 || symIdx > uint64(len(syms)) {
			return nil, fmt.Errorf("%s entry %d: symbol index %d out of range", rel.Name, n, symIdx)
		}
		if rOff > uint64(size) || uint64(size)-rOff < uint64(fsize) {
			return nil, fmt.Errorf("%s entry %d: offset %#x outside the %d-byte section", rel.Name, n, rOff, size)
		}
		if !rela {
			return nil, fmt.Errorf("%s: REL relocations of %s are not supported (gas writes RELA on every SFrame target)", rel.Name, SectionName)
		}
		sym := syms[symIdx-1]
		r := StartReloc{Off: int64(rOff), Target: sym.Value + uint64(addend), Size: fsize}
		if int(sym.Section) > 0 && int(sym.Section) < len(ef.Sections) {
			sec := ef.Sections[sym.Section]
			r.Section, r.SectionName = int(sym.Section), sec.Name
			// objdump relocates with the section's address: 0 in objects.
			r.Target += sec.Addr
		}
		out = append(out, r)
	}
	return out, nil
}

// applyStartRelocs returns a copy of data, the .sframe section at address
// addr, with its start field relocations applied as objdump 2.45 and later
// apply them before dumping a relocatable object (S + A − P; NONE
// relocations leave the field alone).
func applyStartRelocs(ef *elf.File, data []byte, addr uint64, relocs []StartReloc) []byte {
	out := append([]byte(nil), data...)
	for _, r := range relocs {
		if r.None {
			continue
		}
		v := r.Target - (addr + uint64(r.Off))
		if r.Size == 4 {
			ef.ByteOrder.PutUint32(out[r.Off:], uint32(v))
		} else {
			ef.ByteOrder.PutUint64(out[r.Off:], v)
		}
	}
	return out
}
