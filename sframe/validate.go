package sframe

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// An AddrRange is the half-open address range [Lo, Hi).
type AddrRange struct{ Lo, Hi uint64 }

// ValidateOptions supplies what Validate cannot know from the section alone.
type ValidateOptions struct {
	// ByteOrder is the byte order of the containing ELF file; nil skips the
	// check.
	ByteOrder binary.ByteOrder
	// Text lists the executable address ranges; functions must lie inside
	// one of them when CheckText is set.
	Text      []AddrRange
	CheckText bool
}

// Validate checks the section against every rule of the fact sheet's list
// [SFrame §6.2] — the union of what the Linux kernel, libsframe and ld check —
// and returns the structural problems Decode met followed by each violation,
// ordered by section offset. Entries with Warn set are legal but suspicious.
// An empty result means the section is valid.
func (s *Section) Validate(o ValidateOptions) Errors {
	v := validator{s: s}
	v.errs = append(v.errs, s.decodeErrs...)
	v.header(o)
	v.layout()
	for i := range s.FDEs {
		v.fde(i, o)
	}
	if s.Locations != nil {
		v.relocatable()
	} else {
		v.ordering()
	}
	v.totals()
	sort.SliceStable(v.errs, func(a, b int) bool { return v.errs[a].Off < v.errs[b].Off })
	return v.errs
}

// HasErrors reports whether l contains anything other than warnings.
func (l Errors) HasErrors() bool {
	for _, e := range l {
		if !e.Warn {
			return true
		}
	}
	return false
}

type validator struct {
	s    *Section
	errs Errors
}

func (v *validator) add(warn bool, off int64, check Check, field string, val any, format string, args ...any) {
	v.errs = append(v.errs, &FormatError{Off: off, Check: check, Field: field, Val: val, Warn: warn, Msg: fmt.Sprintf(format, args...)})
}

