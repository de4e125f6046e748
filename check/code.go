package check

import (
	"debug/elf"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sframesim/sframesim/codeflow"
	"github.com/sframesim/sframesim/lsda"
	"github.com/sframesim/sframesim/sframe"
)

// noReturnNames are functions that never return to their caller, by
// symbol name (a PLT stub's name without "@plt", glibc's internal
// "__GI_" aliases without the prefix). The code analysis adds the
// functions it shows never return.
var noReturnNames = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "abort": true, "__stack_chk_fail": true, "__stack_chk_fail_local": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true, "__cxa_bad_cast": true,
	"__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true, "_ZSt9terminatev": true,
	"__cxa_call_terminate": true, "__cxa_call_unexpected": true, "longjmp": true, "siglongjmp": true, "_longjmp": true,
	"__longjmp_chk": true, "__assert_fail": true, "__assert_perror_fail": true, "__chk_fail": true, "__fortify_fail": true,
	"__libc_fatal": true, "pthread_exit": true, "exit_group": true, "quick_exit": true,
	"_ZSt17__throw_bad_allocv": true, "_ZSt20__throw_length_errorPKc": true,
	"_ZSt24__throw_out_of_range_fmtPKcz": true, "_ZSt19__throw_logic_errorPKc": true,
	"_ZSt20__throw_out_of_rangePKc": true, "_ZSt16__throw_bad_castv": true,
	"_ZSt20__throw_system_errori": true, "_ZSt20__throw_future_errori": true, "_ZSt25__throw_bad_function_callv": true,
	"__cxa_pure_virtual": true, "__libc_start_main": true, "__libc_start_call_main": true,
}

// isNoReturnName reports whether a symbol names a function that never
// returns.
func isNoReturnName(name string) bool {
	name = strings.TrimSuffix(name, "@plt")
	return noReturnNames[name] || noReturnNames[strings.TrimPrefix(name, "__GI_")]
}

// fdeCode is the code analysis of one FDE's instructions.
type fdeCode struct {
	insns []codeflow.Insn // every instruction of the FDE, in address order
	// why, when set, is why the code has no opinion anywhere in the FDE.
	why string
}

// How an FDE's code is analysed.
const (
	entryCall      = iota // entered by a call (a function)
	entryPartition        // entered by jumps from other FDEs (a .cold part, or a start no call reaches)
	entryStubs            // PCMASK: each repetition is a PLT stub entered by a call
	entryNone             // not analysed (why), decoded only
)

// codeState is the whole-binary state of the code analysis.
type codeState struct {
	fdes     []fdeCode
	how      []uint8
	noReturn map[uint64]bool    // function starts that never return
	starts   map[uint64]int     // FDE start → index, for the FDEs entered by a call
	asked    map[uint64][]int32 // FDE start → the FDEs that call it
	called   map[uint64]bool    // direct call targets other than the starts of functions (starts)
	cur      int32              // the FDE being analysed (-1: do not record calls)
	ro       []roSection        // read-only sections, for jump tables
	results  []codeflow.Result
	az       *codeflow.Analyzer // the work space of every analysis
}

// analyzers keep the code analysis's work spaces from one check to the
// next (a corpus checks many binaries one after another).
var analyzers = sync.Pool{New: func() any { return new(codeflow.Analyzer) }}

type roSection struct {
	addr uint64
	s    *elf.Section
	data []byte
	read bool
}

