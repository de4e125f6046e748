package shadow_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/shadow"
)

// The tests feed a Stack the records the emulator would collect (PC,
// size, SP, FP and x30 before each instruction) for small hand-written
// programs, whose instruction bytes a fake code reader serves so that
// calls and returns are classified from real encodings.

// code is guest code: the bytes of each instruction by its address.
type code map[uint64][]byte

// readCode reads guest memory as the emulator does; only the bytes of
// instructions are mapped.
func (c code) readCode(addr uint64, buf []byte) error {
	for i := range buf {
		a, ok := addr+uint64(i), false
		for at, b := range c {
			if a >= at && a < at+uint64(len(b)) {
				buf[i], ok = b[a-at], true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%#x: not mapped", a)
		}
	}
	return nil
}

// x86-64 encodings.
func x86call(from, to uint64) []byte { return rel32(0xe8, from, to) } // call rel32
func x86jmp(from, to uint64) []byte  { return rel32(0xe9, from, to) } // jmp rel32

func rel32(op byte, from, to uint64) []byte {
	return binary.LittleEndian.AppendUint32([]byte{op}, uint32(to-(from+5)))
}

var (
	x86ret     = []byte{0xc3}
	x86hlt     = []byte{0xf4}
	x86nop     = []byte{0x90}
	x86pushRBP = []byte{0x55}             // push %rbp
	x86popRBP  = []byte{0x5d}             // pop %rbp
	x86movRBP  = []byte{0x48, 0x89, 0xe5} // mov %rsp,%rbp
	x86callRAX = []byte{0xff, 0xd0}       // call *%rax
	x86jmpRAX  = []byte{0xff, 0xe0}       // jmp *%rax
)

// x86addRSP is add $n,%rsp.
func x86addRSP(n byte) []byte { return []byte{0x48, 0x83, 0xc4, n} }

// x86storeRA is movq $ra,(%rsp): overwrites the return address.
func x86storeRA(ra uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0x48, 0xc7, 0x04, 0x24}, ra)
}

// AArch64 encodings (little-endian words).
func a64(w uint32) []byte { return binary.LittleEndian.AppendUint32(nil, w) }

func a64bl(from, to uint64) []byte { return a64(0x94000000 | uint32((to-from)/4)&0x03ffffff) }

var (
	a64nop     = a64(0xd503201f)
	a64paciasp = a64(0xd503233f)
	a64autiasp = a64(0xd50323bf)
	a64push    = a64(0xa9bf7bfd) // stp x29, x30, [sp, #-16]!
	a64movFP   = a64(0x910003fd) // mov x29, sp
	a64pop     = a64(0xa8c17bfd) // ldp x29, x30, [sp], #16
	a64ret     = a64(0xd65f03c0)
	a64retaa   = a64(0xd65f0bff)
	a64blrX8   = a64(0xd63f0100) // blr x8
	a64brX16   = a64(0xd61f0200) // br x16
	a64movSPX1 = a64(0x9100003f) // mov sp, x1
)

const (
	sp0 = 0x7000_1000 // the stack pointer at the first instruction
	fp0 = 0x1111      // the frame pointer at the first instruction
	// signed is x30 = 0x1004 after paciasp: a PAC in the bits above the
	// 48-bit virtual address.
	signed = 0x0023_0000_0000_1004
)

// step is one instruction about to run, as the machine shows it, and the
// depth of the shadow stack once it has been observed.
type step struct {
	pc, sp, fp, ra uint64
	depth          int
}

func (c code) record(st step) shadow.Record {
	return shadow.Record{PC: st.pc, Size: uint32(len(c[st.pc])), SP: st.sp, FP: st.fp, RA: st.ra}
}

// observe feeds s the steps and checks the depth after each, and that the
// version changes exactly when the frames do.
func observe(t *testing.T, s *shadow.Stack, c code, steps []step) {
	t.Helper()
	for i, st := range steps {
		before, v := slices.Clone(s.Frames()), s.Version()
		s.Observe(c.record(st))
		if s.Depth() != st.depth {
			t.Fatalf("step %d (%#x): depth %d, want %d; frames %+v", i, st.pc, s.Depth(), st.depth, s.Frames())
		}
		if changed := !slices.Equal(before, s.Frames()); changed != (s.Version() != v) {
			t.Errorf("step %d (%#x): frames changed %v, version %d -> %d", i, st.pc, changed, v, s.Version())
		}
	}
}

// sameFunction puts each 256-byte block of code in its own function:
// main at 0x1000, f at 0x1100, g at 0x1200, h at 0x1300.
func sameFunction(a, b uint64) bool { return a>>8 == b>>8 }

// stackCase is a program run step by step through a shadow stack: the
// frames it has at one PC, and what it unwound and found odd by the end.
type stackCase struct {
	name         string
	arch         *arch.Arch
	code         code
	sameFunction func(a, b uint64) bool
	steps        []step
	// at is a PC where the frames are exactly frames.
	at        uint64
	frames    []shadow.Frame
	unwound   uint64
	anomalies []shadow.Anomaly
	// anyAnomalies leaves the anomalies unchecked.
	anyAnomalies bool
}

func (tt stackCase) run(t *testing.T) {
	s := shadow.New(tt.arch, tt.code.readCode)
	s.SameFunction = tt.sameFunction
	checked := tt.frames == nil
	for i, st := range tt.steps {
		observe(t, s, tt.code, tt.steps[i:i+1])
		if st.pc == tt.at && !checked {
			checked = true
			if got := s.Frames(); !slices.Equal(got, tt.frames) {
				t.Errorf("frames at %#x:\n%+v\nwant\n%+v", st.pc, got, tt.frames)
			}
		}
	}
	if !checked {
		t.Errorf("%#x never ran", tt.at)
	}
	if s.Unwound() != tt.unwound {
		t.Errorf("unwound %d, want %d", s.Unwound(), tt.unwound)
	}
	if got := s.Anomalies(); !tt.anyAnomalies && !slices.Equal(got, tt.anomalies) {
		t.Errorf("anomalies %+v, want %+v", got, tt.anomalies)
	}
}

