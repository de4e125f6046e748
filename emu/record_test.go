//go:build cgo

package emu

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

const (
	testText  = 0x1000
	testSP    = 0x7000_1000
	testFP    = 0x1111
	testStack = 0x7000_0000
)

// newTestEngine maps code at testText and a page of stack below testSP,
// with SP and FP set.
func newTestEngine(t *testing.T, a *arch.Arch, code []byte) *Engine {
	t.Helper()
	e, err := NewEngine(a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	text, err := e.Map(testText, PageSize, ProtRead|ProtExec, "text")
	if err != nil {
		t.Fatal(err)
	}
	copy(text, code)
	if _, err := e.Map(testStack, PageSize, ProtRead|ProtWrite, "stack"); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReg(e.RegID(a.SP), testSP); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReg(e.RegID(a.FP), testFP); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRecordsAMD64: the C hook records PC, size, SP and rbp before each
// instruction, one record per flush; FrameState reads the same at a stop.
func TestRecordsAMD64(t *testing.T) {
	code := make([]byte, 0x20)
	copy(code[0x00:], []byte{0xe8, 0x0b, 0, 0, 0}) // 1000: call f (0x1010)
	copy(code[0x05:], []byte{0xf4})                // 1005: hlt
	copy(code[0x10:], []byte{0x55})                // 1010: f: push %rbp
	copy(code[0x11:], []byte{0x48, 0x89, 0xe5})    // 1011: mov %rsp,%rbp
	copy(code[0x14:], []byte{0x5d})                // 1014: pop %rbp
	copy(code[0x15:], []byte{0xc3})                // 1015: ret
	e := newTestEngine(t, arch.AMD64, code)
	var got []Record
	e.ObserveRecords(1, func(rs []Record) { got = append(got, rs...) })
	if err := e.Start(testText, 0x1005, 0, 0); err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{PC: 0x1000, Size: 5, SP: testSP, FP: testFP},
		{PC: 0x1010, Size: 1, SP: testSP - 8, FP: testFP},
		{PC: 0x1011, Size: 3, SP: testSP - 16, FP: testFP},
		{PC: 0x1014, Size: 1, SP: testSP - 16, FP: testSP - 16},
		{PC: 0x1015, Size: 1, SP: testSP - 8, FP: testFP},
	}
	if want = single(want); !slices.Equal(got, want) {
		t.Errorf("records:\n%+v\nwant\n%+v", got, want)
	}
	if r, err := e.FrameState(); err != nil || r != (Record{PC: 0x1005, SP: testSP, FP: testFP}) {
		t.Errorf("FrameState = %+v, %v", r, err)
	}
}

// TestRecordsARM64: on AArch64 the records carry x29 as FP and x30 as RA,
// signed by paciasp (FEAT_PAuth is real) where it is.
func TestRecordsARM64(t *testing.T) {
	words := []uint32{
		0x94000004, // 1000: bl f (0x1010)
		0xd503201f, // 1004: nop (end)
		0, 0,
		0xd503233f, // 1010: f: paciasp
		0xa9bf7bfd, // 1014: stp x29, x30, [sp, #-16]!
		0x910003fd, // 1018: mov x29, sp
		0xa8c17bfd, // 101c: ldp x29, x30, [sp], #16
		0xd50323bf, // 1020: autiasp
		0xd65f03c0, // 1024: ret
	}
	var code []byte
	for _, w := range words {
		code = binary.LittleEndian.AppendUint32(code, w)
	}
	e := newTestEngine(t, arch.ARM64, code)
	var got []Record
	e.ObserveRecords(1, func(rs []Record) { got = append(got, rs...) })
	if err := e.Start(testText, 0x1004, 0, 0); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Fatalf("%d records, want 7: %+v", len(got), got)
	}
	signed := got[2].RA
	if signed == 0x1004 || arch.ARM64.StripPAC(signed) != 0x1004 {
		t.Errorf("x30 after paciasp = %#x, want 0x1004 with a PAC", signed)
	}
	want := []Record{
		{PC: 0x1000, Size: 4, SP: testSP, FP: testFP, RA: 0},
		{PC: 0x1010, Size: 4, SP: testSP, FP: testFP, RA: 0x1004},
		{PC: 0x1014, Size: 4, SP: testSP, FP: testFP, RA: signed},
		{PC: 0x1018, Size: 4, SP: testSP - 16, FP: testFP, RA: signed},
		{PC: 0x101c, Size: 4, SP: testSP - 16, FP: testSP - 16, RA: signed},
		{PC: 0x1020, Size: 4, SP: testSP, FP: testFP, RA: signed},
		{PC: 0x1024, Size: 4, SP: testSP, FP: testFP, RA: 0x1004},
	}
	if want = single(want); !slices.Equal(got, want) {
		t.Errorf("records:\n%+v\nwant\n%+v", got, want)
	}
	if r, err := e.FrameState(); err != nil || r != (Record{PC: 0x1004, SP: testSP, FP: testFP, RA: 0x1004}) {
		t.Errorf("FrameState = %+v, %v", r, err)
	}
}

