package arch

import (
	"math/rand/v2"
	"testing"
)

func TestClassifyARM64(t *testing.T) {
	tests := []struct {
		w    uint32
		want Flow
	}{
		{0x94000004, FlowCall}, {0x97ffffff, FlowCall}, // bl
		{0xd63f0100, FlowCall},                         // blr x8
		{0xd73f0901, FlowCall}, {0xd73f0d01, FlowCall}, // blraa/blrab x8, x1
		{0xd63f091f, FlowCall}, {0xd63f0d1f, FlowCall}, // blraaz/blrabz x8
		{0xd65f03c0, FlowRet}, {0xd65f0100, FlowRet}, // ret, ret x8
		{0xd65f0bff, FlowRet}, {0xd65f0fff, FlowRet}, // retaa, retab
		{0xd61f0100, FlowJump},  // br x8
		{0x14000004, FlowOther}, // b
		{0xd503233f, FlowOther}, // paciasp
	}
	for _, tt := range tests {
		if got := classifyA64(tt.w); got != tt.want {
			t.Errorf("classifyA64(%#08x) = %v, want %v", tt.w, got, tt.want)
		}
	}
}

func TestClassifyARM64Jumps(t *testing.T) {
	for _, w := range []uint32{0xd61f0200 /* br x16 */, 0xd71f0a11 /* braa x16, x17 */, 0xd61f0a1f /* braaz x16 */, 0xd61f0e1f /* brabz x16 */} {
		if got := classifyA64(w); got != FlowJump {
			t.Errorf("classifyA64(%#08x) = %v, want jump", w, got)
		}
	}
}

func TestClassifyAMD64(t *testing.T) {
	tests := []struct {
		name     string
		code     []byte
		want     Flow
		wantSize int
	}{
		{"call rel32", []byte{0xe8, 0x0b, 0, 0, 0}, FlowCall, 5},
		{"call *%rax", []byte{0xff, 0xd0}, FlowCall, 2},
		{"call *(%rip)", []byte{0xff, 0x15, 0, 0, 0, 0}, FlowCall, 6},
		{"ret", []byte{0xc3}, FlowRet, 1},
		{"ret $8", []byte{0xc2, 0x08, 0x00}, FlowRet, 3},
		{"jmp *%rax (a tail call is no call)", []byte{0xff, 0xe0}, FlowOther, 2},
		{"jmp rel32", []byte{0xe9, 0xdc, 0xff, 0xff, 0xff}, FlowOther, 5},
		{"push %rbp", []byte{0x55}, FlowOther, 1},
		{"movq $0x1006,(%rsp)", []byte{0x48, 0xc7, 0x04, 0x24, 0x06, 0x10, 0, 0}, FlowOther, 8},
		{"only the first instruction counts", []byte{0x90, 0xc3}, FlowOther, 1},
		{"invalid in 64-bit mode (push %es)", []byte{0x06}, FlowBad, 0},
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55}, FlowOther, 4},
		{"rdsspq %rax (a NOP without CET)", []byte{0xf3, 0x48, 0x0f, 0x1e, 0xc8}, FlowOther, 5},
		{"hint NOP with SIB and disp32", []byte{0x0f, 0x19, 0x84, 0x00, 0x00, 0x01, 0x00, 0x00, 0xc3}, FlowOther, 8},
		{"hint NOP, rip-relative", []byte{0x67, 0x0f, 0x1c, 0x05, 0x10, 0x00, 0x00, 0x00}, FlowOther, 8},
		{"hint NOP cut short", []byte{0x0f, 0x1e}, FlowBad, 0},
		{"hint NOP without its displacement", []byte{0x0f, 0x1f, 0x80, 0x00}, FlowBad, 0},
		{"an F3 prefix x86asm takes for a one-byte rep (saveprevssp)", []byte{0xf3, 0x0f, 0x01, 0xea}, FlowBad, 0},
		{"empty", nil, FlowBad, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, n := AMD64.Classify(tt.code)
			if f != tt.want || n != tt.wantSize {
				t.Errorf("Classify(% x) = %v, %d; want %v, %d", tt.code, f, n, tt.want, tt.wantSize)
			}
		})
	}
}

