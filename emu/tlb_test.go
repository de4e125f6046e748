//go:build cgo

package emu

import (
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestTLBGrowth: Start flushes Unicorn's TLB every tlbFirst instructions
// tlbQuick times, then at doubling intervals up to tlbMaxEvery, counted in
// the guest's instructions (whatever the chunks it runs in), and never
// with SetTLBGrowth(false); the guest computes the same either way.
func TestTLBGrowth(t *testing.T) {
	// loop: 16 × inc rax; dec rcx; jnz loop; hlt
	var code []byte
	for range 16 {
		code = append(code, 0x48, 0xff, 0xc0)
	}
	code = append(code, 0x48, 0xff, 0xc9, 0x75, 0xcb, 0xf4)
	end := uint64(testText + len(code) - 1)
	const iters = 13_000_000 // 234 M instructions
	run := func(grow bool) (flushedAt []uint64, rax uint64) {
		e := newTestEngine(t, arch.AMD64, code)
		e.SetTLBGrowth(grow)
		if err := e.CountBlocks(true); err != nil {
			t.Fatal(err)
		}
		if err := e.SetReg(X86RCX, iters); err != nil {
			t.Fatal(err)
		}
		pc := uint64(testText)
		for pc != end {
			before, n := e.TLBFlushes(), e.Executed()
			if err := e.Start(pc, end, 0, 3<<19); err != nil { // 1.5 Mi
				t.Fatal(err)
			}
			if e.TLBFlushes() != before {
				flushedAt = append(flushedAt, n)
			}
			var err error
			if pc, err = e.PC(); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if rax, err = e.Reg(X86RAX); err != nil {
			t.Fatal(err)
		}
		return flushedAt, rax
	}
	got, rax := run(true)
	// Where the flushes are due, and the first Start at or after each
	// (the chunks are 1.5 Mi instructions).
	var want []uint64
	for due, every, k := uint64(tlbFirst), uint64(tlbFirst), 1; due <= 18*iters; k++ {
		at := (due + 3<<19 - 1) / (3 << 19) * (3 << 19)
		if len(want) == 0 || at != want[len(want)-1] {
			want = append(want, at)
		}
		if k >= tlbQuick && every < tlbMaxEvery {
			every *= 2
		}
		due = at + every
	}
	if !slices.Equal(got, want) {
		t.Errorf("flushes at %v instructions, want %v", got, want)
	}
	if len(got) < tlbQuick+3 {
		t.Errorf("only %d flushes", len(got))
	}
	none, rax2 := run(false)
	if len(none) != 0 {
		t.Errorf("SetTLBGrowth(false): flushes at %v", none)
	}
	if rax != 16*iters || rax2 != rax {
		t.Errorf("rax %d with flushes, %d without, want %d", rax, rax2, 16*iters)
	}
}