// single fills in what the C hook puts in a record of one instruction.
func single(rs []Record) []Record {
	for i := range rs {
		rs[i].N, rs[i].LastPC, rs[i].LastSize = 1, rs[i].PC, rs[i].Size
	}
	return rs
}

// TestMergeRecords: in merge mode an instruction joins the previous record
// only with the same SP, FP and RA, in a merge interval of the class of the
// record's first one; a run goes on past stores, which RunStores lists
// (but the last instruction's) and RunAdvance redoes instruction by
// instruction; RunPCs lists the run's addresses.
func TestMergeRecords(t *testing.T) {
	code := make([]byte, 0x40)
	copy(code[0x00:], []byte{0x90})                   // 1000: nop
	copy(code[0x01:], []byte{0xb8, 1, 0, 0, 0})       // 1001: mov $1,%eax
	copy(code[0x06:], []byte{0x01, 0xc0})             // 1006: add %eax,%eax
	copy(code[0x08:], []byte{0x89, 0x44, 0x24, 0xf8}) // 1008: mov %eax,-8(%rsp): a store
	copy(code[0x0c:], []byte{0x90})                   // 100c: nop
	copy(code[0x0d:], []byte{0x90})                   // 100d: nop
	copy(code[0x0e:], []byte{0x90})                   // 100e: nop (a bound)
	copy(code[0x0f:], []byte{0x50})                   // 100f: push %rax (SP changes after it)
	copy(code[0x10:], []byte{0x90})                   // 1010: nop
	copy(code[0x11:], []byte{0xf4})                   // 1011: hlt
	for _, tc := range []struct {
		name  string
		class []uint32
		want  []Record
		runs  [][]uint64
	}{
		{"classes of their own", []uint32{1, 2, 0},
			[]Record{
				{PC: 0x1000, Size: 1, SP: testSP, FP: testFP, N: 6, LastPC: 0x100d, LastSize: 1},
				{PC: 0x100e, Size: 1, SP: testSP, FP: testFP, N: 2, LastPC: 0x100f, LastSize: 1},
				{PC: 0x1010, Size: 1, SP: testSP - 8, FP: testFP, N: 1, LastPC: 0x1010, LastSize: 1},
			},
			[][]uint64{{0x1000, 0x1001, 0x1006, 0x1008, 0x100c, 0x100d}, {0x100e, 0x100f}, {0x1010}}},
		{"one class", []uint32{1, 1, 0},
			[]Record{
				{PC: 0x1000, Size: 1, SP: testSP, FP: testFP, N: 8, LastPC: 0x100f, LastSize: 1, Crossed: 1},
				{PC: 0x1010, Size: 1, SP: testSP - 8, FP: testFP, N: 1, LastPC: 0x1010, LastSize: 1},
			},
			[][]uint64{{0x1000, 0x1001, 0x1006, 0x1008, 0x100c, 0x100d, 0x100e, 0x100f}, {0x1010}}},
		{"not mergeable", []uint32{0, 0, 0},
			single([]Record{
				{PC: 0x1000, Size: 1, SP: testSP, FP: testFP}, {PC: 0x1001, Size: 5, SP: testSP, FP: testFP},
				{PC: 0x1006, Size: 2, SP: testSP, FP: testFP}, {PC: 0x1008, Size: 4, SP: testSP, FP: testFP},
				{PC: 0x100c, Size: 1, SP: testSP, FP: testFP}, {PC: 0x100d, Size: 1, SP: testSP, FP: testFP},
				{PC: 0x100e, Size: 1, SP: testSP, FP: testFP}, {PC: 0x100f, Size: 1, SP: testSP, FP: testFP},
				{PC: 0x1010, Size: 1, SP: testSP - 8, FP: testFP},
			}),
			[][]uint64{{0x1000}, {0x1001}, {0x1006}, {0x1008}, {0x100c}, {0x100d}, {0x100e}, {0x100f}, {0x1010}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t, arch.AMD64, code)
			slot := uint64(testSP - 8)
			if err := e.WriteMem(slot, make([]byte, 8)); err != nil {
				t.Fatal(err)
			}
			var got []Record
			var runs [][]uint64
			var stores [][2]uint64
			var seen []uint64 // the slot's value at each instruction of a run
			if err := e.ObserveHistory(64, func(r *Record, live bool) {
				got = append(got, *r)
				pcs := e.RunPCs(r)
				runs = append(runs, slices.Clone(pcs))
				e.RunStores(r, func(addr, size uint64) bool {
					stores = append(stores, [2]uint64{addr, size})
					return false
				})
				for k := range pcs {
					e.RunAdvance(r, k)
					v, err := e.Read64(slot)
					if err != nil {
						t.Fatal(err)
					}
					seen = append(seen, v)
				}
			}); err != nil {
				t.Fatal(err)
			}
			e.SetMerge([]uint64{0x1000, 0x100e, 0x2000}, tc.class)
			if err := e.Start(testText, 0x1011, 0, 0); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].pcIdx = 0
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("records:\n%+v\nwant\n%+v", got, tc.want)
			}
			if !slices.EqualFunc(runs, tc.runs, slices.Equal) {
				t.Errorf("runs %#x, want %#x", runs, tc.runs)
			}
			// The store at 0x1008 (eax = 2) is seen by the instructions
			// after it: through RunAdvance within a run, by the next
			// records after it.
			want := []uint64{0, 0, 0, 0, 2, 2, 2, 2, 2}
			if !slices.Equal(seen, want) {
				t.Errorf("the slot's values instruction by instruction %v, want %v", seen, want)
			}
			var wantStores [][2]uint64
			if tc.want[0].N > 4 {
				wantStores = [][2]uint64{{slot, 4}} // not the push: the last of its run
			}
			if !slices.Equal(stores, wantStores) {
				t.Errorf("run stores %#x, want %#x", stores, wantStores)
			}
			if e.Executed() != 9 {
				t.Errorf("%d instructions executed, want 9", e.Executed())
			}
		})
	}
}

