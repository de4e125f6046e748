package codeflow

import (
	"sort"
	"sync"

	"github.com/sframesim/sframesim/sframe"
)

// analysis is the work space of one Analyze call.
type analysis struct {
	m     *machine
	fn    *Func
	insns []dinsn
	ops   []op
	joins []joinWhy

	blockOf []int32 // instruction index → block starting there, or -1
	blocks  []block
	lead    []bool  // buildBlocks: instructions that start a block
	queue   []int32 // propagate: blocks to process
	// tables: resolved jump tables by instruction index; unresolved:
	// indirect jumps without one.
	tables     map[int][]uint64
	unresolved int
	// whyNot says why an indirect jump is not a recognised table.
	whyNot string
	// ext, predStart, predList: see buildRefs.
	ext                 []bool
	predStart, predList []int32
	exits               []Exit
	// addrRegs, valRegs: see rules.
	addrRegs, valRegs [nregs]int8
	nAddr, nVals      int
	// scratch, altBuf, altOf: see emit and fill.
	scratch alternatives
	altBuf  []alternatives
	altOf   []int32
	// padOf: the landing pad of each call in a call site (instruction
	// index → pad address); nil without landing pads.
	padOf map[int32]uint64
	// outermost: the entry rules say the RA is undefined (the ELF entry
	// point); it stays so at every PC.
	outermost bool
}

type block struct {
	first, end int // instructions [first, end)
	in         state
	has        bool
	queued     bool
}

// pool keeps the work spaces of finished analyses: their buffers serve
// the next function.
var pool = sync.Pool{New: func() any { return new(analysis) }}

// newAnalysis returns a work space for fn, with the buffers of an earlier
// analysis; release returns it.
func newAnalysis(m *machine, fn *Func) *analysis {
	an := pool.Get().(*analysis)
	an.reset(m, fn)
	return an
}

// reset prepares an for fn, keeping its buffers.
func (an *analysis) reset(m *machine, fn *Func) {
	*an = analysis{
		m: m, fn: fn,
		insns: an.insns[:0], ops: an.ops[:0], joins: an.joins[:0],
		blockOf: an.blockOf[:0], blocks: an.blocks[:0], lead: an.lead[:0], queue: an.queue[:0],
		ext: an.ext[:0], predStart: an.predStart[:0], predList: an.predList[:0],
		exits: an.exits[:0], altBuf: an.altBuf[:0], altOf: an.altOf[:0],
	}
	an.outermost = !fn.EntriesOnly && fn.Entry != nil && fn.Entry.RA.Kind == sframe.RuleUndefined
}

// maxPooled: buffers of functions larger than this many instructions are
// not kept.
const maxPooled = 1 << 16

func (an *analysis) release() {
	if cap(an.insns) > maxPooled {
		return
	}
	an.fn, an.tables, an.padOf = nil, nil, nil
	pool.Put(an)
}

// decode decodes the code linearly: an FDE covers one contiguous
// function, and a compiler puts no data between its instructions.
func (an *analysis) decode() {
	code := an.fn.Code
	// The buffers grow to twice what they were at least: an Analyzer's
	// serve a whole binary's functions, growing a few times.
	if n := len(code)/4 + 1; cap(an.insns) < n {
		an.insns = make([]dinsn, 0, max(n, 2*cap(an.insns)))
	}
	if n := len(code)/3 + 4; cap(an.ops) < n {
		an.ops = make([]op, 0, max(n, 2*cap(an.ops)))
	}
	for off := 0; off < len(code); {
		// Decoded in place: a dinsn passed to the machine's decoder
		// from a local would escape to the heap.
		an.insns = append(an.insns, dinsn{off: uint32(off), op0: uint32(len(an.ops))})
		d := &an.insns[len(an.insns)-1]
		an.m.decode(an, code[off:], an.fn.Start+uint64(off), d)
		if d.len == 0 || off+int(d.len) > len(code) {
			an.ops = an.ops[:d.op0]
			*d = dinsn{off: uint32(off), op0: d.op0, len: uint8(min(len(code)-off, max(int(d.len), 1))), flow: flowBad}
		}
		if d.flow == flowCall && d.target != 0 && an.fn.NoReturn != nil && an.fn.NoReturn(d.target) {
			d.flow = flowCallNoReturn
		}
		off += int(d.len)
	}
}

