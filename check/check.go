package check

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// Options configure a check.
type Options struct {
	// CFIOnly compares SFrame with the CFI only, without the code
	// analysis (package codeflow) that check runs by default.
	CFIOnly bool
	// CheckMalformed checks a section that breaks rules of the format
	// (but decodes whole) anyway, as read, instead of refusing it:
	// Report.Malformed lists the rules broken, and the verdict is
	// MALFORMED whatever the rows show.
	CheckMalformed bool
	// EachPC, when set, is called with the verdict at every instruction
	// checked, in address order within each FDE.
	EachPC func(PCResult)
	// Symbols and Lines, when set, name addresses and source lines in
	// problems instead of tables read from the file: tables already read
	// (verify's), for the file loaded at Bias (they name address pc+Bias).
	Symbols *symbols.Table
	Lines   *symbols.Lines
	Bias    uint64
	// SkipNotes leaves out the coverage notes (Report.Notes: why each
	// function without an FDE has none, which evaluates its CFI);
	// FunctionsWithoutSFrame still counts those functions.
	SkipNotes bool
}

// PCResult is the verdict at one instruction: the kinds of the problems
// found there (none: proven right, unless Unknown says why it could not
// be told).
type PCResult struct {
	PC       uint64
	FDE, FRE int // the SFrame row (FRE -1: none covers the PC, or the FDE's rest was not checked)
	Kinds    []Kind
	Unknown  string
	Limited  bool // proven, with a CFA on a register other than SP/FP
}

// ErrMalformed wraps the format errors of a section that breaks the rules
// of the format: there is nothing trustworthy to check.
var ErrMalformed = errors.New("malformed SFrame section, nothing to check ('sframesim validate' lists every problem; check --check-malformed checks it anyway)")

// File checks the SFrame data of the executable or shared object at path.
// A file that is not ELF, has no .sframe section (sframe.ErrNoSection) or
// has a malformed one (wrapping the *sframe.FormatError values; with
// Options.CheckMalformed only one that does not decode whole) is an
// error.
func File(path string, opt Options) (*Report, error) {
	sf, err := sframe.Open(path)
	if sf == nil {
		return nil, err
	}
	defer sf.Close()
	if err != nil {
		return nil, err
	}
	var errs sframe.Errors
	for _, p := range sf.Section.Validate(sf.ValidateOptions()) {
		if !p.Warn {
			errs = append(errs, p)
		}
	}
	if len(errs) > 0 && !opt.CheckMalformed {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrMalformed, errs)
	}
	rep, err := Section(path, sf.ELF, sf.Section, opt)
	if rep != nil {
		for _, e := range errs {
			rep.Malformed = append(rep.Malformed, e.Error())
		}
	}
	return rep, err
}

// Section checks sec, the SFrame section of the ELF file ef (possibly
// changed, as fault injection does), against ef's CFI and code.
func Section(name string, ef *elf.File, sec *sframe.Section, opt Options) (*Report, error) {
	a := arch.ForABI(sec.Header.ABI)
	if a == nil {
		return nil, fmt.Errorf("%s: SFrame ABI %v is not one sframesim checks", name, sec.Header.ABI)
	}
	if ef.Machine != a.Machine {
		return nil, fmt.Errorf("%s: SFrame ABI %v in an ELF file for %v", name, sec.Header.ABI, ef.Machine)
	}
	switch ef.Type {
	case elf.ET_EXEC, elf.ET_DYN:
	default:
		return nil, fmt.Errorf("%s: an ELF file of type %v: check reads executables and shared objects", name, ef.Type)
	}
	began := time.Now()
	c := &checker{
		name: name, ef: ef, sec: sec, a: a, opt: opt,
		problems: map[problemKey]*Problem{},
		rep: &Report{
			Binary: name, Arch: a.Name, SFrameVersion: int(sec.Header.Version),
			Problems: []Problem{}, CFIWrong: []Problem{}, RuleDiffers: []Problem{}, Unknown: map[string]uint64{}, Notes: []Note{},
			rows: make([][]RowVerdict, len(sec.FDEs)),
		},
	}
	tab, err := cfi.Load(ef)
	switch {
	case errors.Is(err, cfi.ErrNoCFI):
		tab = &cfi.Table{Arch: a}
		c.rep.CFI = "none"
	case err != nil:
		return nil, fmt.Errorf("%s: CFI: %w", name, err)
	default:
		c.rep.CFI = cfiSections(ef)
		for _, e := range tab.Errs {
			c.rep.CFIErrors = append(c.rep.CFIErrors, e.Error())
		}
	}
	c.cfi = tab
	c.loadCode()
	c.loadFuncs()
	c.run()
	c.finish(time.Since(began))
	return c.rep, nil
}

