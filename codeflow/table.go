package codeflow

import (
	"encoding/binary"
	"strconv"
)

// Jump tables. An indirect jump is resolved as a switch table when the
// instructions that lead to it on their only path (each instruction's
// unique predecessor: the previous one, or the one branch to it) read a
// table at a known address with an index that a preceding unsigned bounds
// check (`cmp $N,idx; ja default`, `cmp wI, N; b.ls table`) limits; the
// table's bytes come from Func.Mem. Addresses are known as constants of
// the propagated state (lea sym(%rip), adrp/add, adr), so a table base
// hoisted out of a loop is found too. Every entry must lead to an
// instruction of the function.

// maxTableEntries bounds a jump table.
const maxTableEntries = 1 << 16

// condKind classifies a conditional branch for bounds checks: the
// unsigned comparisons of the flags a cmp sets.
type condKind uint8

const (
	condOther condKind = iota
	condHi             // taken when idx > N (ja, b.hi)
	condHs             // taken when idx >= N (jae, b.hs)
	condLs             // taken when idx <= N (jbe, b.ls)
	condLo             // taken when idx < N (jb, b.lo)
)

// bound says what a bounds check guarantees on the path that took
// (taken) or did not take the branch: idx <= N (le), idx < N (lt), or
// nothing.
func bound(c condKind, taken bool) (le, lt bool) {
	switch {
	case c == condHi && !taken, c == condLs && taken:
		return true, false
	case c == condHs && !taken, c == condLo && taken:
		return false, true
	}
	return false, false
}

// A loc is where the index lives: a register (size: the bytes compared
// or used, 4 or 8) or memory at reg+disp of size bytes.
type loc struct {
	mem  bool
	reg  int8 // the register, or the memory's base register
	disp int64
	size uint8
}

type factKind uint8

const (
	factOther   factKind = iota
	factCond             // conditional branch (cond)
	factCmp              // compares loc with imm
	factCopy             // dst = src (a register move of width bytes)
	factZextMem          // dst = zero-extended memory loc
)

// facts is what the bounds-check search needs of one instruction.
type facts struct {
	kind     factKind
	cond     condKind
	loc      loc
	imm      uint64
	dst, src int8
	width    uint8
	// flags: it may write the condition flags; memWrite: it may write
	// memory; write32: it writes dst's low 32 bits and clears the upper
	// ones.
	flags, memWrite, write32 bool
}

