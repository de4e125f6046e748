//go:build cgo

package linux

import (
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// TestX86InitialFPU: an x86-64 process starts with the x87 control word
// and MXCSR Linux gives it (64-bit precision, exceptions masked), not
// Unicorn's zeros, under which long double arithmetic is rounded to 24
// bits (the sqlite3 shell printed avg() as 64311.3353337635 instead of
// 64311.3333333333).
func TestX86InitialFPU(t *testing.T) {
	p := idleProcess(t, arch.AMD64, Config{})
	for _, r := range []struct {
		name string
		id   emu.RegID
		want uint64
	}{{"FPCW", emu.X86FPCW, 0x37f}, {"MXCSR", emu.X86MXCSR, 0x1f80}} {
		got, err := p.Engine.Reg(r.id)
		if err != nil {
			t.Fatal(err)
		}
		if got != r.want {
			t.Errorf("%s = %#x, want %#x", r.name, got, r.want)
		}
	}
}