// TestMergeRecordsARM64: on AArch64 a run ends after a branch to a
// register even where SP, FP and LR stay the same.
func TestMergeRecordsARM64(t *testing.T) {
	code := make([]byte, 0x40)
	le := binary.LittleEndian
	le.PutUint32(code[0x00:], 0xd2800201) // 1000: mov x1, #0x10
	le.PutUint32(code[0x04:], 0x8b010021) // 1004: add x1, x1, x1 (0x20)
	le.PutUint32(code[0x08:], 0x91400422) // 1008: add x2, x1, #1, lsl #12 (0x1020)
	le.PutUint32(code[0x0c:], 0xd61f0040) // 100c: br x2
	le.PutUint32(code[0x20:], 0xd503201f) // 1020: nop
	le.PutUint32(code[0x24:], 0xd503201f) // 1024: nop
	e := newTestEngine(t, arch.ARM64, code)
	var got []Record
	if err := e.ObserveHistory(64, func(r *Record, live bool) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	e.SetMerge([]uint64{0x1000, 0x2000}, []uint32{1, 0})
	if err := e.Start(testText, 0x1028, 0, 0); err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{PC: 0x1000, Size: 4, SP: testSP, FP: testFP, N: 4, LastPC: 0x100c, LastSize: 4},
		{PC: 0x1020, Size: 4, SP: testSP, FP: testFP, N: 2, LastPC: 0x1024, LastSize: 4},
	}
	for i := range got {
		got[i].pcIdx = 0
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%+v\nwant\n%+v", got, want)
	}
}

