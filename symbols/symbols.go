// Package symbols names addresses: the function symbols of a program and
// of the shared objects mapped into it (Table), data objects, sections and
// GOT slots for the addresses instructions refer to (Table.LookupAddr),
// source lines from DWARF (Lines), and C++ names demangled for people
// (Demangle).
package symbols

import (
	"cmp"
	"debug/elf"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Table maps addresses to function symbols of an ELF file, or of a
// program and the shared objects mapped into it (AddObject).
type Table struct {
	syms   []symbol // sorted by addr
	byName map[string]uint64
	// byDemangled: C++ names, built on the first lookup that needs it.
	byDemangled map[string]uint64
	objs        []symObject // sorted by start
	// lo, hi: the span of the file New read (its PT_LOAD segments,
	// relocated); no symbol names an address outside it or objs.
	lo, hi uint64

	// Data addresses (data.go).
	sections []dataSection // sorted by start
	data     []dataSymbol  // sorted by addr
	slots    map[uint64]string
}

// symObject is the address range of one object: a symbol of another
// object never names an address in it.
type symObject struct {
	start, end, base uint64
	name             string // file name, for addresses without a symbol
	// sizedOnly: only a sized symbol names an address here. Shared
	// libraries are mostly known by their exported (.dynsym) functions,
	// and the nearest one below an internal function is not its name.
	sizedOnly bool
}

type symbol struct {
	addr, size uint64
	name       string
}

// New reads the code symbols of f (.symtab, else .dynsym):
// functions, IFUNC resolvers and untyped labels such as hand-written
// assembly's _start, but not AArch64 mapping symbols ($x, $d). Addresses are
// relocated by bias (the load address of a position-independent file).
func New(f *elf.File, bias uint64) *Table {
	return NewFromSymbols(f, nil, bias)
}

// NewFromSymbols is New for a file whose symbol table the caller has
// read already: syms, what f.Symbols returned (nil or empty: New's own
// reading, the dynamic symbols when there is no symbol table).
func NewFromSymbols(f *elf.File, syms []elf.Symbol, bias uint64) *Table {
	s := &Table{byName: make(map[string]uint64)}
	s.addSyms(f, syms, bias, "")
	s.lo, s.hi = ^uint64(0), 0
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_LOAD {
			s.lo, s.hi = min(s.lo, ph.Vaddr+bias), max(s.hi, ph.Vaddr+ph.Memsz+bias)
		}
	}
	if s.lo >= s.hi { // a relocatable object: no segments
		s.lo, s.hi = 0, ^uint64(0)
	}
	return s
}

// AddObject adds the code symbols of a shared object mapped into the
// program at [start, end) with load bias base (names already taken keep
// their address), and its range: an address in it is named only by a
// sized symbol of its own (Lookup does not guess from the nearest symbol
// below), and one without is shown as file+offset.
func (s *Table) AddObject(name string, f *elf.File, base, start, end uint64) {
	s.add(f, base, filepath.Base(name))
	s.AddRange(name, base, start, end, true)
}

// AddRange records [start, end) as the range of object name (load bias
// base) without adding symbols. With sizedOnly, only a sized symbol names
// an address in it.
func (s *Table) AddRange(name string, base, start, end uint64, sizedOnly bool) {
	s.objs = append(s.objs, symObject{start, end, base, filepath.Base(name), sizedOnly})
	sort.Slice(s.objs, func(i, j int) bool { return s.objs[i].start < s.objs[j].start })
}

// object returns the object range containing pc, or nil.
func (s *Table) object(pc uint64) *symObject {
	i := sort.Search(len(s.objs), func(i int) bool { return s.objs[i].start > pc }) - 1
	if i >= 0 && pc < s.objs[i].end {
		return &s.objs[i]
	}
	return nil
}

// add adds the symbols of f; object names a shared object ("" for the
// program) in the names of its data sections.
func (s *Table) add(f *elf.File, bias uint64, object string) {
	s.addSyms(f, nil, bias, object)
}

