//go:build cgo

package verify

import (
	"cmp"
	"slices"

	"github.com/sframesim/sframesim/sframe"
)

// mergeBounds returns the engine's merge intervals (emu.Engine.SetMerge)
// for the target as it is now: every address where a result could change
// with the PC alone — the start of every FRE row and the start and end of
// every FDE of every section the unwinder has, the bounds of every symbol
// and object (the function and object statistics) — sorted, and whether
// each interval [bounds[i], bounds[i+1]) may merge: not inside a PCMASK
// FDE, whose rows repeat every few bytes.
func (tg *Target) mergeBounds() (bounds []uint64, mergeable []bool) {
	var pts []uint64
	type span struct{ lo, hi uint64 }
	var masked []span
	for _, sec := range tg.Unwinder.Sections() {
		for i := range sec.FDEs {
			f := &sec.FDEs[i]
			end := f.Start + uint64(f.Size)
			pts = append(pts, f.Start, end)
			if f.PCType() == sframe.PCMask {
				masked = append(masked, span{f.Start, end})
				continue
			}
			for _, fre := range f.FREs {
				pts = append(pts, f.Start+uint64(fre.Start))
			}
		}
	}
	pts = append(pts, tg.Symbols.Bounds()...)
	for _, o := range tg.Process.Objects() {
		pts = append(pts, o.Start, o.End)
	}
	slices.Sort(pts)
	bounds = slices.Compact(pts)
	mergeable = make([]bool, len(bounds))
	slices.SortFunc(masked, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	k := 0
	for i := range bounds {
		// Interval [bounds[i], bounds[i+1]) lies inside a masked span
		// or outside all: the spans' ends are bounds too.
		for k < len(masked) && masked[k].hi <= bounds[i] {
			k++
		}
		mergeable[i] = true
		for j := k; j < len(masked) && masked[j].lo <= bounds[i]; j++ {
			if bounds[i] < masked[j].hi {
				mergeable[i] = false
				break
			}
		}
	}
	return bounds, mergeable
}

// merge has the engine merge runs of instructions into one record
// (emu.Engine.SetMerge) with the target's current intervals; the run's
// observer handles them (Target.run). Only batched.
func (tg *Target) merge() {
	if !tg.batched {
		return
	}
	tg.merging = true
	tg.Process.Engine.SetMerge(tg.mergeBounds())
}
