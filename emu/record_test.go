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
	if !slices.Equal(got, want) {
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
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%+v\nwant\n%+v", got, want)
	}
	if r, err := e.FrameState(); err != nil || r != (Record{PC: 0x1004, SP: testSP, FP: testFP, RA: 0x1004}) {
		t.Errorf("FrameState = %+v, %v", r, err)
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
