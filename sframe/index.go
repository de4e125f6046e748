package sframe

import (
	"math/bits"
	"sort"
)

// fdeIndex finds the function covering a PC in near-constant time. The FDEs
// are sorted by start address; the address span they cover is cut into
// about as many equal buckets as there are FDEs, and each bucket records the
// first sorted FDE starting at or after the bucket's start. A lookup goes to
// its bucket and scans the few starts there, instead of binary-searching all
// of them: the lookup benchmark spends most of its time in this search.
type fdeIndex struct {
	order  []int32  // FDE indices sorted by start
	starts []uint64 // starts, in that order
	ends   []uint64 // start+size, in that order
	maxEnd []uint64 // maxEnd[i]: the greatest of ends[0..i]
	base   uint64   // starts[0]
	shift  uint     // bucket = (pc-base) >> shift
	first  []int32  // first[b]: first sorted position with start >= bucket b's start; len = buckets+1
}

func (x *fdeIndex) build(fdes []FDE) {
	n := len(fdes)
	x.order = make([]int32, n)
	for i := range x.order {
		x.order[i] = int32(i)
	}
	if !sort.SliceIsSorted(x.order, func(a, b int) bool { return fdes[x.order[a]].Start < fdes[x.order[b]].Start }) {
		sort.SliceStable(x.order, func(a, b int) bool { return fdes[x.order[a]].Start < fdes[x.order[b]].Start })
	}
	x.starts = make([]uint64, n)
	x.ends = make([]uint64, n)
	x.maxEnd = make([]uint64, n)
	for i, idx := range x.order {
		x.starts[i] = fdes[idx].Start
		x.ends[i] = fdes[idx].Start + uint64(fdes[idx].Size)
		x.maxEnd[i] = x.ends[i]
		if i > 0 && x.maxEnd[i-1] > x.ends[i] {
			x.maxEnd[i] = x.maxEnd[i-1]
		}
	}
	if n == 0 {
		return
	}
	x.base = x.starts[0]
	span := x.starts[n-1] - x.base
	// About n buckets: never more than 2n+1, whatever the span.
	x.shift = uint(max(0, bits.Len64(span)-bits.Len64(uint64(n))))
	nb := int(span>>x.shift) + 1
	x.first = make([]int32, nb+1)
	j := 0
	for b := 0; b <= nb; b++ {
		lo := uint64(b) << x.shift // bucket start relative to base
		for j < n && x.starts[j]-x.base < lo {
			j++
		}
		x.first[b] = int32(j)
	}
	x.first[nb] = int32(n)
}

// find returns the sorted position of the last FDE starting at or below pc,
// or -1.
func (x *fdeIndex) find(pc uint64) int {
	if len(x.starts) == 0 || pc < x.base {
		return -1
	}
	b := (pc - x.base) >> x.shift
	if nb := uint64(len(x.first) - 1); b >= nb {
		b = nb - 1
	}
	lo, hi := int(x.first[b]), int(x.first[b+1])
	// Every start before lo is below the bucket, so at or below pc.
	if hi-lo > 8 {
		return lo + sort.Search(hi-lo, func(k int) bool { return x.starts[lo+k] > pc }) - 1
	}
	i := lo - 1
	for j := lo; j < hi && x.starts[j] <= pc; j++ {
		i = j
	}
	return i
}

// covering returns the sorted position of the FDE covering pc: the one
// with the greatest start at or below pc among those whose range holds
// pc, or -1. An FDE that ends before pc does not hide an earlier,
// overlapping one that covers it.
func (x *fdeIndex) covering(pc uint64) int {
	i := x.find(pc)
	for ; i >= 0 && x.maxEnd[i] > pc; i-- {
		if x.ends[i] > pc {
			return i
		}
	}
	return -1
}
