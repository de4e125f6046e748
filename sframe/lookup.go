package sframe

import (
	"fmt"
	"sort"
	"strconv"
)

// Reg is a DWARF register number of the section's ABI [SFrame §1.5], or
// RegCFA for the canonical frame address itself.
type Reg int16

// RegCFA names the CFA as the base of a rule.
const RegCFA Reg = -1

// RuleKind says how a value of the caller's frame is recovered.
type RuleKind uint8

// Rule kinds.
const (
	// RuleSame: the value is unchanged, still in its register. For the RA
	// of an RA-tracking ABI (AArch64 x30, s390x r14) this is only valid in
	// the topmost frame [SFrame §5.2 step 4].
	RuleSame RuleKind = iota
	// RuleExpr: the value is Reg+Offset, loaded from memory when Deref.
	RuleExpr
	// RuleUndefined: there is no value; the frame is the outermost one.
	RuleUndefined
)

func (k RuleKind) String() string {
	switch k {
	case RuleSame:
		return "same"
	case RuleExpr:
		return "expr"
	case RuleUndefined:
		return "undefined"
	}
	return "RuleKind(" + strconv.Itoa(int(k)) + ")"
}

// A Rule recovers one value (CFA, RA or FP) of a frame. Every SFrame encoding
// maps onto it: a DEFAULT "RA saved at CFA-8" is {RuleExpr, RegCFA, -8,
// Deref}; a DEFAULT CFA of "sp+16" is {RuleExpr, SP, 16, no deref}; FLEX
// control/offset pairs map field by field [SFrame §4.3, §4.4].
type Rule struct {
	Kind   RuleKind
	Reg    Reg
	Offset int32
	Deref  bool
}

// Format renders the rule with the ABI's register names: "sp+16",
// "*(cfa-8)", "same", "undefined".
func (r Rule) Format(abi ABI) string {
	switch r.Kind {
	case RuleSame:
		return "same"
	case RuleUndefined:
		return "undefined"
	}
	s := RegName(abi, r.Reg) + fmtSigned(r.Offset)
	if r.Deref {
		return "*(" + s + ")"
	}
	return s
}

func fmtSigned(v int32) string {
	if v < 0 {
		return strconv.FormatInt(int64(v), 10)
	}
	return "+" + strconv.FormatInt(int64(v), 10)
}

// RegName names a DWARF register of the ABI: "sp", "fp", "ra" for the three
// the ABI designates, "cfa" for RegCFA, otherwise "r<N>".
func RegName(abi ABI, r Reg) string {
	if r == RegCFA {
		return "cfa"
	}
	sp, fp, ra, ok := abi.Regs()
	if ok {
		switch r {
		case sp:
			return "sp"
		case fp:
			return "fp"
		case ra:
			return "ra"
		}
	}
	return "r" + strconv.Itoa(int(r))
}

// A Row is the result of a lookup: the FRE that applies at a PC and the
// recovery rules it encodes.
type Row struct {
	// FDE is the index of the function in Section.FDEs, FRE the index of the
	// row in that FDE's FREs.
	FDE, FRE int
	// CFA is always a RuleExpr (RuleUndefined when Outermost).
	CFA, RA, FP Rule
	// MangledRA: the RA carries a pointer-authentication code to strip.
	MangledRA bool
	// KeyB: the AArch64 pointer-authentication key is B (else A).
	KeyB bool
	// Signal: the function is a signal trampoline (V3 signal bit).
	Signal bool
	// Outermost: the FRE marks the RA as undefined; unwinding ends here.
	Outermost bool
}

// FindFDE returns the index in s.FDEs of the function covering pc, or
// ErrNoFDE. With overlapping functions (which Validate reports) the one
// with the greatest start at or below pc among those covering pc wins, as
// in the kernel's search.
//
// In a relocatable object, where addresses are not yet assigned, FindFDEIn
// finds a function by its section and offset instead.
func (s *Section) FindFDE(pc uint64) (int, error) {
	i := s.index.covering(pc)
	if i < 0 {
		return -1, ErrNoFDE
	}
	return int(s.index.order[i]), nil
}

