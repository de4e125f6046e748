package codeflow

import (
	"github.com/sframesim/sframesim/sframe"
)

// The abstract state before an instruction: what each register holds and
// which stack slots hold values that matter, symbolically.
//
// A value is unknown, CFA+off, A+off (A: the SP after the function's
// realignment, `and $-64,%rsp`, of which only bounds relative to the CFA
// are known), or the value a register had at the entry (the caller's FP,
// the return address, possibly signed). Slots are 8-byte (or wider)
// stores at a CFA- or A-relative address that hold such values; stores
// through untracked pointers or with an index register are assumed not to
// hit them, as the compiler's CFI assumes.

type vkind uint8

const (
	vUnknown vkind = iota
	vCFA           // CFA + off
	vAligned       // A + off; aux identifies the realigning instruction
	vEntry         // the value register reg had at the entry; pac: signed with key 1 (A) or 2 (B)
	vUndef         // no value: the RA of the outermost frame
	vConst         // the address off (lea sym(%rip), adrp/add, adr): jump table bases
)

type value struct {
	kind vkind
	reg  int8
	pac  uint8
	aux  uint32 // vUnknown: why (see reason.go); vAligned: realigning instruction + 1
	off  int64
}

// sameBase reports whether a and b are offsets from the same base.
func sameBase(a, b value) bool {
	return a.kind == b.kind && (a.kind == vCFA || a.kind == vAligned && a.aux == b.aux)
}

func (v value) eq(w value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case vUnknown, vUndef:
		return true
	case vCFA, vConst:
		return v.off == w.off
	case vAligned:
		return v.aux == w.aux && v.off == w.off
	case vEntry:
		return v.reg == w.reg && v.pac == w.pac
	}
	return false
}

func unknown(why uint32) value { return value{kind: vUnknown, aux: why} }

const maxSlots = 8

type slot struct {
	addr value // vCFA or vAligned
	size int64
	v    value
}

type state struct {
	r  [nregs]value
	s  [maxSlots]slot
	ns int
	// The aligned base A (one at a time) lies in
	// [CFA+alignSrc-alignMask, CFA+alignSrc]: alignSrc is the value that
	// was rounded down, alignMask the alignment minus 1.
	alignSrc, alignMask int64
}

func (st *state) findSlot(s slot) int {
	for i := 0; i < st.ns; i++ {
		x := &st.s[i]
		if x.addr.eq(s.addr) && x.size == s.size && x.v.eq(s.v) {
			return i
		}
	}
	return -1
}

func (st *state) removeSlot(i int) {
	copy(st.s[i:st.ns], st.s[i+1:st.ns])
	st.ns--
}

func (st *state) addSlot(s slot) {
	if st.ns == maxSlots {
		// Forgetting a slot only loses knowledge: the oldest, but the
		// saved entry FP and RA (the caller's values, needed until the
		// epilogue) last, after the CFA-relative values (addresses of
		// locals a function stores for its callees).
		victim := 0
		for i := 0; i < st.ns; i++ {
			if st.s[i].v.kind != vEntry {
				victim = i
				break
			}
		}
		st.removeSlot(victim)
	}
	st.s[st.ns] = s
	st.ns++
}

// interesting reports whether a value is worth a slot: CFA-relative
// values and the entry values of the FP and the RA.
func (m *machine) interesting(v value) bool {
	switch v.kind {
	case vCFA, vAligned, vUndef:
		return true
	case vEntry:
		return v.reg == m.fp || v.reg == m.raID
	}
	return false
}

// diff returns bounds of a-b for two CFA- or A-relative addresses, ok
// false when they cannot be compared.
func (st *state) diff(a, b value) (lo, hi int64, ok bool) {
	switch {
	case sameBase(a, b):
		d := a.off - b.off
		return d, d, true
	case a.kind == vCFA && b.kind == vAligned:
		// b = A+b.off with A in [CFA+src-mask, CFA+src].
		lo = a.off - (st.alignSrc + b.off)
		hi = a.off - (st.alignSrc - st.alignMask + b.off)
		return lo, hi, true
	case a.kind == vAligned && b.kind == vCFA:
		l, h, _ := st.diff(b, a)
		return -h, -l, true
	}
	return 0, 0, false
}

