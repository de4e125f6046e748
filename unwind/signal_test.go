package unwind

import (
	"errors"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

var signalFDEInfo = sframe.FDEInfo(sframe.FREAddr1, sframe.PCInc, false, true)

// withCode adds code bytes at addr to a memory of words: every 8-byte
// read within the code (or overlapping it, the rest zero) reads them.
func withCode(m memory, addr uint64, code []byte) memory {
	for a := addr - 7; a < addr+uint64(len(code)); a++ {
		var w uint64
		for i := 7; i >= 0; i-- {
			var b byte
			if x := a + uint64(i); x >= addr && x < addr+uint64(len(code)) {
				b = code[x-addr]
			}
			w = w<<8 | uint64(b)
		}
		if _, ok := m[a]; !ok {
			m[a] = w
		}
	}
	return m
}

// The trampolines' code: glibc's __restore_rt (mov $15,%rax; syscall)
// and the vDSO's __kernel_rt_sigreturn (mov x8, #139; svc #0).
var (
	amd64Tramp = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}
	arm64Tramp = []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}
)

// wantFrame is what a test expects of one frame.
type wantFrame struct {
	pc, cfa, ra, callerFP uint64
	signal, interrupted   bool
	outermost             bool
}

func checkWalk(t *testing.T, it *Iterator, wants []wantFrame) {
	t.Helper()
	n := 0
	for it.Next() {
		f := it.Frame()
		if n >= len(wants) {
			t.Fatalf("extra frame %+v", f)
		}
		w := wants[n]
		if f.PC != w.pc || f.Outermost != w.outermost || f.Err != nil || f.Signal != w.signal || f.Interrupted != w.interrupted ||
			!w.outermost && (f.CFA != w.cfa || f.RA != w.ra || f.CallerFP != w.callerFP) {
			t.Errorf("frame %d = pc %#x cfa %#x ra %#x fp %#x signal %v interrupted %v outermost %v err %v; want %+v",
				n, f.PC, f.CFA, f.RA, f.CallerFP, f.Signal, f.Interrupted, f.Outermost, f.Err, w)
		}
		n++
	}
	if n != len(wants) || it.Err() != nil {
		t.Errorf("%d frames, err %v", n, it.Err())
	}
}

// amd64SignalSection is amd64Section with a handler h at 0x1600 (a leaf)
// and a signal trampoline at 0x1500: an FDE with the signal flag and no
// rows, as gas writes for .cfi_signal_frame with the ucontext's CFI.
func amd64SignalSection(t *testing.T, trampRows ...sframe.FRE) *sframe.Section {
	base := amd64Section(t)
	return section(t, sframe.ABIAMD64LE, -8, append(base.FDEs,
		sframe.FDE{Start: 0x1500, Size: 9, Info: signalFDEInfo, FREs: trampRows},
		sframe.FDE{Start: 0x1600, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 8)}})...)
}

// amd64SignalStack: _start called f, f called g, a signal interrupted g
// at 0x1204 (SP 0x7fe8, FP 0x7ff0); the kernel's rt_sigframe is at frame
// (pretcode, then the ucontext).
func amd64SignalStack(frame uint64) memory {
	mc := frame + 8 + 40
	return withCode(memory{
		0x7fe8: 0x1110, 0x7ff0: 0x8000, 0x7ff8: 0x1310, // as in TestWalkAMD64
		frame:     0x1500, // pretcode
		mc + 15*8: 0x7fe8, // rsp
		mc + 16*8: 0x1204, // rip
		mc + 10*8: 0x7ff0, // rbp
		mc + 13*8: 0xaaaa, // rax
	}, 0x1500, amd64Tramp)
}