// addSyms is add with f's symbol table already read (syms; nil: read
// here).
func (s *Table) addSyms(f *elf.File, syms []elf.Symbol, bias uint64, object string) {
	s.byDemangled = nil // rebuilt with the new names when needed
	if len(syms) == 0 {
		var err error
		syms, err = f.Symbols()
		if err != nil || len(syms) == 0 {
			syms, _ = f.DynamicSymbols()
		}
	}
	for _, sym := range syms {
		t := elf.ST_TYPE(sym.Info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC && t != elf.STT_NOTYPE ||
			sym.Section == elf.SHN_UNDEF || sym.Value == 0 || sym.Name == "" {
			continue
		}
		if t == elf.STT_NOTYPE && (sym.Name[0] == '$' || sym.Name[0] == '.') {
			continue // mapping symbols, local labels
		}
		if sect := int(sym.Section); t == elf.STT_NOTYPE && (sect >= len(f.Sections) || f.Sections[sect].Flags&elf.SHF_EXECINSTR == 0) {
			continue // data labels
		}
		a := sym.Value + bias
		s.syms = append(s.syms, symbol{a, sym.Size, sym.Name})
		if old, dup := s.byName[sym.Name]; !dup || t == elf.STT_FUNC && old >= bias {
			s.byName[sym.Name] = a
		}
	}
	for _, sym := range pltSymbols(f) {
		sym.addr += bias
		s.syms = append(s.syms, sym)
		if _, dup := s.byName[sym.name]; !dup {
			s.byName[sym.name] = sym.addr
		}
	}
	// By address; at one address the largest symbol first, else in the
	// order added (a stable sort), sorted as keys without pointers:
	// moving them costs no write barriers while the garbage collector
	// runs.
	type key struct {
		addr, size uint64
		i          int32
	}
	keys := make([]key, len(s.syms))
	for i, sym := range s.syms {
		keys[i] = key{sym.addr, sym.size, int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if c := cmp.Compare(b.size, a.size); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	sorted := make([]symbol, len(s.syms))
	for i, k := range keys {
		sorted[i] = s.syms[k.i]
	}
	s.syms = sorted
	s.addData(f, syms, bias, object)
}

// Lookup returns the symbol containing pc and pc's offset in it: a sized
// symbol that covers pc among the few starting at or below it, else the
// nearest one below pc (which is how unsized assembly labels are meant).
func (s *Table) Lookup(pc uint64) (name string, off uint64, ok bool) {
	if s == nil {
		return "", 0, false
	}
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].addr > pc }) - 1
	if i < 0 {
		return "", 0, false
	}
	for j := i; j >= 0 && j > i-8; j-- {
		if sym := &s.syms[j]; sym.size > 0 && pc-sym.addr < sym.size {
			return sym.name, pc - sym.addr, true
		}
	}
	o := s.object(pc)
	switch {
	case o != nil && (o.sizedOnly || s.syms[i].addr < o.start):
		return "", 0, false // no symbol of its own covers pc
	case o == nil && (pc < s.lo || pc >= s.hi):
		return "", 0, false // outside every file: 0xffffffff is no symbol's
	}
	return s.syms[i].name, pc - s.syms[i].addr, true
}

// Bounds returns, sorted, every address where Lookup's answer may change:
// the start and end of every symbol and object range and of the span of
// the file New read. Between two consecutive ones, Lookup names the same
// symbol (or none).
func (s *Table) Bounds() []uint64 {
	out := make([]uint64, 0, 2*len(s.syms)+2*len(s.objs)+2)
	for _, sym := range s.syms {
		out = append(out, sym.addr)
		if sym.size > 0 {
			out = append(out, sym.addr+sym.size)
		}
	}
	for _, o := range s.objs {
		out = append(out, o.start, o.end)
	}
	out = append(out, s.lo, s.hi)
	slices.Sort(out)
	return slices.Compact(out)
}

// Addr returns the address of the named function: by its symbol name, or
// by its C++ name as Demangle prints it, with or without the parameter
// list ("thrower(int)" or "thrower" for _ZL7throweri); with several
// overloads of one name, the lowest address.
func (s *Table) Addr(name string) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	if a, ok := s.byName[name]; ok {
		return a, true
	}
	if s.byDemangled == nil {
		s.byDemangled = make(map[string]uint64)
		for _, sym := range s.syms { // by address: the lowest wins
			d := Demangled(sym.name)
			if d == "" {
				continue
			}
			if _, dup := s.byDemangled[d]; !dup {
				s.byDemangled[d] = sym.addr
			}
			// A clone (".cold" partition, ".constprop") is not the function.
			if i := strings.IndexByte(d, '('); i > 0 && !strings.Contains(d, " [clone ") {
				if _, dup := s.byDemangled[d[:i]]; !dup {
					s.byDemangled[d[:i]] = sym.addr
				}
			}
		}
	}
	a, ok := s.byDemangled[name]
	return a, ok
}

// Format renders pc as "name+0xoff" (or "name" at offset 0), or as a hex
// address when no symbol covers it.
func (s *Table) Format(pc uint64) string {
	name, off, ok := s.Lookup(pc)
	switch {
	case !ok:
		if o := s.object(pc); o != nil {
			return o.name + "+0x" + strconv.FormatUint(pc-o.base, 16)
		}
		return "0x" + strconv.FormatUint(pc, 16)
	case off == 0:
		return name
	}
	return name + "+0x" + strconv.FormatUint(off, 16)
}