// analyzeCode runs the code analysis of every FDE (Options.CFIOnly: only
// decodes them) over the whole binary: the noreturn functions (by name,
// then those the analysis shows never return, to a fixed point), the
// landing pads from the LSDAs, jump tables from read-only data, .cold
// partitions entered where their hot parts jump. order is by start.
func (c *checker) analyzeCode(order []int) {
	n := len(c.sec.FDEs)
	cs := &codeState{fdes: make([]fdeCode, n), how: make([]uint8, n), results: make([]codeflow.Result, n),
		noReturn: map[uint64]bool{}, starts: map[uint64]int{}, asked: map[uint64][]int32{}, called: map[uint64]bool{}, cur: -1}
	c.cs = cs
	cs.az = analyzers.Get().(*codeflow.Analyzer)
	defer func() {
		analyzers.Put(cs.az)
		cs.az = nil
	}()
	for a := range c.noReturnSyms {
		cs.noReturn[a] = true
	}
	for _, s := range c.ef.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_WRITE == 0 && s.Type == elf.SHT_PROGBITS {
			cs.ro = append(cs.ro, roSection{addr: s.Addr, s: s})
		}
	}
	// What enters each FDE.
	for _, i := range order {
		f := &c.sec.FDEs[i]
		switch {
		case c.opt.CFIOnly:
			cs.how[i], cs.fdes[i].why = entryNone, "no code analysis (CFI only)"
		case f.Signal() || c.cfiSignal(f.Start):
			cs.how[i], cs.fdes[i].why = entryNone, "a signal frame: entered by the kernel, not by a call"
		case f.PCType() == sframe.PCMask:
			cs.how[i] = entryStubs
		case c.inPLT(f.Start):
			cs.how[i], cs.fdes[i].why = entryNone, "a PLT header: entered by jumps from the PLT stubs"
		default:
			name, ok := c.funcAt(f.Start)
			switch {
			case f.Start == c.ef.Entry:
				cs.how[i] = entryCall
			case ok && !strings.Contains(name, ".cold"):
				cs.how[i] = entryCall
				cs.starts[f.Start] = i
			default:
				cs.how[i] = entryPartition
			}
		}
	}
	// The functions, then the noreturn fixed point.
	for _, i := range order {
		if len(c.sec.FDEs[i].FREs) == 0 {
			continue
		}
		switch cs.how[i] {
		case entryCall:
			c.analyzeFDE(i, nil, true)
		case entryStubs:
			c.analyzeStubs(i)
		case entryNone:
			c.decodeOnly(i)
		}
	}
	var work []int
	pending := map[int]bool{}
	mark := func(i int) {
		start := c.sec.FDEs[i].Start
		if !cs.results[i].NoReturn || cs.noReturn[start] {
			return
		}
		cs.noReturn[start] = true
		for _, j := range cs.asked[start] {
			if !pending[int(j)] {
				pending[int(j)] = true
				work = append(work, int(j))
			}
		}
	}
	for _, i := range order {
		if cs.how[i] == entryCall {
			mark(i)
		}
	}
	for len(work) > 0 {
		i := work[0]
		work = work[1:]
		delete(pending, i)
		c.analyzeFDE(i, nil, false)
		mark(i)
	}
	// The partitions, entered where the functions' jumps and landing pads
	// lead; a start that calls reach is entered by a call too. A jump to
	// the function's own empty .cold part (GCC's for code it proved
	// unreachable: __builtin_unreachable, a switch's impossible default)
	// lands wherever the linker put that empty part, at another
	// function's .cold part: it enters no code of that one.
	var exits []codeflow.Exit
	for _, i := range order {
		if cs.how[i] == entryCall {
			for _, e := range cs.results[i].Exits {
				if e.Known && !c.intoEmptyCold(c.sec.FDEs[i].Start, e.Target) {
					exits = append(exits, e)
				}
			}
		}
	}
	slices.SortStableFunc(exits, func(a, b codeflow.Exit) int {
		switch {
		case a.Target < b.Target:
			return -1
		case a.Target > b.Target:
			return 1
		}
		return 0
	})
	for _, i := range order {
		f := &c.sec.FDEs[i]
		if cs.how[i] != entryPartition || len(f.FREs) == 0 {
			continue
		}
		k := sort.Search(len(exits), func(k int) bool { return exits[k].Target >= f.Start })
		var entries []codeflow.Entry
		for ; k < len(exits) && exits[k].Target < f.End(); k++ {
			entries = append(entries, exits[k].Entry())
		}
		name, _ := c.funcAt(f.Start)
		if cs.called[f.Start] && !strings.Contains(name, ".cold") {
			c.analyzeFDE(i, entries, false)
			continue
		}
		if len(entries) == 0 {
			c.decodeOnly(i)
			cs.fdes[i].why = "a part of a function no analysed jump enters (a .cold partition, or code reached only through pointers)"
			continue
		}
		c.analyzeFDE(i, entries, false)
	}
	for i := range cs.results {
		if cs.fdes[i].insns == nil {
			cs.fdes[i].insns = cs.results[i].Insns
		}
	}
	cs.results = nil
}

// intoEmptyCold reports whether a jump of the function at start to
// target goes to the function's own empty .cold part: a symbol NAME.cold
// (or NAME.cold.N) of size 0 at target, NAME a name of the function.
func (c *checker) intoEmptyCold(start, target uint64) bool {
	names := c.emptyCold[target]
	if len(names) == 0 {
		return false
	}
	for k := sort.Search(len(c.funcs), func(k int) bool { return c.funcs[k].start >= start }); k < len(c.funcs) && c.funcs[k].start == start; k++ {
		for _, n := range names {
			if own, _, ok := strings.Cut(n, ".cold"); ok && own == c.funcs[k].name {
				return true
			}
		}
	}
	return false
}

// codeFunc returns the codeflow.Func of FDE i's code.
func (c *checker) codeFunc(i int) codeflow.Func {
	f := &c.sec.FDEs[i]
	code := c.codeAt(f.Start, f.End())
	return codeflow.Func{Start: f.Start, Code: code, NoReturn: c.isNoReturn, LandingPads: c.landingPads(f.Start), Mem: c.readOnly}
}

// analyzeFDE analyses FDE i: entered by a call, and at entries (with
// EntriesOnly when the start is not entered by a call); record: note the
// call targets it asks about.
func (c *checker) analyzeFDE(i int, entries []codeflow.Entry, record bool) {
	cs := c.cs
	f := &c.sec.FDEs[i]
	fn := c.codeFunc(i)
	if uint64(len(fn.Code)) < uint64(f.Size) {
		return // checkFDE stops at the start: no code
	}
	fn.Entries = entries
	if cs.how[i] == entryPartition && !cs.called[f.Start] {
		fn.EntriesOnly = true
	}
	if f.Start == c.ef.Entry {
		undef := sframe.Rule{Kind: sframe.RuleUndefined}
		fn.Entry = &codeflow.Row{CFA: undef, RA: undef}
	}
	if record {
		cs.cur = int32(i)
	}
	cs.results[i] = cs.az.Analyze(c.a, fn)
	cs.cur = -1
}