// TestClassifyARM64Bytes goes through Classify: little-endian words, 4
// bytes each, fewer bytes do not decode.
func TestClassifyARM64Bytes(t *testing.T) {
	tests := []struct {
		code     []byte
		want     Flow
		wantSize int
	}{
		{[]byte{0x04, 0x00, 0x00, 0x94}, FlowCall, 4},      // bl .+0x10
		{[]byte{0xc0, 0x03, 0x5f, 0xd6, 0x1f}, FlowRet, 4}, // ret, then a stray byte
		{[]byte{0x00, 0x02, 0x1f, 0xd6}, FlowJump, 4},      // br x16
		{[]byte{0x1f, 0x20, 0x03, 0xd5}, FlowOther, 4},     // nop
		{[]byte{0x94, 0x00, 0x00, 0x04}, FlowOther, 4},     // bl, big-endian: not a branch
		{[]byte{0x04, 0x00, 0x00}, FlowBad, 0},             // truncated
		{nil, FlowBad, 0},
	}
	for _, tt := range tests {
		if f, n := ARM64.Classify(tt.code); f != tt.want || n != tt.wantSize {
			t.Errorf("Classify(% x) = %v, %d; want %v, %d", tt.code, f, n, tt.want, tt.wantSize)
		}
	}
}

func TestFlowString(t *testing.T) {
	for f, want := range map[Flow]string{FlowOther: "other", FlowCall: "call", FlowRet: "ret", FlowBad: "bad", FlowJump: "jump"} {
		if got := f.String(); got != want {
			t.Errorf("Flow(%d).String() = %q, want %q", f, got, want)
		}
	}
}

