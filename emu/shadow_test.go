//go:build cgo

package emu

import (
	"encoding/binary"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/shadow"
)

// runTraced maps code at base and a stack, runs to until with a shadow
// stack fed every instruction, and calls at(pc, stack) before each one.
func runTraced(t *testing.T, a *arch.Arch, base uint64, code []byte, until uint64, at func(shadow.Record, *shadow.Stack)) *shadow.Stack {
	t.Helper()
	e, err := NewEngine(a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	text, err := e.Map(base, PageSize, ProtRead|ProtExec, "text")
	if err != nil {
		t.Fatal(err)
	}
	copy(text, code)
	if _, err := e.Map(0x7000_0000, PageSize, ProtRead|ProtWrite, "stack"); err != nil {
		t.Fatal(err)
	}
	e.SetReg(e.RegID(a.SP), 0x7000_1000)
	e.SetReg(e.RegID(a.FP), 0x1111)
	s := shadow.New(a, e.ReadMem)
	// One record per flush: the observer runs before each instruction, with
	// memory as that instruction sees it.
	e.ObserveRecords(1, func(rs []Record) {
		for _, r := range rs {
			s.Observe(shadow.Record(r))
			if at != nil {
				at(shadow.Record(r), s)
			}
		}
	})
	if err := e.Start(base, until, 0, 1000); err != nil {
		t.Fatalf("Start: %v", err)
	}
	r, err := e.FrameState()
	if err != nil {
		t.Fatal(err)
	}
	s.Sync(shadow.Record(r))
	return s
}

func TestShadowStackAMD64(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(at int, b ...byte) { copy(code[at:], b) }
	put(0x00, 0xe8, 0x0b, 0, 0, 0) // 1000: call f (0x1010)
	put(0x05, 0xf4)                // 1005: hlt
	put(0x10, 0x55)                // 1010: f: push rbp
	put(0x11, 0x48, 0x89, 0xe5)    // 1011: mov rbp, rsp
	put(0x14, 0xe8, 0x07, 0, 0, 0) // 1014: call g (0x1020)
	put(0x19, 0x5d)                // 1019: pop rbp
	put(0x1a, 0xc3)                // 101a: ret
	put(0x20, 0x90)                // 1020: g: nop
	put(0x21, 0xc3)                // 1021: ret
	const sp0 = 0x7000_1000
	var checked bool
	s := runTraced(t, arch.AMD64, 0x1000, code, 0x1005, func(r shadow.Record, s *shadow.Stack) {
		if r.PC != 0x1020 {
			return
		}
		checked = true
		want := []shadow.Frame{
			{CallSite: 0x1000, ReturnAddr: 0x1005, CFA: sp0, CallerFP: 0x1111, Entry: 0x1010},
			{CallSite: 0x1014, ReturnAddr: 0x1019, CFA: sp0 - 16, CallerFP: sp0 - 16, Entry: 0x1020},
		}
		got := s.Frames()
		if len(got) != len(want) {
			t.Fatalf("at g: %d frames, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			got[i].Insn = 0
			if got[i] != want[i] {
				t.Errorf("frame %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if r.SP != sp0-24 {
			t.Errorf("SP at g = %#x, want %#x", r.SP, sp0-24)
		}
	})
	if !checked {
		t.Fatal("g never ran")
	}
	if s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after return: depth %d, anomalies %+v", s.Depth(), s.Anomalies())
	}
}

// TestShadowStackAbandonedFrames: g resets SP to main's and jumps back (as
// longjmp does); the SP rule drops f's and g's frames.
func TestShadowStackAbandonedFrames(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(at int, b ...byte) { copy(code[at:], b) }
	put(0x00, 0xe8, 0x0b, 0, 0, 0)          // 1000: call f
	put(0x05, 0xf4)                         // 1005: hlt
	put(0x10, 0x55)                         // 1010: f: push rbp
	put(0x11, 0xe8, 0x0a, 0, 0, 0)          // 1011: call g (0x1020)
	put(0x16, 0xc3)                         // 1016: ret (never reached)
	put(0x20, 0x48, 0x83, 0xc4, 0x18)       // 1020: g: add rsp, 24 (back to main's SP)
	put(0x24, 0xe9, 0xdc, 0xff, 0xff, 0xff) // 1024: jmp 0x1005
	s := runTraced(t, arch.AMD64, 0x1000, code, 0x1005, nil)
	if s.Depth() != 0 || s.Unwound() != 2 {
		t.Errorf("depth %d, unwound %d; want 0, 2", s.Depth(), s.Unwound())
	}
}

func TestShadowStackUnexpectedReturn(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(at int, b ...byte) { copy(code[at:], b) }
	put(0x00, 0xe8, 0x0b, 0, 0, 0)                            // 1000: call f
	put(0x05, 0xf4)                                           // 1005: hlt
	put(0x06, 0xf4)                                           // 1006: hlt
	put(0x10, 0x48, 0xc7, 0x04, 0x24, 0x06, 0x10, 0x00, 0x00) // 1010: mov qword [rsp], 0x1006
	put(0x18, 0xc3)                                           // 1018: ret
	var seen bool
	runTraced(t, arch.AMD64, 0x1000, code, 0x1007, func(r shadow.Record, s *shadow.Stack) {
		if r.PC == 0x1006 {
			seen = true
			a := s.Anomalies()
			if len(a) != 1 || a[0].Kind != "unexpected-return" || a[0].PC != 0x1006 || s.Depth() != 0 {
				t.Errorf("anomalies %+v, depth %d", a, s.Depth())
			}
		}
	})
	if !seen {
		t.Fatal("did not reach 0x1006")
	}
}

func TestShadowStackARM64(t *testing.T) {
	words := map[int]uint32{
		0x00: 0x94000004, // 1000: bl f (0x1010)
		0x04: 0xd503201f, // 1004: nop (end)
		0x10: 0xd503233f, // 1010: f: paciasp
		0x14: 0xa9bf7bfd, // 1014: stp x29, x30, [sp, #-16]!
		0x18: 0x910003fd, // 1018: mov x29, sp
		0x1c: 0x94000005, // 101c: bl g (0x1030)
		0x20: 0xa8c17bfd, // 1020: ldp x29, x30, [sp], #16
		0x24: 0xd50323bf, // 1024: autiasp
		0x28: 0xd65f03c0, // 1028: ret
		0x30: 0xd503201f, // 1030: g: nop
		0x34: 0xd65f03c0, // 1034: ret
	}
	code := make([]byte, 0x40)
	for at, w := range words {
		binary.LittleEndian.PutUint32(code[at:], w)
	}
	const sp0 = 0x7000_1000
	var checked bool
	s := runTraced(t, arch.ARM64, 0x1000, code, 0x1004, func(r shadow.Record, s *shadow.Stack) {
		if r.PC != 0x1030 {
			return
		}
		checked = true
		want := []shadow.Frame{
			{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: 0x1111, Entry: 0x1010},
			{CallSite: 0x101c, ReturnAddr: 0x1020, CFA: sp0 - 16, CallerFP: sp0 - 16, Entry: 0x1030},
		}
		got := s.Frames()
		if len(got) != 2 {
			t.Fatalf("at g: %d frames: %+v", len(got), got)
		}
		for i := range want {
			got[i].Insn = 0
			if got[i] != want[i] {
				t.Errorf("frame %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		// f's saved LR on the stack is signed (FEAT_PAuth is real).
		if r.RA != 0x1020 {
			t.Errorf("x30 at g = %#x, want 0x1020", r.RA)
		}
	})
	if !checked {
		t.Fatal("g never ran")
	}
	if s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after return: depth %d, anomalies %+v", s.Depth(), s.Anomalies())
	}
}

// TestShadowStackStopAndResume stops the engine from the observer before
// g's first instruction and resumes: the stack and the counts stay exact.
func TestShadowStackStopAndResume(t *testing.T) {
	code := make([]byte, 0x40)
	put := func(at int, b ...byte) { copy(code[at:], b) }
	put(0x00, 0xe8, 0x0b, 0, 0, 0) // 1000: call f
	put(0x05, 0xf4)                // 1005: hlt
	put(0x10, 0xe8, 0x0b, 0, 0, 0) // 1010: f: call g (0x1020)
	put(0x15, 0xc3)                // 1015: ret
	put(0x20, 0xc3)                // 1020: g: ret
	e, err := NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	text, _ := e.Map(0x1000, PageSize, ProtRead|ProtExec, "text")
	copy(text, code)
	e.Map(0x7000_0000, PageSize, ProtRead|ProtWrite, "stack")
	e.SetReg(X86RSP, 0x7000_1000)
	s := shadow.New(arch.AMD64, e.ReadMem)
	stopAt := uint64(0x1020)
	e.ObserveRecords(1, func(rs []Record) {
		s.Observe(shadow.Record(rs[0]))
		if rs[0].PC == stopAt {
			stopAt = 0
			s.Unobserve()
			e.StopBefore()
		}
	})
	if err := e.Start(0x1000, 0x1005, 0, 0); err != nil {
		t.Fatal(err)
	}
	if pc, _ := e.PC(); pc != 0x1020 || e.Executed() != 2 || s.Depth() != 2 {
		t.Fatalf("stopped at %#x after %d insns, depth %d; want 0x1020, 2, 2", pc, e.Executed(), s.Depth())
	}
	if err := e.Start(0x1020, 0x1005, 0, 0); err != nil {
		t.Fatal(err)
	}
	s.Sync(shadow.Record{PC: 0x1005, SP: 0x7000_1000})
	if e.Executed() != 4 || s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after resume: %d insns, depth %d, anomalies %v; want 4, 0, none", e.Executed(), s.Depth(), s.Anomalies())
	}
}
