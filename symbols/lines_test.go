package symbols

import (
	"debug/dwarf"
	"path/filepath"
	"testing"
)

// TestLinesSequences builds a table from hand-made line-program rows: two
// adjacent sequences, one after a gap, one the linker discarded (at
// address 0), and one without its end.
func TestLinesSequences(t *testing.T) {
	a, b := &dwarf.LineFile{Name: "/src/a.c"}, &dwarf.LineFile{Name: "b.c"}
	row := func(addr uint64, f *dwarf.LineFile, line int) dwarf.LineEntry {
		return dwarf.LineEntry{Address: addr, File: f, Line: line}
	}
	end := func(addr uint64) dwarf.LineEntry { return dwarf.LineEntry{Address: addr, EndSequence: true} }
	entries := []dwarf.LineEntry{
		// A sequence after a gap, listed first: the table sorts them.
		row(0x2000, b, 30), end(0x2004),
		// [0x1000, 0x1010): a.c 1 and 2.
		row(0x1000, a, 1), row(0x1008, a, 2), row(0x1008, a, 3), end(0x1010),
		// [0x1010, 0x1020), right after it.
		row(0x1010, b, 10), row(0x1018, nil, 0), end(0x1020),
		// A discarded function's sequence at 0: dropped.
		row(0, a, 99), end(0x3000),
		// No end: dropped.
		row(0x4000, a, 50),
	}
	tests := []struct {
		pc   uint64
		want string
	}{
		{0xfff, ""},
		{0x1000, "a.c:1"},
		{0x1007, "a.c:1"},
		{0x1008, "a.c:3"}, // the last row at an address
		{0x100f, "a.c:3"},
		{0x1010, "b.c:10"}, // the next sequence starts where one ends
		{0x1017, "b.c:10"},
		{0x1018, ""}, // a row without a file
		{0x1020, ""}, // past the end: padding, another function
		{0x1fff, ""}, // (the 4 KiB guess said b.c:10)
		{0x2000, "b.c:30"},
		{0x2003, "b.c:30"},
		{0x2004, ""},
		{0x10, ""},
		{0x4000, ""},
	}
	for _, bias := range []uint64{0, pie} {
		l := linesFromEntries(entries, bias)
		for _, tt := range tests {
			if got := l.Lookup(tt.pc + bias); got != tt.want {
				t.Errorf("bias %#x: Lookup(%#x) = %q, want %q", bias, tt.pc+bias, got, tt.want)
			}
		}
	}
	var none *Lines
	if got := none.Lookup(0x1000); got != "" {
		t.Errorf("nil Lines: Lookup = %q", got)
	}
}

// TestLinesCorpus reads the line tables of corpus binaries. Each has one
// sequence for recurse.c, from add to the end of main, as
// objdump --dwarf=decodedline prints it.
func TestLinesCorpus(t *testing.T) {
	tests := []struct {
		bin  string
		bias uint64
		pc   uint64
		want string
	}{
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401785, want: "recurse.c:11"}, // add
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x4017a0, want: "recurse.c:12"},
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401bc9, want: "recurse.c:82"}, // main's last byte
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401bca, want: ""},             // the sequence's end: padding
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401bd0, want: ""},             // call_fini, from libc
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401784, want: ""},             // frame_dummy, before it
		{bin: "v3/x86-64/recurse-O0-dynamic", pc: 0x1149, want: "recurse.c:11"},  // add
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, pc: pie + 0x1149, want: "recurse.c:11"},
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, pc: pie + 0x158e, want: ""}, // _fini's padding
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, pc: 0x1149, want: ""},       // unrelocated
		{bin: "v3/aarch64/recurse-O0-static", pc: 0x4006e0, want: "recurse.c:11"},
		{bin: "v3/aarch64/recurse-O0-static", pc: 0x400b9b, want: "recurse.c:82"},
		{bin: "v3/aarch64/recurse-O0-static", pc: 0x400ba0, want: ""},  // call_fini
		{bin: "v3/x86-64/nolibc-O0", pc: 0x401005, want: "start.S:16"}, // one of several units
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.bin), func(t *testing.T) {
			l := NewLines(open(t, tt.bin), tt.bias)
			if got := l.Lookup(tt.pc); got != tt.want {
				t.Errorf("Lookup(%#x) = %q, want %q", tt.pc, got, tt.want)
			}
		})
	}
}

// TestLinesLazy: the table is read on the first Lookup, not before (a
// verify run that reports nothing never needs it), and once.
func TestLinesLazy(t *testing.T) {
	l := NewLines(open(t, "v3/x86-64/recurse-O0-static"), 0)
	if l.rows != nil || l.load == nil {
		t.Fatalf("read before the first Lookup: %d rows", len(l.rows))
	}
	if got := l.Lookup(0x4017a0); got != "recurse.c:12" {
		t.Errorf("Lookup = %q", got)
	}
	rows := len(l.rows)
	if rows == 0 || l.load != nil || len(l.files) == 0 {
		t.Fatalf("after Lookup: %d rows, %d files, loaded %v", rows, len(l.files), l.load == nil)
	}
	if got := l.Lookup(0x401bc9); got != "recurse.c:82" || len(l.rows) != rows {
		t.Errorf("second Lookup = %q, %d rows (was %d)", got, len(l.rows), rows)
	}
}
