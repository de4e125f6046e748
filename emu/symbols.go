package emu

import (
	"debug/elf"
	"sort"
	"strconv"
)

// Symbols maps addresses to function symbols of an ELF file.
type Symbols struct {
	syms   []symbol // sorted by addr
	byName map[string]uint64
}

type symbol struct {
	addr, size uint64
	name       string
}

// NewSymbols reads the function symbols of f (.symtab, else .dynsym),
// relocated by bias (the load address of a position-independent file).
func NewSymbols(f *elf.File, bias uint64) *Symbols {
	s := &Symbols{byName: make(map[string]uint64)}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	for _, sym := range syms {
		if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Value == 0 {
			continue
		}
		a := sym.Value + bias
		s.syms = append(s.syms, symbol{a, sym.Size, sym.Name})
		if _, dup := s.byName[sym.Name]; !dup {
			s.byName[sym.Name] = a
		}
	}
	sort.SliceStable(s.syms, func(i, j int) bool { return s.syms[i].addr < s.syms[j].addr })
	return s
}

// Lookup returns the function containing pc and pc's offset in it. A
// symbol without a size covers up to the next symbol.
func (s *Symbols) Lookup(pc uint64) (name string, off uint64, ok bool) {
	if s == nil {
		return "", 0, false
	}
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].addr > pc }) - 1
	for ; i >= 0; i-- {
		sym := &s.syms[i]
		if sym.size == 0 || pc-sym.addr < sym.size {
			if sym.size == 0 && i+1 < len(s.syms) && pc >= s.syms[i+1].addr {
				return "", 0, false
			}
			return sym.name, pc - sym.addr, true
		}
		// Aliases share an address; look at the previous one only if it
		// starts at the same place.
		if i == 0 || s.syms[i-1].addr != sym.addr {
			break
		}
	}
	return "", 0, false
}

// Addr returns the address of the named function.
func (s *Symbols) Addr(name string) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	a, ok := s.byName[name]
	return a, ok
}

// Format renders pc as "name+0xoff" (or "name" at offset 0), or as a hex
// address when no symbol covers it.
func (s *Symbols) Format(pc uint64) string {
	name, off, ok := s.Lookup(pc)
	switch {
	case !ok:
		return "0x" + strconv.FormatUint(pc, 16)
	case off == 0:
		return name
	}
	return name + "+0x" + strconv.FormatUint(off, 16)
}

// Resolver adapts Lookup to x86asm.GNUSyntax's symbol callback.
func (s *Symbols) Resolver() func(uint64) (string, uint64) {
	return func(pc uint64) (string, uint64) {
		name, off, ok := s.Lookup(pc)
		if !ok {
			return "", 0
		}
		return name, pc - off
	}
}