// index returns the index of the instruction starting at addr, or -1.
func (an *analysis) index(addr uint64) int {
	if addr < an.fn.Start || addr-an.fn.Start >= uint64(len(an.fn.Code)) {
		return -1
	}
	off := uint32(addr - an.fn.Start)
	i := sort.Search(len(an.insns), func(k int) bool { return an.insns[k].off >= off })
	if i < len(an.insns) && an.insns[i].off == off {
		return i
	}
	return -1
}

func (an *analysis) inside(addr uint64) bool {
	return addr >= an.fn.Start && addr-an.fn.Start < uint64(len(an.fn.Code))
}

// endsBlock reports whether control does not simply go on to the next
// instruction after d.
func (an *analysis) endsBlock(d *dinsn) bool {
	return d.flow != flowNext && d.flow != flowCall
}

// buildBlocks splits the instructions into basic blocks.
func (an *analysis) buildBlocks() {
	n := len(an.insns)
	an.lead = grow(an.lead, n+1)
	lead := an.lead
	clear(lead)
	lead[0] = true
	mark := func(addr uint64) {
		if i := an.index(addr); i >= 0 {
			lead[i] = true
		}
	}
	for _, e := range an.fn.Entries {
		mark(e.Addr)
	}
	an.findPads()
	for _, lp := range an.fn.LandingPads {
		mark(lp.Pad)
	}
	for i := range an.insns {
		d := &an.insns[i]
		switch d.flow {
		case flowJump, flowCond:
			if an.inside(d.target) {
				mark(d.target)
			} else {
				an.exits = append(an.exits, Exit{Insn: i, Target: d.target})
			}
		case flowIndirect:
			for _, t := range an.tables[i] {
				mark(t)
			}
		}
		if an.endsBlock(d) {
			lead[i+1] = true
		}
	}
	nb := 0
	for _, l := range lead[:n] {
		if l {
			nb++
		}
	}
	an.blocks = grow(an.blocks, nb)[:0]
	an.blockOf = grow(an.blockOf, n)
	for i := range an.blockOf {
		an.blockOf[i] = -1
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && !lead[j] {
			j++
		}
		an.blockOf[i] = int32(len(an.blocks))
		an.blocks = append(an.blocks, block{first: i, end: j})
		i = j
	}
}

// propagate runs the abstract state over the control-flow graph to a
// fixed point: every block's entry state is the join of its predecessors'
// exit states.
func (an *analysis) propagate() {
	an.buildBlocks()
	if len(an.blocks) == 0 {
		return
	}
	queue, head := an.queue[:0], 0
	enter := func(b int32, st *state, at int) {
		bl := &an.blocks[b]
		if !bl.has {
			bl.in, bl.has = *st, true
		} else if !an.join(&bl.in, st, at) {
			return
		}
		if !bl.queued {
			bl.queued = true
			queue = append(queue, b)
		}
	}
	var st state
	if !an.fn.EntriesOnly {
		an.entryState(&st, an.fn.Entry)
		enter(0, &st, 0)
	}
	for _, e := range an.fn.Entries {
		if i := an.index(e.Addr); i >= 0 {
			an.entryState(&st, &e.Row)
			if e.alt != nil {
				an.entryAlternatives(&st, e.alt)
			}
			enter(an.blockOf[i], &st, i)
		}
	}
	to := func(addr uint64, st *state) {
		if i := an.index(addr); i >= 0 {
			enter(an.blockOf[i], st, i)
		}
	}
	for head < len(queue) {
		b := queue[head]
		head++
		bl := &an.blocks[b]
		bl.queued = false
		st = bl.in
		for i := bl.first; i < bl.end; i++ {
			an.step(&st, i)
			if an.padOf != nil {
				if pad, ok := an.padOf[int32(i)]; ok {
					to(pad, &st) // the state after the call
				}
			}
		}
		last := bl.end - 1
		d := &an.insns[last]
		switch d.flow {
		case flowNext, flowCall:
			if bl.end < len(an.insns) {
				enter(an.blockOf[bl.end], &st, bl.end)
			}
		case flowJump:
			to(d.target, &st)
		case flowCond:
			// Where the branch says two registers are equal, one the
			// analysis does not know takes the other's value.
			// Where it says two registers are equal and they are known
			// to differ, no execution takes it.
			taken, fall := &st, &st
			if a, b, onTaken, ok := an.equalOn(last); ok {
				eq := st
				feasible := refineEqual(&eq, a, b)
				switch {
				case onTaken && feasible:
					taken = &eq
				case onTaken:
					taken = nil
				case feasible:
					fall = &eq
				default:
					fall = nil
				}
			}
			if taken != nil {
				to(d.target, taken)
			}
			if bl.end < len(an.insns) && fall != nil {
				enter(an.blockOf[bl.end], fall, bl.end)
			}
		case flowIndirect:
			for _, t := range an.tables[last] {
				to(t, &st)
			}
		}
	}
	an.queue = queue[:0]
}