// TestKeepsFrame: an instruction keeps the stack pointer, frame pointer
// and link register only if it is a listed operation that writes none of
// them (x86-64: names none of them as a register) and writes back to none
// of them.
func TestKeepsFrame(t *testing.T) {
	le := func(w uint32) []byte { return []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)} }
	for _, tc := range []struct {
		a    *Arch
		name string
		code []byte
		want bool
	}{
		{AMD64, "mov %rcx,%rax", []byte{0x48, 0x89, 0xc8}, true},
		{AMD64, "mov -0x8(%rbp),%rax", []byte{0x48, 0x8b, 0x45, 0xf8}, true},
		{AMD64, "mov %rax,0x8(%rsp)", []byte{0x48, 0x89, 0x44, 0x24, 0x08}, true},
		{AMD64, "jmp *%rax", []byte{0xff, 0xe0}, true},
		{AMD64, "je .+2", []byte{0x74, 0x00}, true},
		{AMD64, "mov %rsp,%rbp", []byte{0x48, 0x89, 0xe5}, false},
		{AMD64, "mov %rbp,%rax (reads rbp)", []byte{0x48, 0x89, 0xe8}, true},
		{AMD64, "mov %rax,%rbp", []byte{0x48, 0x89, 0xc5}, false},
		{AMD64, "add %rbp,%rax", []byte{0x48, 0x01, 0xe8}, true},
		{AMD64, "add %rax,%rbp", []byte{0x48, 0x01, 0xc5}, false},
		{AMD64, "mov %rbp,0x8(%rsp)", []byte{0x48, 0x89, 0x6c, 0x24, 0x08}, true},
		{AMD64, "mov 0x8(%rsp),%rbp", []byte{0x48, 0x8b, 0x6c, 0x24, 0x08}, false},
		{AMD64, "cmp %rsp,%rbp", []byte{0x48, 0x39, 0xe5}, true},
		{AMD64, "test %ebp,%ebp", []byte{0x85, 0xed}, true},
		{AMD64, "lea 0x8(%rsp),%rsp", []byte{0x48, 0x8d, 0x64, 0x24, 0x08}, false},
		{AMD64, "imul $0x3,%rbp,%rax", []byte{0x48, 0x6b, 0xc5, 0x03}, true},
		{AMD64, "mul %rbp", []byte{0x48, 0xf7, 0xe5}, false},
		{AMD64, "shl %cl,%rbp", []byte{0x48, 0xd3, 0xe5}, false},
		{AMD64, "xor %ebp,%ebp", []byte{0x31, 0xed}, false},
		{AMD64, "sub $0x18,%rsp", []byte{0x48, 0x83, 0xec, 0x18}, false},
		{AMD64, "push %rbp", []byte{0x55}, false},
		{AMD64, "pop %rbx", []byte{0x5b}, false},
		{AMD64, "leave", []byte{0xc9}, false},
		{AMD64, "ret", []byte{0xc3}, false},
		{AMD64, "call .+5", []byte{0xe8, 0, 0, 0, 0}, false},
		{AMD64, "rep movsb", []byte{0xf3, 0xa4}, false},
		{AMD64, "xchg %rax,%rbx", []byte{0x48, 0x93}, false},
		{AMD64, "syscall", []byte{0x0f, 0x05}, false},
		{AMD64, "truncated", []byte{0x48}, false},
		{ARM64, "mov x0, x1", le(0xaa0103e0), true},
		{ARM64, "ldr x0, [x29, #16]", le(0xf9400ba0), true},
		{ARM64, "str x0, [sp, #8]", le(0xf90007e0), true},
		{ARM64, "ldr x0, [x1], #8", le(0xf8408420), true},
		{ARM64, "b.eq .", le(0x54000000), true},
		{ARM64, "stp x29, x30, [sp, #-16]!", le(0xa9bf7bfd), false},
		{ARM64, "ldp x29, x30, [sp], #16", le(0xa8c17bfd), false},
		{ARM64, "mov x29, sp", le(0x910003fd), false},
		{ARM64, "add sp, sp, #0x10", le(0x910043ff), false},
		{ARM64, "str x30, [sp, #8]", le(0xf90007fe), true},
		{ARM64, "stp x29, x30, [sp, #16]", le(0xa9017bfd), true},
		{ARM64, "add x0, x1, x29, lsl #2", le(0x8b1d0820), true},
		{ARM64, "add x0, sp, #0x10", le(0x910043e0), true},
		{ARM64, "mov x0, sp", le(0x910003e0), true},
		{ARM64, "cmp x29, x0", le(0xeb0003bf), true},
		{ARM64, "add x29, x5, x0, lsl #2", le(0x8b0008bd), false},
		{ARM64, "ldr x30, [sp, #8]", le(0xf94007fe), false},
		{ARM64, "ldp x0, x29, [sp, #16]", le(0xa94177e0), false},
		{ARM64, "ldp x0, x1, [sp, #16]", le(0xa94107e0), true},
		{ARM64, "mov sp, x0", le(0x9100001f), false},
		{ARM64, "str x0, [sp, #-16]!", le(0xf81f0fe0), false},
		{ARM64, "movk x30, #0x1", le(0xf280003e), false},
		{ARM64, "bl .", le(0x94000000), false},
		{ARM64, "ret", le(0xd65f03c0), false},
		{ARM64, "br x16", le(0xd61f0200), false},
		{ARM64, "paciasp", le(0xd503233f), false},
		{ARM64, "autiasp", le(0xd50323bf), false},
		{ARM64, "xpaclri", le(0xd50320ff), false},
		{ARM64, "nop", le(0xd503201f), true},
		{ARM64, "bti c", le(0xd503245f), true},
		{ARM64, "csdb", le(0xd503229f), true},
		{ARM64, "svc #0", le(0xd4000001), false},
		{ARM64, "truncated", []byte{0xe0, 0x03}, false},
	} {
		if got := tc.a.KeepsFrame(tc.code); got != tc.want {
			t.Errorf("%s %s: KeepsFrame = %v, want %v", tc.a.Name, tc.name, got, tc.want)
		}
	}
}