func TestStack(t *testing.T) {
	// x86-64: main calls f, f calls g.
	x86nest := code{
		0x1000: x86call(0x1000, 0x1010), // main: call f
		0x1005: x86hlt,
		0x1010: x86pushRBP, // f
		0x1011: x86movRBP,
		0x1014: x86call(0x1014, 0x1020), // call g
		0x1019: x86popRBP,
		0x101a: x86ret,
		0x1020: x86nop, // g
		0x1021: x86ret,
	}
	// x86-64: main calls f, f calls g, g moves SP up by n and jumps to
	// to (as longjmp does).
	x86longjmp := func(n byte, to uint64) code {
		return code{
			0x1000: x86call(0x1000, 0x1010), // main: call f
			0x1005: x86hlt,
			0x1010: x86pushRBP,              // f
			0x1011: x86call(0x1011, 0x1020), // call g
			0x1016: x86ret,
			0x1020: x86addRSP(n), // g
			0x1024: x86jmp(0x1024, to),
		}
	}
	// AArch64: main calls f, f (with a frame record) calls g; g ends with
	// the instruction end (at 0x1204) after one that sets SP.
	a64nest := func(end []byte) code {
		return code{
			0x1000: a64bl(0x1000, 0x1100), // main: bl f
			0x1004: a64nop,
			0x1008: a64nop,  // landing pad
			0x1100: a64push, // f
			0x1104: a64movFP,
			0x1108: a64bl(0x1108, 0x1200), // bl g
			0x110c: a64pop,
			0x1110: a64ret,
			0x1114: a64pop, // landing pad
			0x1118: a64ret,
			0x1200: a64movSPX1, // g
			0x1204: end,
		}
	}
	// AArch64: main calls f, f tail-calls h through br.
	a64tail := code{
		0x1000: a64bl(0x1000, 0x1100), // main: bl f
		0x1004: a64nop,
		0x1100: a64paciasp, // f
		0x1104: a64brX16,
		0x1300: a64retaa, // h
	}

	// AArch64: main calls f, f calls g, g tail-calls f through br (as
	// CPython's tuplehash calls PyObject_Hash, which tail-calls the hash
	// of the inner tuple: tuplehash again); the inner f returns to the
	// outer one.
	a64tailRecurse := code{
		0x1000: a64bl(0x1000, 0x1100), // main: bl f
		0x1004: a64nop,
		0x1100: a64push,               // f
		0x1104: a64(0x54000041),       // b.ne 0x110c
		0x1108: a64bl(0x1108, 0x1200), // bl g
		0x110c: a64pop,
		0x1110: a64ret,
		0x1200: a64brX16, // g: br x16 (to f)
	}

	tests := []stackCase{
		{
			name: "x86-64 call and return nest",
			arch: arch.AMD64,
			code: x86nest,
			steps: []step{
				// pc, sp, fp, ra, depth
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1011, sp0 - 16, fp0, 0, 1},
				{0x1014, sp0 - 16, sp0 - 16, 0, 1},
				{0x1020, sp0 - 24, sp0 - 16, 0, 2},
				{0x1021, sp0 - 24, sp0 - 16, 0, 2},
				{0x1019, sp0 - 16, sp0 - 16, 0, 1},
				{0x101a, sp0 - 8, fp0, 0, 1},
				{0x1005, sp0, fp0, 0, 0},
			},
			at: 0x1020,
			frames: []shadow.Frame{
				{CallSite: 0x1000, ReturnAddr: 0x1005, CFA: sp0, CallerFP: fp0, Entry: 0x1010, Insn: 2},
				{CallSite: 0x1014, ReturnAddr: 0x1019, CFA: sp0 - 16, CallerFP: sp0 - 16, Entry: 0x1020, Insn: 5},
			},
		},
		{
			name: "x86-64 indirect call",
			arch: arch.AMD64,
			code: code{0x1000: x86callRAX, 0x1002: x86hlt, 0x1010: x86ret},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1002, sp0, fp0, 0, 0},
			},
			at:     0x1010,
			frames: []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1002, CFA: sp0, CallerFP: fp0, Entry: 0x1010, Insn: 2}},
		},
		{
			name: "x86-64 tail call through jmp keeps the caller's frame",
			arch: arch.AMD64,
			code: code{0x1000: x86call(0x1000, 0x1010), 0x1005: x86hlt, 0x1010: x86jmpRAX, 0x1020: x86ret},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1020, sp0 - 8, fp0, 0, 1},
				{0x1005, sp0, fp0, 0, 0},
			},
		},
		{
			name: "x86-64 longjmp to main abandons two frames",
			arch: arch.AMD64,
			code: x86longjmp(24, 0x1005),
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1011, sp0 - 16, fp0, 0, 1},
				{0x1020, sp0 - 24, fp0, 0, 2},
				{0x1024, sp0, fp0, 0, 0}, // SP at main's: f and g are gone
				{0x1005, sp0, fp0, 0, 0},
			},
			unwound: 2,
		},
		{
			name: "x86-64 longjmp to f abandons g's frame",
			arch: arch.AMD64,
			code: x86longjmp(16, 0x1016),
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1011, sp0 - 16, fp0, 0, 1},
				{0x1020, sp0 - 24, fp0, 0, 2},
				{0x1024, sp0 - 8, fp0, 0, 1}, // SP at g's CFA + 8
				{0x1016, sp0 - 8, fp0, 0, 1},
				{0x1005, sp0, fp0, 0, 0}, // f returns normally
			},
			at:      0x1016,
			frames:  []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1005, CFA: sp0, CallerFP: fp0, Entry: 0x1010, Insn: 2}},
			unwound: 1,
		},
		{
			name: "x86-64 return to an address no frame expects",
			arch: arch.AMD64,
			code: code{
				0x1000: x86call(0x1000, 0x1010), // main: call f
				0x1005: x86hlt,
				0x1006: x86hlt,
				0x1010: x86storeRA(0x1006), // f
				0x1018: x86ret,
			},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1018, sp0 - 8, fp0, 0, 1},
				{0x1006, sp0, fp0, 0, 0},
			},
			// f's frame is left by SP, not popped by the return.
			unwound: 1,
			anomalies: []shadow.Anomaly{{Insn: 4, PC: 0x1006, Kind: "unexpected-return",
				Detail: "return from 0x1018 to 0x1006, expected 0x1005"}},
		},
		{
			name: "x86-64 return with no frame",
			arch: arch.AMD64,
			code: code{0x1000: x86ret, 0x2000: x86hlt},
			steps: []step{
				{0x1000, sp0 - 8, fp0, 0, 0},
				{0x2000, sp0, fp0, 0, 0},
			},
			anomalies: []shadow.Anomaly{{Insn: 2, PC: 0x2000, Kind: "unexpected-return",
				Detail: "return from 0x1000 to 0x2000 with no frame on the shadow stack"}},
		},
		{
			name: "x86-64 return skipping a frame",
			arch: arch.AMD64,
			code: code{
				0x1000: x86call(0x1000, 0x1010), // main: call f
				0x1005: x86hlt,
				0x1010: x86pushRBP,              // f
				0x1011: x86call(0x1011, 0x1020), // call g
				0x1016: x86popRBP,
				0x1017: x86ret,
				0x1020: x86storeRA(0x1005), // g: return to main
				0x1028: x86ret,
			},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0 - 8, fp0, 0, 1},
				{0x1011, sp0 - 16, fp0, 0, 1},
				{0x1020, sp0 - 24, fp0, 0, 2},
				{0x1028, sp0 - 24, fp0, 0, 2},
				{0x1005, sp0 - 16, fp0, 0, 0},
			},
			anomalies: []shadow.Anomaly{{Insn: 6, PC: 0x1005, Kind: "return-skipped-frames",
				Detail: "return from 0x1028 to 0x1005 skipped 1 frame(s)"}},
		},
		{
			name: "aarch64 bl and ret with x30 signed by paciasp",
			arch: arch.ARM64,
			code: code{
				0x1000: a64bl(0x1000, 0x1010), // main: bl f
				0x1004: a64nop,
				0x1010: a64paciasp, // f
				0x1014: a64push,
				0x1018: a64movFP,
				0x101c: a64bl(0x101c, 0x1030), // bl g
				0x1020: a64pop,
				0x1024: a64autiasp,
				0x1028: a64ret,
				0x1030: a64nop, // g
				0x1034: a64ret,
			},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0, fp0, 0x1004, 1}, // SP == CFA at entry
				{0x1014, sp0, fp0, signed, 1},
				{0x1018, sp0 - 16, fp0, signed, 1},
				{0x101c, sp0 - 16, sp0 - 16, signed, 1},
				{0x1030, sp0 - 16, sp0 - 16, 0x1020, 2},
				{0x1034, sp0 - 16, sp0 - 16, 0x1020, 2},
				{0x1020, sp0 - 16, sp0 - 16, 0x1020, 1},
				{0x1024, sp0, fp0, signed, 1}, // SP back at the CFA: f is still live
				{0x1028, sp0, fp0, 0x1004, 1},
				{0x1004, sp0, fp0, 0x1004, 0},
			},
			at: 0x1030,
			frames: []shadow.Frame{
				{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1010, Insn: 2},
				{CallSite: 0x101c, ReturnAddr: 0x1020, CFA: sp0 - 16, CallerFP: sp0 - 16, Entry: 0x1030, Insn: 6},
			},
		},
		{
			name: "aarch64 blr and retaa",
			arch: arch.ARM64,
			code: code{0x1000: a64blrX8, 0x1004: a64nop, 0x1010: a64paciasp, 0x1014: a64retaa},
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1010, sp0, fp0, 0x1004, 1},
				{0x1014, sp0, fp0, signed, 1},
				{0x1004, sp0, fp0, signed, 0},
			},
			at:     0x1014,
			frames: []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1010, Insn: 2}},
		},
		{
			name: "aarch64 longjmp through br, x30 no longer the return address",
			arch: arch.ARM64,
			code: a64nest(a64brX16),
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0 - 16, fp0, 0x1004, 1},
				{0x1108, sp0 - 16, sp0 - 16, 0x1004, 1},
				{0x1200, sp0 - 16, sp0 - 16, 0x110c, 2},
				{0x1204, sp0, sp0 - 16, 0x110c, 1}, // SP above g's CFA
				{0x1008, sp0, fp0, 0x1008, 0},      // SP at f's CFA after br, x30 restored by longjmp
			},
			unwound: 2,
		},
		{
			name:         "aarch64 landing pad in main drops the frames above it",
			arch:         arch.ARM64,
			code:         a64nest(a64brX16),
			sameFunction: sameFunction,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0 - 16, fp0, 0x1004, 1},
				{0x1108, sp0 - 16, sp0 - 16, 0x1004, 1},
				{0x1200, sp0 - 16, sp0 - 16, 0x110c, 2},
				{0x1204, sp0, sp0 - 16, 0x110c, 1},
				// x30 holds f's return address, but the landing
				// function decides.
				{0x1008, sp0, fp0, 0x1004, 0},
			},
			unwound: 2,
		},
		{
			name:         "aarch64 landing pad in f drops g's frame",
			arch:         arch.ARM64,
			code:         a64nest(a64brX16),
			sameFunction: sameFunction,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0 - 16, fp0, 0x1004, 1},
				{0x1108, sp0 - 16, sp0 - 16, 0x1004, 1},
				{0x1200, sp0 - 16, sp0 - 16, 0x110c, 2},
				{0x1204, sp0 - 16, sp0 - 16, 0x110c, 2},
				{0x1114, sp0 - 16, sp0 - 16, 0x110c, 1}, // SP at g's CFA
				{0x1118, sp0, fp0, 0x1004, 1},
				{0x1004, sp0, fp0, 0x1004, 0},
			},
			at:      0x1114,
			frames:  []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2}},
			unwound: 1,
		},
		{
			name:         "aarch64 tail call through br keeps the caller's frame",
			arch:         arch.ARM64,
			code:         a64tail,
			sameFunction: sameFunction,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0, fp0, signed, 1},
				{0x1300, sp0, fp0, signed, 1}, // SP at f's CFA, h is no frame's function
				{0x1004, sp0, fp0, signed, 0},
			},
		},
		{
			name:         "aarch64 tail call through br to the entry of the caller's function is a call, no landing",
			arch:         arch.ARM64,
			code:         a64tailRecurse,
			sameFunction: sameFunction,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0 - 16, fp0, 0x1004, 1},
				{0x1108, sp0 - 16, fp0, 0x1004, 1},
				{0x1200, sp0 - 16, fp0, 0x110c, 2},
				// SP at g's CFA, in f, which made g's call: but at f's
				// entry, where no landing pad or longjmp target is.
				{0x1100, sp0 - 16, fp0, 0x110c, 2},
				{0x1104, sp0 - 32, fp0, 0x110c, 2},
				{0x110c, sp0 - 32, fp0, 0x110c, 2},
				{0x1110, sp0 - 16, fp0, 0x110c, 2},
				{0x110c, sp0 - 16, fp0, 0x1004, 1},
				{0x1110, sp0, fp0, 0x1004, 1},
				{0x1004, sp0, fp0, 0x1004, 0},
			},
			at:     0x110c, // in the inner f
			frames: []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2}, {CallSite: 0x1108, ReturnAddr: 0x110c, CFA: sp0 - 16, CallerFP: fp0, Entry: 0x1200, Insn: 5}},
		},
		{
			name: "aarch64 tail call through br with x30 still signed, without SameFunction",
			arch: arch.ARM64,
			code: a64tail,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0, fp0, signed, 1},
				{0x1300, sp0, fp0, signed, 1}, // x30 without its PAC is f's return address
				{0x1004, sp0, fp0, signed, 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// x86calls is main calling f, f calling g, for the stop-and-resume tests.
var x86calls = code{
	0x1000: x86call(0x1000, 0x1010), // main: call f
	0x1005: x86hlt,
	0x1010: x86call(0x1010, 0x1020), // f: call g
	0x1015: x86ret,
	0x1020: x86ret, // g
}

var x86callsSteps = []step{
	{0x1000, sp0, fp0, 0, 0},
	{0x1010, sp0 - 8, fp0, 0, 1},
	{0x1020, sp0 - 16, fp0, 0, 2},
	{0x1015, sp0 - 8, fp0, 0, 1},
	{0x1005, sp0, fp0, 0, 0},
}

// TestUnobserve stops before g's first instruction, as an observer that
// stops the engine does, and resumes there: the frames are those of a run
// without the stop.
func TestUnobserve(t *testing.T) {
	straight := shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, straight, x86calls, x86callsSteps[:3])
	want := slices.Clone(straight.Frames())

	s := shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, s, x86calls, x86callsSteps[:3])
	s.Unobserve() // g's first instruction did not run
	if s.Depth() != 2 {
		t.Fatalf("stopped in g: depth %d, want 2", s.Depth())
	}
	s.Unobserve() // a second time changes nothing
	observe(t, s, x86calls, x86callsSteps[2:])
	if s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after resuming: depth %d, anomalies %+v", s.Depth(), s.Anomalies())
	}

	// Unobserve takes back the instruction count: the frame pushed next
	// has the count it has without the stop.
	s = shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, s, x86calls, x86callsSteps[:2])
	s.Unobserve()
	observe(t, s, x86calls, x86callsSteps[1:3])
	if got := s.Frames(); !slices.Equal(got, want) {
		t.Errorf("frames in g after a stop before f's call:\n%+v\nwant\n%+v", got, want)
	}
}