// findPads sets padOf: the calls inside each call site's range.
func (an *analysis) findPads() {
	for _, lp := range an.fn.LandingPads {
		i := an.index(lp.Start)
		if i < 0 || lp.Pad == 0 {
			continue
		}
		for ; i < len(an.insns); i++ {
			d := &an.insns[i]
			if an.fn.Start+uint64(d.off) >= lp.End {
				break
			}
			if d.flow == flowCall || d.flow == flowCallNoReturn {
				if an.padOf == nil {
					an.padOf = make(map[int32]uint64)
				}
				an.padOf[int32(i)] = lp.Pad
			}
		}
	}
}

// step applies the ops of instruction i and reports whether the state
// changed in what the rules are derived from.
func (an *analysis) step(st *state, i int) bool {
	d := &an.insns[i]
	ops := an.ops[d.op0 : d.op0+uint32(d.nops)]
	changed := false
	for k := range ops {
		if an.apply(st, &ops[k], uint32(i)+1) {
			changed = true
		}
	}
	return changed
}

// entryState sets st to the state at a function entry with rules row
// (nil: the standard call entry).
func (an *analysis) entryState(st *state, row *Row) {
	m := an.m
	*st = state{}
	for i := range st.r {
		st.r[i] = unknown(whyEntry)
	}
	pac := uint8(0)
	if row != nil && row.MangledRA {
		pac = 1
		if row.KeyB {
			pac = 2
		}
	}
	ra := value{kind: vEntry, reg: m.raID, pac: pac}
	if row != nil && row.RA.Kind == sframe.RuleUndefined {
		ra = value{kind: vUndef}
	}
	if row == nil || row.CFA.Kind == sframe.RuleUndefined {
		st.r[m.sp] = value{kind: vCFA, off: m.entrySP}
		st.r[m.fp] = value{kind: vEntry, reg: m.fp}
		if m.lr >= 0 {
			st.r[m.lr] = ra
		} else {
			st.addSlot(slot{addr: value{kind: vCFA, off: -8}, size: 8, v: ra})
		}
		if row != nil && row.FP.Kind != sframe.RuleSame {
			an.entryRule(st, row.FP, value{kind: vEntry, reg: m.fp}, m.fp)
		}
		return
	}
	if c := row.CFA; c.Kind == sframe.RuleExpr && !c.Deref && c.Reg >= 0 && c.Reg < regTmp {
		st.r[c.Reg] = value{kind: vCFA, off: -int64(c.Offset)}
	}
	an.entryRule(st, row.RA, ra, m.lr)
	an.entryRule(st, row.FP, value{kind: vEntry, reg: m.fp}, m.fp)
}