// live reports whether a slot is provably at or above the SP's red zone,
// where nothing but the function itself writes.
func (st *state) live(m *machine, s *slot) bool {
	lo, _, ok := st.diff(s.addr, st.r[m.sp])
	return ok && lo >= -m.redZone
}

// apply executes one op. It reports whether the state may have changed
// in anything but the reasons of unknown values.
func (an *analysis) apply(st *state, o *op, why uint32) bool {
	m := an.m
	switch o.kind {
	case opClobber:
		if st.r[o.dst].kind == vUnknown && o.dst != m.sp {
			return false
		}
	case opClobberMask:
		changed := false
		for r := 0; r < int(m.nGPR); r++ {
			if uint64(o.imm)&(1<<r) != 0 && st.r[r].kind != vUnknown {
				changed = true
				st.r[r] = unknown(why)
			}
		}
		return changed
	}
	switch o.kind {
	case opSet:
		v := st.r[o.src]
		switch v.kind {
		case vUnknown:
			v = unknown(why)
		case vEntry, vUndef:
			if o.imm != 0 {
				v = unknown(why)
			}
		default:
			v.off += o.imm
		}
		st.r[o.dst] = v
	case opClobber:
		st.r[o.dst] = unknown(why)
	case opConst:
		st.r[o.dst] = value{kind: vConst, off: o.imm}
	case opAlign:
		src := st.r[o.src]
		if o.dst != m.sp {
			// Rounding a pointer or a size: only the stack's
			// realignment creates a new base.
			st.r[o.dst] = unknown(why)
			break
		}
		// One realigned base at a time: forget values of the previous one.
		st.forgetAligned(why)
		if src.kind != vCFA || o.imm <= 0 || o.imm&(o.imm-1) != 0 {
			st.r[o.dst] = unknown(why)
			break
		}
		st.alignSrc, st.alignMask = src.off, o.imm-1
		st.r[o.dst] = value{kind: vAligned, aux: why}
	case opStore:
		base := st.r[o.base]
		if base.kind != vCFA && base.kind != vAligned {
			return false // assumed not to hit a tracked slot
		}
		addr := base
		addr.off += o.imm
		size := int64(o.size)
		for i := 0; i < st.ns; i++ {
			lo, hi, ok := st.diff(st.s[i].addr, addr)
			// Overlap unless the slot ends before the store or starts after it.
			if !ok || !(hi+st.s[i].size <= 0 || lo >= size) {
				st.removeSlot(i)
				i--
			}
		}
		if o.src >= 0 && size == 8 {
			if v := st.r[o.src]; m.interesting(v) {
				st.addSlot(slot{addr: addr, size: size, v: v})
			}
		}
	case opLoad:
		base := st.r[o.base]
		v := unknown(why)
		if base.kind == vCFA || base.kind == vAligned {
			addr := base
			addr.off += o.imm
			for i := 0; i < st.ns; i++ {
				if s := &st.s[i]; s.addr.eq(addr) && s.size == 8 {
					v = s.v
					break
				}
			}
		}
		st.r[o.dst] = v
	case opSign:
		if v := st.r[m.lr]; v.kind == vEntry && v.pac == 0 {
			st.r[m.lr].pac = uint8(o.imm)
		} else if v.kind != vUndef {
			st.r[m.lr] = unknown(why)
		}
	case opAuth:
		if v := st.r[m.lr]; v.kind == vEntry && v.pac != 0 {
			st.r[m.lr].pac = 0
		} else if v.kind != vUndef {
			st.r[m.lr] = unknown(why)
		}
	case opStrip:
		if v := st.r[m.lr]; v.kind == vEntry {
			st.r[m.lr].pac = 0
		}
	}
	if o.kind != opStore && o.dst == m.sp {
		an.spMoved(st, o)
	}
	return true
}