// Resolver adapts LookupAddr to x86asm.GNUSyntax's symbol callback, which
// names branch targets and the memory an instruction refers to.
func (s *Table) Resolver() func(uint64) (string, uint64) {
	return func(pc uint64) (string, uint64) {
		name, off, ok := s.LookupAddr(pc)
		if !ok {
			return "", 0
		}
		return name, pc - off
	}
}

// SameFunction reports whether a and b lie in the same function, counting
// a function's ".cold" partition as part of it.
func (s *Table) SameFunction(a, b uint64) bool {
	na, _, oka := s.Lookup(a)
	nb, _, okb := s.Lookup(b)
	if !oka || !okb {
		return false
	}
	return stripCold(na) == stripCold(nb)
}

// Function returns the name of the function holding pc, its ".cold"
// partition counted as part of it (SameFunction compares these), if a
// symbol covers pc.
func (s *Table) Function(pc uint64) (string, bool) {
	name, _, ok := s.Lookup(pc)
	if !ok {
		return "", false
	}
	return stripCold(name), true
}

// stripCold removes a GCC partition suffix: "f.cold", "f.cold.3".
func stripCold(name string) string {
	if i := strings.Index(name, ".cold"); i > 0 {
		return name[:i]
	}
	return name
}

// pltSymbols names the PLT stubs of a dynamically linked file, as objdump
// does: each .plt entry after the function its .rela.plt relocation binds
// ("puts@plt"; the first entry, PLT0, is ".plt"), and on x86-64 each
// .plt.got entry after the GLOB_DAT relocation of the GOT slot it jumps
// through. Files whose PLT does not have that shape get none.
func pltSymbols(f *elf.File) []symbol {
	dsyms, err := f.DynamicSymbols()
	if err != nil {
		return nil
	}
	name := func(info uint64) string {
		i := int(info >> 32)
		if i < 1 || i > len(dsyms) || dsyms[i-1].Name == "" {
			return ""
		}
		return dsyms[i-1].Name + "@plt"
	}
	var out []symbol
	header := uint64(16)
	if f.Machine == elf.EM_AARCH64 {
		header = 32
	}
	if plt, rel := f.Section(".plt"), relocations(f, ".rela.plt"); plt != nil && len(rel) > 0 && plt.Size == header+16*uint64(len(rel)) {
		out = append(out, symbol{plt.Addr, header, ".plt"})
		for i, r := range rel {
			if n := name(r[1]); n != "" {
				out = append(out, symbol{plt.Addr + header + 16*uint64(i), 16, n})
			}
		}
	}
	if got := f.Section(".plt.got"); got != nil && f.Machine == elf.EM_X86_64 && got.Size%8 == 0 {
		code, err := got.Data()
		if err != nil {
			return out
		}
		slots := map[uint64]string{}
		for _, r := range relocations(f, ".rela.dyn") {
			if elf.R_X86_64(r[1]&0xffffffff) == elf.R_X86_64_GLOB_DAT {
				slots[r[0]] = name(r[1])
			}
		}
		for off := uint64(0); off+8 <= uint64(len(code)); off += 8 {
			if code[off] != 0xff || code[off+1] != 0x25 { // jmp *disp32(%rip)
				continue
			}
			slot := got.Addr + off + 6 + uint64(int64(int32(f.ByteOrder.Uint32(code[off+2:]))))
			if n := slots[slot]; n != "" {
				out = append(out, symbol{got.Addr + off, 8, n})
			}
		}
	}
	return out
}

// Size returns the size of the symbol at addr (0 when unsized or unknown).
func (s *Table) Size(addr uint64) uint64 {
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].addr > addr }) - 1
	for ; i >= 0 && s.syms[i].addr == addr; i-- {
		if s.syms[i].size > 0 {
			return s.syms[i].size
		}
	}
	return 0
}

// relocations returns the entries of the Elf64_Rela section sec (offset,
// info, addend), or none.
func relocations(f *elf.File, sec string) [][3]uint64 {
	s := f.Section(sec)
	if s == nil || s.Type != elf.SHT_RELA {
		return nil
	}
	data, err := s.Data()
	if err != nil {
		return nil
	}
	var out [][3]uint64
	for i := 0; i+24 <= len(data); i += 24 {
		out = append(out, [3]uint64{f.ByteOrder.Uint64(data[i:]), f.ByteOrder.Uint64(data[i+8:]), f.ByteOrder.Uint64(data[i+16:])})
	}
	return out
}