// TestStackEffect: the instructions whose effect on SP, FP and the link
// register the encoding alone fixes, and some whose effect it does not.
func TestStackEffect(t *testing.T) {
	le := func(w uint32) []byte { return []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)} }
	for _, tc := range []struct {
		a        *Arch
		name     string
		code     []byte
		sp       int64
		link, ok bool
	}{
		{AMD64, "call .+5", []byte{0xe8, 0, 0, 0, 0}, -8, false, true},
		{AMD64, "call *%rax", []byte{0xff, 0xd0}, -8, false, true},
		{AMD64, "call *0x8(%rsp)", []byte{0xff, 0x54, 0x24, 0x08}, -8, false, true},
		{AMD64, "ret", []byte{0xc3}, 8, false, true},
		{AMD64, "push %rbx", []byte{0x53}, -8, false, true},
		{AMD64, "push %r15", []byte{0x41, 0x57}, -8, false, true},
		{AMD64, "pop %r12", []byte{0x41, 0x5c}, 8, false, true},
		{AMD64, "pop %rbx", []byte{0x5b}, 8, false, true},
		{AMD64, "ret $0x10", []byte{0xc2, 0x10, 0x00}, 0, false, false},
		{AMD64, "push %rbp (FP's value stays)", []byte{0x55}, -8, false, true},
		{AMD64, "pop %rbp", []byte{0x5d}, 0, false, false},
		{AMD64, "pop %rsp", []byte{0x5c}, 0, false, false},
		{AMD64, "push %bx (16-bit)", []byte{0x66, 0x53}, 0, false, false},
		{AMD64, "push $1", []byte{0x6a, 0x01}, 0, false, false},
		{AMD64, "leave", []byte{0xc9}, 0, false, false},
		{AMD64, "sub $0x18,%rsp", []byte{0x48, 0x83, 0xec, 0x18}, 0, false, false},
		{AMD64, "mov %rcx,%rax (KeepsFrame's)", []byte{0x48, 0x89, 0xc8}, 0, false, false},
		{AMD64, "truncated", []byte{0xe8, 0}, 0, false, false},
		{ARM64, "ret", le(0xd65f03c0), 0, false, true},
		{ARM64, "retaa", le(0xd65f0bff), 0, false, true},
		{ARM64, "br x16", le(0xd61f0200), 0, false, true},
		{ARM64, "bl .", le(0x94000000), 0, true, true},
		{ARM64, "blr x8", le(0xd63f0100), 0, true, true},
		{ARM64, "blraaz x8", le(0xd63f091f), 0, true, true},
		{ARM64, "stp x29, x30, [sp, #-16]!", le(0xa9bf7bfd), 0, false, false},
		{ARM64, "b .", le(0x14000000), 0, false, false},
		{ARM64, "truncated", []byte{0xc0, 0x03}, 0, false, false},
	} {
		sp, link, ok := tc.a.StackEffect(tc.code)
		if sp != tc.sp || link != tc.link || ok != tc.ok {
			t.Errorf("%s %s: StackEffect = %d, %v, %v; want %d, %v, %v", tc.a.Name, tc.name, sp, link, ok, tc.sp, tc.link, tc.ok)
		}
	}
}

