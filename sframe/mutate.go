package sframe

import "fmt"

// MutationField names what a Mutation changes in one FRE.
type MutationField string

// Mutable fields.
const (
	MutateCFA   MutationField = "cfa"   // the CFA offset
	MutateRA    MutationField = "ra"    // the saved-RA offset
	MutateFP    MutationField = "fp"    // the saved-FP offset
	MutateBase  MutationField = "base"  // the CFA base register (SP <-> FP; Delta unused)
	MutateStart MutationField = "start" // the start address offset
)

// A Mutation changes one field of one FRE, for fault injection.
type Mutation struct {
	FDE, FRE int
	Field    MutationField
	Delta    int32
}

func (m Mutation) String() string {
	if m.Field == MutateBase {
		return fmt.Sprintf("FDE %d FRE %d: flip the CFA base register", m.FDE, m.FRE)
	}
	return fmt.Sprintf("FDE %d FRE %d: %s %+d", m.FDE, m.FRE, m.Field, m.Delta)
}

// Apply changes the section in place. Encode writes the result. It fails
// when the row has no such field (an RA offset on AMD64, whose RA offset is
// fixed in the header; an FP offset in a row that does not save FP; the
// base register of a FLEX row).
func (s *Section) Apply(m Mutation) error {
	if m.FDE < 0 || m.FDE >= len(s.FDEs) {
		return fmt.Errorf("no FDE %d (the section has %d)", m.FDE, len(s.FDEs))
	}
	f := &s.FDEs[m.FDE]
	if m.FRE < 0 || m.FRE >= len(f.FREs) {
		return fmt.Errorf("FDE %d has no FRE %d (it has %d)", m.FDE, m.FRE, len(f.FREs))
	}
	r := &f.FREs[m.FRE]
	// Copy the words: they share a backing array with other FREs.
	r.Words = append([]int32(nil), r.Words...)
	word := func(k int, what string) error {
		if k >= len(r.Words) {
			return fmt.Errorf("FDE %d FRE %d has no %s word (%d data words)", m.FDE, m.FRE, what, len(r.Words))
		}
		r.Words[k] += m.Delta
		return nil
	}
	if r.RAUndefined() && m.Field != MutateStart {
		return fmt.Errorf("FDE %d FRE %d marks the outermost frame: it has no offsets", m.FDE, m.FRE)
	}
	flex := f.Type() == FDETypeFlex
	fixedRA := s.Header.CFAFixedRAOffset != 0
	switch m.Field {
	case MutateCFA:
		if flex {
			return word(1, "CFA offset")
		}
		return word(0, "CFA offset")
	case MutateRA:
		switch {
		case flex:
			if len(r.Words) > 2 && r.UWord(2) != 0 {
				return word(3, "RA offset")
			}
			return fmt.Errorf("FDE %d FRE %d (FLEX) has no RA rule", m.FDE, m.FRE)
		case fixedRA:
			return fmt.Errorf("the RA offset is fixed (%d) in the header for this ABI: no FRE word to change", s.Header.CFAFixedRAOffset)
		}
		return word(1, "RA offset")
	case MutateFP:
		switch {
		case flex:
			k := 4
			if len(r.Words) > 2 && r.UWord(2) == 0 {
				k = 3
			}
			return word(k+1, "FP offset")
		case fixedRA:
			return word(1, "FP offset")
		}
		return word(2, "FP offset")
	case MutateBase:
		if flex {
			return fmt.Errorf("FDE %d FRE %d is FLEX: its base is a register number, not the SP/FP bit", m.FDE, m.FRE)
		}
		r.Info ^= freBaseSPBit
		return nil
	case MutateStart:
		v := int64(r.Start) + int64(m.Delta)
		if v < 0 {
			return fmt.Errorf("start %d%+d is negative", r.Start, m.Delta)
		}
		r.Start = uint32(v)
		return nil
	}
	return fmt.Errorf("unknown field %q (want cfa, ra, fp, base or start)", m.Field)
}
