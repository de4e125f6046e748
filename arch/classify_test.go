package arch

import "testing"

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