// TestWalkSignalAMD64: from a handler the walk goes through the
// trampoline's signal frame into the interrupted g and on to _start, on
// the same stack and from an alternate stack above it; in the trampoline
// itself the signal frame is the topmost one.
func TestWalkSignalAMD64(t *testing.T) {
	for _, frame := range []uint64{0x7000, 0x9000} {
		u := New(arch.AMD64, amd64SignalSection(t))
		mem := amd64SignalStack(frame)
		it := u.Walk(Registers{PC: 0x1604, SP: frame, FP: 0x55}, mem)
		checkWalk(t, it, []wantFrame{
			{pc: 0x1604, cfa: frame + 8, ra: 0x1500, callerFP: 0x55},
			{pc: 0x1500, cfa: 0x7fe8, ra: 0x1204, callerFP: 0x7ff0, signal: true},
			{pc: 0x1204, cfa: 0x7ff0, ra: 0x1110, callerFP: 0x7ff0, interrupted: true},
			{pc: 0x1110, cfa: 0x8000, ra: 0x1310, callerFP: 0x8000},
			{pc: 0x1310, outermost: true},
		})
		// In the trampoline after the handler returned (SP: the ucontext),
		// at its syscall.
		it = u.Walk(Registers{PC: 0x1507, SP: frame + 8, FP: 0x55}, mem)
		checkWalk(t, it, []wantFrame{
			{pc: 0x1507, cfa: 0x7fe8, ra: 0x1204, callerFP: 0x7ff0, signal: true},
			{pc: 0x1204, cfa: 0x7ff0, ra: 0x1110, callerFP: 0x7ff0, interrupted: true},
			{pc: 0x1110, cfa: 0x8000, ra: 0x1310, callerFP: 0x8000},
			{pc: 0x1310, outermost: true},
		})
	}
	// A trampoline FDE with rows: the signal flag wins, the rows are not
	// a call frame's.
	u := New(arch.AMD64, amd64SignalSection(t, fre(0, sframe.BaseSP, false, 8)))
	it := u.Walk(Registers{PC: 0x1500, SP: 0x7008}, amd64SignalStack(0x7000))
	if !it.Next() || !it.Frame().Signal || !it.Frame().HasRow || it.Frame().CFA != 0x7fe8 {
		t.Errorf("trampoline with a row: %+v", it.Frame())
	}
	// A FLEX rule of the interrupted frame on rax reads the saved rax.
	u = New(arch.AMD64, section(t, sframe.ABIAMD64LE, -8,
		sframe.FDE{Start: 0x1200, Size: 0x10, Info: inc1, Info2: uint8(sframe.FDETypeFlex), FREs: []sframe.FRE{
			{Start: 0, Words: []int32{sframe.FlexCtrl(0, false), 0x10}}}},
		sframe.FDE{Start: 0x1500, Size: 9, Info: signalFDEInfo}))
	mem := amd64SignalStack(0x7000)
	mem[0xaaaa+0x10-8] = 0x4321 // g's RA at CFA-8
	it = u.Walk(Registers{PC: 0x1500, SP: 0x7008}, mem)
	it.Next()
	if !it.Next() || it.Frame().CFA != 0xaaaa+0x10 || it.Frame().RA != 0x4321 {
		t.Errorf("FLEX rule on rax in the interrupted frame: %+v", it.Frame())
	}
}

// TestWalkSignalARM64: a leaf interrupted with its return address still
// in x30: the interrupted frame reads it from the signal context.
func TestWalkSignalARM64(t *testing.T) {
	u := New(arch.ARM64, section(t, sframe.ABIAArch64LE, 0,
		// f: CFA = FP+16, FP and RA saved.
		sframe.FDE{Start: 0x2000, Size: 0x40, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseFP, false, 16, -8, -16)}},
		sframe.FDE{Start: 0x2100, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 0)}}, // leaf
		sframe.FDE{Start: 0x2200, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false)}},    // _start
		sframe.FDE{Start: 0x2300, Size: 8, Info: signalFDEInfo},                                                // trampoline
		sframe.FDE{Start: 0x2400, Size: 0x40, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 0)}}, // handler, a leaf
	))
	const frame = 0x6000
	mc := uint64(frame + 128 + 176)
	mem := withCode(memory{
		0x7fe0: 0x8000, 0x7fe8: 0x2204, // f's frame record: CFA 0x7ff0
		mc + 8 + 30*8: 0x2010, // x30: the leaf's return address into f
		mc + 8 + 29*8: 0x7fe0, // x29
		mc + 256:      0x7fe0, // sp
		mc + 264:      0x2104, // pc
	}, 0x2300, arm64Tramp)
	it := u.Walk(Registers{PC: 0x2404, SP: frame, FP: 0x7ff0 - 16, LR: 0x2300}, mem)
	checkWalk(t, it, []wantFrame{
		{pc: 0x2404, cfa: frame, ra: 0x2300, callerFP: 0x7ff0 - 16},
		{pc: 0x2300, cfa: 0x7fe0, ra: 0x2104, callerFP: 0x7fe0, signal: true},
		{pc: 0x2104, cfa: 0x7fe0, ra: 0x2010, callerFP: 0x7fe0, interrupted: true},
		{pc: 0x2010, cfa: 0x7ff0, ra: 0x2204, callerFP: 0x8000},
		{pc: 0x2204, outermost: true},
	})
}