// entryAlternatives adds to an entry state st what the other rules
// known at the entry say (alt, from an Exit): further slots holding the
// caller's FP or RA, and the registers holding them or a CFA-relative
// address. They are facts at the jump, which changes none of them.
func (an *analysis) entryAlternatives(st *state, alt *alternatives) {
	m := an.m
	for _, r := range alt.cfa[:alt.ncfa] {
		if r.Kind == sframe.RuleExpr && !r.Deref && r.Reg >= 0 && r.Reg < sframe.Reg(m.nGPR) && st.r[r.Reg].kind == vUnknown {
			st.r[r.Reg] = value{kind: vCFA, off: -int64(r.Offset)}
		}
	}
	add := func(r sframe.Rule, v value, reg int8) {
		switch {
		case r.Kind == sframe.RuleSame && reg >= 0:
			st.r[reg] = v
		case r.Kind == sframe.RuleExpr && r.Reg == sframe.RegCFA && r.Deref:
			s := slot{addr: value{kind: vCFA, off: int64(r.Offset)}, size: 8, v: v}
			if st.findSlot(s) < 0 {
				st.addSlot(s)
			}
		case r.Kind == sframe.RuleExpr && !r.Deref && r.Offset == 0 && r.Reg >= 0 && r.Reg < sframe.Reg(m.nGPR) && int8(r.Reg) != m.sp:
			if st.r[r.Reg].kind == vUnknown {
				st.r[r.Reg] = v
			}
		}
	}
	for _, x := range alt.ra[:alt.nra] {
		if x.r.Kind == sframe.RuleUndefined {
			continue // the outermost frame: the entry row says so
		}
		pac := uint8(0)
		if x.mangled {
			pac = 1
			if x.keyB {
				pac = 2
			}
		}
		add(x.r, value{kind: vEntry, reg: m.raID, pac: pac}, m.lr)
	}
	for _, r := range alt.fp[:alt.nfp] {
		if r.Kind != sframe.RuleUndefined {
			add(r, value{kind: vEntry, reg: m.fp}, m.fp)
		}
	}
}

// entryRule records where an entry rule says value v lives.
func (an *analysis) entryRule(st *state, r sframe.Rule, v value, reg int8) {
	switch {
	case r.Kind == sframe.RuleSame && reg >= 0:
		st.r[reg] = v
	case r.Kind == sframe.RuleUndefined && reg >= 0:
		st.r[reg] = value{kind: vUndef}
	case r.Kind == sframe.RuleExpr && r.Reg == sframe.RegCFA && r.Deref:
		st.addSlot(slot{addr: value{kind: vCFA, off: int64(r.Offset)}, size: 8, v: v})
		if reg >= 0 && st.r[reg].eq(v) {
			st.r[reg] = unknown(whyEntry)
		}
	}
}

// emit derives every instruction's rules from the fixed point.
func (an *analysis) emit() Result {
	res := Result{Insns: make([]Insn, len(an.insns))}
	if len(an.exits) > 0 {
		res.Exits = append([]Exit(nil), an.exits...)
	}
	an.altOf = grow(an.altOf, len(an.insns))
	an.altBuf = an.altBuf[:0]
	for i := range an.insns {
		d := &an.insns[i]
		in := &res.Insns[i]
		in.Addr, in.Len = an.fn.Start+uint64(d.off), int(d.len)
		an.altOf[i] = -1
	}
	var st state
	padExits := false
	for b := range an.blocks {
		bl := &an.blocks[b]
		if !bl.has {
			continue
		}
		st = bl.in
		changed := true
		for i := bl.first; i < bl.end; i++ {
			in := &res.Insns[i]
			if !changed && res.Insns[i-1].Known && an.insns[i].flow != flowBad {
				// Same state as before the previous instruction.
				in.Known, an.altOf[i] = true, an.altOf[i-1]
			} else {
				an.altOf[i] = an.fill(in, &st, i)
			}
			changed = an.step(&st, i)
			if an.padOf != nil {
				if pad, ok := an.padOf[int32(i)]; ok && !an.inside(pad) {
					// A landing pad in another partition: the rules
					// after the call.
					var x Insn
					an.fill(&x, &st, i)
					alt := an.scratch
					res.Exits = append(res.Exits, Exit{Insn: i, Target: pad, Pad: true, Known: x.Known, Row: alt.row(), alt: &alt})
					padExits = true
				}
			}
		}
	}
	// One copy of each distinct set of rules, shared.
	alts := make([]alternatives, len(an.altBuf))
	copy(alts, an.altBuf)
	for i, k := range an.altOf {
		if k >= 0 {
			res.Insns[i].alt = &alts[k]
		}
	}
	for k := range res.Exits {
		if e := &res.Exits[k]; !e.Pad {
			in := &res.Insns[e.Insn]
			e.Known, e.Row, e.alt = in.Known, in.Row(), in.alt
		}
	}
	if padExits {
		sort.SliceStable(res.Exits, func(a, b int) bool { return res.Exits[a].Insn < res.Exits[b].Insn })
	}
	for i := range res.Insns {
		in := &res.Insns[i]
		if !in.Known && in.Reason == "" {
			in.Reason = an.unreached(i)
		}
	}
	res.NoReturn = an.noReturn(padExits)
	return res
}

