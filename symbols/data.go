package symbols

import (
	"cmp"
	"debug/elf"
	"slices"
	"sort"
	"strconv"
)

// Data addresses are named as objdump and gdb name the address an
// instruction refers to, so that "mov 0x2f5a(%rip),%rax" reads as a load
// of a variable or a GOT slot, not as an offset from the last function:
//
//   - a GOT slot by the symbol its dynamic relocation binds, with gdb's
//     suffix: "qsort@got.plt" (R_*_JUMP_SLOT, in .got.plt), "puts@got"
//     (R_*_GLOB_DAT); an R_*_IRELATIVE slot by the IFUNC whose resolver
//     fills it ("strchr@got.plt");
//   - else by the sized data object (STT_OBJECT) containing it:
//     "main_arena+0x10", or, as objdump does, by the nearest data object
//     below it in the same section, even past that object's end
//     ("__rseq_flags+0x433", "__dso_handle");
//   - else by its section: ".rodata+0x10" (no data object below it in
//     its section: compilers' local constants have no symbol). In a shared object the section is prefixed with the
//     file: "libc.so.6:.bss+0x8".
//
// Only addresses in allocated, non-executable sections are named so;
// everything else is a code address (Lookup).

// dataSection is one allocated, non-executable section.
type dataSection struct {
	start, end uint64
	name       string
}

// dataSymbol is a data object; rank orders aliases at one address.
type dataSymbol struct {
	symbol
	rank int // 0 global, 1 weak, 2 local
}

// addData adds the data sections, data objects (of syms, the file's symbol
// table) and GOT slots of f, loaded bias bytes above its link-time
// addresses; object prefixes section names ("" for the program). The code
// symbols must be in place: IRELATIVE slots are named by them.
func (s *Table) addData(f *elf.File, syms []elf.Symbol, bias uint64, object string) {
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Flags&(elf.SHF_EXECINSTR|elf.SHF_TLS) != 0 || sec.Addr == 0 || sec.Size == 0 {
			continue // .tbss overlaps the sections after it: TLS is per thread
		}
		name := sec.Name
		if object != "" {
			name = object + ":" + name
		}
		s.sections = append(s.sections, dataSection{sec.Addr + bias, sec.Addr + bias + sec.Size, name})
	}
	slices.SortFunc(s.sections, func(a, b dataSection) int { return cmp.Compare(a.start, b.start) })

	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_OBJECT || sym.Name == "" ||
			sym.Section == elf.SHN_UNDEF || sym.Section >= elf.SHN_LORESERVE {
			continue
		}
		rank := 2
		switch elf.ST_BIND(sym.Info) {
		case elf.STB_GLOBAL:
			rank = 0
		case elf.STB_WEAK:
			rank = 1
		}
		s.data = append(s.data, dataSymbol{symbol{sym.Value + bias, sym.Size, sym.Name}, rank})
	}
	// By address; at one address the largest first, then global before
	// weak before local (as objdump prefers them), then by name.
	slices.SortFunc(s.data, func(a, b dataSymbol) int {
		return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(b.size, a.size), cmp.Compare(a.rank, b.rank), cmp.Compare(a.name, b.name))
	})

	for slot, name := range s.gotSlots(f, bias) {
		if s.slots == nil {
			s.slots = map[uint64]string{}
		}
		s.slots[slot] = name
	}
}

// gotSlots names the GOT slots that dynamic relocations fill.
func (s *Table) gotSlots(f *elf.File, bias uint64) map[uint64]string {
	var globDat, jumpSlot, irelative uint32
	switch f.Machine {
	case elf.EM_X86_64:
		globDat, jumpSlot, irelative = uint32(elf.R_X86_64_GLOB_DAT), uint32(elf.R_X86_64_JMP_SLOT), uint32(elf.R_X86_64_IRELATIVE)
	case elf.EM_AARCH64:
		globDat, jumpSlot, irelative = uint32(elf.R_AARCH64_GLOB_DAT), uint32(elf.R_AARCH64_JUMP_SLOT), uint32(elf.R_AARCH64_IRELATIVE)
	default:
		return nil
	}
	dsyms, _ := f.DynamicSymbols()
	gotPLT := f.Section(".got.plt")
	slots := map[uint64]string{}
	for _, sec := range []string{".rela.dyn", ".rela.plt"} {
		for _, r := range relocations(f, sec) {
			var name string
			switch typ, i := uint32(r[1]), int(r[1]>>32); typ {
			case globDat, jumpSlot:
				if i >= 1 && i <= len(dsyms) {
					name = dsyms[i-1].Name
				}
			case irelative:
				if n, off, ok := s.Lookup(r[2] + bias); ok && off == 0 {
					name = n
				}
			}
			if name == "" {
				continue
			}
			suffix := "@got"
			if gotPLT != nil && r[0]-gotPLT.Addr < gotPLT.Size {
				suffix = "@got.plt"
			}
			slots[r[0]+bias] = name + suffix
		}
	}
	return slots
}

// dataSection returns the data section containing addr, or nil.
func (s *Table) dataSection(addr uint64) *dataSection {
	i := sort.Search(len(s.sections), func(i int) bool { return s.sections[i].start > addr }) - 1
	if i >= 0 && addr < s.sections[i].end {
		return &s.sections[i]
	}
	return nil
}

// LookupAddr names any address the way objdump names the address an
// instruction refers to: an address in a data section by its GOT slot,
// the data object containing it, or the section (see the rules above),
// and any other address as Lookup does.
func (s *Table) LookupAddr(addr uint64) (name string, off uint64, ok bool) {
	if s == nil {
		return "", 0, false
	}
	sec := s.dataSection(addr)
	if sec == nil {
		return s.Lookup(addr)
	}
	if slot := addr &^ 7; s.slots[slot] != "" { // slots are 8-byte aligned
		return s.slots[slot], addr - slot, true
	}
	i := sort.Search(len(s.data), func(i int) bool { return s.data[i].addr > addr }) - 1
	// first moves j to the preferred alias at its address (the first in
	// order: no smaller, so it covers whatever j covers).
	first := func(j int) *dataSymbol {
		for j > 0 && s.data[j-1].addr == s.data[j].addr {
			j--
		}
		return &s.data[j]
	}
	for j := i; j >= 0 && j > i-8; j-- {
		if d := &s.data[j]; addr-d.addr < d.size {
			d = first(j)
			return d.name, addr - d.addr, true
		}
	}
	// As objdump: the nearest data symbol below in the same section, past
	// its end if need be ("__rseq_flags+0x433"), else the section.
	if i >= 0 && s.data[i].addr >= sec.start {
		d := first(i)
		return d.name, addr - d.addr, true
	}
	return sec.name, addr - sec.start, true
}

// FormatAddr renders addr as LookupAddr names it, "name+0xoff" (or
// "name" at offset 0), else as Format does.
func (s *Table) FormatAddr(addr uint64) string {
	if s.dataSection(addr) == nil {
		return s.Format(addr)
	}
	name, off, _ := s.LookupAddr(addr)
	if off == 0 {
		return name
	}
	return name + "+0x" + strconv.FormatUint(off, 16)
}