// TestSync stops where the next instruction has not been observed: right
// after a call and right after a return.
func TestSync(t *testing.T) {
	straight := shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, straight, x86calls, x86callsSteps[:3])
	want := slices.Clone(straight.Frames())

	s := shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, s, x86calls, x86callsSteps[:2])
	s.Sync(x86calls.record(x86callsSteps[2])) // stopped on g's entry: f's call applies
	if s.Depth() != 2 {
		t.Fatalf("after Sync in g: depth %d, want 2", s.Depth())
	}
	got := slices.Clone(s.Frames())
	for i := range got {
		got[i].Insn = want[i].Insn // not counted: g has not started
	}
	if !slices.Equal(got, want) {
		t.Errorf("frames after Sync in g:\n%+v\nwant\n%+v", got, want)
	}
	// Resuming observes g's entry: the call is not applied twice.
	observe(t, s, x86calls, x86callsSteps[2:])
	s.Sync(x86calls.record(x86callsSteps[4])) // the last return has been applied already
	if s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after resuming: depth %d, anomalies %+v", s.Depth(), s.Anomalies())
	}

	// Sync after a return not yet applied: the stop at main's hlt.
	s = shadow.New(arch.AMD64, x86calls.readCode)
	observe(t, s, x86calls, x86callsSteps[:4])
	s.Sync(x86calls.record(x86callsSteps[4]))
	s.Sync(x86calls.record(x86callsSteps[4])) // twice: once applied
	if s.Depth() != 0 || len(s.Anomalies()) != 0 {
		t.Errorf("after Sync at the end: depth %d, anomalies %+v", s.Depth(), s.Anomalies())
	}
}