// TestWalkSignalNotTrampoline: an FDE with the signal flag whose code is
// not an rt_sigreturn sequence (.cfi_signal_frame on an ordinary
// function) is unwound with its rows; without rows it has no data.
func TestWalkSignalNotTrampoline(t *testing.T) {
	u := New(arch.AMD64, amd64SignalSection(t, fre(0, sframe.BaseSP, false, 8)))
	mem := withCode(memory{0x7000: 0x1310}, 0x1500, []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90})
	it := u.Walk(Registers{PC: 0x1500, SP: 0x7000}, mem)
	checkWalk(t, it, []wantFrame{
		{pc: 0x1500, cfa: 0x7008, ra: 0x1310, callerFP: 0},
		{pc: 0x1310, outermost: true},
	})
	u = New(arch.AMD64, amd64SignalSection(t))
	it = u.Walk(Registers{PC: 0x1500, SP: 0x7000}, mem)
	if !it.Next() || it.Frame().Signal || !errors.Is(it.Frame().Err, ErrNoFRE) || it.Next() || it.Err() != nil {
		t.Errorf("no rows: %+v, %v", it.Frame(), it.Err())
	}
	// The code is checked at each instruction of the sequence only.
	for pc, want := range map[uint64]bool{0x1500: true, 0x1507: true, 0x1501: false, 0x1508: false} {
		it := u.Walk(Registers{PC: pc, SP: 0x7008}, amd64SignalStack(0x7000))
		if it.Next(); it.Frame().Signal != want {
			t.Errorf("pc %#x: signal %v", pc, it.Frame().Signal)
		}
	}
}

// TestWalkSignalEnds: an unreadable signal context is an unwinding
// failure; a trampoline without the flag (V1/V2, or no FDE) ends the
// SFrame chain as any PC without data; signal frames going down the stack
// end after maxStackSwitches.
func TestWalkSignalEnds(t *testing.T) {
	u := New(arch.AMD64, amd64SignalSection(t))
	it := u.Walk(Registers{PC: 0x1500, SP: 0x7008}, withCode(memory{}, 0x1500, amd64Tramp))
	for it.Next() {
	}
	var se *StepError
	if !errors.As(it.Err(), &se) || se.What != "CFA" {
		t.Errorf("unreadable context: %v", it.Err())
	}
	// A chain of signal frames each interrupting the trampoline below
	// itself, every one lower than the one before.
	mem := withCode(memory{}, 0x1500, amd64Tramp)
	sp := uint64(0x100000)
	for i := 0; i < 20; i++ {
		mc := sp + 40
		next := sp - 0x1000
		mem[mc+15*8], mem[mc+16*8], mem[mc+10*8] = next, 0x1500, 0
		sp = next
	}
	it = u.Walk(Registers{PC: 0x1500, SP: 0x100000}, mem)
	n := 0
	for it.Next() {
		n++
	}
	if n != maxStackSwitches+2 || !errors.As(it.Err(), &se) || se.What != "CFA" {
		t.Errorf("descending signal frames: %d frames, err %v", n, it.Err())
	}
}