// spMoved drops the slots the SP has moved above: signal delivery may
// overwrite them from now on.
func (an *analysis) spMoved(st *state, o *op) {
	if st.r[an.m.sp].kind == vUnknown {
		if o.flags&fDown == 0 && o.kind != opAlign {
			st.ns = 0
		}
		return
	}
	for i := 0; i < st.ns; i++ {
		if !st.live(an.m, &st.s[i]) {
			st.removeSlot(i)
			i--
		}
	}
}

func (st *state) forgetAligned(why uint32) {
	for i := range st.r {
		if st.r[i].kind == vAligned {
			st.r[i] = unknown(why)
		}
	}
	for i := 0; i < st.ns; i++ {
		if st.s[i].addr.kind == vAligned || st.s[i].v.kind == vAligned {
			st.removeSlot(i)
			i--
		}
	}
	st.alignSrc, st.alignMask = 0, 0
}

// join merges o into st (a merge point): what differs becomes unknown.
// It reports whether st changed.
func (an *analysis) join(st, o *state, at int) bool {
	changed := false
	alignDiffers := st.alignSrc != o.alignSrc || st.alignMask != o.alignMask
	for i := range st.r {
		a, b := st.r[i], o.r[i]
		if a.kind == vUnknown || a.eq(b) && !(alignDiffers && a.kind == vAligned) {
			continue
		}
		st.r[i] = unknown(an.joinReason(at, int8(i), a, b))
		changed = true
	}
	for i := 0; i < st.ns; i++ {
		s := st.s[i]
		if o.findSlot(s) < 0 || alignDiffers && (s.addr.kind == vAligned || s.v.kind == vAligned) {
			st.removeSlot(i)
			i--
			changed = true
		}
	}
	return changed
}

// Row derivation.