// TestSaveRestore saves the stack in f, runs on through a call, a longjmp
// and an unexpected return, and restores: the run replays the same, twice.
func TestSaveRestore(t *testing.T) {
	c := code{
		0x1000: x86call(0x1000, 0x1010), // main: call f
		0x1005: x86call(0x1005, 0x1020), // call g
		0x100a: x86ret,                  // returns where no frame expects
		0x1010: x86ret,                  // f
		0x1020: x86call(0x1020, 0x1030), // g: call h
		0x1025: x86ret,
		0x1030: x86addRSP(16), // h: longjmp to main
		0x1034: x86jmp(0x1034, 0x100a),
		0x2000: x86hlt,
	}
	head := []step{
		{0x1000, sp0, fp0, 0, 0},
		{0x1010, sp0 - 8, fp0, 0, 1},
	}
	tail := []step{
		{0x1005, sp0, fp0, 0, 0},
		{0x1020, sp0 - 8, fp0, 0, 1}, // g's frame where f's was
		{0x1030, sp0 - 16, fp0, 0, 2},
		{0x1034, sp0, fp0, 0, 0},
		{0x100a, sp0, fp0, 0, 0},
		{0x2000, sp0 + 8, fp0, 0, 0},
	}
	wantAnomalies := []shadow.Anomaly{{Insn: 8, PC: 0x2000, Kind: "unexpected-return",
		Detail: "return from 0x100a to 0x2000 with no frame on the shadow stack"}}

	s := shadow.New(arch.AMD64, c.readCode)
	observe(t, s, c, head)
	saved := s.Save()
	wantFrames := slices.Clone(s.Frames())
	observe(t, s, c, tail)
	for i := range 2 {
		if s.Unwound() != 2 || !slices.Equal(s.Anomalies(), wantAnomalies) {
			t.Fatalf("run %d: unwound %d, anomalies %+v; want 2, %+v", i, s.Unwound(), s.Anomalies(), wantAnomalies)
		}
		v := s.Version()
		s.Restore(saved)
		if s.Version() == v {
			t.Errorf("run %d: Restore kept version %d", i, v)
		}
		if !slices.Equal(s.Frames(), wantFrames) || s.Unwound() != 0 || len(s.Anomalies()) != 0 {
			t.Fatalf("run %d: restored frames %+v, unwound %d, anomalies %+v; want %+v, 0, none",
				i, s.Frames(), s.Unwound(), s.Anomalies(), wantFrames)
		}
		observe(t, s, c, tail)
	}
}

// TestUnreadableCode: an instruction whose bytes cannot be read is neither
// a call nor a return.
func TestUnreadableCode(t *testing.T) {
	c := code{0x1000: x86call(0x1000, 0x1010), 0x1005: x86hlt, 0x1010: x86ret}
	unreadable := func(addr uint64, buf []byte) error {
		if addr == 0x1000 {
			return fmt.Errorf("%#x: not mapped", addr)
		}
		return c.readCode(addr, buf)
	}
	s := shadow.New(arch.AMD64, unreadable)
	observe(t, s, c, []step{
		{0x1000, sp0, fp0, 0, 0},
		{0x1010, sp0 - 8, fp0, 0, 0},
	})
	s.Observe(c.record(step{0x1005, sp0, fp0, 0, 0}))
	if a := s.Anomalies(); len(a) != 1 || a[0].Kind != "unexpected-return" {
		t.Errorf("anomalies %+v, want one unexpected return", a)
	}
}

// TestInvalidate: an instruction is classified once, until Invalidate says
// its bytes changed (self-modifying code): a mov rewritten into a call is
// a call from then on, whichever changed byte is named, also by a range
// far larger than the code.
func TestInvalidate(t *testing.T) {
	mov := []byte{0xb8, 0, 0, 0, 0} // mov $0,%eax
	for _, tt := range []struct {
		name       string
		addr, size uint64
		call       bool // the rewritten instruction is seen as a call
	}{
		{"none", 0, 0, false},
		{"opcode", 0x1000, 1, true},
		{"last byte", 0x1004, 1, true},
		{"15 bytes after", 0x100f, 4, true},
		{"16 bytes after", 0x1010, 4, false},
		{"before", 0xff0, 0x10, false},
		{"everything", 0, ^uint64(0), true},
		{"page", 0x1000, 0x1000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := code{0x1000: mov, 0x1005: x86jmp(0x1005, 0x1000), 0x1010: x86ret, 0x1020: x86ret}
			s := shadow.New(arch.AMD64, c.readCode)
			observe(t, s, c, []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1005, sp0, fp0, 0, 0},
				{0x1000, sp0, fp0, 0, 0},
			})
			c[0x1000] = x86call(0x1000, 0x1020)
			s.Invalidate(tt.addr, tt.size)
			depth := 0
			if tt.call {
				depth = 1
			}
			observe(t, s, c, []step{
				{0x1005, sp0, fp0, 0, 0}, // the mov ran
				{0x1000, sp0, fp0, 0, 0}, // now a call
				{0x1020, sp0 - 8, fp0, 0, depth},
			})
		})
	}
}

