package sframe

import (
	"math/rand/v2"
	"testing"
)

// TestFDEIndex compares the bucketed search with a linear one on random
// layouts: dense and sparse spans, duplicates, unsorted input, huge gaps.
func TestFDEIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		n := rng.IntN(40)
		spread := []uint64{1 << 8, 1 << 20, 1 << 40, 1<<64 - 1}[trial%4]
		fdes := make([]FDE, n)
		for i := range fdes {
			fdes[i] = FDE{Start: rng.Uint64N(spread), Size: uint32(rng.IntN(64))}
			if i > 0 && rng.IntN(5) == 0 {
				fdes[i].Start = fdes[i-1].Start // duplicate start
			}
		}
		var x fdeIndex
		x.build(fdes)
		probe := func(pc uint64) {
			want := -1
			for i, s := range x.starts {
				if s <= pc {
					want = i
				}
			}
			if got := x.find(pc); got != want {
				t.Fatalf("trial %d: find(%#x) = %d, want %d (starts %#x)", trial, pc, got, want, x.starts)
			}
		}
		for range 200 {
			probe(rng.Uint64N(spread))
		}
		for _, f := range fdes {
			probe(f.Start)
			probe(f.Start - 1)
			probe(f.Start + 1)
		}
		probe(0)
		probe(1<<64 - 1)
	}
}

// TestFDEIndexCovering: with overlapping functions, the covering FDE with
// the greatest start at or below the PC wins, and one that ends before
// the PC never hides an earlier one that covers it.
func TestFDEIndexCovering(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 300 {
		n := 1 + rng.IntN(20)
		fdes := make([]FDE, n)
		for i := range fdes {
			fdes[i] = FDE{Start: rng.Uint64N(512), Size: uint32(rng.IntN(200))}
		}
		var x fdeIndex
		x.build(fdes)
		for pc := uint64(0); pc < 800; pc++ {
			want := -1
			for i := range x.starts {
				if x.starts[i] <= pc && pc < x.ends[i] {
					want = i // the last such in sorted order
				}
			}
			if got := x.covering(pc); got != want {
				t.Fatalf("trial %d: covering(%#x) = %d, want %d (starts %#x ends %#x)", trial, pc, got, want, x.starts, x.ends)
			}
		}
	}
}