// buildRefs lists, for each instruction, the direct branches to it
// (predecessors other than the previous instruction) and whether control
// also comes to it from outside the code seen (ext: the entry, Entries,
// landing pads, table targets).
func (an *analysis) buildRefs() {
	n := len(an.insns)
	an.ext = grow(an.ext, n)
	an.predStart = grow(an.predStart, n+1)
	clear(an.ext)
	clear(an.predStart)
	ext := func(addr uint64) {
		if k := an.index(addr); k >= 0 {
			an.ext[k] = true
		}
	}
	if n > 0 && !an.fn.EntriesOnly {
		an.ext[0] = true
	}
	for _, e := range an.fn.Entries {
		ext(e.Addr)
	}
	for _, lp := range an.fn.LandingPads {
		ext(lp.Pad)
	}
	// Counting sort of the branches by target.
	branch := func(d *dinsn) int {
		if d.flow == flowJump || d.flow == flowCond {
			return an.index(d.target)
		}
		return -1
	}
	for i := range an.insns {
		d := &an.insns[i]
		if t := branch(d); t >= 0 {
			an.predStart[t+1]++
		}
		if d.flow == flowIndirect {
			for _, t := range an.tables[i] {
				ext(t)
			}
		}
	}
	for k := 0; k < n; k++ {
		an.predStart[k+1] += an.predStart[k]
	}
	an.predList = grow(an.predList, int(an.predStart[n]))
	fill := grow[int32](nil, n)
	for i := range an.insns {
		if t := branch(&an.insns[i]); t >= 0 {
			an.predList[an.predStart[t]+fill[t]] = int32(i)
			fill[t]++
		}
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// fallsThrough reports whether control can go on from d to the next
// instruction.
func fallsThrough(d *dinsn) bool {
	return d.flow == flowNext || d.flow == flowCall || d.flow == flowCond
}

// A pred is a predecessor of an instruction: the previous one, or a
// branch taken to it.
type pred struct {
	k     int
	taken bool
}

// preds appends the predecessors of k to buf; ok false when control also
// comes from elsewhere (see buildRefs).
func (an *analysis) preds(k int, buf []pred) ([]pred, bool) {
	if k < 0 || k >= len(an.insns) || an.ext[k] {
		return buf, false
	}
	if k > 0 && fallsThrough(&an.insns[k-1]) {
		buf = append(buf, pred{k - 1, false})
	}
	for _, p := range an.predList[an.predStart[k]:an.predStart[k+1]] {
		buf = append(buf, pred{int(p), true})
	}
	return buf, true
}

// chainPrev returns the only instruction control comes to k from, and
// whether that is a branch taken to k; -1 when there is none or several.
func (an *analysis) chainPrev(k int) (p int, taken bool) {
	var buf [2]pred
	ps, ok := an.preds(k, buf[:0])
	if !ok || len(ps) != 1 {
		return -1, false
	}
	return ps[0].k, ps[0].taken
}

// writes reports whether instruction k writes register r.
func (an *analysis) writes(k int, r int8) bool {
	d := &an.insns[k]
	for _, o := range an.ops[d.op0 : d.op0+uint32(d.nops)] {
		switch o.kind {
		case opSet, opClobber, opAlign, opLoad, opConst:
			if o.dst == r {
				return true
			}
		case opClobberMask:
			if r >= 0 && r < 64 && uint64(o.imm)&(1<<r) != 0 {
				return true
			}
		}
	}
	return false
}

// stateBefore sets st to the state before instruction k; false when no
// path reaches it.
func (an *analysis) stateBefore(k int, st *state) bool {
	b := k
	for b > 0 && an.blockOf[b] < 0 {
		b--
	}
	if len(an.blockOf) == 0 || an.blockOf[b] < 0 {
		return false
	}
	bl := &an.blocks[an.blockOf[b]]
	if !bl.has {
		return false
	}
	*st = bl.in
	for j := bl.first; j < k; j++ {
		an.step(st, j)
	}
	return true
}

// constBefore returns the address register r holds before instruction k.
func (an *analysis) constBefore(k int, r int8) (uint64, bool) {
	var st state
	if r < 0 || !an.stateBefore(k, &st) || st.r[r].kind != vConst {
		return 0, false
	}
	return uint64(st.r[r].off), true
}

// boundSearch is the state of the search for a bounds check on one path
// backwards from a table's load.
type boundSearch struct {
	idx      loc
	needZext bool
	guard    bool // a bounds check's branch was passed
	le       bool // it guarantees idx <= N (else idx < N)
}

// findBound searches the instructions before k (the table's load, which
// uses index idx) for the bounds checks that limit it on every path to
// it, and returns the number of table entries the index can select.
// needZext: the load uses the index's 64 bits, so a 32-bit check must be
// complemented by a zero-extension of it.
func (an *analysis) findBound(k int, idx loc, needZext bool) (uint64, string) {
	budget := 256
	return an.boundBefore(k, boundSearch{idx: idx, needZext: needZext}, &budget)
}

// boundBefore searches every path to k (k itself is done).
func (an *analysis) boundBefore(k int, s boundSearch, budget *int) (uint64, string) {
	var buf [4]pred
	for {
		ps, ok := an.preds(k, buf[:0])
		if !ok || len(ps) == 0 {
			return 0, "no bounds check on the index on every path to it"
		}
		if len(ps) > 1 {
			// Where paths meet each must check the bound: the table
			// holds the greatest.
			var n uint64
			for _, p := range ps {
				m, why := an.boundAt(p, s, budget)
				if why != "" {
					return 0, why
				}
				n = max(n, m)
			}
			return n, ""
		}
		var n uint64
		var why string
		var done bool
		if n, done, why = an.boundStep(ps[0], &s, budget); why != "" || done {
			return n, why
		}
		k = ps[0].k
	}
}

// boundAt searches from instruction p.k, which is passed, backwards.
func (an *analysis) boundAt(p pred, s boundSearch, budget *int) (uint64, string) {
	n, done, why := an.boundStep(p, &s, budget)
	if why != "" || done {
		return n, why
	}
	return an.boundBefore(p.k, s, budget)
}

// boundStep passes instruction p.k backwards: done with the number of
// entries at the bounds check, or why the search fails.
func (an *analysis) boundStep(p pred, s *boundSearch, budget *int) (n uint64, done bool, why string) {
	if *budget--; *budget < 0 {
		return 0, false, "no bounds check on the index near it"
	}
	k := p.k
	f := an.m.facts(an, k)
	idx := &s.idx
	if !s.guard {
		if f.kind == factCond {
			le, lt := bound(f.cond, p.taken)
			s.guard, s.le = le || lt, le
		}
	} else if f.kind == factCmp {
		c := f.loc
		if c.mem != idx.mem || c.mem && (c.reg != idx.reg || c.disp != idx.disp || c.size != idx.size) {
			return 0, false, "the bounds check compares something else than the index"
		}
		if !c.mem {
			zext := s.needZext && c.size == 4
			if c.reg != idx.reg || zext {
				if why := an.sameAtCmp(k, idx.reg, c.reg, zext); why != "" {
					return 0, false, why
				}
			}
		}
		n := f.imm
		if s.le {
			n++
		}
		if n == 0 || n > maxTableEntries {
			return 0, false, "the bounds check allows " + strconv.FormatUint(f.imm, 10) + " entries"
		}
		return n, true, ""
	} else if f.flags {
		return 0, false, "the flags of the bounds check are changed by `" + an.text(k) + "`"
	}
	// The index before k.
	switch {
	case f.kind == factCopy && !idx.mem && f.dst == idx.reg:
		idx.reg = f.src
		if f.width == 4 {
			s.needZext = false
		}
	case f.kind == factZextMem && !idx.mem && f.dst == idx.reg:
		*idx, s.needZext = f.loc, false
	case idx.mem && (an.writes(k, idx.reg) || f.memWrite):
		return 0, false, "the index's memory may be changed by `" + an.text(k) + "`"
	case !idx.mem && an.writes(k, idx.reg):
		return 0, false, "the index is computed by `" + an.text(k) + "`"
	}
	return 0, false, ""
}

// sameAtCmp checks, before the bounds check at k that compares register
// cmp, that the index register idx equals it (a copy between them) and,
// with zext, that its upper 32 bits are zero (its last write is a 32-bit
// one).
func (an *analysis) sameAtCmp(k int, idx, cmp int8, zext bool) string {
	for steps := 0; steps < 32; steps++ {
		p, _ := an.chainPrev(k)
		if p < 0 {
			break
		}
		k = p
		f := an.m.facts(an, k)
		switch {
		case f.kind == factCopy && f.dst == idx && (f.src == cmp || idx == cmp):
			if zext && f.width != 4 {
				return "the index's upper bits are not known to be zero"
			}
			return ""
		case idx == cmp && f.write32 && f.dst == idx:
			return ""
		case f.kind == factCopy && f.dst == cmp && f.src == idx && !zext:
			return ""
		case an.writes(k, idx) || an.writes(k, cmp):
			return "the index differs from the compared register"
		}
	}
	if idx == cmp {
		return "the index's upper bits are not known to be zero"
	}
	return "the index differs from the compared register"
}

// readTable reads n entries of size bytes at addr through Func.Mem.
func (an *analysis) readTable(addr uint64, n uint64, size int) ([]byte, string) {
	if an.fn.Mem == nil {
		return nil, "the table's bytes are not available"
	}
	b, ok := an.fn.Mem(addr, int(n)*size)
	if !ok || len(b) != int(n)*size {
		return nil, "the table at 0x" + strconv.FormatUint(addr, 16) + " cannot be read"
	}
	return b, ""
}

// checkTargets makes sure every target is an instruction of the function.
func (an *analysis) checkTargets(ts []uint64) string {
	for k, t := range ts {
		if an.index(t) < 0 {
			return "table entry " + strconv.Itoa(k) + " leads to 0x" + strconv.FormatUint(t, 16) + ", not an instruction of the function"
		}
	}
	return ""
}

// resolveTables resolves the indirect jumps of the function as jump
// tables, with the state of the propagation, and propagates again over
// the edges found until the tables stay the same.
func (an *analysis) resolveTables() {
	var jumps []int
	for i := range an.insns {
		if an.insns[i].flow == flowIndirect {
			jumps = append(jumps, i)
		}
	}
	if len(jumps) == 0 {
		return
	}
	if an.m.table == nil {
		an.unresolved = len(jumps)
		return
	}
	for round := 0; round <= len(jumps)+1; round++ {
		an.buildRefs()
		tables := map[int][]uint64{}
		an.whyNot = ""
		for _, i := range jumps {
			if ts, why := an.m.table(an, i); why == "" {
				tables[i] = ts
			} else if an.whyNot == "" {
				an.whyNot = why
			}
		}
		if sameTables(tables, an.tables) {
			an.unresolved = len(jumps) - len(tables)
			return
		}
		an.tables = tables
		an.repropagate()
	}
	// The tables keep changing: trust none.
	an.tables = nil
	an.unresolved = len(jumps)
	an.whyNot = "the tables found depend on each other"
	an.repropagate()
}

func sameTables(a, b map[int][]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i, ta := range a {
		tb, ok := b[i]
		if !ok || len(ta) != len(tb) {
			return false
		}
		for k := range ta {
			if ta[k] != tb[k] {
				return false
			}
		}
	}
	return true
}

// repropagate runs the propagation again from scratch.
func (an *analysis) repropagate() {
	an.blocks, an.blockOf, an.exits, an.joins = an.blocks[:0], an.blockOf[:0], an.exits[:0], an.joins[:0]
	an.propagate()
}

// le32 and friends read table entries.
func entryAt(b []byte, k, size int, signed bool) int64 {
	switch size {
	case 1:
		if signed {
			return int64(int8(b[k]))
		}
		return int64(b[k])
	case 2:
		v := binary.LittleEndian.Uint16(b[2*k:])
		if signed {
			return int64(int16(v))
		}
		return int64(v)
	case 4:
		v := binary.LittleEndian.Uint32(b[4*k:])
		if signed {
			return int64(int32(v))
		}
		return int64(v)
	}
	return int64(binary.LittleEndian.Uint64(b[8*k:]))
}
