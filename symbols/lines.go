package symbols

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"path"
	"slices"
	"sort"
	"strconv"
	"sync"
)

// Lines maps code addresses to source lines ("file:line") from the DWARF
// line tables (.debug_line) of a program.
//
// A line table is a list of sequences, each a run of rows covering
// [first row's address, end_sequence address) [DWARF5 6.2.2]; a row gives
// the line of the addresses from its own up to the next row's. An address
// outside every sequence (padding between functions, code compiled
// without line information) has no line.
//
// The table is read on the first Lookup: a verify run that finds nothing
// to report never needs it, and a large program's is large (CPython
// 3.11 built with -g has about a million rows).
type Lines struct {
	once  sync.Once
	load  func(*Lines) // reads the table (NewLines); nil once read
	files []string     // base names of the rows' files
	rows  []lineRow    // sorted by addr; a sequence's end is a row without a line
}

// lineRow is the line of the addresses from addr up to the next row's
// addr; file -1 means none (the end of a sequence, or a row without a
// file). 16 bytes, where a "file:line" string per row took about 40.
type lineRow struct {
	addr uint64
	file int32 // index in files
	line int32
}

// NewLines returns the line table of f, whose code is loaded bias bytes
// above its link-time addresses, read from f on the first Lookup (f must
// stay open until then). A program without DWARF gives a Lines that finds
// nothing; of a line program that turns out malformed, the sequences
// completed before the error are kept.
func NewLines(f *elf.File, bias uint64) *Lines {
	return &Lines{load: func(t *Lines) { t.read(f, bias) }}
}

// read fills t from f's line programs, one compilation unit at a time.
func (t *Lines) read(f *elf.File, bias uint64) {
	d, err := f.DWARF()
	if err != nil {
		return
	}
	b := lineBuilder{bias: bias, index: map[string]int32{}}
	r := d.Reader()
	var e dwarf.LineEntry
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
		for lr.Next(&e) == nil { // until io.EOF, or a malformed program
			b.add(&e)
		}
		b.cur = nil // a sequence the unit did not end
		r.SkipChildren()
	}
	b.finish(t)
}

// linesFromEntries builds the table from line-program rows in the order
// a line reader gives them: sequences, each closed by an EndSequence row.
// Sequences at address 0 are dropped: the linker leaves them there for
// functions it discarded, and they would shadow real code of a
// position-independent file. A last sequence without its end is dropped:
// where it ends is unknown.
func linesFromEntries(entries []dwarf.LineEntry, bias uint64) *Lines {
	b := lineBuilder{bias: bias, index: map[string]int32{}}
	for i := range entries {
		b.add(&entries[i])
	}
	t := &Lines{}
	b.finish(t)
	return t
}

// lineBuilder collects the sequences of line-program rows (see
// linesFromEntries).
type lineBuilder struct {
	bias  uint64
	seqs  [][]lineRow
	cur   []lineRow
	files []string
	index map[string]int32 // files by name
}

func (b *lineBuilder) add(e *dwarf.LineEntry) {
	row := lineRow{addr: e.Address + b.bias, file: -1}
	if !e.EndSequence && e.File != nil {
		name := path.Base(e.File.Name)
		k, ok := b.index[name]
		if !ok {
			k = int32(len(b.files))
			b.files = append(b.files, name)
			b.index[name] = k
		}
		row.file, row.line = k, int32(e.Line)
	}
	b.cur = append(b.cur, row)
	if e.EndSequence {
		if b.cur[0].addr-b.bias != 0 {
			b.seqs = append(b.seqs, b.cur)
		}
		b.cur = nil
	}
}

// finish puts the sequences into t, by start address: where one sequence
// ends at the address the next starts, the end row comes first and the
// start wins.
func (b *lineBuilder) finish(t *Lines) {
	slices.SortStableFunc(b.seqs, func(x, y []lineRow) int { return cmp.Compare(x[0].addr, y[0].addr) })
	n := 0
	for _, s := range b.seqs {
		n += len(s)
	}
	t.rows = make([]lineRow, 0, n)
	for _, s := range b.seqs {
		t.rows = append(t.rows, s...)
	}
	// Rows of a sequence are in address order; sorting again keeps the
	// search sound when sequences overlap.
	slices.SortStableFunc(t.rows, func(x, y lineRow) int { return cmp.Compare(x.addr, y.addr) })
	t.files = b.files
}

// Lookup returns the source line of pc, or "" when no sequence covers pc.
func (t *Lines) Lookup(pc uint64) string {
	if t == nil {
		return ""
	}
	t.once.Do(func() {
		if t.load != nil {
			t.load(t)
			t.load = nil
		}
	})
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > pc }) - 1
	if i < 0 || t.rows[i].file < 0 {
		return ""
	}
	r := t.rows[i]
	return t.files[r.file] + ":" + strconv.Itoa(int(r.line))
}