// TestRestoreForgetsCode: after Restore every instruction is classified
// again (the code may have been different at the checkpoint).
func TestRestoreForgetsCode(t *testing.T) {
	c := code{0x1000: {0xb8, 0, 0, 0, 0}, 0x1005: x86hlt, 0x1020: x86ret}
	s := shadow.New(arch.AMD64, c.readCode)
	saved := s.Save()
	observe(t, s, c, []step{{0x1000, sp0, fp0, 0, 0}, {0x1005, sp0, fp0, 0, 0}})
	c[0x1000] = x86call(0x1000, 0x1020)
	s.Restore(saved)
	observe(t, s, c, []step{{0x1000, sp0, fp0, 0, 0}, {0x1020, sp0 - 8, fp0, 0, 1}})
}

// TestSignalFrames feeds an x86-64 delivery: main calls f, a signal
// interrupts f, the handler returns to the restorer, rt_sigreturn goes
// back to f; then a second delivery whose handler is left by a longjmp
// to main.
func TestSignalFrames(t *testing.T) {
	const (
		main    = 0x1000
		f       = 0x2000
		handler = 0x3000
		restore = 0x4000
	)
	c := code{
		main:        x86call(main, f),
		main + 5:    x86nop,
		f:           x86nop,
		f + 1:       x86nop,
		handler:     x86nop,
		handler + 1: x86ret,
		restore:     x86nop,
	}
	s := shadow.New(arch.AMD64, c.readCode)
	s.Observe(shadow.Record{PC: main, SP: 0x8000, Size: 5})
	s.Observe(shadow.Record{PC: f, SP: 0x7ff8, Size: 1})
	// The signal interrupts f before f+1: the handler's frame (SP 0x7e08,
	// 8 mod 16, pretcode at it) returns to the restorer.
	interrupted := shadow.Record{PC: f + 1, SP: 0x7ff8, FP: 0x77}
	s.Sync(interrupted)
	s.Signal(10, interrupted, shadow.Record{PC: handler, SP: 0x7e08, FP: 0x77}, restore, 0x7e08)
	fs := s.Frames()
	if len(fs) != 3 ||
		fs[1] != (shadow.Frame{CallSite: f + 1, ReturnAddr: f + 1, CFA: 0x7ff8, CallerFP: 0x77, Entry: restore, Insn: 2, Signal: 10, SignalFrame: true}) ||
		fs[2] != (shadow.Frame{CallSite: restore, ReturnAddr: restore, CFA: 0x7e10, CallerFP: 0x77, Entry: handler, Insn: 2, Signal: 10}) {
		t.Fatalf("after the delivery: %+v", fs)
	}
	if m := s.Signals(); len(m) != 1 || m[0].Depth != 1 || m[0].Interrupted != interrupted {
		t.Fatalf("marks %+v", m)
	}
	s.Observe(shadow.Record{PC: handler, SP: 0x7e08, Size: 1})
	s.Observe(shadow.Record{PC: handler + 1, SP: 0x7e08, Size: 1})
	s.Observe(shadow.Record{PC: restore, SP: 0x7e10, Size: 1}) // the handler returned
	if n, m := s.Depth(), s.Signals(); n != 2 || !m[0].Returned {
		t.Fatalf("depth %d after the handler's return, marks %+v", n, m)
	}
	s.Sync(shadow.Record{PC: restore + 1, SP: 0x7e10})
	s.SignalReturn()
	s.Observe(shadow.Record{PC: f + 1, SP: 0x7ff8, Size: 1})
	if n, m := s.Depth(), len(s.Signals()); n != 1 || m != 0 {
		t.Fatalf("after rt_sigreturn: depth %d, %d marks", n, m)
	}
	// A second delivery, left by a longjmp to main (SP above f's CFA).
	s.Sync(shadow.Record{PC: f + 1, SP: 0x7ff8})
	s.Signal(12, shadow.Record{PC: f + 1, SP: 0x7ff8}, shadow.Record{PC: handler, SP: 0x7e08}, restore, 0x7e08)
	s.Observe(shadow.Record{PC: handler, SP: 0x7e08, Size: 1})
	s.Observe(shadow.Record{PC: main + 5, SP: 0x8000, Size: 1})
	if n, m := s.Depth(), len(s.Signals()); n != 0 || m != 0 {
		t.Fatalf("after the longjmp: depth %d, %d marks", n, m)
	}
	if an := s.Anomalies(); len(an) != 0 {
		t.Errorf("anomalies %+v", an)
	}
	// Save and Restore keep the marks.
	s.Signal(10, shadow.Record{PC: main + 5, SP: 0x8000}, shadow.Record{PC: handler, SP: 0x7e08}, restore, 0x7e08)
	st := s.Save()
	s.SignalReturn()
	s.Restore(st)
	if m := s.Signals(); len(m) != 1 || s.Depth() != 2 {
		t.Errorf("restored: depth %d marks %+v", s.Depth(), m)
	}
}

// signalSteps runs deliveries on x86-64 through the shadow stack: each
// step either observes an instruction, delivers a signal (sig > 0:
// interrupting the state at pc/sp, the handler starting at handlerPC with
// SP hsp) or returns from one (sig < 0: rt_sigreturn), and checks the
// depth and the number of deliveries on the stack after it.
type sigStep struct {
	pc, sp     uint64
	sig        int
	handlerPC  uint64
	hsp        uint64
	depth, out int
}

func runSigSteps(t *testing.T, a *arch.Arch, c code, steps []sigStep) *shadow.Stack {
	t.Helper()
	s := shadow.New(a, c.readCode)
	s.SameFunction = sameFunction
	for i, st := range steps {
		r := c.record(step{pc: st.pc, sp: st.sp})
		switch {
		case st.sig > 0:
			s.Sync(r)
			s.Signal(st.sig, r, shadow.Record{PC: st.handlerPC, SP: st.hsp}, 0x4000, st.hsp)
		case st.sig < 0:
			s.Sync(r)
			s.SignalReturn()
		default:
			s.Observe(r)
		}
		if s.Depth() != st.depth || len(s.Signals()) != st.out {
			t.Fatalf("step %d (%+v): depth %d, %d deliveries; want %d, %d\n%+v", i, st, s.Depth(), len(s.Signals()), st.depth, st.out, s.Frames())
		}
	}
	if an := s.Anomalies(); len(an) != 0 {
		t.Errorf("anomalies %+v", an)
	}
	return s
}

