//go:build cgo

package emu

import (
	"fmt"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestWatchSpan: a watch says where under it the guest stored since it
// was armed (the replayed stores of a batch, or one at a time the span the
// store hook noted), nothing for a store outside it, and all of memory
// after a mapping changed.
func TestWatchSpan(t *testing.T) {
	for _, n := range []int{64, 1} {
		t.Run(fmt.Sprint("batch", n), func(t *testing.T) { testWatchSpan(t, n) })
	}
}

func testWatchSpan(t *testing.T, batch int) {
	code := []byte{
		0x48, 0xc7, 0x84, 0x24, 0x00, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, // 1000: movq $1,-0x100(%rsp)
		0x48, 0xc7, 0x84, 0x24, 0x00, 0xfe, 0xff, 0xff, 0x02, 0, 0, 0, // 100c: movq $2,-0x200(%rsp)
		0x90, // 1018: nop
		0xf4, // 1019: hlt
	}
	e := newTestEngine(t, arch.AMD64, code)
	type span struct{ lo, hi uint64 }
	var got []span
	var touched []bool
	if err := e.ObserveHistory(batch, func(r *Record, live bool) {
		if r.PC == testText {
			e.Watch(testSP-0x180, testSP)
			return
		}
		lo, hi := e.TouchedSpan()
		got = append(got, span{lo, hi})
		touched = append(touched, e.Touched())
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(testText, testText+0x19, 0, 0); err != nil {
		t.Fatal(err)
	}
	want := []span{{testSP - 0x100, testSP - 0xf8}, {testSP - 0x100, testSP - 0xf8}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || !touched[0] || !touched[1] {
		t.Fatalf("spans %x (touched %v), want %x", got, touched, want)
	}
	e.Watch(testSP-0x180, testSP)
	if lo, hi := e.TouchedSpan(); lo < hi || e.Touched() {
		t.Errorf("a new watch: span [%#x, %#x), touched %v; want nothing", lo, hi, e.Touched())
	}
	if _, err := e.Map(0x9000_0000, PageSize, ProtRead|ProtWrite, "more"); err != nil {
		t.Fatal(err)
	}
	if lo, hi := e.TouchedSpan(); lo != 0 || hi != ^uint64(0) || !e.Touched() {
		t.Errorf("after a mapping: span [%#x, %#x); want all of memory", lo, hi)
	}
}
