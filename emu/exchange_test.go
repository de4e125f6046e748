package emu

import (
	"bytes"
	"testing"
)

// TestExchange swaps spans of every length up to three words at every
// alignment, and checks both sides against copies made before, and that
// nothing around them moved.
func TestExchange(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for off := 0; off < 8; off++ {
			a, b := make([]byte, 40), make([]byte, 40)
			for i := range a {
				a[i], b[i] = byte(i+1), byte(200-i)
			}
			wantA, wantB := bytes.Clone(a), bytes.Clone(b)
			copy(wantA[off:off+n], b[off+1:off+1+n])
			copy(wantB[off+1:off+1+n], a[off:off+n])
			exchange(a[off:off+n], b[off+1:off+1+n])
			if !bytes.Equal(a, wantA) || !bytes.Equal(b, wantB) {
				t.Fatalf("exchange of %d bytes at offsets %d, %d:\n a %v\nwant %v\n b %v\nwant %v", n, off, off+1, a, wantA, b, wantB)
			}
		}
	}
}
