package codeflow

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// elfMem reads the bytes of the file's read-only allocated sections.
func elfMem(f *elf.File) func(addr uint64, n int) ([]byte, bool) {
	return func(addr uint64, n int) ([]byte, bool) {
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_WRITE != 0 || s.Type != elf.SHT_PROGBITS ||
				addr < s.Addr || addr-s.Addr+uint64(n) > s.Size {
				continue
			}
			b := make([]byte, n)
			if _, err := s.ReadAt(b, int64(addr-s.Addr)); err != nil {
				return nil, false
			}
			return b, true
		}
		return nil, false
	}
}

// TestJumpTables: switch.c's jump tables (testdata/switch, GCC 12 -O2,
// x86-64 PIC and non-PIC, AArch64 byte and halfword tables, a table base
// hoisted out of a loop) are all resolved: every instruction of every
// function but the alignment padding between cases is known, its rules equal the SFrame and the CFI rows, and the
// code reached only through a table is reached.
func TestJumpTables(t *testing.T) {
	for _, bin := range []string{"switch-x86-64-pic", "switch-x86-64-nopic", "switch-aarch64"} {
		t.Run(bin, func(t *testing.T) {
			f, err := sframe.Open(filepath.Join("testdata", "switch", bin))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a := arch.ForMachine(f.ELF.Machine)
			tab, err := cfi.Load(f.ELF)
			if err != nil {
				t.Fatal(err)
			}
			syms := symbols.New(f.ELF, 0)
			b := &corpusBinary{f: f, a: a, syms: syms}
			mem := elfMem(f.ELF)
			tables := 0
			for i := range f.Section.FDEs {
				fde := &f.Section.FDEs[i]
				name, _, _ := syms.Lookup(fde.Start)
				fn := Func{Name: name, Start: fde.Start, Code: b.code(fde.Start, int(fde.Size)), Mem: mem}
				an := newAnalysis(machineFor(a), &fn)
				an.decode()
				an.propagate()
				an.resolveTables()
				tables += len(an.tables)
				res := an.emit()
				for k := range res.Insns {
					in := &res.Insns[k]
					if !in.Known && in.Reason == "padding not reached from the entry" {
						continue // alignment between the cases
					}
					if !in.Known {
						t.Errorf("%s %#x: unknown: %s", name, in.Addr, in.Reason)
						continue
					}
					row, err := f.Section.Lookup(in.Addr)
					if err != nil {
						t.Fatalf("%s %#x: %v", name, in.Addr, err)
					}
					if ok, what := agrees(in, &row); !ok {
						t.Errorf("%s %#x: %s: code says %s, SFrame says %s", name, in.Addr, what, fmtAlt(a, in), fmtSFrame(a, &row))
					}
					cf := tab.Find(in.Addr)
					if cf == nil || cf.RowAt(in.Addr) < 0 {
						t.Fatalf("%s %#x: no CFI row", name, in.Addr)
					}
					r := tab.Rules(cf, cf.RowAt(in.Addr), in.Addr)
					if !in.Accepts(CFA, r.CFA.Rule, false) || !in.Accepts(RA, r.RA.Rule, r.SignedRA) || !in.Accepts(FP, r.FP.Rule, false) {
						t.Errorf("%s %#x: code says %s, CFI says CFA %s RA %s FP %s", name, in.Addr, fmtAlt(a, in),
							r.CFA.Format(a.ABIs[0]), r.RA.Format(a.ABIs[0]), r.FP.Format(a.ABIs[0]))
					}
				}
			}
			// dispatch, offset_cases, big_cases, interp.
			if tables != 4 {
				t.Errorf("%d jump tables resolved, want 4", tables)
			}
		})
	}
}