// SetLocations records where the functions of a relocatable object's
// section are (locs[i] for FDE i: NewFile sets them from the start fields'
// relocations) and indexes them by section for FindFDEIn and LookupIn.
func (s *Section) SetLocations(locs []Location) {
	s.Locations = locs
	s.secIndex = map[int]*sectionIndex{}
	fdes := map[int][]FDE{}
	ids := map[int][]int32{}
	for i, l := range locs {
		if i >= len(s.FDEs) || !l.Known || l.Discarded {
			continue
		}
		f := s.FDEs[i]
		f.Start = l.Offset
		fdes[l.Section] = append(fdes[l.Section], f)
		ids[l.Section] = append(ids[l.Section], int32(i))
	}
	for sec, fs := range fdes {
		x := &sectionIndex{fdes: ids[sec]}
		x.index.build(fs)
		s.secIndex[sec] = x
	}
}

// sectionIndex indexes the FDEs of one section of a relocatable object by
// their offsets in it; fdes maps its FDE numbers to s.FDEs indices.
type sectionIndex struct {
	index fdeIndex
	fdes  []int32
}

// FindFDEIn returns the index in s.FDEs of the function of a relocatable
// object that covers offset off of the ELF section with index sec (see
// Locations), or ErrNoFDE. FDEs of other sections never cover it, whatever
// their offsets.
func (s *Section) FindFDEIn(sec int, off uint64) (int, error) {
	x := s.secIndex[sec]
	if x == nil {
		return -1, ErrNoFDE
	}
	i := x.index.covering(off)
	if i < 0 {
		return -1, ErrNoFDE
	}
	return int(x.fdes[x.index.order[i]]), nil
}

// LookupIn is Lookup for a relocatable object: it finds the FDE and FRE
// covering offset off of the ELF section with index sec and decodes their
// rules.
func (s *Section) LookupIn(sec int, off uint64) (Row, error) {
	i, err := s.FindFDEIn(sec, off)
	if err != nil {
		return Row{}, err
	}
	f := s.FDEs[i]
	f.Start = s.Locations[i].Offset
	j, err := s.FindFRE(&f, off)
	if err != nil {
		if err == ErrNoFRE {
			return Row{FDE: i, FRE: -1}, fmt.Errorf("FDE %d at %v: %w", i, s.Locations[i], err)
		}
		return Row{FDE: i, FRE: -1}, err
	}
	return s.Rules(i, j)
}

// FindFRE returns the index in f.FREs of the row covering pc: the last FRE
// whose start is at or below pc's offset in the function (PCMASK: the offset
// modulo RepSize) [SFrame §5.1]. It returns ErrNoFRE when there is none, and
// a *FormatError when the FDE cannot be evaluated (PCMASK with rep_size 0,
// a V1 PCMASK FDE).
func (s *Section) FindFRE(f *FDE, pc uint64) (int, error) {
	if !f.Contains(pc) {
		return -1, ErrNoFRE
	}
	off := pc - f.Start
	if f.PCType() == PCMask {
		rep := s.RepSize(f)
		if rep == 0 {
			return -1, &FormatError{Off: s.repSizeOff(f), Check: CheckFDE, Field: "rep_size",
				Msg: "PCMASK FDE with rep_size 0", Val: f.RepSize}
		}
		off %= uint64(rep)
	}
	fres := f.FREs
	// Last FRE with start <= off. Starts are normally increasing; binary
	// search short lists linearly to keep the common case branch-light.
	j := -1
	if len(fres) <= 8 {
		for k := range fres {
			if uint64(fres[k].Start) > off {
				break
			}
			j = k
		}
	} else {
		j = sort.Search(len(fres), func(k int) bool { return uint64(fres[k].Start) > off }) - 1
	}
	if j < 0 {
		return -1, ErrNoFRE
	}
	return j, nil
}