// TestSignalNested: a signal during a handler, and one in the trampoline
// after a handler returned, nest; each rt_sigreturn pops its own.
func TestSignalNested(t *testing.T) {
	const (
		main = 0x1000
		h    = 0x3000
		tr   = 0x4000
	)
	c := code{main: x86nop, main + 1: x86nop, h: x86nop, h + 1: x86ret, tr: x86nop, tr + 1: x86nop, tr + 2: x86nop}
	runSigSteps(t, arch.AMD64, c, []sigStep{
		{pc: main, sp: 0x8000},
		{pc: main + 1, sp: 0x8000, sig: 10, handlerPC: h, hsp: 0x7e08, depth: 2, out: 1},
		{pc: h, sp: 0x7e08, depth: 2, out: 1},
		// A second signal at h+1 (the handler's ret).
		{pc: h + 1, sp: 0x7e08, sig: 12, handlerPC: h, hsp: 0x7c08, depth: 4, out: 2},
		{pc: h, sp: 0x7c08, depth: 4, out: 2},
		{pc: h + 1, sp: 0x7c08, depth: 4, out: 2},
		{pc: tr, sp: 0x7c10, depth: 3, out: 2},
		{pc: tr + 1, sp: 0x7c10, sig: -1, depth: 2, out: 1},
		{pc: h + 1, sp: 0x7e08, depth: 2, out: 1},
		{pc: tr, sp: 0x7e10, depth: 1, out: 1},
		// A third signal in the trampoline itself.
		{pc: tr + 1, sp: 0x7e10, sig: 14, handlerPC: h, hsp: 0x7d08, depth: 3, out: 2},
		{pc: h, sp: 0x7d08, depth: 3, out: 2},
		{pc: h + 1, sp: 0x7d08, depth: 3, out: 2},
		{pc: tr, sp: 0x7d10, depth: 2, out: 2},
		{pc: tr + 2, sp: 0x7d10, sig: -1, depth: 1, out: 1},
		{pc: tr + 1, sp: 0x7e10, depth: 1, out: 1},
		{pc: tr + 2, sp: 0x7e10, sig: -1, depth: 0, out: 0},
		{pc: main + 1, sp: 0x8000},
	})
}

// TestSignalAltStackAbove: a handler on an alternate stack above the
// interrupted stack returns to the trampoline there: the signal frame and
// the interrupted frames stay until rt_sigreturn.
func TestSignalAltStackAbove(t *testing.T) {
	const (
		main = 0x1000
		f    = 0x2000
		h    = 0x3000
		tr   = 0x4000
	)
	c := code{main: x86call(main, f), main + 5: x86nop, f: x86nop, f + 1: x86ret, h: x86nop, h + 1: x86ret, tr: x86nop, tr + 1: x86nop}
	runSigSteps(t, arch.AMD64, c, []sigStep{
		{pc: main, sp: 0x8000},
		{pc: f, sp: 0x7ff8, depth: 1},
		{pc: f + 1, sp: 0x7ff8, sig: 11, handlerPC: h, hsp: 0x9e08, depth: 3, out: 1},
		{pc: h, sp: 0x9e08, depth: 3, out: 1},
		{pc: h + 1, sp: 0x9e08, depth: 3, out: 1},
		{pc: tr, sp: 0x9e10, depth: 2, out: 1},
		{pc: tr + 1, sp: 0x9e10, depth: 2, out: 1},
		{pc: tr + 1, sp: 0x9e10, sig: -1, depth: 1, out: 0},
		{pc: f + 1, sp: 0x7ff8, depth: 1},
		{pc: main + 5, sp: 0x8000},
	})
}

// TestSignalLongjmpARM64: siglongjmp from a handler back into the
// interrupted function, whose SP is the signal frame's CFA: the indirect
// branch lands in the function the signal frame interrupted, so the
// delivery's frames go (SameFunction).
func TestSignalLongjmpARM64(t *testing.T) {
	const (
		main = 0x1000
		f    = 0x2000
		h    = 0x3000
	)
	c := code{main: a64bl(main, f), main + 4: a64nop, f: a64nop, f + 4: a64nop, f + 8: a64nop, f + 12: a64ret,
		h: a64nop, h + 4: a64brX16}
	runSigSteps(t, arch.ARM64, c, []sigStep{
		{pc: main, sp: 0x8000},
		{pc: f, sp: 0x8000, depth: 1},
		{pc: f + 4, sp: 0x7fe0, depth: 1},
		// A fault at f+8: the handler runs on the same stack.
		{pc: f + 8, sp: 0x7fe0, sig: 11, handlerPC: h, hsp: 0x6e00, depth: 3, out: 1},
		{pc: h, sp: 0x6e00, depth: 3, out: 1},
		{pc: h + 4, sp: 0x6d00, depth: 3, out: 1},
		{pc: f + 4, sp: 0x7fe0, depth: 1},
		{pc: f + 8, sp: 0x7fe0, depth: 1},
	})
}

// TestSignalFaultingCall: a call that faults (its push hits an unmapped
// page) did not run: the signal that interrupts it does not see its
// frame, and after rt_sigreturn it runs again.
func TestSignalFaultingCall(t *testing.T) {
	const (
		main = 0x1000
		f    = 0x2000
		h    = 0x3000
		tr   = 0x4000
	)
	c := code{main: x86nop, main + 1: x86call(main+1, f), main + 6: x86nop, f: x86ret, h: x86ret, tr: x86nop}
	runSigSteps(t, arch.AMD64, c, []sigStep{
		{pc: main, sp: 0x8000},
		{pc: main + 1, sp: 0x8000},
		{pc: main + 1, sp: 0x8000, sig: 11, handlerPC: h, hsp: 0x7e08, depth: 2, out: 1},
		{pc: h, sp: 0x7e08, depth: 2, out: 1},
		{pc: tr, sp: 0x7e10, depth: 1, out: 1},
		{pc: tr, sp: 0x7e10, sig: -1, depth: 0, out: 0},
		{pc: main + 1, sp: 0x8000},
		{pc: f, sp: 0x7ff8, depth: 1},
		{pc: main + 6, sp: 0x8000},
	})
}

// TestFollow: Follow, for an instruction of a run whose registers changed
// after one that neither called, returned nor branched to a register,
// drops the frames the stack pointer left, as observing that instruction
// after such a one (a nop) does, and otherwise leaves the stack and its
// version alone.
func TestFollow(t *testing.T) {
	c := code{
		0x1000:  x86call(0x1000, 0x1010), // main: call f
		0x1005:  x86hlt,
		0x1010:  {0x90}, // f: nop
		0x1011:  {0x90}, // nop
		0x1012:  x86ret,
		sp0 - 8: word(0x1005), // f's return address, in its slot
	}
	in := []step{{0x1000, sp0, fp0, 0, 0}, {0x1010, sp0 - 8, fp0, 0, 1}}
	for _, tc := range []struct {
		sp      uint64
		depth   int
		changed bool
	}{
		{sp0 - 24, 1, false}, // below f's CFA (sp0): f's frame stays
		{sp0 - 8, 1, false},  // at its return address
		// At f's CFA from CFA-8: f popped its return address, its frame
		// stays, detached.
		{sp0, 1, true},
		{sp0 + 32, 0, true}, // above it
	} {
		s := shadow.New(arch.AMD64, c.readCode)
		observe(t, s, c, in)
		v := s.Version()
		r := c.record(step{0x1011, tc.sp, fp0, 0, tc.depth})
		s.Follow(r, false)
		if s.Depth() != tc.depth || (s.Version() != v) != tc.changed {
			t.Errorf("SP %#x: depth %d, version changed %v; want depth %d", tc.sp, s.Depth(), s.Version() != v, tc.depth)
		}
		// Observing the instruction after f's nop (FlowOther) does the same.
		o := shadow.New(arch.AMD64, c.readCode)
		observe(t, o, c, in)
		o.Observe(r)
		if !slices.Equal(o.Frames(), s.Frames()) {
			t.Errorf("SP %#x: Follow left %+v, Observe %+v", tc.sp, s.Frames(), o.Frames())
		}
	}
}

