package symbols

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path"
	"slices"
	"sort"
)

// Lines maps code addresses to source lines ("file:line") from the DWARF
// line tables (.debug_line) of a program.
//
// A line table is a list of sequences, each a run of rows covering
// [first row's address, end_sequence address) [DWARF5 6.2.2]; a row gives
// the line of the addresses from its own up to the next row's. An address
// outside every sequence (padding between functions, code compiled
// without line information) has no line.
type Lines struct {
	rows []lineRow // sorted by addr; a sequence's end is a row with loc ""
}

// lineRow is the line of the addresses from addr up to the next row's
// addr; loc "" means none (the end of a sequence, or a row without file).
type lineRow struct {
	addr uint64
	loc  string // "file:line"
}

// NewLines reads the line programs of f, whose code is loaded bias bytes
// above its link-time addresses. A program without DWARF gives a Lines
// that finds nothing; of a line program that turns out malformed, the
// sequences completed before the error are kept.
func NewLines(f *elf.File, bias uint64) *Lines {
	d, err := f.DWARF()
	if err != nil {
		return &Lines{}
	}
	var entries []dwarf.LineEntry
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		done := len(entries) // entries up to the last completed sequence
		for {
			var e dwarf.LineEntry
			if lr.Next(&e) != nil { // io.EOF, or a malformed program
				break
			}
			entries = append(entries, e)
			if e.EndSequence {
				done = len(entries)
			}
		}
		entries = entries[:done]
		r.SkipChildren()
	}
	return linesFromEntries(entries, bias)
}

// linesFromEntries builds the table from line-program rows in the order
// a line reader gives them: sequences, each closed by an EndSequence row.
// Sequences at address 0 are dropped: the linker leaves them there for
// functions it discarded, and they would shadow real code of a
// position-independent file. A last sequence without its end is dropped:
// where it ends is unknown.
func linesFromEntries(entries []dwarf.LineEntry, bias uint64) *Lines {
	var seqs [][]lineRow
	var cur []lineRow
	for _, e := range entries {
		row := lineRow{addr: e.Address + bias}
		if !e.EndSequence && e.File != nil {
			row.loc = fmt.Sprintf("%s:%d", path.Base(e.File.Name), e.Line)
		}
		cur = append(cur, row)
		if e.EndSequence {
			if cur[0].addr-bias != 0 {
				seqs = append(seqs, cur)
			}
			cur = nil
		}
	}
	// By start address: where one sequence ends at the address the next
	// starts, the end row comes first and the start wins.
	slices.SortStableFunc(seqs, func(a, b []lineRow) int { return cmp.Compare(a[0].addr, b[0].addr) })
	t := &Lines{}
	for _, s := range seqs {
		t.rows = append(t.rows, s...)
	}
	// Rows of a sequence are in address order; sorting again keeps the
	// search sound when sequences overlap.
	slices.SortStableFunc(t.rows, func(a, b lineRow) int { return cmp.Compare(a.addr, b.addr) })
	return t
}

// Lookup returns the source line of pc, or "" when no sequence covers pc.
func (t *Lines) Lookup(pc uint64) string {
	if t == nil {
		return ""
	}
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > pc }) - 1
	if i < 0 {
		return ""
	}
	return t.rows[i].loc
}