// V1RepSize is the repetition size SFrame V1 PCMASK FDEs imply: V1 has no
// rep_size field, and ld 2.40 writes them only for x86-64 PLTs of 16-byte
// stubs ("For AMD64, the pltN entry stub is 16 bytes", libsframe 2.40), so
// a PC's row is the one for its offset modulo 16 in its stub.
//
// libsframe 2.40's sframe_find_fre gets this wrong: it compares
// (func_start_address + fre_start) & 0xff with pc & 0xff, a mask of 0xff
// (not 0xf) on section-relative sums, so in every stub past the first the
// rows of the first stub's offsets apply: in ld 2.40's lazy PLT (FRE 0 at
// 0: sp+8, FRE 1 at 0xb, after the push: sp+16), 2 bytes into the second
// stub it answers FRE 1, though the push is yet to come. The modulo 16
// here is what the PLT's code does.
const V1RepSize = 16

// RepSize returns the repetition size of a PCMASK FDE: its rep_size field,
// or V1RepSize in SFrame V1.
func (s *Section) RepSize(f *FDE) uint32 {
	if s.Header.Version == Version1 {
		return V1RepSize
	}
	return uint32(f.RepSize)
}

// repSizeOff returns the section offset of an FDE's rep_size byte.
func (s *Section) repSizeOff(f *FDE) int64 {
	if s.Header.Version == Version3 {
		return f.AttrOff + 4
	}
	return f.Off + 17
}

// Lookup finds the FDE and FRE covering pc and decodes their rules. It
// returns ErrNoFDE or ErrNoFRE (wrapped with the function's index) when the
// section has no data for pc, and a *FormatError when the applicable FRE
// cannot be interpreted.
func (s *Section) Lookup(pc uint64) (Row, error) {
	i, err := s.FindFDE(pc)
	if err != nil {
		return Row{}, err
	}
	f := &s.FDEs[i]
	j, err := s.FindFRE(f, pc)
	if err != nil {
		if err == ErrNoFRE {
			return Row{FDE: i, FRE: -1}, fmt.Errorf("FDE %d at %#x: %w", i, f.Start, err)
		}
		return Row{FDE: i, FRE: -1}, err
	}
	return s.Rules(i, j)
}

