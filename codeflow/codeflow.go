package codeflow

import (
	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// A Func is one function to analyse: its bytes and where they are.
type Func struct {
	Name  string
	Start uint64 // address of the first byte
	Code  []byte // the function's bytes (its FDE's range)

	// Optional context from the whole binary.

	// NoReturn reports call targets known not to return (exit, abort,
	// __stack_chk_fail, __cxa_throw, _Unwind_Resume, functions ending
	// without a return, …): the path ends at such a call. nil: every call
	// returns.
	NoReturn func(target uint64) bool
	// Entry holds the rules at Start when it is not entered by a call
	// (a .cold partition, a PLT stub); nil is the standard call entry. An
	// RA rule of RuleUndefined marks the outermost frame (the ELF entry
	// point): the RA is then undefined at every PC.
	Entry *Row
	// Entries are further places where control enters the range from
	// outside with known rules, such as the jumps of a hot partition into
	// several blocks of its .cold part (see Result.Exits).
	Entries []Entry
	// EntriesOnly: Start is not entered by a call (Entry is then
	// ignored); control comes in only at Entries (a .cold partition).
	EntriesOnly bool
	// LandingPads are the function's exception call sites (its FDE's
	// LSDA, package lsda): an exception passing a call in [Start, End)
	// enters Pad with the state after that call returns, as at the
	// instruction following it (what a call clobbers is no longer known,
	// so the registers the unwinder sets for the handler do not matter).
	// A pad outside the range (another partition) is an Exit.
	LandingPads []LandingPad
	// Mem reads n bytes of the binary's read-only data at addr (jump
	// tables); nil or ok false: unknown.
	Mem func(addr uint64, n int) (b []byte, ok bool)
}

// An Entry is a place where control enters a function's range from
// elsewhere, with the rules there.
type Entry struct {
	Addr uint64
	Row  Row
	// alt, when set, is every rule known at Addr (an Exit's, see
	// Exit.Entry): the saved copies of the FP and RA the preferred Row
	// does not name (a slot that still holds the caller's FP after the
	// register was restored) enter too.
	alt *alternatives
}

// A LandingPad is one call site of an LSDA with a landing pad.
type LandingPad struct {
	Start, End uint64 // the calls in [Start, End)
	Pad        uint64 // where an exception passing them enters
}

// A Row holds the rules that recover the caller's CFA, return address and
// frame pointer at one PC, as an SFrame FRE or a DWARF CFI row does.
// Registers are DWARF numbers; a value saved in memory is
// {RuleExpr, RegCFA, off, Deref: true}, as sframe.Rule encodes it.
type Row struct {
	CFA, RA, FP sframe.Rule
	// MangledRA: the return address carries a pointer-authentication
	// code (AArch64, between paciasp and autiasp); KeyB: signed with the B
	// key.
	MangledRA, KeyB bool
}

// Value names one of the three values a row recovers.
type Value uint8

// The values of a row.
const (
	CFA Value = iota
	RA
	FP
)

func (v Value) String() string {
	switch v {
	case CFA:
		return "CFA"
	case RA:
		return "RA"
	case FP:
		return "FP"
	}
	return "Value(?)"
}

// An Insn is the analysis of one instruction: the rules at its start,
// before it executes.
type Insn struct {
	Addr uint64
	Len  int
	// Known: all three rules were derived. Otherwise Reason says why not,
	// and Row holds only what was derived (see Rules).
	Known  bool
	Reason string
	// alt: every rule found (shared by instructions with the same rules),
	// the preferred ones (Row) first; nil: none. An Insn is kept per
	// instruction of a whole binary: its fields are few.
	alt *alternatives
}

// Row returns the preferred rules (see Rules for the others); a value
// not derived has the zero Rule.
func (in *Insn) Row() Row {
	return in.alts().row()
}

// row returns the preferred rules of a.
func (a *alternatives) row() Row {
	var r Row
	if a.ncfa > 0 {
		r.CFA = a.cfa[0]
	}
	if a.nra > 0 {
		r.RA = a.ra[0].r
		r.MangledRA, r.KeyB = a.ra[0].mangled, a.ra[0].keyB
	}
	if a.nfp > 0 {
		r.FP = a.fp[0]
	}
	return r
}

var noAlternatives alternatives

func (in *Insn) alts() *alternatives {
	if in.alt == nil {
		return &noAlternatives
	}
	return in.alt
}

// A Result is the analysis of a function, one Insn per instruction in
// address order.
type Result struct {
	Insns []Insn
	// Exits are the places outside the function's range control goes to
	// with rules known from here: direct jumps that leave it (tail calls,
	// jumps into a .cold partition) and landing pads in another
	// partition. One target may appear several times.
	Exits []Exit
	// NoReturn: the function is entered at Start by a call and no path
	// from there returns or leaves the range (by a jump, an indirect jump
	// that is not a recognised table, a landing pad elsewhere, falling
	// off its end or an undecodable instruction): every path ends in a
	// call that does not return or a trap, or loops forever — a function
	// such as exit, whose callers' calls do not return either.
	NoReturn bool
}

// An Exit is a transfer of control out of the analysed range.
type Exit struct {
	// Insn is the index in Result.Insns of the jump, or of the call whose
	// landing pad Target is (Pad).
	Insn   int
	Target uint64
	Pad    bool
	// Known: Row holds the rules at Target as this function leaves them
	// (a jump: those at the jump; a landing pad: those after the call).
	Known bool
	Row   Row
	alt   *alternatives // every rule known at the exit (Known)
}

// Entry returns the entry into another range that exit e is: its
// target, with every rule known there (the preferred Row and the
// others: slots that still hold the caller's values).
func (e *Exit) Entry() Entry {
	return Entry{Addr: e.Target, Row: e.Row, alt: e.alt}
}

// Analyze derives the rules at every instruction of fn from its machine
// code alone, for architecture a.
func Analyze(a *arch.Arch, fn Func) Result {
	m := machineFor(a)
	if m == nil {
		res := Result{}
		if len(fn.Code) > 0 {
			res.Insns = []Insn{{Addr: fn.Start, Len: len(fn.Code), Reason: "architecture " + a.Name + " is not supported"}}
		}
		return res
	}
	an := newAnalysis(m, &fn)
	res := an.run()
	an.release()
	return res
}

func (an *analysis) run() Result {
	an.decode()
	an.propagate()
	an.resolveTables()
	return an.emit()
}

// An Analyzer analyses functions one after another with the same work
// space: for a caller that analyses many (a whole binary), whose buffers
// Analyze would otherwise take from a pool the garbage collector empties.
// The zero value is ready to use; it is not safe for concurrent use.
type Analyzer struct {
	an analysis
}

// Analyze is Analyze with z's work space.
func (z *Analyzer) Analyze(a *arch.Arch, fn Func) Result {
	m := machineFor(a)
	if m == nil {
		return Analyze(a, fn)
	}
	an := &z.an
	an.reset(m, &fn)
	res := an.run()
	an.fn, an.tables, an.padOf = nil, nil, nil
	if cap(an.insns) > maxPooled {
		z.an = analysis{} // a huge function's buffers are not kept
	}
	return res
}

// Decode finds the instructions of fn without analysing them: the Insns
// Analyze gives for a range nothing enters (fn.EntriesOnly without
// Entries, LandingPads and NoReturn), each unknown with its reason
// (undecodable, padding, no known entry), for a fraction of the cost.
// Only fn.Start and fn.Code are used.
func (z *Analyzer) Decode(a *arch.Arch, fn Func) []Insn {
	m := machineFor(a)
	if m == nil {
		return Analyze(a, fn).Insns
	}
	fn = Func{Start: fn.Start, Code: fn.Code, EntriesOnly: true}
	an := &z.an
	an.reset(m, &fn)
	an.decode()
	insns := make([]Insn, len(an.insns))
	for i := range an.insns {
		d := &an.insns[i]
		in := &insns[i]
		in.Addr, in.Len = fn.Start+uint64(d.off), int(d.len)
		switch {
		case d.flow == flowBad:
			in.Reason = ReasonUndecodable
		case m.padding(fn.Code[d.off:]):
			in.Reason = reasonPaddingUnreached
		default:
			in.Reason = reasonNoEntry
		}
	}
	an.fn = nil
	if cap(an.insns) > maxPooled {
		z.an = analysis{}
	}
	return insns
}

// SameRules reports whether in and o have the same rules and reason:
// Rules, Accepts and KnownValue answer alike for both.
func (in *Insn) SameRules(o *Insn) bool {
	return in.alt == o.alt && in.Known == o.Known && in.Reason == o.Reason
}

// Rules returns every rule that recovers value v at this PC, the
// preferred one (the one in Row) first; none when v is unknown. Several
// rules are right at once, e.g. "sp+16" and "fp+16" once the frame
// pointer is set up, or "same" and "*(cfa-16)" for the FP between
// `push %rbp` and `mov %rsp,%rbp`.
func (in *Insn) Rules(v Value) []sframe.Rule {
	a := in.alts()
	switch v {
	case CFA:
		return append([]sframe.Rule(nil), a.cfa[:a.ncfa]...)
	case RA:
		out := make([]sframe.Rule, a.nra)
		for i := range out {
			out[i] = a.ra[i].r
		}
		return out
	case FP:
		return append([]sframe.Rule(nil), a.fp[:a.nfp]...)
	}
	return nil
}

// Accepts reports whether rule r recovers value v correctly at this PC
// (false when v is unknown here). For the RA, mangled says whether r's
// value is taken as carrying a pointer-authentication code; it is
// ignored for the CFA and FP.
func (in *Insn) Accepts(v Value, r sframe.Rule, mangled bool) bool {
	a := in.alts()
	switch v {
	case CFA:
		for _, x := range a.cfa[:a.ncfa] {
			if sameRule(x, r) {
				return true
			}
		}
	case RA:
		for _, x := range a.ra[:a.nra] {
			if sameRule(x.r, r) && x.mangled == mangled {
				return true
			}
		}
	case FP:
		for _, x := range a.fp[:a.nfp] {
			if sameRule(x, r) {
				return true
			}
		}
	}
	return false
}

// KnownValue reports whether value v was derived at this PC.
func (in *Insn) KnownValue(v Value) bool {
	a := in.alts()
	switch v {
	case CFA:
		return a.ncfa > 0
	case RA:
		return a.nra > 0
	case FP:
		return a.nfp > 0
	}
	return false
}

// sameRule compares two rules, ignoring the fields their kind leaves
// unused.
func sameRule(a, b sframe.Rule) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind != sframe.RuleExpr {
		return true
	}
	return a.Reg == b.Reg && a.Offset == b.Offset && a.Deref == b.Deref
}