// TestFollowJumped: Follow after a branch to a register (jumped) does
// what observing the instruction after a br does: a landing pad in main
// or in f, with SP at a frame's CFA, drops the frames above it; with SP
// below the top frame's CFA nothing changes.
func TestFollowJumped(t *testing.T) {
	// TestStack's a64nest(a64brX16): main calls f, f calls g, g ends with
	// br x16.
	c := code{
		0x1000: a64bl(0x1000, 0x1100), 0x1004: a64nop, 0x1008: a64nop,
		0x1100: a64push, 0x1104: a64movFP, 0x1108: a64bl(0x1108, 0x1200), 0x110c: a64pop, 0x1110: a64ret,
		0x1114: a64pop, 0x1118: a64ret,
		0x1200: a64movSPX1, 0x1204: a64brX16,
	}
	in := []step{
		{0x1000, sp0, fp0, 0, 0},
		{0x1100, sp0, fp0, 0x1004, 1},
		{0x1104, sp0 - 16, fp0, 0x1004, 1},
		{0x1108, sp0 - 16, sp0 - 16, 0x1004, 1},
		{0x1200, sp0 - 16, sp0 - 16, 0x110c, 2},
		{0x1204, sp0 - 16, sp0 - 16, 0x110c, 2}, // br x16
	}
	for _, tc := range []struct {
		name  string
		next  step
		depth int
	}{
		{"landing pad in main", step{0x1008, sp0, fp0, 0x1004, 0}, 0},
		{"landing pad in f", step{0x1114, sp0 - 16, sp0 - 16, 0x110c, 1}, 1},
		{"within g, below its CFA", step{0x1200, sp0 - 32, sp0 - 16, 0x110c, 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shadow.New(arch.ARM64, c.readCode)
			s.SameFunction = sameFunction
			observe(t, s, c, in)
			o := shadow.New(arch.ARM64, c.readCode)
			o.SameFunction = sameFunction
			observe(t, o, c, in)
			v := s.Version()
			s.Follow(c.record(tc.next), true)
			o.Observe(c.record(tc.next))
			if s.Depth() != tc.depth || !slices.Equal(s.Frames(), o.Frames()) || (s.Version() != v) != (tc.depth != 2) {
				t.Errorf("Follow left depth %d, frames %+v (version changed %v); Observe %+v; want depth %d",
					s.Depth(), s.Frames(), s.Version() != v, o.Frames(), tc.depth)
			}
		})
	}
}

// More x86-64 and AArch64 encodings, for code that moves return
// addresses by hand.
var (
	x86popR11  = []byte{0x41, 0x5b}             // pop %r11
	x86pushR11 = []byte{0x41, 0x53}             // push %r11
	x86popRCX  = []byte{0x59}                   // pop %rcx
	x86popRAX  = []byte{0x58}                   // pop %rax
	x86jmpRCX  = []byte{0xff, 0xe1}             // jmp *%rcx
	x86loadRA  = []byte{0x48, 0x8b, 0x0c, 0x24} // mov (%rsp),%rcx
	a64brX30   = a64(0xd61f03c0)                // br x30
	a64movX9   = a64(0xaa1e03e9)                // mov x9, x30
	a64adrX30  = a64(0x1000005e)                // adr x30, .+8
)