// rules fills the alternatives of every value from the state; for each
// value without a rule it returns the reason.
func (an *analysis) rules(st *state, alt *alternatives) (whyCFA, whyRA, whyFP string) {
	m := an.m
	*alt = alternatives{}
	sp, fp := st.r[m.sp], st.r[m.fp]
	// CFA = reg + k for a register holding CFA-k: SP, FP, then the others.
	cfaFrom := func(r int8) {
		if v := st.r[r]; v.kind == vCFA && fits32(v.off) {
			alt.addCFA(sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.Reg(r), Offset: int32(-v.off)})
		}
	}
	// One pass over the registers: those holding addresses (other than
	// the SP and FP) and those holding entry values, in ascending order.
	an.nAddr, an.nVals = 0, 0
	for r := int8(0); r < m.nGPR; r++ {
		switch st.r[r].kind {
		case vCFA, vAligned:
			if r != m.sp && r != m.fp {
				an.addrRegs[an.nAddr] = r
				an.nAddr++
			}
		case vEntry, vUndef:
			an.valRegs[an.nVals] = r
			an.nVals++
		}
	}
	cfaFrom(m.sp)
	cfaFrom(m.fp)
	for _, r := range an.addrRegs[:an.nAddr] {
		cfaFrom(r)
	}
	// CFA = *(reg + k) for a slot holding the CFA (the DRAP register saved
	// in a realigned frame).
	for i := 0; i < st.ns; i++ {
		s := &st.s[i]
		if s.v.kind == vCFA && s.v.off == 0 {
			an.slotRules(st, s, func(r sframe.Rule) { alt.addCFA(r) }, false, false)
			an.slotRules(st, s, func(r sframe.Rule) { alt.addCFA(r) }, false, true)
		}
	}
	// The return address and the caller's FP: in a live slot, still in
	// their register, or copied to another register.
	raFrom := func(v value, r sframe.Rule) {
		alt.addRA(raRule{r: r, mangled: v.pac != 0, keyB: v.pac == 2})
	}
	isRA := func(v value) bool { return v.kind == vEntry && v.reg == m.raID || v.kind == vUndef }
	isFP := func(v value) bool { return v.kind == vEntry && v.reg == m.fp && v.pac == 0 }
	// The slots by the CFA, FP and SP first, then the registers, then the
	// slots by other registers holding addresses: the forms SFrame and
	// CFI use come before those that may not fit the alternatives.
	slots := func(others bool) {
		for i := 0; i < st.ns; i++ {
			s := &st.s[i]
			switch {
			case s.v.kind == vUndef:
				alt.addRA(raRule{r: sframe.Rule{Kind: sframe.RuleUndefined}})
			case isRA(s.v):
				an.slotRules(st, s, func(r sframe.Rule) { raFrom(s.v, r) }, true, others)
			case isFP(s.v):
				an.slotRules(st, s, func(r sframe.Rule) { alt.addFP(r) }, true, others)
			}
		}
	}
	slots(false)
	for i := 0; i < st.ns; i++ {
		if s := &st.s[i]; s.addr.kind == vCFA {
			alt.addSlot(s.addr.off)
		}
	}
	for _, r := range an.valRegs[:an.nVals] {
		v := st.r[r]
		same := sframe.Rule{Kind: sframe.RuleSame}
		copied := sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.Reg(r)}
		switch {
		case v.kind == vUndef:
			alt.addRA(raRule{r: sframe.Rule{Kind: sframe.RuleUndefined}})
		case isRA(v) && r == m.lr:
			raFrom(v, same)
		case isRA(v):
			raFrom(v, copied)
		case isFP(v) && r == m.fp:
			alt.addFP(same)
		case isFP(v):
			alt.addFP(copied)
		}
	}
	slots(true)
	if an.outermost {
		// The outermost frame: there is no caller, whatever the code
		// does with the registers.
		alt.nra = 0
		alt.addRA(raRule{r: sframe.Rule{Kind: sframe.RuleUndefined}})
		if alt.nfp == 0 {
			alt.addFP(sframe.Rule{Kind: sframe.RuleUndefined})
		}
	}
	if alt.ncfa == 0 {
		whyCFA = "CFA unknown: " + an.regReason(m.sp, sp.aux)
		if fp.kind == vUnknown && fp.aux != sp.aux && fp.aux != whyEntry {
			whyCFA += "; " + an.regReason(m.fp, fp.aux)
		}
	}
	if alt.nra == 0 {
		whyRA = "return address unknown"
		if m.lr >= 0 {
			whyRA += ": " + an.regReason(m.lr, st.r[m.lr].aux)
		}
	}
	if alt.nfp == 0 {
		whyFP = "caller's FP unknown: " + an.regReason(m.fp, fp.aux)
	}
	return
}

// slotRules calls add with every rule that reads slot s: relative to the
// CFA when its address is, and relative to each register holding an
// address of the same base (the SP, the FP); rules has listed the
// registers holding addresses in an.addrRegs. others: only the rules by
// those other registers; else only those by the CFA, the FP and the SP.
func (an *analysis) slotRules(st *state, s *slot, add func(sframe.Rule), cfaToo, others bool) {
	m := an.m
	from := func(r int8) {
		if v := st.r[r]; sameBase(v, s.addr) && fits32(s.addr.off-v.off) {
			add(sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.Reg(r), Offset: int32(s.addr.off - v.off), Deref: true})
		}
	}
	if others {
		for _, r := range an.addrRegs[:an.nAddr] {
			from(r)
		}
		return
	}
	if cfaToo && s.addr.kind == vCFA && fits32(s.addr.off) {
		add(sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int32(s.addr.off), Deref: true})
	}
	from(m.fp)
	from(m.sp)
}

func fits32(v int64) bool { return v == int64(int32(v)) }