// RowExtent returns the PC range [lo, hi) around pc over which Lookup
// finds the same FDE and FRE as at pc, so a caller may reuse its Row there.
// ok is false where pc has no row, for PCMASK FDEs (their rows repeat) and
// for FREs out of order.
func (s *Section) RowExtent(pc uint64) (lo, hi uint64, ok bool) {
	k := s.index.find(pc)
	if k < 0 || pc >= s.index.ends[k] {
		return 0, 0, false
	}
	f := &s.FDEs[s.index.order[k]]
	if f.PCType() == PCMask {
		return 0, 0, false
	}
	j, err := s.FindFRE(f, pc)
	if err != nil {
		return 0, 0, false
	}
	lo, hi = f.Start+uint64(f.FREs[j].Start), s.index.ends[k]
	if j+1 < len(f.FREs) {
		if f.FREs[j+1].Start <= f.FREs[j].Start {
			return 0, 0, false
		}
		hi = f.Start + uint64(f.FREs[j+1].Start)
	}
	if k+1 < len(s.index.starts) {
		hi = min(hi, s.index.starts[k+1])
	}
	if pc < lo || pc >= hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// Rules decodes the recovery rules of FRE j of FDE i [SFrame §4.3, §4.4].
func (s *Section) Rules(i, j int) (Row, error) {
	f := &s.FDEs[i]
	fre := &f.FREs[j]
	row := Row{FDE: i, FRE: j, MangledRA: fre.MangledRA(), KeyB: f.KeyB(), Signal: f.Signal()}
	h := &s.Header
	n := fre.Count()
	if n == 0 {
		row.Outermost = true
		row.CFA = Rule{Kind: RuleUndefined}
		row.RA = Rule{Kind: RuleUndefined}
		row.FP = Rule{Kind: RuleSame}
		return row, nil
	}
	sp, fp, _, _ := h.ABI.Regs()
	s390 := h.ABI.S390X()
	cfaOff := func(w int32) int32 {
		if s390 {
			return w*8 + s390xCFABias
		}
		return w
	}
	// Rules for "no word": the header's fixed offset, else unchanged.
	fixedRA := Rule{Kind: RuleSame}
	if h.CFAFixedRAOffset != 0 {
		fixedRA = Rule{Kind: RuleExpr, Reg: RegCFA, Offset: int32(h.CFAFixedRAOffset), Deref: true}
	}
	fixedFP := Rule{Kind: RuleSame}
	if h.CFAFixedFPOffset != 0 {
		fixedFP = Rule{Kind: RuleExpr, Reg: RegCFA, Offset: int32(h.CFAFixedFPOffset), Deref: true}
	}
	bad := func(msg string) (Row, error) {
		return row, &FormatError{Off: fre.Off, Check: CheckFRE, Field: fmt.Sprintf("FDE[%d].FRE[%d]", i, j), Msg: msg, Val: fre.Info}
	}
	switch f.Type() {
	case FDETypeDefault:
		base := sp
		if fre.BaseReg() == BaseFP {
			base = fp
		}
		row.CFA = Rule{Kind: RuleExpr, Reg: base, Offset: cfaOff(fre.Words[0])}
		row.RA, row.FP = fixedRA, fixedFP
		saved := func(w int32) Rule {
			// s390x V2: an odd word names the register holding the value.
			if s390 && h.Version == Version2 && w&1 != 0 {
				return Rule{Kind: RuleExpr, Reg: Reg(w >> 1)}
			}
			return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: w, Deref: true}
		}
		if h.CFAFixedRAOffset != 0 {
			// Word 1 is FP [SFrame §4.3].
			if n >= 2 {
				row.FP = saved(fre.Words[1])
			}
		} else {
			// Word 1 is RA, word 2 FP. An RA word of 0 is padding: RA not
			// saved (s390x), printed "U" by the dumper.
			if n >= 2 && fre.Words[1] != 0 {
				row.RA = saved(fre.Words[1])
			}
			if n >= 3 {
				row.FP = saved(fre.Words[2])
			}
		}
	case FDETypeFlex:
		// (control, offset) pairs for CFA, RA, FP; a single 0 word stands
		// for "no RA rule" when an FP rule follows [SFrame §4.4].
		pair := func(k int) Rule {
			c := fre.UWord(k)
			r := Rule{Kind: RuleExpr, Reg: RegCFA, Offset: fre.Words[k+1], Deref: c&flexDerefBit != 0}
			if c&flexRegPBit != 0 {
				r.Reg = Reg(c >> flexRegShift)
			}
			return r
		}
		if n < 2 {
			return bad(fmt.Sprintf("FLEX FRE with %d data word(s): the CFA needs a control and an offset word", n))
		}
		if fre.UWord(0)&flexRegPBit == 0 {
			return bad("FLEX CFA control word has no register (reg_p clear)")
		}
		row.CFA = pair(0)
		row.CFA.Offset = cfaOff(row.CFA.Offset)
		row.RA, row.FP = fixedRA, fixedFP
		k := 2
		if n > k {
			if fre.UWord(k) == 0 {
				k++ // padding: no RA rule, an FP rule must follow
				if n == k {
					return bad(fmt.Sprintf("FLEX FRE with %d data words: RA padding word without an FP rule after it", n))
				}
			} else {
				if n < k+2 {
					return bad(fmt.Sprintf("FLEX FRE with %d data words: RA control word without offset", n))
				}
				row.RA = pair(k)
				k += 2
			}
		}
		if n > k {
			if n < k+2 {
				return bad(fmt.Sprintf("FLEX FRE with %d data words: FP control word without offset", n))
			}
			if fre.UWord(k) != 0 {
				row.FP = pair(k)
			}
			k += 2
		}
		if n > k {
			return bad(fmt.Sprintf("FLEX FRE with %d data words: %d left over", n, n-k))
		}
	default:
		return row, &FormatError{Off: s.infoOff(f) + 1, Check: CheckFDE, Field: fmt.Sprintf("FDE[%d].func_info2", i),
			Msg: "unknown FDE type", Val: f.Info2}
	}
	return row, nil
}