// word is a stack word: memory the code map serves as well.
func word(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// x86pushImm is push $imm32.
func x86pushImm(v uint32) []byte { return binary.LittleEndian.AppendUint32([]byte{0x68}, v) }

// TestReturnAddressOffStack: code that takes its return address off the
// stack and returns without a plain ret (PCRE2's JIT: pop it into a
// register at entry, push it back and ret; glibc's vfork; pop and jmp),
// uses ret as an indirect jump (push and ret) or calls its own next
// instruction to learn its address keeps the true stack: frames are not
// lost, nor are frames made that are none; where the stack cannot know
// whether a frame is still live, the frame says so (Unsure).
func TestReturnAddressOffStack(t *testing.T) {
	// main (0x1000) calls f (0x1100); f calls sub (0x1200), which pops
	// its return address into r11, calls g (0x1300) and returns with
	// push r11 and ret; f returns to main.
	fastcall := code{
		0x1000: x86call(0x1000, 0x1100), 0x1005: x86hlt,
		0x1100: x86pushRBP, 0x1101: x86call(0x1101, 0x1200), 0x1106: x86popRBP, 0x1107: x86ret,
		0x1200: x86popR11, 0x1202: x86call(0x1202, 0x1300), 0x1207: x86pushR11, 0x1209: x86ret,
		0x1300:   x86ret,
		sp0 - 24: word(0x1106), // sub's return address, in its slot
	}
	fastSteps := []step{
		{0x1000, sp0, fp0, 0, 0},
		{0x1100, sp0 - 8, fp0, 0, 1},
		{0x1101, sp0 - 16, fp0, 0, 1},
		{0x1200, sp0 - 24, fp0, 0, 2},
		{0x1202, sp0 - 16, fp0, 0, 2}, // sub's frame, detached
		{0x1300, sp0 - 24, fp0, 0, 3},
		{0x1207, sp0 - 16, fp0, 0, 2},
		{0x1209, sp0 - 24, fp0, 0, 2},
		{0x1106, sp0 - 16, fp0, 0, 1}, // sub returned to f
		{0x1107, sp0 - 8, fp0, 0, 1},
		{0x1005, sp0, fp0, 0, 0},
	}
	sub := shadow.Frame{CallSite: 0x1101, ReturnAddr: 0x1106, CFA: sp0 - 16, CallerFP: fp0, Entry: 0x1200, Insn: 4, Detached: true}
	fFrame := shadow.Frame{CallSite: 0x1000, ReturnAddr: 0x1005, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2}
	// f calls sub, which returns with pop rcx and jmp *rcx, or with mov
	// (%rsp),%rcx, add $8,%rsp and jmp *rcx.
	jmpReturn := func(add bool) (code, []step) {
		c := code{
			0x1000: x86call(0x1000, 0x1100), 0x1005: x86hlt,
			0x1100: x86pushRBP, 0x1101: x86call(0x1101, 0x1200), 0x1106: x86popRBP, 0x1107: x86ret,
			0x1200: x86popRCX, 0x1201: x86jmpRCX,
			sp0 - 24: word(0x1106),
		}
		steps := []step{
			{0x1000, sp0, fp0, 0, 0},
			{0x1100, sp0 - 8, fp0, 0, 1},
			{0x1101, sp0 - 16, fp0, 0, 1},
			{0x1200, sp0 - 24, fp0, 0, 2},
			{0x1201, sp0 - 16, fp0, 0, 2},
			{0x1106, sp0 - 16, fp0, 0, 1}, // at sub's return address, SP at its CFA
			{0x1107, sp0 - 8, fp0, 0, 1},
			{0x1005, sp0, fp0, 0, 0},
		}
		if add {
			c = code{
				0x1000: x86call(0x1000, 0x1100), 0x1005: x86hlt,
				0x1100: x86pushRBP, 0x1101: x86call(0x1101, 0x1200), 0x1106: x86popRBP, 0x1107: x86ret,
				0x1200: x86loadRA, 0x1204: x86addRSP(8), 0x1208: x86jmpRCX,
				sp0 - 24: word(0x1106),
			}
			steps = append(steps[:4:4], step{0x1204, sp0 - 24, fp0, 0, 2}, step{0x1208, sp0 - 16, fp0, 0, 2},
				step{0x1106, sp0 - 16, fp0, 0, 1}, step{0x1107, sp0 - 8, fp0, 0, 1}, step{0x1005, sp0, fp0, 0, 0})
		}
		return c, steps
	}
	// libgcc's landing: the address of a landing pad in f written over
	// sub's return address, popped and jumped to: sub's frame is left.
	ehReturn, _ := jmpReturn(false)
	ehReturn[sp0-24] = word(0x1107)
	popJmp, popJmpSteps := jmpReturn(false)
	addJmp, addJmpSteps := jmpReturn(true)
	// f pushes an address in f and returns to it: a jump.
	pushRet := code{
		0x1000: x86call(0x1000, 0x1100), 0x1005: x86hlt,
		0x1100: x86pushImm(0x1106), 0x1105: x86ret, 0x1106: x86ret,
	}
	// f calls its next instruction and pops the address.
	getPC := code{
		0x1000: x86call(0x1000, 0x1100), 0x1005: x86hlt,
		0x1100: x86call(0x1100, 0x1105), 0x1105: x86popRAX, 0x1106: x86ret,
	}
	getPCSteps := func(depth int) []step {
		return []step{
			{0x1000, sp0, fp0, 0, 0},
			{0x1100, sp0 - 8, fp0, 0, 1},
			{0x1105, sp0 - 16, fp0, 0, depth},
			{0x1106, sp0 - 8, fp0, 0, 1}, // popped: no frame but f's
			{0x1005, sp0, fp0, 0, 0},
		}
	}
	// AArch64: main calls f, f saves x30 in x9 and returns with br x30.
	a64brRet := code{
		0x1000: a64bl(0x1000, 0x1100), 0x1004: a64nop,
		0x1100: a64movX9, 0x1104: a64brX30,
	}
	// AArch64: f calls its next instruction.
	a64getPC := code{
		0x1000: a64bl(0x1000, 0x1100), 0x1004: a64nop,
		0x1100: a64push, 0x1104: a64bl(0x1104, 0x1108), 0x1108: a64pop, 0x110c: a64ret,
	}
	a64getPCSteps := func(depth int) []step {
		return []step{
			{0x1000, sp0, fp0, 0, 0},
			{0x1100, sp0, fp0, 0x1004, 1},
			{0x1104, sp0 - 16, fp0, 0x1004, 1},
			{0x1108, sp0 - 16, fp0, 0x1108, depth},
			{0x110c, sp0, fp0, 0x1004, 1}, // SP left the frame the call made
			{0x1004, sp0, fp0, 0x1004, 0},
		}
	}
	// AArch64: f sets x30 to an address in f and returns to it: a jump.
	a64adrRet := code{
		0x1000: a64bl(0x1000, 0x1100), 0x1004: a64nop,
		0x1100: a64adrX30, 0x1104: a64ret, 0x1108: a64nop,
	}

	tests := []stackCase{
		{name: "x86-64 pop and push the return address, with symbols", arch: arch.AMD64, code: fastcall, sameFunction: sameFunction,
			steps: fastSteps, at: 0x1207, frames: []shadow.Frame{fFrame, sub}},
		{name: "x86-64 pop and push the return address, without symbols", arch: arch.AMD64, code: fastcall,
			steps: fastSteps, at: 0x1207, frames: []shadow.Frame{fFrame, func() shadow.Frame { f := sub; f.Unsure = true; return f }()}},
		{name: "x86-64 pop and jmp", arch: arch.AMD64, code: popJmp, steps: popJmpSteps},
		{name: "x86-64 pop and jmp, with symbols", arch: arch.AMD64, code: popJmp, sameFunction: sameFunction, steps: popJmpSteps},
		{name: "x86-64 add 8 to SP and jmp", arch: arch.AMD64, code: addJmp, steps: addJmpSteps},
		{name: "x86-64 pop another address and jmp", arch: arch.AMD64, code: ehReturn,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0 - 8, fp0, 0, 1},
				{0x1101, sp0 - 16, fp0, 0, 1},
				{0x1200, sp0 - 24, fp0, 0, 2},
				{0x1201, sp0 - 16, fp0, 0, 1}, // sub's frame is left
				{0x1107, sp0 - 16, fp0, 0, 1},
			},
			unwound: 1},
		{name: "x86-64 push and ret as a jump", arch: arch.AMD64, code: pushRet,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0 - 8, fp0, 0, 1},
				{0x1105, sp0 - 16, fp0, 0, 1},
				{0x1106, sp0 - 8, fp0, 0, 1}, // still in f
				{0x1005, sp0, fp0, 0, 0},
			},
			at: 0x1106, frames: []shadow.Frame{fFrame}},
		{name: "x86-64 call to the next instruction, with symbols", arch: arch.AMD64, code: getPC, sameFunction: sameFunction,
			steps: getPCSteps(1), at: 0x1105, frames: []shadow.Frame{fFrame}},
		{name: "x86-64 call to the next instruction, without symbols", arch: arch.AMD64, code: getPC,
			steps: getPCSteps(2), at: 0x1105, frames: []shadow.Frame{fFrame,
				{CallSite: 0x1100, ReturnAddr: 0x1105, CFA: sp0 - 8, CallerFP: fp0, Entry: 0x1105, Insn: 3, Unsure: true}},
			unwound: 1}, // the pop confirms it: SP leaves the frame
		{name: "aarch64 br x30 returns, without symbols", arch: arch.ARM64, code: a64brRet,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0, fp0, 0x1004, 1},
				{0x1004, sp0, fp0, 0x1004, 0},
			}},
		{name: "aarch64 bl to the next instruction, with symbols", arch: arch.ARM64, code: a64getPC, sameFunction: sameFunction,
			steps: a64getPCSteps(1), at: 0x1108, frames: []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2}}},
		{name: "aarch64 bl to the next instruction, without symbols", arch: arch.ARM64, code: a64getPC,
			steps: a64getPCSteps(2), at: 0x1108, frames: []shadow.Frame{
				{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2},
				{CallSite: 0x1104, ReturnAddr: 0x1108, CFA: sp0 - 16, CallerFP: fp0, Entry: 0x1108, Insn: 4, Unsure: true}},
			unwound: 1},
		{name: "aarch64 ret to an address in the function as a jump", arch: arch.ARM64, code: a64adrRet, sameFunction: sameFunction,
			steps: []step{
				{0x1000, sp0, fp0, 0, 0},
				{0x1100, sp0, fp0, 0x1004, 1},
				{0x1104, sp0, fp0, 0x1108, 1},
				{0x1108, sp0, fp0, 0x1108, 1}, // still in f
			},
			at: 0x1108, frames: []shadow.Frame{{CallSite: 0x1000, ReturnAddr: 0x1004, CFA: sp0, CallerFP: fp0, Entry: 0x1100, Insn: 2}}},
	}
	for _, tt := range tests {
		tt.anyAnomalies = true
		t.Run(tt.name, tt.run)
	}
}
