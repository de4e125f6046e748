//go:build cgo

package emu

import (
	"fmt"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestNewMapping: the translation buffer is the one mapping new between
// the two reads, of its size.
func TestNewMapping(t *testing.T) {
	buf := hostSpan{0x7f0000000000, 0x7f0000000000 + codeBufferSize - 4096}
	old := hostSpan{0x7e0000000000, 0x7e0000000000 + codeBufferSize - 4096}
	small := hostSpan{0x600000, 0x601000}
	for _, tc := range []struct {
		name          string
		before, after []hostSpan
		want          hostSpan
		err           bool
	}{
		{"new", []hostSpan{old}, []hostSpan{old, buf}, buf, false},
		{"also a small one", nil, []hostSpan{small, buf}, buf, false},
		{"none", []hostSpan{old}, []hostSpan{old}, hostSpan{}, true},
		{"two", nil, []hostSpan{old, buf}, hostSpan{}, true},
		{"too large", nil, []hostSpan{{buf.lo, buf.lo + 2*codeBufferSize}}, hostSpan{}, true},
	} {
		set := func(s []hostSpan) map[hostSpan]bool {
			m := make(map[hostSpan]bool)
			for _, x := range s {
				m[x] = true
			}
			return m
		}
		got, err := newMapping(set(tc.before), set(tc.after))
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: %#x, %v; want %#x, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// TestCodeBufferFull runs a loop that rewrites the function it calls
// (TestRewrittenCodeChurn's) 12000 times, with the translation buffer
// counting as full at 4 MiB, which it fills more than once in each way of
// counting: the engine drops all translations each time, and the results
// and counts are exact and the same in every run. Unicorn 2.1.1, left to
// flush its full buffer itself, crashes.
func TestCodeBufferFull(t *testing.T) {
	defer SetCodeBufferFull(SetCodeBufferFull(4 << 20))
	const rounds = 12000
	want := churnWant(rounds)
	flushes := map[string]int{}
	for _, mode := range []string{"blocks", "instructions", "history", "blocks", "history"} {
		e := newTestEngine(t, arch.AMD64, []byte{0xf4})
		if !e.CodeWatched() {
			t.Fatal("the translation buffer is not watched")
		}
		mapChurn(t, e)
		var err error
		switch mode {
		case "blocks":
			err = e.CountBlocks(true)
		case "history":
			err = e.ObserveHistory(64, func(*Record, bool) {})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetReg(X86RCX, rounds); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(churnStart, churnEnd, 0, 0); err != nil {
			t.Fatal(err)
		}
		edx, err := e.Reg(X86RDX)
		if err != nil {
			t.Fatal(err)
		}
		if edx != want || e.Executed() != 8*rounds {
			t.Errorf("%s: edx %d after %d instructions, want %d after %d", mode, edx, e.Executed(), want, 8*rounds)
		}
		if e.CodeFlushes() < 1 {
			t.Errorf("%s: %d flushes of the translation buffer, want some", mode, e.CodeFlushes())
		}
		if n, ok := flushes[mode]; ok && n != e.CodeFlushes() {
			t.Errorf("%s: %d flushes, %d in the run before", mode, e.CodeFlushes(), n)
		}
		flushes[mode] = e.CodeFlushes()
		t.Logf("%s: %d flushes", mode, e.CodeFlushes())
	}
}

// TestCodeBufferProbe: a long run stops every probeEvery instructions to
// look at the buffer and goes on, and a limit still ends it where it
// says, in both ways of counting, on both architectures.
func TestCodeBufferProbe(t *testing.T) {
	for _, tc := range []struct {
		a     *arch.Arch
		code  []byte // loop: decrement the counter, branch back if not 0
		until uint64
		reg   RegID
	}{
		{arch.AMD64, []byte{0x48, 0xff, 0xc9, 0x75, 0xfb, 0xf4}, testText + 5, X86RCX},                // dec rcx; jnz; hlt
		{arch.ARM64, []byte{0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff, 0xff, 0x54}, testText + 8, ARM64X(0)}, // subs x0, x0, #1; b.ne
	} {
		for _, blocks := range []bool{true, false} {
			for _, count := range []uint64{0, 3*probeEvery + 7} {
				t.Run(fmt.Sprintf("%s,blocks=%v,count=%d", tc.a.Name, blocks, count), func(t *testing.T) {
					e := newTestEngine(t, tc.a, tc.code)
					if !e.CodeWatched() {
						t.Fatal("the translation buffer is not watched")
					}
					if err := e.CountBlocks(blocks); err != nil {
						t.Fatal(err)
					}
					const rounds = 5 * probeEvery
					if err := e.SetReg(tc.reg, rounds); err != nil {
						t.Fatal(err)
					}
					if err := e.Start(testText, tc.until, 0, count); err != nil {
						t.Fatal(err)
					}
					left, _ := e.Reg(tc.reg)
					want := uint64(2 * rounds)
					if count != 0 {
						want = count
					}
					if e.Executed() != want || count == 0 && left != 0 {
						t.Errorf("%d instructions (counter %d), want %d", e.Executed(), left, want)
					}
				})
			}
		}
	}
}
