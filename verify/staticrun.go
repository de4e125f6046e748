//go:build cgo

package verify

import (
	"fmt"
	"syscall"
	"time"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// static checks the rows of the program's section that the run did not
// execute (c.rows, after finish).
func (c *collector) static(tg *Target) *Static {
	base := tg.Process.Base
	st := &Static{Base: base, Problems: []check.Problem{}, UnknownRows: []StaticRow{}}
	start, cpu := time.Now(), processCPU()
	defer func() { st.Seconds, st.cpu = time.Since(start).Seconds(), processCPU()-cpu }()
	// The section as the file has it: check reads the file's code, CFI and
	// symbols at the file's addresses.
	sec := c.sec
	if base != 0 {
		var err error
		if sec, err = decodeAt(c.sec, c.sec.Addr-base); err != nil {
			st.Error = err.Error()
			return st
		}
	}
	// verify's names (the run's addresses), and no coverage notes: the
	// static summary does not print them.
	rep, err := check.Section(tg.Path, tg.Process.ELF, sec, check.Options{Symbols: tg.Symbols, Lines: tg.Lines, Bias: base, SkipNotes: true})
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.CFI = rep.CFI
	ran := func(i, j int) bool { return c.rows[[2]int{i, j}] > 0 }
	for i := range sec.FDEs {
		f := &sec.FDEs[i]
		for j := range f.FREs {
			if ran(i, j) {
				continue
			}
			st.RowsNotRun++
			v := rep.Row(i, j)
			switch v.Status() {
			case "proven":
				st.Proven++
			case "problem":
				st.Wrong++
			case "empty":
				st.Empty++
			default:
				st.Unknown++
				if len(st.UnknownRows) < 200 {
					sym := c.s.Syms.Format(f.Start + uint64(f.FREs[j].Start) + base)
					st.UnknownRows = append(st.UnknownRows, StaticRow{RowRef: RowRef{FDE: i, FRE: j,
						Symbol: sym, SymbolDemangled: symbols.Demangled(sym), Row: sec.FormatRow(i, j)},
						Unknown: v.Unknown, Why: v.Why})
				}
			}
		}
	}
	// The return addresses the run found a problem at, as frame PCs.
	seen := map[uint64]bool{}
	for _, p := range c.rep.Problems {
		seen[p.FramePC-base] = true
	}
	for _, p := range rep.Problems {
		switch {
		case p.PerPC() && p.FDE >= 0 && p.FRE >= 0 && ran(p.FDE, p.FRE):
			continue // the run checked that row: its verdict is the run's
		case p.Kind == check.KindCallAtEnd.String() && seen[sec.FDEs[p.FDE].End()]:
			continue // the run found the unwind through that return address wrong
		}
		st.Problems = append(st.Problems, p)
	}
	return st
}

// decodeAt decodes sec's data again at address addr.
func decodeAt(sec *sframe.Section, addr uint64) (*sframe.Section, error) {
	out, err := sframe.Decode(sec.Data, addr)
	if out == nil || err != nil {
		return nil, fmt.Errorf("the SFrame section cannot be decoded at its file address %#x: %v", addr, err)
	}
	return out, nil
}

// processCPU returns the CPU time (user and system) the process used so
// far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
