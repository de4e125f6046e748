package cfi

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestEval evaluates the expressions GNU tools write, symbolically.
func TestEval(t *testing.T) {
	x86 := &Table{Arch: arch.AMD64, order: binary.LittleEndian}
	// ld's .plt CFA: DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0;
	// DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3;
	// DW_OP_shl; DW_OP_plus.
	plt := []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	// GCC's DRAP CFA: DW_OP_breg6 (rbp) -8; DW_OP_deref.
	drap := []byte{0x76, 0x78, 0x06}
	tests := []struct {
		name    string
		expr    []byte
		pc      uint64
		pushCFA bool
		want    sframe.Rule
		err     string
	}{
		{name: "plt jmp", expr: plt, pc: 0x1030, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 8}},
		{name: "plt push", expr: plt, pc: 0x1036, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 8}},
		{name: "plt after push", expr: plt, pc: 0x103b, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 16}},
		{name: "drap", expr: drap, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: 6, Offset: -8, Deref: true}},
		{name: "saved FP", expr: []byte{0x76, 0}, pushCFA: true, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: 6}},
		{name: "cfa plus", expr: []byte{0x23, 16}, pushCFA: true, want: sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: 16}},
		{name: "two registers", expr: []byte{0x76, 0, 0x77, 0, 0x22}, err: "applies DW_OP 0x22 to a register"},
		{name: "loaded then used", expr: []byte{0x76, 0, 0x06, 0x23, 8}, err: "uses a value loaded from memory"},
		{name: "constant", expr: []byte{0x31}, err: "is the constant 0x1"},
		{name: "empty", expr: nil, err: "leaves nothing on the stack"},
		{name: "truncated", expr: []byte{0x76}, err: "is truncated"},
		{name: "unknown op", expr: []byte{0x96, 0xe0}, err: "uses DW_OP 0xe0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x86.eval(tt.expr, tt.pc, tt.pushCFA)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("eval: %v, want error %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("eval = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestProgram runs hand-made CFA programs: rows, remember/restore with
// the RA sign state, restore to the CIE's rule, errors.
func TestProgram(t *testing.T) {
	a64 := &Table{Arch: arch.ARM64, order: binary.LittleEndian}
	c := &cie{codeAlign: 4, dataAlign: -8, raReg: 30, order: binary.LittleEndian, ptrSize: 8}
	var err error
	c.init, err = a64.run(c, nil, []byte{0x0c, 31, 0}, nil) // def_cfa sp+0
	if err != nil {
		t.Fatal(err)
	}
	f := &FDE{Start: 0x1000, End: 0x1020, RAReg: 30}
	prog := []byte{
		0x2d,     // negate_ra_state (paciasp)
		0x41,     // advance 4
		0x0e, 16, // def_cfa_offset 16
		0x9d, 2, // offset x29 at cfa-16
		0x9e, 1, // offset x30 at cfa-8
		0x41,       // advance 4 → 0x1008
		0x0a,       // remember_state
		0xdd, 0xde, // restore x29, x30
		0x0e, 0, // def_cfa_offset 0
		0x2d, // negate_ra_state (autiasp)
		0x41, // advance 4 → 0x100c
		0x0b, // restore_state
	}
	rows, _, err := a64.rows(c, f, prog)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		addr   uint64
		cfa    int64
		fp, ra ColKind
		signed bool
	}
	wants := []want{
		{0x1000, 0, ColUnmentioned, ColUnmentioned, true},
		{0x1004, 16, ColOffset, ColOffset, true},
		{0x1008, 0, ColUnmentioned, ColUnmentioned, false},
		{0x100c, 16, ColOffset, ColOffset, true},
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(wants), rows)
	}
	for i, w := range wants {
		r := rows[i]
		if r.Addr != w.addr || r.CFA.Off != w.cfa || r.FP.Kind != w.fp || r.RA.Kind != w.ra || r.SignedRA != w.signed {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	// An unknown opcode keeps the rows before it.
	k := &keptRows{}
	k.rows, k.errAt, k.err = a64.rows(c, f, []byte{0x0e, 16, 0x42, 0x3a})
	f.kept = k
	if f.Err() == nil || len(f.Rows()) != 1 || f.RowAt(0x1004) != 0 || f.RowAt(0x1008) != -1 {
		t.Errorf("program with an unknown opcode: rows %+v, err %v, RowAt(0x1008) %d", f.Rows(), f.Err(), f.RowAt(0x1008))
	}
	// DW_CFA_GNU_window_save means nothing on x86-64.
	x86 := &Table{Arch: arch.AMD64, order: binary.LittleEndian}
	if _, err := x86.run(c, f, []byte{0x2d}, nil); err == nil {
		t.Error("x86-64: DW_CFA_GNU_window_save accepted")
	}
}

// TestTruncated parses every prefix of a real .eh_frame without a panic,
// and every FDE it finds lies in the full section's.
func TestTruncated(t *testing.T) {
	path := filepath.Join(testcorpus.Dir(t), "v3/aarch64/nolibc-O2-pac-bkey")
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	s := ef.Section(".eh_frame")
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	full := Parse(data, s.Addr, EHFrame, arch.ARM64, binary.LittleEndian)
	if len(full.Errs) > 0 || len(full.FDEs) == 0 {
		t.Fatalf("full section: %d FDEs, errors %v", len(full.FDEs), full.Errs)
	}
	for n := range data {
		tab := Parse(data[:n], s.Addr, EHFrame, arch.ARM64, binary.LittleEndian)
		if len(tab.FDEs) > len(full.FDEs) {
			t.Fatalf("prefix %d: %d FDEs, more than the full section's %d", n, len(tab.FDEs), len(full.FDEs))
		}
		for i := range tab.FDEs {
			tab.FDEs[i].Rows()
		}
		// Flip each byte too: garbage must not panic either.
		c := append([]byte(nil), data[:n]...)
		if n > 0 {
			c[n-1] ^= 0xff
		}
		garbage := Parse(c, s.Addr, EHFrame, arch.ARM64, binary.LittleEndian)
		for i := range garbage.FDEs {
			garbage.FDEs[i].Rows() // evaluated on first use
		}
	}
}

// TestEvalSameAsRows evaluates every FDE of every corpus binary twice:
// into one reused buffer (Table.Eval, which keeps nothing) and kept
// (FDE.Rows on a second table); the rows, errors and RowAt answers at
// every row's address, one byte before it and at the FDE's last byte
// must be the same.
func TestEvalSameAsRows(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, e := range testcorpus.Entries(t) {
		ef, err := elf.Open(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		streamed, err1 := Load(ef)
		kept, err2 := Load(ef)
		ef.Close()
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", e.Path, err1, err2)
		}
		var buf []Row
		for i := range streamed.FDEs {
			f, g := &streamed.FDEs[i], &kept.FDEs[i]
			ev := streamed.Eval(f, &buf)
			if !reflect.DeepEqual(ev.Rows, g.Rows()) && (len(ev.Rows) > 0 || len(g.Rows()) > 0) {
				t.Fatalf("%s: FDE at %#x: Eval's rows %+v, Rows' %+v", e.Path, f.Start, ev.Rows, g.Rows())
			}
			if (ev.Err == nil) != (g.Err() == nil) || ev.Err != nil && ev.Err.Error() != g.Err().Error() {
				t.Fatalf("%s: FDE at %#x: Eval's error %v, Err's %v", e.Path, f.Start, ev.Err, g.Err())
			}
			pcs := []uint64{f.Start - 1, f.End - 1, f.End}
			for _, r := range ev.Rows {
				pcs = append(pcs, r.Addr-1, r.Addr)
			}
			for _, pc := range pcs {
				if a, b := ev.RowAt(pc), g.RowAt(pc); a != b {
					t.Fatalf("%s: FDE at %#x: RowAt(%#x) %d after Eval, %d after Rows", e.Path, f.Start, pc, a, b)
				}
			}
			if f.kept != nil {
				t.Fatalf("%s: FDE at %#x: Eval kept its rows", e.Path, f.Start)
			}
		}
	}
}

// TestIndexSorts shuffles the FDEs of a real .eh_frame (with a
// .debug_frame twin of some) and indexes them: the order must be the
// stable sort by start, .eh_frame first, that index promises.
func TestIndexSorts(t *testing.T) {
	ef, err := elf.Open(filepath.Join(testcorpus.Dir(t), "v3/x86-64/many-O2-static"))
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	tab, err := Load(ef)
	if err != nil {
		t.Fatal(err)
	}
	fdes := append([]FDE(nil), tab.FDEs...)
	for i := 0; i < len(fdes); i += 3 {
		twin := fdes[i]
		twin.Section = DebugFrame
		fdes = append(fdes, twin)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 5; round++ {
		rng.Shuffle(len(fdes), func(i, j int) { fdes[i], fdes[j] = fdes[j], fdes[i] })
		want := append([]FDE(nil), fdes...)
		slices.SortStableFunc(want, func(a, b FDE) int {
			if a.Start != b.Start {
				return cmp.Compare(a.Start, b.Start)
			}
			return cmp.Compare(a.Section, b.Section)
		})
		got := &Table{FDEs: append([]FDE(nil), fdes...)}
		got.index()
		if !reflect.DeepEqual(got.FDEs, want) {
			t.Fatalf("round %d: index's order differs from a stable sort", round)
		}
	}
}
