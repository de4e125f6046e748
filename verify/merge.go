//go:build cgo

package verify

import (
	"cmp"
	"slices"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/unwind"
)

// mergeBounds returns the engine's merge intervals (emu.Engine.SetMerge)
// for the target as it is now: every address where a result could change
// with the PC alone — the start of every FRE row and the start and end of
// every FDE of every section the unwinder has, the bounds of every symbol
// and object (the function and object statistics) — sorted, and the class
// of each interval [bounds[i], bounds[i+1]): 0 inside a PCMASK FDE, whose
// rows repeat every few bytes (never merged); otherwise intervals share a
// class when a run may go on from one into the other with the same
// result: rows of one FDE with the same rules (CFA, RA and FP, flags
// alike), in one symbol and one object — an FDE's rows after
// .cfi_remember_state and .cfi_restore_state, or an epilogue's rows
// repeated. Every other interval has a class of its own. The rows a run
// spans are told apart again by their addresses (collector.spread).
//
// For runs that go on where the frame registers change (emu.Engine.
// SetExtend) it also returns each interval's frame-0 recipe (recipeOf)
// and its FDE class: intervals of one FDE in one symbol and one object
// share one, whatever their rules (0 where class is).
func (tg *Target) mergeBounds() (bounds []uint64, class, fcls []uint32, recipes []emu.Recipe) {
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
	class = make([]uint32, len(bounds))
	fcls = make([]uint32, len(bounds))
	recipes = make([]emu.Recipe, len(bounds))
	slices.SortFunc(masked, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	// The FDE (of a section: of one object), a row's rules with its
	// indices cleared (what the unwind of frame 0 computes from) and the
	// start of the symbol (the function statistics: Lookup names every
	// address of a symbol alike).
	type key struct {
		sec   *sframe.Section
		fde   int
		rules sframe.Row
		symAt uint64
	}
	classes := map[key]uint32{}
	type fkey struct {
		sec   *sframe.Section
		fde   int
		symAt uint64
	}
	fclasses := map[fkey]uint32{}
	next := uint32(0)
	k := 0
	for i := range bounds {
		// Interval [bounds[i], bounds[i+1]) lies inside a masked span
		// or outside all: the spans' ends are bounds too.
		for k < len(masked) && masked[k].hi <= bounds[i] {
			k++
		}
		masks := false
		for j := k; j < len(masked) && masked[j].lo <= bounds[i]; j++ {
			if bounds[i] < masked[j].hi {
				masks = true
				break
			}
		}
		if masks {
			continue
		}
		next++
		class[i] = next
		pc := bounds[i]
		sec, row, err := tg.Unwinder.Lookup(pc)
		if err != nil || row.Signal || row.Outermost || !plainRow(sec, &row) {
			continue
		}
		kk := key{sec: sec, fde: row.FDE, rules: row}
		kk.rules.FDE, kk.rules.FRE = 0, 0
		if _, off, ok := tg.Symbols.Lookup(pc); ok {
			kk.symAt = pc - off
		}
		fk := fkey{sec, row.FDE, kk.symAt}
		if fcls[i] = fclasses[fk]; fcls[i] == 0 {
			fcls[i] = uint32(len(fclasses) + 1)
			fclasses[fk] = fcls[i]
		}
		recipes[i] = recipeOf(tg.Unwinder.Arch(), sec, &row)
		if c, ok := classes[kk]; ok {
			class[i] = c
			next--
		} else {
			classes[kk] = next
		}
	}
	return bounds, class, fcls, recipes
}

// recipeOf returns how the unwinder (unwind.Iterator) computes frame 0's
// return address, CFA and caller FP with row's rules, for the C hook to
// compute them too (emu.Recipe): a CFA from SP or FP, the return address
// from the link register or a word at an offset from the CFA, the caller's
// FP the same or from such a word. Any other rule: none.
func recipeOf(a *arch.Arch, sec *sframe.Section, row *sframe.Row) emu.Recipe {
	sp, fp, _, _ := sec.Header.ABI.Regs()
	var r emu.Recipe
	cfa := row.CFA
	if row.Outermost || row.Signal || cfa.Kind != sframe.RuleExpr || cfa.Deref || cfa.Reg != sp && cfa.Reg != fp {
		return emu.Recipe{}
	}
	r.CFAFromFP, r.CFAOff = cfa.Reg == fp, cfa.Offset
	switch ra := row.RA; {
	case ra.Kind == sframe.RuleExpr && ra.Reg == sframe.RegCFA && ra.Deref:
		r.RAOff = ra.Offset
	case ra.Kind == sframe.RuleSame && a.HasLinkRegister():
		r.RAFromLR = true
	default:
		return emu.Recipe{}
	}
	r.RAMask = ^uint64(0)
	if row.MangledRA && a.PACMask != 0 {
		r.RAMask = a.PACMask
	}
	switch f := row.FP; {
	case f.Kind != sframe.RuleExpr:
		r.FPSame = true
	case f.Reg == sframe.RegCFA && f.Deref:
		r.FPOff = f.Offset
	default:
		return emu.Recipe{}
	}
	r.OK = true
	return r
}

// plainRow reports whether a row's rules use no register beyond SP, FP
// and the link register (plainRules for a row).
func plainRow(sec *sframe.Section, row *sframe.Row) bool {
	f := unwind.Frame{Section: sec, Row: *row}
	return plainRules(&f)
}

// merge has the engine merge runs of instructions into one record
// (emu.Engine.SetMerge) with the target's current intervals; the run's
// observer handles them (Target.run). Only batched.
func (tg *Target) merge() {
	if !tg.batched {
		return
	}
	tg.merging = true
	bounds, class, fcls, recipes := tg.mergeBounds()
	e := tg.Process.Engine
	e.SetMerge(bounds, class)
	e.SetExtend(fcls, recipes)
	tg.mbounds, tg.mrows = bounds, make([]int32, len(bounds))
	for i := range tg.mrows {
		tg.mrows[i] = -2
	}
}

// intervalRow returns the row (FRE index) of FDE fi of the program's
// section that merge interval idx lies in, or -1.
func (tg *Target) intervalRow(fi int, idx int32) int {
	if idx < 0 || int(idx) >= len(tg.mrows) {
		return -1
	}
	if j := tg.mrows[idx]; j != -2 {
		return int(j)
	}
	j, err := tg.Section.FindFRE(&tg.Section.FDEs[fi], tg.mbounds[idx])
	if err != nil {
		j = -1
	}
	tg.mrows[idx] = int32(j)
	return j
}