// TestTableSnippets: hand-assembled x86-64 tables (non-PIC, table at
// 0x2000): the forms of the bounds check, and what is not a table, with
// the reason.
func TestTableSnippets(t *testing.T) {
	le64 := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		return b
	}
	// cmp $2,%edi; SLOT; ja default; mov %edi,%edi; jmp *0x2000(,%rdi,8);
	// ret; ret; ret; default: ret
	const slotNop, slotTest = "6690", "85c0"
	ja := func(slot, idx string) []byte {
		return x86("83ff02" + slot + "770c" + idx + "ff24fd00200000 c3 c3 c3 c3")
	}
	table := le64(0x1010, 0x1011, 0x1012)
	tests := []struct {
		name  string
		code  []byte
		table []byte
		nomem bool
		why   string // "": resolved with the table's 3 targets
	}{
		{name: "ja", code: ja(slotNop, "89ff"), table: table},
		// cmp $2,%edi; jbe L; ret; L: mov %edi,%edi; jmp *0x2000(,%rdi,8); ret; ret; ret
		{name: "jbe to the table code", code: x86("83ff02 7601 c3 89ff ff24fd00200000 c3 c3 c3"), table: le64(0x100f, 0x1010, 0x1011)},
		// cmp $3,%edi; jae default; …: three entries
		{name: "jae", code: x86("83ff03 6690 730c 89ff ff24fd00200000 c3 c3 c3 c3"), table: table},
		// cmpl $2,0x70(%rdi); SLOT; ja default; mov 0x70(%rdi),%eax;
		// jmp *0x2000(,%rax,8): the index loaded from the memory checked
		// (sqlite3's recoverStep), a 32-bit load clearing the upper half.
		{name: "index loaded from the checked memory", code: x86("837f7002 6690 770d 8b4770 ff24c500200000 c3 c3 c3 c3"), table: le64(0x1012, 0x1013, 0x1014)},
		{name: "index loaded from other memory", code: x86("837f7802 6690 770d 8b4770 ff24c500200000 c3 c3 c3 c3"), table: le64(0x1012, 0x1013, 0x1014),
			why: "the bounds check compares something else than the index"},
		{name: "no bounds check", code: x86("666690 6690 770c 89ff ff24fd00200000 c3 c3 c3 c3"), table: table,
			why: "no bounds check on the index on every path to it"},
		{name: "flags changed", code: ja(slotTest, "89ff"), table: table, why: "the flags of the bounds check are changed by"},
		{name: "index changed", code: ja(slotNop, "ffc7"), table: table, why: "the index is computed by"},
		{name: "signed check", code: x86("83ff02 6690 7f0c 89ff ff24fd00200000 c3 c3 c3 c3"), table: table,
			why: "no bounds check on the index on every path to it"},
		{name: "upper bits unknown", code: ja(slotNop, "6690"), table: table, why: "upper bits are not known to be zero"},
		{name: "no table bytes", code: ja(slotNop, "89ff"), nomem: true, why: "the table's bytes are not available"},
		{name: "entry outside", code: ja(slotNop, "89ff"), table: le64(0x1010, 0x3000, 0x1012),
			why: "table entry 1 leads to 0x3000, not an instruction of the function"},
		{name: "entry inside an instruction", code: ja(slotNop, "89ff"), table: le64(0x1010, 0x100a, 0x1012),
			why: "not an instruction of the function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := Func{Start: start, Code: tt.code}
			if !tt.nomem {
				fn.Mem = func(addr uint64, n int) ([]byte, bool) {
					if addr != 0x2000 || n > len(tt.table) {
						return nil, false
					}
					return tt.table[:n], true
				}
			}
			res := Analyze(arch.AMD64, fn)
			var unknown []string
			for _, in := range res.Insns {
				if !in.Known {
					unknown = append(unknown, in.Reason)
				}
			}
			if tt.why == "" {
				if len(unknown) > 0 {
					t.Errorf("unknown: %q", unknown)
				}
				return
			}
			if len(unknown) == 0 || !strings.Contains(unknown[0], "without a recognised table: ") || !strings.Contains(unknown[0], tt.why) {
				t.Errorf("unknown: %q; want the reason %q", unknown, tt.why)
			}
		})
	}
}