// TestFrameMove: the instructions whose move of SP, FP and the link
// register the hook computes (encodings from GNU as), and look-alikes it
// must not.
func TestFrameMove(t *testing.T) {
	le := func(w uint32) []byte { return []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)} }
	no := Move{SP: 1 << 40} // not a move
	for _, tc := range []struct {
		a    *Arch
		name string
		code []byte
		want Move
	}{
		{AMD64, "sub $0x18,%rsp", []byte{0x48, 0x83, 0xec, 0x18}, Move{SP: -0x18}},
		{AMD64, "add $0x80,%rsp", []byte{0x48, 0x81, 0xc4, 0x80, 0, 0, 0}, Move{SP: 0x80}},
		{AMD64, "add $-0x80,%rsp", []byte{0x48, 0x83, 0xc4, 0x80}, Move{SP: -0x80}},
		{AMD64, "sub $0x1000,%rsp", []byte{0x48, 0x81, 0xec, 0, 0x10, 0, 0}, Move{SP: -0x1000}},
		{AMD64, "lea -0x8(%rsp),%rsp", []byte{0x48, 0x8d, 0x64, 0x24, 0xf8}, Move{SP: -8}},
		{AMD64, "lea 0x10(%rsp),%rbp", []byte{0x48, 0x8d, 0x6c, 0x24, 0x10}, Move{FP: MoveSet, FPOff: 16}},
		{AMD64, "mov %rsp,%rbp", []byte{0x48, 0x89, 0xe5}, Move{FP: MoveSet}},
		{AMD64, "mov %rbp,%rsp", []byte{0x48, 0x89, 0xec}, Move{FromFP: true}},
		{AMD64, "lea 0x0(%rbp),%rsp", []byte{0x48, 0x8d, 0x65, 0x00}, Move{FromFP: true}},
		{AMD64, "pop %rbp", []byte{0x5d}, Move{SP: 8, FP: MoveLoad}},
		{AMD64, "leave", []byte{0xc9}, Move{FromFP: true, SP: 8, FP: MoveLoad}},
		{AMD64, "sub $0x18,%esp", []byte{0x83, 0xec, 0x18}, no},
		{AMD64, "lea 0x8(%rsp,%rax,1),%rsp", []byte{0x48, 0x8d, 0x64, 0x04, 0x08}, no},
		{AMD64, "pop %bp", []byte{0x66, 0x5d}, no},
		{AMD64, "leave (16-bit)", []byte{0x66, 0xc9}, no},
		{AMD64, "sub %rax,%rsp", []byte{0x48, 0x29, 0xc4}, no},
		{AMD64, "add $0x8,%rbp", []byte{0x48, 0x83, 0xc5, 0x08}, no},
		{AMD64, "and $-16,%rsp", []byte{0x48, 0x83, 0xe4, 0xf0}, no},
		{AMD64, "subq $0x8,(%rsp)", []byte{0x48, 0x83, 0x2c, 0x24, 0x08}, no},
		{AMD64, "push %rbx (StackEffect's)", []byte{0x53}, no},
		{ARM64, "stp x29, x30, [sp, #-48]!", le(0xa9bd7bfd), Move{SP: -48}},
		{ARM64, "ldp x29, x30, [sp], #48", le(0xa8c37bfd), Move{SP: 48, FP: MoveLoad, LR: MoveLoad, LROff: 8}},
		{ARM64, "ldp x29, x30, [sp, #16]", le(0xa9417bfd), Move{FP: MoveLoad, FPOff: 16, LR: MoveLoad, LROff: 24}},
		{ARM64, "ldp x30, x29, [sp, #32]", le(0xa94277fe), Move{LR: MoveLoad, LROff: 32, FP: MoveLoad, FPOff: 40}},
		{ARM64, "ldp x19, x20, [sp], #32", le(0xa8c253f3), Move{SP: 32}},
		{ARM64, "stp x19, x20, [sp, #-32]!", le(0xa9be53f3), Move{SP: -32}},
		{ARM64, "stp d8, d9, [sp, #-16]!", le(0x6dbf27e8), Move{SP: -16}},
		{ARM64, "ldp q0, q1, [sp], #32", le(0xacc107e0), Move{SP: 32}},
		{ARM64, "mov x29, sp", le(0x910003fd), Move{FP: MoveSet}},
		{ARM64, "add x29, sp, #0x10", le(0x910043fd), Move{FP: MoveSet, FPOff: 16}},
		{ARM64, "sub sp, sp, #0x20", le(0xd10083ff), Move{SP: -0x20}},
		{ARM64, "add sp, sp, #0x1, lsl #12", le(0x914007ff), Move{SP: 0x1000}},
		{ARM64, "mov sp, x29", le(0x910003bf), Move{FromFP: true}},
		{ARM64, "sub sp, x29, #0x10", le(0xd10043bf), Move{FromFP: true, SP: -16}},
		{ARM64, "str x30, [sp, #-16]!", le(0xf81f0ffe), Move{SP: -16}},
		{ARM64, "ldr x30, [sp], #16", le(0xf84107fe), Move{SP: 16, LR: MoveLoad}},
		{ARM64, "ldr x29, [sp, #-8]!", le(0xf85f8ffd), Move{SP: -8, FP: MoveLoad, FPOff: -8}},
		{ARM64, "str x19, [sp, #-32]!", le(0xf81e0ff3), Move{SP: -32}},
		{ARM64, "ldr x19, [sp], #32", le(0xf84207f3), Move{SP: 32}},
		{ARM64, "str q0, [sp, #-32]!", le(0x3c9e0fe0), Move{SP: -32}},
		{ARM64, "ldr x29, [sp, #16]", le(0xf9400bfd), Move{FP: MoveLoad, FPOff: 16}},
		{ARM64, "ldr w29, [sp], #16", le(0xb84107fd), no},
		{ARM64, "ldp w29, w30, [sp], #8", le(0x28c17bfd), no},
		{ARM64, "ldpsw x0, x1, [sp], #8", le(0x68c107e0), no},
		{ARM64, "add x29, x29, #0x10", le(0x910043bd), no},
		{ARM64, "adds x29, sp, #0x10", le(0xb10043fd), no},
		{ARM64, "add w29, wsp, #0x10", le(0x110043fd), no},
		{ARM64, "ldp x29, x29, [sp], #16 (unpredictable)", le(0xa8c177fd), no},
		{ARM64, "ldnp x29, x30, [sp, #16]", le(0xa8417bfd), no},
		{ARM64, "stp x29, x30, [sp, #16] (keeps)", le(0xa9017bfd), no},
		{ARM64, "ldr x19, [sp, #16] (keeps)", le(0xf9400bf3), no},
		{ARM64, "bl . (StackEffect's)", le(0x94000000), no},
		{ARM64, "truncated", []byte{0xfd, 0x7b}, no},
	} {
		m, ok := tc.a.FrameMove(tc.code)
		if want := tc.want != no; ok != want || ok && m != tc.want {
			t.Errorf("%s %s: FrameMove = %+v, %v; want %+v, %v", tc.a.Name, tc.name, m, ok, tc.want, want)
		}
	}
}