// analyzeStubs analyses each repetition of PCMASK FDE i as a PLT stub
// entered by a call.
func (c *checker) analyzeStubs(i int) {
	f := &c.sec.FDEs[i]
	code := c.codeAt(f.Start, f.End())
	rs := uint64(c.sec.RepSize(f))
	if uint64(len(code)) < uint64(f.Size) {
		return
	}
	if rs == 0 {
		c.decodeOnly(i)
		c.cs.fdes[i].why = "a PCMASK FDE without a repetition size"
		return
	}
	var insns []codeflow.Insn
	for off := uint64(0); off < uint64(len(code)); off += rs {
		res := c.cs.az.Analyze(c.a, codeflow.Func{Start: f.Start + off, Code: code[off:min(off+rs, uint64(len(code)))], Mem: c.readOnly})
		insns = append(insns, res.Insns...)
	}
	c.cs.fdes[i].insns = insns
}

// decodeOnly finds the instructions of FDE i without analysing them: the
// code has no opinion there.
func (c *checker) decodeOnly(i int) {
	f := &c.sec.FDEs[i]
	code := c.codeAt(f.Start, f.End())
	if uint64(len(code)) < uint64(f.Size) {
		return
	}
	c.cs.fdes[i].insns = c.cs.az.Decode(c.a, codeflow.Func{Start: f.Start, Code: code})
}

// isNoReturn reports whether a call to target does not return; it
// notes the call for the noreturn fixed point.
func (c *checker) isNoReturn(target uint64) bool {
	cs := c.cs
	if cs.cur >= 0 {
		if _, ok := cs.starts[target]; ok {
			if a := cs.asked[target]; len(a) == 0 || a[len(a)-1] != cs.cur {
				cs.asked[target] = append(a, cs.cur)
			}
		} else {
			cs.called[target] = true // a start that is not a function's (see the partitions)
		}
	}
	if cs.noReturn[target] {
		return true
	}
	if c.inPLT(target) {
		t, bias := c.names()
		name, off, ok := t.Lookup(target + bias)
		return ok && off == 0 && isNoReturnName(name)
	}
	return false
}

// landingPads returns the landing pads of the function whose CFI FDE
// starts at start, from its LSDA (none when it has none or it cannot be
// read: the code after the pads is then not reached, unknown).
func (c *checker) landingPads(start uint64) []codeflow.LandingPad {
	cf := c.cfi.Find(start)
	if cf == nil || cf.Start != start || cf.LSDA == 0 {
		return nil
	}
	data, addr, ok := c.sectionData(cf.LSDA)
	if !ok {
		return nil
	}
	ptrSize := 8
	if c.ef.Class == elf.ELFCLASS32 {
		ptrSize = 4
	}
	t, err := lsda.Parse(data[cf.LSDA-addr:], cf.LSDA, start, ptrSize, c.ef.ByteOrder)
	if err != nil {
		return nil
	}
	var pads []codeflow.LandingPad
	for _, s := range t.CallSites {
		if s.LandingPad != 0 {
			pads = append(pads, codeflow.LandingPad{Start: s.Start, End: s.End, Pad: s.LandingPad})
		}
	}
	return pads
}

// sectionData returns the contents of the read-only section holding
// addr, and the section's address.
func (c *checker) sectionData(addr uint64) ([]byte, uint64, bool) {
	for k := range c.cs.ro {
		r := &c.cs.ro[k]
		if addr < r.addr || addr-r.addr >= r.s.Size {
			continue
		}
		if !r.read {
			r.read = true
			r.data, _ = r.s.Data()
		}
		if addr-r.addr >= uint64(len(r.data)) {
			return nil, 0, false
		}
		return r.data, r.addr, true
	}
	return nil, 0, false
}

// readOnly reads n bytes of read-only data at addr (codeflow.Func.Mem).
func (c *checker) readOnly(addr uint64, n int) ([]byte, bool) {
	data, base, ok := c.sectionData(addr)
	if !ok || n < 0 || addr-base+uint64(n) > uint64(len(data)) {
		return nil, false
	}
	return data[addr-base : addr-base+uint64(n)], true
}

// inPLT reports whether addr lies in a PLT section (.plt, .plt.got,
// .plt.sec, …).
func (c *checker) inPLT(addr uint64) bool {
	for _, s := range c.plt {
		if addr >= s[0] && addr < s[1] {
			return true
		}
	}
	return false
}

// cfiSignal reports whether the CFI FDE starting at pc is a signal frame
// (its CIE's 'S' augmentation: V1 and V2 SFrame cannot say so).
func (c *checker) cfiSignal(pc uint64) bool {
	cf := c.cfi.Find(pc)
	return cf != nil && cf.Start == pc && cf.Signal
}