func orderName(o binary.ByteOrder) string {
	if o == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

func (v *validator) header(o ValidateOptions) {
	s := v.s
	h := &s.Header
	if !h.ABI.Known() {
		v.add(false, 4, CheckHeader, "header.abi_arch", uint8(h.ABI), "unknown ABI/arch id")
	} else if h.ABI.BigEndian() != (s.Order == binary.BigEndian) {
		v.add(false, 0, CheckHeader, "preamble.magic", nil, "%s magic but ABI %s", orderName(s.Order), h.ABI)
	}
	v.fixedOffsets()
	if o.ByteOrder != nil && o.ByteOrder != s.Order {
		v.add(false, 0, CheckHeader, "preamble.magic", nil, "%s section in a %s ELF file", orderName(s.Order), orderName(o.ByteOrder))
	}
	if h.Version == Version3 && h.Flags&FlagFramePointer != 0 {
		v.add(false, 3, CheckV3, "preamble.flags", uint8(h.Flags), "SFRAME_F_FRAME_POINTER is not defined in SFrame V3")
	}
	if bad := h.Flags &^ h.Version.validFlags() &^ FlagFramePointer; bad != 0 {
		v.add(false, 3, CheckHeader, "preamble.flags", uint8(h.Flags), "flag bits %#x are not defined in %s", uint8(bad), h.Version)
	}
	if h.Version == Version3 && h.Flags&FlagFDEFuncStartPCRel == 0 {
		v.add(false, 3, CheckV3, "preamble.flags", uint8(h.Flags),
			"SFrame V3 without SFRAME_F_FDE_FUNC_START_PCREL (ld and the kernel reject it); function starts read as section-relative")
	}
	if h.AuxHdrLen != 0 {
		v.add(true, 7, CheckHeader, "header.auxhdr_len", h.AuxHdrLen, "auxiliary header present; GNU tools write none and the kernel rejects it")
	}
	if h.NumFDEs > 0 && h.Flags&FlagFDESorted == 0 && s.Locations == nil {
		// (gas leaves sorting to ld: objects are never sorted.)
		v.add(true, 3, CheckOrdering, "preamble.flags", uint8(h.Flags), "FDEs not flagged SFRAME_F_FDE_SORTED: libsframe cannot search them")
	}
}

// fixedOffsets checks the header's fixed FP and RA offsets against the
// ABI's. Unwinders (libsframe, the kernel, sframesim's) take them from the
// header as they stand, so a wrong one misreads every frame: a fixed RA
// makes word 1 of a DEFAULT FRE the FP instead of the RA (and 0 the
// reverse), and a fixed FP is read in every frame instead of the FP word.
func (v *validator) fixedOffsets() {
	h := &v.s.Header
	fp, ra, ok := h.ABI.FixedOffsets()
	if !ok {
		return // unknown ABI: reported
	}
	if h.CFAFixedRAOffset != ra {
		switch {
		case ra != 0 && h.CFAFixedRAOffset == 0:
			v.add(false, 6, CheckHeader, "header.cfa_fixed_ra_offset", h.CFAFixedRAOffset,
				"%s saves the return address at CFA%+d, and the header must say so: with 0, unwinders read word 1 of each FRE as the RA, not the FP", h.ABI, ra)
		case ra != 0:
			v.add(false, 6, CheckHeader, "header.cfa_fixed_ra_offset", h.CFAFixedRAOffset,
				"%s saves the return address at CFA%+d, not CFA%+d: unwinders read it from the wrong slot in every frame", h.ABI, ra, h.CFAFixedRAOffset)
		default:
			v.add(false, 6, CheckHeader, "header.cfa_fixed_ra_offset", h.CFAFixedRAOffset,
				"%s tracks the return address per FRE: the header must say 0, or unwinders read it at CFA%+d in every frame and word 1 of each FRE as the FP", h.ABI, h.CFAFixedRAOffset)
		}
	}
	if h.CFAFixedFPOffset != fp {
		v.add(false, 5, CheckHeader, "header.cfa_fixed_fp_offset", h.CFAFixedFPOffset,
			"%s has no fixed frame-pointer slot: the header must say 0, or unwinders read the caller's FP at CFA%+d in every frame instead of the FRE's FP word", h.ABI, h.CFAFixedFPOffset)
	}
}

func (v *validator) layout() {
	s := v.s
	h := &s.Header
	fdeStart, stride := s.fdeArray()
	fdeEnd := fdeStart + int64(h.NumFDEs)*stride
	freStart, _ := s.freArea()
	if freStart < fdeEnd {
		v.add(false, 24, CheckLayout, "header.freoff", h.FREOff,
			"FRE sub-section at %#x starts inside the FDE sub-section [%#x, %#x)", freStart, fdeStart, fdeEnd)
	}
	for off := s.Len; off < int64(len(s.Data)); off++ {
		if s.Data[off] != 0 {
			v.add(false, off, CheckLayout, "padding", s.Data[off],
				"non-zero byte after the end of the SFrame data at %#x", s.Len)
			break
		}
	}
}

func (v *validator) fde(i int, o ValidateOptions) {
	s := v.s
	h := &s.Header
	f := &s.FDEs[i]
	field := fdeName(int64(i))
	if h.Version == Version3 && f.AttrOff < 0 {
		return // attribute record unreadable: reported by Decode
	}
	infoOff := s.infoOff(f)
	if f.FREType().Size() == 0 && f.NumFREs == 0 {
		// With FREs, Decode already reported it.
		v.add(false, infoOff, CheckFDE, field+".func_info", f.Info, "invalid FRE type %d", f.Info&infoFRETypeMask)
	}
	if f.Info&infoUnusedBit6 != 0 {
		v.add(true, infoOff, CheckFDE, field+".func_info", f.Info, "unused bit 6 set")
	}
	if f.Info&infoSignalBit != 0 && h.Version != Version3 {
		v.add(true, infoOff, CheckFDE, field+".func_info", f.Info, "bit 7 set; it means signal frame only in SFrame V3")
	}
	if f.KeyB() && !h.ABI.AArch64() {
		v.add(true, infoOff, CheckFDE, field+".func_info", f.Info, "pointer-authentication key bit set for a non-AArch64 ABI")
	}
	if f.PCType() == PCMask {
		switch {
		case h.Version == Version1:
			v.add(true, infoOff, CheckFDE, field+".func_info", f.Info,
				"PCMASK FDE in SFrame V1 has no rep_size; read with the 16-byte repetition libsframe 2.40 assumes")
			if s.Locations == nil && f.Start%V1RepSize != 0 {
				v.add(false, f.Off, CheckFDE, field+".func_start_address", f.Start,
					"V1 PCMASK function not 16-byte aligned: its 16-byte stubs cannot be told apart by PC modulo 16")
			}
		case f.RepSize == 0:
			v.add(false, s.repSizeOff(f), CheckFDE, field+".rep_size", f.RepSize, "PCMASK FDE with rep_size 0")
		}
	}
	if h.Version == Version3 {
		if t := f.Type(); t != FDETypeDefault && t != FDETypeFlex {
			v.add(false, f.AttrOff+3, CheckFDE, field+".func_info2", f.Info2, "unknown FDE type %d", t)
		}
		if f.Info2&^info2TypeMask != 0 {
			v.add(false, f.AttrOff+3, CheckFDE, field+".func_info2", f.Info2, "unused bits 5-7 set")
		}
		if f.NumFREs == 0 {
			v.add(true, f.AttrOff, CheckFDE, field+".num_fres", 0,
				"function at %#x has no FREs: no unwind data (lookups fail)", f.Start)
		}
	}
	if f.Size == 0 {
		v.add(true, f.Off, CheckFDE, field+".func_size", 0, "function at %#x has size 0", f.Start)
	}
	if s.Locations != nil {
		// A relocatable object: the function lies in its section.
		if l := s.Locations[i]; l.Known && !l.Discarded && l.Section > 0 && (l.Offset > l.Size || l.Size-l.Offset < uint64(f.Size)) {
			v.add(false, f.Off, CheckFDE, field+".func_size", f.Size,
				"function at %v runs past the end of its %d-byte section", l, l.Size)
		}
	} else if f.End() < f.Start {
		v.add(false, f.Off, CheckFDE, field+".func_size", f.Size, "function at %#x wraps around the address space", f.Start)
	} else if o.CheckText && f.Size > 0 && !inRanges(o.Text, f.Start, f.End()) {
		v.add(false, f.Off, CheckFDE, field+".func_start_address", f.StartField,
			"function [%#x, %#x) is not inside executable code", f.Start, f.End())
	}
	for j := range f.FREs {
		v.fre(i, j)
	}
}

func inRanges(rs []AddrRange, lo, hi uint64) bool {
	for _, r := range rs {
		if lo >= r.Lo && hi <= r.Hi {
			return true
		}
	}
	return false
}

func (v *validator) fre(i, j int) {
	s := v.s
	h := &s.Header
	f := &s.FDEs[i]
	fre := &f.FREs[j]
	field := freName(int64(i), int64(j))
	asz := int64(f.FREType().Size())
	infoOff := fre.Off + asz
	n := fre.Count()
	switch f.PCType() {
	case PCInc:
		if fre.Start > f.Size {
			v.add(false, fre.Off, CheckFRE, field+".start", fre.Start, "start offset past the end of the %d-byte function", f.Size)
		} else if fre.Start == f.Size && f.Size > 0 {
			v.add(true, fre.Off, CheckFRE, field+".start", fre.Start, "start offset equals the function size: the row covers no PC")
		}
	case PCMask:
		if rep := s.RepSize(f); rep > 0 && fre.Start >= rep {
			v.add(false, fre.Off, CheckFRE, field+".start", fre.Start, "start offset not below the repetition size %d", rep)
		}
	}
	if j > 0 && fre.Start <= f.FREs[j-1].Start {
		v.add(false, fre.Off, CheckFRE, field+".start", fre.Start,
			"start offset not above the previous FRE's %#x", f.FREs[j-1].Start)
	}
	if j == 0 && fre.Start != 0 {
		v.add(true, fre.Off, CheckFRE, field+".start", fre.Start, "first FRE does not start at offset 0: the function's first bytes have no row")
	}
	if n > MaxWords {
		v.add(false, infoOff, CheckFRE, field+".fre_info", fre.Info, "%d data words; libsframe accepts at most %d", n, MaxWords)
		return
	}
	if n == 0 {
		if h.Version == Version1 {
			v.add(true, infoOff, CheckFRE, field+".fre_info", fre.Info, "FRE without data words (RA undefined) is not defined in SFrame V1")
		}
		return
	}
	if f.Type() == FDETypeDefault {
		maxN := 3
		if h.CFAFixedRAOffset != 0 {
			maxN = 2
		}
		if n > maxN {
			v.add(false, infoOff, CheckFRE, field+".fre_info", fre.Info,
				"%d data words, but a DEFAULT FRE of this ABI has at most %d (%d left over)", n, maxN, n-maxN)
			return
		}
	}
	if _, err := s.Rules(i, j); err != nil {
		if fe, ok := err.(*FormatError); ok {
			v.errs = append(v.errs, fe)
		} else {
			v.add(false, fre.Off, CheckFRE, field, nil, "%v", err)
		}
	}
}

func (v *validator) ordering() {
	s := v.s
	if s.Header.Flags&FlagFDESorted != 0 {
		for i := 1; i < len(s.FDEs); i++ {
			if s.FDEs[i].Start <= s.FDEs[i-1].Start {
				why := ""
				if a, b := &s.FDEs[i-1], &s.FDEs[i]; a.Start == b.Start && (a.Size == 0) != (b.Size == 0) {
					// ld 2.40 keeps an FDE for an empty .cold part of a
					// function, where the next function's starts.
					empty := i - 1
					if b.Size == 0 {
						empty = i
					}
					why = fmt.Sprintf(": FDE %d is empty (size 0), a function with no code at the other's address; the Linux kernel refuses a section whose starts repeat", empty)
				}
				v.add(false, s.FDEs[i].Off, CheckOrdering, fmt.Sprintf("FDE[%d].func_start_address", i), s.FDEs[i].Start,
					"flagged sorted, but the start is not above FDE %d's %#x%s", i-1, s.FDEs[i-1].Start, why)
			}
		}
	}
	// Overlaps, in address order.
	var prevEnd uint64
	prev := -1
	for _, idx := range s.index.order {
		f := &s.FDEs[idx]
		if prev >= 0 && f.Start < prevEnd && f.Size > 0 {
			v.add(false, f.Off, CheckOrdering, fmt.Sprintf("FDE[%d]", idx), f.Start,
				"function [%#x, %#x) overlaps FDE %d ending at %#x", f.Start, f.End(), prev, prevEnd)
		}
		if f.Size > 0 && (prev < 0 || f.End() > prevEnd) {
			prevEnd, prev = f.End(), int(idx)
		}
	}
}

func (v *validator) totals() {
	s := v.s
	h := &s.Header
	if int64(len(s.FDEs)) != int64(h.NumFDEs) {
		return // the FDE array is cut short: reported by Decode
	}
	var nfres uint64
	var bytes int64
	complete := true
	for i := range s.FDEs {
		f := &s.FDEs[i]
		nfres += uint64(f.NumFREs)
		if h.Version == Version3 {
			if f.AttrOff < 0 {
				complete = false
				continue
			}
			bytes += AttrSize
		}
		if uint32(len(f.FREs)) != f.NumFREs {
			complete = false
			continue
		}
		asz := int64(f.FREType().Size())
		for k := range f.FREs {
			bytes += asz + 1 + int64(f.FREs[k].Count()*f.FREs[k].WordSize())
		}
	}
	if nfres != uint64(h.NumFREs) {
		v.add(false, 12, CheckTotals, "header.num_fres", h.NumFREs, "the FDEs have %d FREs in all", nfres)
	}
	if complete && bytes != int64(h.FRELen) {
		v.add(false, 16, CheckTotals, "header.fre_len", h.FRELen, "the FDEs' FREs%s take %d bytes",
			map[bool]string{true: " and attribute records", false: ""}[h.Version == Version3], bytes)
	}
}

// relocatable checks the order and overlaps of a relocatable object's
// FDEs, whose start addresses are not assigned yet: only FDEs of the same
// section, by their offsets there (Locations), are comparable.
func (v *validator) relocatable() {
	s := v.s
	for _, off := range s.strayRelocs {
		v.add(false, off, CheckLayout, "relocation", nil,
			"start field relocation on no FDE's start field (ld -r of binutils 2.40-2.44 leaves them at concatenated offsets; ld cannot link such an object)")
	}
	if len(s.strayRelocs) > 0 {
		return // the locations are not to be trusted
	}
	for i, l := range s.Locations {
		switch {
		case l.Discarded:
			v.add(true, s.FDEs[i].Off, CheckFDE, fmt.Sprintf("FDE[%d].func_start_address", i), nil,
				"start field relocation is a NONE relocation: ld -r discarded the function's section (a duplicate COMDAT group); the FDE describes no code")
		case !l.Known:
			v.add(true, s.FDEs[i].Off, CheckFDE, fmt.Sprintf("FDE[%d].func_start_address", i), nil,
				"start field has no relocation in a relocatable object: where its function is cannot be known")
		}
	}
	loc := func(i int) (Location, bool) {
		l := s.Locations[i]
		return l, l.Known && !l.Discarded
	}
	if s.Header.Flags&FlagFDESorted != 0 {
		for i := 1; i < len(s.FDEs); i++ {
			a, okA := loc(i - 1)
			b, okB := loc(i)
			if okA && okB && a.Section == b.Section && b.Offset <= a.Offset {
				v.add(false, s.FDEs[i].Off, CheckOrdering, fmt.Sprintf("FDE[%d].func_start_address", i), nil,
					"flagged sorted, but its start %v is not above FDE %d's %v in the same section", b, i-1, a)
			}
		}
	}
	secs := make([]int, 0, len(s.secIndex))
	for sec := range s.secIndex {
		secs = append(secs, sec)
	}
	sort.Ints(secs)
	for _, sec := range secs {
		x := s.secIndex[sec]
		var prevEnd uint64
		prev := -1
		for _, k := range x.index.order {
			idx := int(x.fdes[k])
			l := s.Locations[idx]
			size := uint64(s.FDEs[idx].Size)
			if prev >= 0 && l.Offset < prevEnd && size > 0 {
				v.add(false, s.FDEs[idx].Off, CheckOrdering, fmt.Sprintf("FDE[%d]", idx), nil,
					"function [%v, %s+%#x) overlaps FDE %d ending at %s+%#x", l, l.Name, l.Offset+size, prev, l.Name, prevEnd)
			}
			if size > 0 && (prev < 0 || l.Offset+size > prevEnd) {
				prevEnd, prev = l.Offset+size, idx
			}
		}
	}
}