// TestFactsAgree checks Facts against Classify, KeepsFrame and StackEffect
// asked one by one, on random instruction bytes (x86-64: 16 bytes, which
// decode as all sorts of instructions; AArch64: words of every top-level
// encoding group) and on the sequences the other tests name.
func TestFactsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, a := range []*Arch{AMD64, ARM64} {
		n := 0
		for range 200000 {
			code := make([]byte, 16)
			for i := range code {
				code[i] = byte(r.Uint32())
			}
			if a == AMD64 && r.IntN(4) == 0 {
				code[0] = []byte{0x48, 0x50, 0x58, 0xe8, 0xc3, 0xff, 0x66}[r.IntN(7)] // REX.W, push, pop, call, ret, group 5, operand size
			}
			flow, size := a.Classify(code)
			sp, link, ok := a.StackEffect(code)
			want := Facts{Flow: flow, Size: size, Keeps: a.KeepsFrame(code), SP: sp, Link: link, Effect: ok}
			want.Move, want.Moves = a.FrameMove(code)
			if got := a.Facts(code); got != want {
				t.Fatalf("%s % x: Facts %+v, one by one %+v", a.Name, code, got, want)
			}
			if want.Keeps || want.Effect || want.Moves {
				n++
			}
			if want.Effect && want.Moves || want.Keeps && want.Moves {
				t.Fatalf("%s % x: a FrameMove with a StackEffect or keeping the frame: %+v", a.Name, code, want)
			}
		}
		if n < 1000 {
			t.Errorf("%s: only %d of the random instructions keep the frame or have a stack effect: the test says little", a.Name, n)
		}
	}
}