// cfiSections names the CFI sections of ef.
func cfiSections(ef *elf.File) string {
	var names []string
	for _, n := range []string{".eh_frame", ".debug_frame"} {
		if s := ef.Section(n); s != nil && s.Type != elf.SHT_NOBITS {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// A checker holds one check's state.
type checker struct {
	name string
	ef   *elf.File
	sec  *sframe.Section
	a    *arch.Arch
	opt  Options
	cfi  *cfi.Table
	// cfiRows is the buffer the CFI's FDEs are evaluated into, one at a
	// time (cfi.Table.Eval): rows are not kept.
	cfiRows []cfi.Row
	syms    *symbols.Table // read on first use (symtab)
	// elfSyms is the file's symbol table as loadFuncs read it, for
	// symtab: not read twice.
	elfSyms []elf.Symbol
	lines   *symbols.Lines // read on the first problem
	code    []codeRange
	spans   []codeSpan  // by start
	funcs   []funcRange // FUNC symbols in executable sections, by address
	plt     [][2]uint64 // the PLT sections' ranges
	// noReturnSyms are the addresses of symbols that name functions that
	// never return (noReturnNames).
	noReturnSyms map[uint64]bool
	// emptyCold names the empty .cold parts (FUNC symbols of size 0 in
	// executable sections whose names hold ".cold"), by address.
	emptyCold map[uint64][]string
	cs        *codeState // the code analysis

	rep      *Report
	problems map[problemKey]*Problem
	order    []problemKey
}

// codeRange is an executable section. Its bytes are read as the check
// needs them, in spans (the FDEs' ranges, merged): a static glibc program
// has far more code than SFrame data.
type codeRange struct {
	start, size uint64
	s           *elf.Section
	data        []byte // the whole section when it was read at once (compressed)
}

// codeSpan is a range of one executable section (c.code[sec]) that
// FDEs cover, read on first use.
type codeSpan struct {
	start, end uint64
	sec        int
	data       []byte
}

// spanGap: FDE ranges this close are read as one span.
const spanGap = 512

// funcRange is a sized function symbol.
type funcRange struct {
	start, end uint64
	name       string
}

func (c *checker) loadCode() {
	for _, s := range c.ef.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		r := codeRange{start: s.Addr, size: s.Size, s: s}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			data, err := s.Data()
			if err != nil {
				continue // its PCs will have no code: unknown
			}
			r.data, r.size = data, uint64(len(data))
		} else if s.Size > 0 {
			// Read lazily, but only if it can be read whole (as Data
			// could): the file holds its last byte.
			var last [1]byte
			if _, err := s.ReadAt(last[:], int64(s.Size-1)); err != nil {
				continue // its PCs will have no code: unknown
			}
		}
		c.code = append(c.code, r)
		if strings.HasPrefix(s.Name, ".plt") {
			c.plt = append(c.plt, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	sort.Slice(c.code, func(i, j int) bool { return c.code[i].start < c.code[j].start })
	// The spans: the FDEs' ranges by start, merged within a section.
	type rng struct{ start, end uint64 }
	var rs []rng
	for i := range c.sec.FDEs {
		if f := &c.sec.FDEs[i]; f.Size > 0 {
			rs = append(rs, rng{f.Start, f.End()})
		}
	}
	slices.SortFunc(rs, func(a, b rng) int { return cmp.Compare(a.start, b.start) })
	for _, r := range rs {
		i := c.codeIndex(r.start)
		if i < 0 || c.code[i].data != nil {
			continue
		}
		end := r.end
		if secEnd := c.code[i].start + c.code[i].size; end > secEnd || end < r.start {
			end = secEnd // to the section's end, as codeAt reads
		}
		if n := len(c.spans); n > 0 && c.spans[n-1].sec == i && r.start <= c.spans[n-1].end+spanGap {
			c.spans[n-1].end = max(c.spans[n-1].end, end)
			continue
		}
		c.spans = append(c.spans, codeSpan{start: r.start, end: end, sec: i})
	}
}

// codeIndex returns the index in c.code of the section holding pc, or -1.
func (c *checker) codeIndex(pc uint64) int {
	i := sort.Search(len(c.code), func(i int) bool { return c.code[i].start > pc }) - 1
	if i < 0 || pc-c.code[i].start >= c.code[i].size {
		return -1
	}
	return i
}

// symtab returns the file's symbol table, read on first use: a file
// without problems needs only its function ranges (loadFuncs).
func (c *checker) symtab() *symbols.Table {
	if c.syms == nil {
		c.syms = symbols.NewFromSymbols(c.ef, c.elfSyms, 0)
		c.elfSyms = nil
	}
	return c.syms
}

// names returns the symbol table and the bias its addresses carry.
func (c *checker) names() (*symbols.Table, uint64) {
	if c.opt.Symbols != nil {
		return c.opt.Symbols, c.opt.Bias
	}
	return c.symtab(), 0
}

// symFormat names pc as symbols.Table.Format does.
func (c *checker) symFormat(pc uint64) string {
	t, bias := c.names()
	return t.Format(pc + bias)
}

// resolver names the addresses an instruction refers to.
func (c *checker) resolver() func(uint64) (string, uint64) {
	if c.opt.Symbols == nil {
		return c.symtab().Resolver()
	}
	r, bias := c.opt.Symbols.Resolver(), c.opt.Bias
	return func(addr uint64) (string, uint64) {
		name, sym := r(addr + bias)
		if name == "" {
			return "", 0
		}
		return name, sym - bias
	}
}

// source returns the source line of pc, or "".
func (c *checker) source(pc uint64) string {
	if c.opt.Lines != nil {
		return c.opt.Lines.Lookup(pc + c.opt.Bias)
	}
	if c.lines == nil {
		c.lines = symbols.NewLines(c.ef, 0)
	}
	return c.lines.Lookup(pc)
}

// codeAt returns the code bytes from pc to end (or to its section's end).
func (c *checker) codeAt(pc, end uint64) []byte {
	i := c.codeIndex(pc)
	if i < 0 {
		return nil
	}
	r := &c.code[i]
	if n := end - pc; n > r.start+r.size-pc {
		end = r.start + r.size
	}
	if r.data != nil {
		return r.data[pc-r.start : end-r.start]
	}
	k := sort.Search(len(c.spans), func(k int) bool { return c.spans[k].start > pc }) - 1
	if k >= 0 && pc < c.spans[k].end && end <= c.spans[k].end {
		sp := &c.spans[k]
		if sp.data == nil {
			data := make([]byte, sp.end-sp.start)
			if _, err := r.s.ReadAt(data, int64(sp.start-r.start)); err != nil {
				return nil
			}
			sp.data = data
		}
		return sp.data[pc-sp.start : end-sp.start]
	}
	// Outside the spans (a finding's instruction between FDEs): just
	// these bytes.
	b := make([]byte, end-pc)
	if _, err := r.s.ReadAt(b, int64(pc-r.start)); err != nil {
		return nil
	}
	return b
}

func (c *checker) loadFuncs() {
	syms, _ := c.ef.Symbols()
	c.elfSyms = syms
	c.noReturnSyms = map[uint64]bool{}
	type funcKey struct {
		start, end uint64
		i          int32 // in syms
	}
	var keys []funcKey
	for k, s := range syms {
		if t := elf.ST_TYPE(s.Info); (t == elf.STT_FUNC || t == elf.STT_NOTYPE) && s.Section != elf.SHN_UNDEF && s.Value != 0 && isNoReturnName(s.Name) {
			c.noReturnSyms[s.Value] = true
		}
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(c.ef.Sections) {
			continue
		}
		if c.ef.Sections[s.Section].Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		if s.Size == 0 {
			if strings.Contains(s.Name, ".cold") {
				if c.emptyCold == nil {
					c.emptyCold = map[uint64][]string{}
				}
				c.emptyCold[s.Value] = append(c.emptyCold[s.Value], s.Name)
			}
			continue
		}
		keys = append(keys, funcKey{start: s.Value, end: s.Value + s.Size, i: int32(k)})
	}
	// Sorted as keys without pointers: moving them costs no write
	// barriers while the garbage collector runs.
	slices.SortFunc(keys, func(a, b funcKey) int {
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		if a.end != b.end {
			return cmp.Compare(b.end, a.end)
		}
		return strings.Compare(syms[a.i].Name, syms[b.i].Name)
	})
	c.funcs = make([]funcRange, len(keys))
	for k, key := range keys {
		c.funcs[k] = funcRange{start: key.start, end: key.end, name: syms[key.i].Name}
	}
	// Aliases (several names for one range) count once.
	out := c.funcs[:0]
	for _, f := range c.funcs {
		if n := len(out); n > 0 && out[n-1].start == f.start && out[n-1].end == f.end {
			continue
		}
		out = append(out, f)
	}
	c.funcs = out
}

// inFunc reports whether a sized function symbol covers pc.
func (c *checker) inFunc(pc uint64) bool {
	i := sort.Search(len(c.funcs), func(i int) bool { return c.funcs[i].start > pc }) - 1
	for j := i; j >= 0 && j > i-8; j-- {
		if pc-c.funcs[j].start < c.funcs[j].end-c.funcs[j].start {
			return true
		}
	}
	return false
}

// funcAt returns the name of the sized function symbol starting at pc.
func (c *checker) funcAt(pc uint64) (string, bool) {
	i := sort.Search(len(c.funcs), func(i int) bool { return c.funcs[i].start >= pc })
	if i < len(c.funcs) && c.funcs[i].start == pc {
		return c.funcs[i].name, true
	}
	return "", false
}

// run checks every FDE, then the whole-binary findings.
func (c *checker) run() {
	order := make([]int, len(c.sec.FDEs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(c.sec.FDEs[x].Start, c.sec.FDEs[y].Start) })
	c.analyzeCode(order)
	for _, i := range order {
		c.checkFDE(i)
	}
	c.overlaps(order)
	c.coverage()
}