// noReturn reports whether no path from the call entry at Start returns
// or leaves the range (Result.NoReturn); padExits: a landing pad lies
// outside it.
func (an *analysis) noReturn(padExits bool) bool {
	if an.fn.Entry != nil || an.fn.EntriesOnly || len(an.fn.Entries) > 0 || padExits || len(an.blocks) == 0 || !an.blocks[0].has {
		return false
	}
	for b := range an.blocks {
		bl := &an.blocks[b]
		if !bl.has {
			continue
		}
		last := bl.end - 1
		switch d := &an.insns[last]; d.flow {
		case flowRet, flowBad:
			return false
		case flowJump:
			if !an.inside(d.target) {
				return false
			}
		case flowCond:
			if !an.inside(d.target) || bl.end == len(an.insns) {
				return false
			}
		case flowIndirect:
			if len(an.tables[last]) == 0 {
				return false
			}
		case flowNext, flowCall:
			if bl.end == len(an.insns) {
				return false // falls off the end of the range
			}
		}
	}
	return true
}

// fill sets the rules of instruction i from the state before it, and
// returns the index of its alternatives in an.altBuf.
func (an *analysis) fill(in *Insn, st *state, i int) int32 {
	whyCFA, whyRA, whyFP := an.rules(st, &an.scratch)
	k := int32(len(an.altBuf) - 1)
	if k < 0 || an.altBuf[k] != an.scratch {
		// Most instructions change nothing the rules depend on: share
		// the previous set when equal.
		an.altBuf = append(an.altBuf, an.scratch)
		k++
	}
	switch {
	case an.insns[i].flow == flowBad:
		in.Reason = ReasonUndecodable
	case whyCFA != "":
		in.Reason = whyCFA
	case whyRA != "":
		in.Reason = whyRA
	case whyFP != "":
		in.Reason = whyFP
	default:
		in.Known = true
	}
	return k
}

// Reasons of instructions no path reaches (see unreached).
const (
	reasonPaddingUnreached = "padding not reached from the entry"
	reasonNoEntry          = "no known entry (a partition nothing jumps to)"
)

// unreached says why no path from an entry reaches instruction i.
func (an *analysis) unreached(i int) string {
	d := &an.insns[i]
	if d.flow == flowBad {
		return ReasonUndecodable
	}
	if an.m.padding(an.fn.Code[d.off:]) {
		return reasonPaddingUnreached
	}
	addr := an.fn.Start + uint64(d.off)
	for _, lp := range an.fn.LandingPads {
		if lp.Pad == addr {
			for _, pad := range an.padOf {
				if pad == addr {
					return "landing pad of calls not reached from the entry"
				}
			}
			return "landing pad of call sites without calls (exceptions other instructions raise are not followed)"
		}
	}
	if an.fn.EntriesOnly && len(an.fn.Entries) == 0 {
		return reasonNoEntry
	}
	if an.unresolved > 0 {
		return "not reached from the entry (the function has an indirect jump without a recognised table: " + an.whyNot + ")"
	}
	if i > 0 && an.insns[i-1].flow == flowCallNoReturn {
		return "not reached from the entry (after a call that does not return)"
	}
	return "not reached from the entry"
}