const (
	maxCFAAlt = 6
	maxRAAlt  = 6
	maxFPAlt  = 6
)

// alternatives are every rule found for each value, preferred first.
type alternatives struct {
	cfa       [maxCFAAlt]sframe.Rule
	ra        [maxRAAlt]raRule
	fp        [maxFPAlt]sframe.Rule
	ncfa, nra uint8
	nfp       uint8
	// The CFA-relative offsets of the stack slots the analysis knows the
	// contents of (whatever they hold), nslot of them; more than fit:
	// nslot = maxSlotAlt+1, every slot counts as known.
	slot  [maxSlotAlt]int32
	nslot uint8
}

// maxSlotAlt is how many known slots an instruction lists (SlotKnown).
const maxSlotAlt = 8

func (a *alternatives) addSlot(off int64) {
	if !fits32(off) || int(a.nslot) > len(a.slot) {
		return
	}
	for _, x := range a.slot[:a.nslot] {
		if int64(x) == off {
			return
		}
	}
	if int(a.nslot) == len(a.slot) {
		a.nslot++ // too many: all known
		return
	}
	a.slot[a.nslot] = int32(off)
	a.nslot++
}

// SlotKnown reports whether the analysis knows what the stack slot at
// CFA+off holds at this PC: a rule reading a slot it does not know (lost
// where paths with other stack heights join) can be neither confirmed nor
// refuted by the code.
func (in *Insn) SlotKnown(off int32) bool {
	a := in.alts()
	if int(a.nslot) > len(a.slot) {
		return true
	}
	for _, x := range a.slot[:a.nslot] {
		if x == off {
			return true
		}
	}
	return false
}

type raRule struct {
	r       sframe.Rule
	mangled bool
	keyB    bool
}

func (a *alternatives) addCFA(r sframe.Rule) {
	for _, x := range a.cfa[:a.ncfa] {
		if x == r {
			return
		}
	}
	if int(a.ncfa) < len(a.cfa) {
		a.cfa[a.ncfa] = r
		a.ncfa++
	}
}

func (a *alternatives) addRA(r raRule) {
	for _, x := range a.ra[:a.nra] {
		if x == r {
			return
		}
	}
	if int(a.nra) < len(a.ra) {
		a.ra[a.nra] = r
		a.nra++
	}
}

func (a *alternatives) addFP(r sframe.Rule) {
	for _, x := range a.fp[:a.nfp] {
		if x == r {
			return
		}
	}
	if int(a.nfp) < len(a.fp) {
		a.fp[a.nfp] = r
		a.nfp++
	}
}
