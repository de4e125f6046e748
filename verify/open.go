//go:build cgo

package verify

import (
	"fmt"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/unwind"
)

// A Target is a program opened for checking: everything verify, the TUI
// and corpus runs need to run it and compare its SFrame unwind with the
// truth at each instruction. Close releases it.
type Target struct {
	Path string
	// Section is the program's SFrame section, relocated to where the
	// program runs.
	Section  *sframe.Section
	Process  *linux.Process
	Session  *linux.Session // steps Process, keeping its shadow stack
	Unwinder *unwind.Unwinder
	Checker  *Checker
	Symbols  *symbols.Table
	Lines    *symbols.Lines
	// Malformed lists the format rules Section breaks (sframe.Section.
	// Validate's errors), for a target opened with OpenMalformed; nil
	// for a section that breaks none.
	Malformed sframe.Errors

	file    *sframe.File // nil for OpenSection
	batched bool
	merging bool // runs of instructions arrive as one record (merge)
	// The merge intervals' bounds (mergeBounds) and, by interval, the
	// row of the program's section it lies in (intervalRow; -2: not
	// known yet).
	mbounds []uint64
	mrows   []int32
}

// Open reads path's SFrame section and loads the program (cfg.Args is its
// argv) for checking. A section that does not decode, or decodes only in
// part, or breaks a rule of the format (sframe.Section.Validate) is an
// error wrapping the *sframe.FormatError values: there is nothing
// trustworthy to check against.
func Open(path string, cfg linux.Config) (*Target, error) {
	return open(path, cfg, false)
}

// OpenMalformed is Open, but a section that decodes whole and breaks
// rules of the format is opened too, to be checked as an unwinder that
// does not validate it reads it (the Linux kernel refuses such a
// section; libsframe looks rows up in it): Target.Malformed lists the
// rules it breaks. A section that does not decode, or only in part, is
// an error as with Open.
func OpenMalformed(path string, cfg linux.Config) (*Target, error) {
	return open(path, cfg, true)
}

func open(path string, cfg linux.Config, malformed bool) (*Target, error) {
	sf, err := sframe.Open(path)
	if sf == nil {
		return nil, err
	}
	if err != nil {
		sf.Close()
		return nil, err
	}
	// A section that decodes but breaks the format's rules gives no
	// trustworthy answer either: say so, as validate does.
	var errs sframe.Errors
	for _, p := range sf.Section.Validate(sf.ValidateOptions()) {
		if !p.Warn {
			errs = append(errs, p)
		}
	}
	if len(errs) > 0 && !malformed {
		sf.Close()
		return nil, fmt.Errorf("%s: malformed SFrame section (%s at file offset %#x), nothing to verify against ('sframesim validate' lists every problem; verify --check-malformed checks the run against it anyway): %w", path, sframe.SectionName, sf.Raw.Offset, errs)
	}
	tg, err := OpenSection(path, sf.Section, cfg)
	if err != nil {
		sf.Close()
		return nil, err
	}
	tg.file = sf
	tg.Malformed = errs
	return tg, nil
}

// OpenSection is Open with the program's SFrame section already decoded
// (and possibly changed, as fault injection does). sec is relocated in
// place to the program's load base.
func OpenSection(path string, sec *sframe.Section, cfg linux.Config) (*Target, error) {
	a := arch.ForABI(sec.Header.ABI)
	if a == nil {
		return nil, fmt.Errorf("%s: SFrame ABI %v is not one sframesim unwinds", path, sec.Header.ABI)
	}
	p, err := linux.Load(path, cfg)
	if err != nil {
		return nil, err
	}
	tg := &Target{Path: path, Section: sec, Process: p}
	// A library's FLEX functions must be handed over live too when
	// checking in batches.
	// So must merge intervals (Target.merge) know its rows, symbols and
	// range.
	tg.Unwinder, err = newUnwinder(p, a, sec, func(withSection bool) {
		if withSection && tg.batched {
			p.Engine.SetLiveRanges(liveRanges(tg.Unwinder))
		}
		if tg.merging {
			tg.merge()
		}
	})
	if err != nil {
		p.Close()
		return nil, err
	}
	tg.Session = linux.NewSession(p)
	tg.Session.SetSameFunction(sameFunction(tg.Session.Syms, tg.Unwinder))
	tg.Checker = NewChecker(tg.Unwinder, Memory{p.Engine}, EngineRegs(p.Engine))
	tg.Symbols = tg.Session.Syms
	tg.Lines = symbols.NewLines(p.ELF, p.Base)
	return tg, nil
}

// Close releases the program and its file.
func (tg *Target) Close() error {
	if tg.file != nil {
		tg.file.Close()
	}
	return tg.Process.Close()
}

// Batch has the target's session hand instructions to its checker in
// batches of n (0: DefaultBatch), or one at a time before each runs (n =
// 1). Either way the checker's memos watch where the guest stored
// (batched, the emulator's store log; one at a time, the span each
// instruction stored to). Batched, memory is replayed per instruction,
// and the functions whose rules need
// registers a record does not carry (V3 FLEX) are handed over live; a stop
// requested by an observer takes effect at the end of its batch
// (linux.Session.Batch).
func (tg *Target) Batch(n int) error {
	if n == 0 {
		n = DefaultBatch
	}
	s := tg.Session
	if err := s.Batch(n); err != nil {
		return err
	}
	tg.batched = n > 1
	if !tg.batched && tg.merging {
		tg.merging = false
		s.P.Engine.SetMerge(nil, nil)
	}
	if n > 1 {
		s.P.Engine.SetLiveRanges(liveRanges(tg.Unwinder))
	} else {
		s.P.Engine.SetLiveRanges(nil)
	}
	// One at a time too: the store hook notes where each instruction
	// stored, so the callers' words are read again only where it did (a
	// deep stack otherwise costs a read of every frame's words at every
	// instruction).
	tg.Checker.Watch = s.P.Engine
	return nil
}

// liveRanges returns the code ranges of the functions with a rule based on
// a register other than SP and FP (V3 FLEX rules): the unwinder reads that
// register in the topmost frame, which a batched record does not carry.
func liveRanges(u *unwind.Unwinder) [][2]uint64 {
	var out [][2]uint64
	for _, sec := range u.Sections() {
		sp, fp, _, _ := sec.Header.ABI.Regs()
		plain := func(r sframe.Rule) bool {
			return r.Kind != sframe.RuleExpr || r.Reg == sp || r.Reg == fp || r.Reg == sframe.RegCFA
		}
		for i := range sec.FDEs {
			f := &sec.FDEs[i]
			for j := range f.FREs {
				row, err := sec.Rules(i, j)
				if err != nil || !plain(row.CFA) || !plain(row.RA) || !plain(row.FP) {
					out = append(out, [2]uint64{f.Start, f.Start + uint64(f.Size)})
					break
				}
			}
		}
	}
	return out
}

// sameFunction tells the shadow stacks whether two code addresses lie in
// one function: by the symbols where they name both, else by the SFrame
// data where it has a function (FDE) for both (a stripped program), else
// not (code neither knows, as a JIT's).
func sameFunction(syms *symbols.Table, u *unwind.Unwinder) func(a, b uint64) bool {
	return func(a, b uint64) bool {
		na, oka := syms.Function(a)
		nb, okb := syms.Function(b)
		if oka && okb {
			return na == nb
		}
		sa, ra, erra := u.Lookup(a)
		sb, rb, errb := u.Lookup(b)
		return erra == nil && errb == nil && sa == sb && ra.FDE == rb.FDE
	}
}
