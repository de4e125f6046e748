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