// TestStopBefore stops from the observer before an instruction: Start
// returns with the PC at it, Executed does not count it, and resuming
// there runs it once.
func TestStopBefore(t *testing.T) {
	code := make([]byte, 0x30)
	copy(code[0x00:], []byte{0xe8, 0x0b, 0, 0, 0}) // 1000: call f (0x1010)
	copy(code[0x05:], []byte{0xf4})                // 1005: hlt
	copy(code[0x10:], []byte{0xe8, 0x0b, 0, 0, 0}) // 1010: f: call g (0x1020)
	copy(code[0x15:], []byte{0xc3})                // 1015: ret
	copy(code[0x20:], []byte{0xc3})                // 1020: g: ret
	e := newTestEngine(t, arch.AMD64, code)
	var pcs []uint64
	stopAt := uint64(0x1020)
	e.ObserveRecords(1, func(rs []Record) {
		if rs[0].PC == stopAt {
			stopAt = 0
			if err := e.StopBefore(); err != nil {
				t.Error(err)
			}
			return
		}
		pcs = append(pcs, rs[0].PC)
	})
	if err := e.Start(testText, 0x1005, 0, 0); err != nil {
		t.Fatal(err)
	}
	if pc, _ := e.PC(); pc != 0x1020 || e.Executed() != 2 {
		t.Fatalf("stopped at %#x after %d instructions; want 0x1020 after 2", pc, e.Executed())
	}
	if err := e.Start(0x1020, 0x1005, 0, 0); err != nil {
		t.Fatal(err)
	}
	if pc, _ := e.PC(); pc != 0x1005 || e.Executed() != 4 {
		t.Errorf("ended at %#x after %d instructions; want 0x1005 after 4", pc, e.Executed())
	}
	if want := []uint64{0x1000, 0x1010, 0x1020, 0x1015}; !slices.Equal(pcs, want) {
		t.Errorf("observed %#x, want %#x", pcs, want)
	}
}

// TestStartCount: Start with a count runs exactly that many instructions
// (the code hook stops before the next one, with the PC at it), with and
// without an observer, and a later Start goes on from there.
func TestStartCount(t *testing.T) {
	code := make([]byte, 0x20)
	for i := range 8 {
		code[i] = 0x90 // 1000..1007: nop
	}
	code[8] = 0xf4 // 1008: hlt
	for _, observe := range []bool{false, true} {
		e := newTestEngine(t, arch.AMD64, code)
		var pcs []uint64
		if observe {
			e.ObserveRecords(1, func(rs []Record) {
				for _, r := range rs {
					pcs = append(pcs, r.PC)
				}
			})
		}
		pc := uint64(testText)
		for _, step := range []struct{ count, executed, pc uint64 }{{3, 3, 0x1003}, {1, 4, 0x1004}, {2, 6, 0x1006}, {0, 8, 0x1008}} {
			if err := e.Start(pc, 0x1008, 0, step.count); err != nil {
				t.Fatal(err)
			}
			pc, _ = e.PC()
			if e.Executed() != step.executed || pc != step.pc {
				t.Fatalf("observe %v, count %d: %d executed, PC %#x; want %d at %#x", observe, step.count, e.Executed(), pc, step.executed, step.pc)
			}
		}
		if observe && !slices.Equal(pcs, []uint64{0x1000, 0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007}) {
			t.Errorf("observed %#x", pcs)
		}
	}
}
