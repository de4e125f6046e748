package sframe

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Header is the decoded SFrame header, identical in all versions
// [SFrame §1.3]. Offsets are as stored: FDEOff and FREOff count from the end of
// the header (HeaderSize + AuxHdrLen), not from the section start.
//
//	0x00 u16 magic   0x02 u8 version   0x03 u8 flags
//	0x04 u8 abi_arch 0x05 s8 cfa_fixed_fp_offset 0x06 s8 cfa_fixed_ra_offset
//	0x07 u8 auxhdr_len
//	0x08 u32 num_fdes 0x0c u32 num_fres 0x10 u32 fre_len
//	0x14 u32 fdeoff   0x18 u32 freoff
type Header struct {
	Version          Version
	Flags            Flags
	ABI              ABI
	CFAFixedFPOffset int8
	CFAFixedRAOffset int8
	AuxHdrLen        uint8
	NumFDEs          uint32
	NumFREs          uint32
	FRELen           uint32
	FDEOff           uint32
	FREOff           uint32
}

// Size returns the size of the header including the auxiliary header.
func (h *Header) Size() int64 { return HeaderSize + int64(h.AuxHdrLen) }

// PCRel reports whether function start fields are relative to the field
// itself (V2 with SFRAME_F_FDE_FUNC_START_PCREL, V3 with it) rather than to
// the section start [SFrame §2.5].
func (h *Header) PCRel() bool {
	return h.Version >= Version2 && h.Flags&FlagFDEFuncStartPCRel != 0
}

// A Section is a decoded .sframe section.
//
// FDEs are kept in section order; lookups use a separate index sorted by
// function start, so they are correct even when the section's FDEs are not
// sorted (which Validate reports).
type Section struct {
	Header Header
	// AuxHeader holds the AuxHdrLen bytes of auxiliary header, if any.
	AuxHeader []byte
	// Order is the byte order of the section, taken from the magic.
	Order binary.ByteOrder
	// Addr is the virtual address of the section's first byte.
	Addr uint64
	// FDEs are the function descriptors in section order. An FDE whose FREs
	// could not all be decoded has fewer FREs than its NumFREs.
	FDEs []FDE
	// Data is the section as given to Decode.
	Data []byte
	// Len is the length the header implies: the end of the FDE array or of
	// the FRE sub-section, whichever is later (clamped to len(Data)).
	Len int64

	// Locations, in a relocatable object, say where each FDE's function
	// is (section and offset), from its start field's relocation; nil in
	// linked files. FDE.Start means little there: see SetLocations.
	Locations []Location

	decodeErrs  Errors
	index       fdeIndex
	secIndex    map[int]*sectionIndex
	strayRelocs []int64 // relocations on no FDE's start field
}

// An FDE is one function descriptor entry, with the V3 attribute record
// folded in [SFrame §2].
type FDE struct {
	// Off is the section offset of the FDE (V3: of its index entry).
	Off int64
	// AttrOff is the section offset of the V3 attribute record, or -1.
	AttrOff int64
	// StartField is the raw, sign-extended function start field.
	StartField int64
	// Start is the function's virtual address, resolved per version and
	// flags [SFrame §2.5].
	Start uint64
	// Size is the function size in bytes.
	Size uint32
	// FREOff is func_start_fre_off: from the FRE sub-section start to the
	// first FRE (V3: to the attribute record).
	FREOff uint32
	// NumFREs is the stored FRE count.
	NumFREs uint32
	// Info is func_info, Info2 the V3 func_info2 (0 otherwise), RepSize the
	// PCMASK repetition size (V2, V3; 0 in V1).
	Info    uint8
	Info2   uint8
	RepSize uint8
	// FREs are the decoded frame row entries.
	FREs []FRE
}

// FREType returns the width of the FDE's FRE start-address fields.
func (f *FDE) FREType() FREType { return FREType(f.Info & infoFRETypeMask) }

// PCType returns how PCs are matched against the FRE starts.
func (f *FDE) PCType() PCType { return PCType((f.Info & infoPCTypeBit) >> 4) }

// KeyB reports whether the AArch64 pointer-authentication key is B.
func (f *FDE) KeyB() bool { return f.Info&infoKeyBBit != 0 }

// Signal reports whether the V3 signal-frame bit is set.
func (f *FDE) Signal() bool { return f.Info&infoSignalBit != 0 }

// Type returns the V3 FDE type (DEFAULT for V1 and V2, where info2 is 0).
func (f *FDE) Type() FDEType { return FDEType(f.Info2 & info2TypeMask) }

// End returns the first address after the function.
func (f *FDE) End() uint64 { return f.Start + uint64(f.Size) }

// Contains reports whether pc lies inside the function.
func (f *FDE) Contains(pc uint64) bool { return pc-f.Start < uint64(f.Size) }

// An FRE is one frame row entry [SFrame §4.1]: from its start offset on (until
// the next FRE's), the function's frame follows its rules.
type FRE struct {
	// Off is the section offset of the FRE.
	Off int64
	// Start is the start address offset: from the function start (PCINC)
	// or from the start of the repeated block (PCMASK).
	Start uint32
	// Info is fre_info.
	Info uint8
	// Words are the data words, sign-extended. FLEX control words are
	// unsigned: read them with UWord.
	Words []int32
}

// BaseReg returns the CFA base register of a DEFAULT FRE.
func (r *FRE) BaseReg() BaseReg { return BaseReg(r.Info & freBaseSPBit) }

// Count returns the data-word count from fre_info.
func (r *FRE) Count() int { return int(r.Info>>freCountShift) & freCountMask }

// WordSize returns the data-word width in bytes, or 0 for the invalid size
// code 3.
func (r *FRE) WordSize() int { return wordSizes[(r.Info>>freSizeShift)&freSizeMask] }

// MangledRA reports whether the return address carries a pointer
// authentication code (AArch64).
func (r *FRE) MangledRA() bool { return r.Info&freMangledBit != 0 }

// RAUndefined reports whether the FRE has no data words, which marks the
// outermost frame [SFrame §4.5].
func (r *FRE) RAUndefined() bool { return r.Count() == 0 }

// UWord returns data word i as stored, zero-extended (FLEX control words).
func (r *FRE) UWord(i int) uint32 {
	w := uint32(r.Words[i])
	switch r.WordSize() {
	case 1:
		return w & 0xff
	case 2:
		return w & 0xffff
	}
	return w
}

// Decode decodes an SFrame section whose first byte is at virtual address
// addr.
//
// Decode never panics. It returns a nil Section only when not even the header
// can be read (too short, bad magic, unknown version). Otherwise it decodes
// whatever is safely readable and returns it together with an Errors listing
// each structural problem (a sub-section past the end, an FRE that does not
// fit, an invalid FRE or word size); FDEs after a problem are still decoded
// where their bytes are intact. Decode does not apply the semantic checks of
// Validate.
func Decode(data []byte, addr uint64) (*Section, error) {
	if len(data) < HeaderSize {
		return nil, &FormatError{Off: 0, Check: CheckHeader, Field: "header",
			Msg: fmt.Sprintf("section too short for an SFrame header: %d bytes, need %d", len(data), HeaderSize)}
	}
	var order binary.ByteOrder
	switch {
	case data[0] == 0xe2 && data[1] == 0xde:
		order = binary.LittleEndian
	case data[0] == 0xde && data[1] == 0xe2:
		order = binary.BigEndian
	default:
		return nil, &FormatError{Off: 0, Check: CheckHeader, Field: "preamble.magic",
			Msg: "bad magic, not SFrame data", Val: uint16(data[0])<<8 | uint16(data[1])}
	}
	r := newReader(data, order)
	s := &Section{Order: order, Addr: addr, Data: data}
	h := &s.Header
	h.Version = Version(r.u8(2))
	h.Flags = Flags(r.u8(3))
	h.ABI = ABI(r.u8(4))
	h.CFAFixedFPOffset = int8(r.u8(5))
	h.CFAFixedRAOffset = int8(r.u8(6))
	h.AuxHdrLen = r.u8(7)
	h.NumFDEs = r.u32(8)
	h.NumFREs = r.u32(12)
	h.FRELen = r.u32(16)
	h.FDEOff = r.u32(20)
	h.FREOff = r.u32(24)
	if h.Version.fdeSize() == 0 {
		return nil, &FormatError{Off: 2, Check: CheckHeader, Field: "preamble.version",
			Msg: "unknown SFrame version", Val: uint8(h.Version)}
	}
	hs := h.Size()
	if int64(len(data)) < hs {
		s.Len = int64(len(data))
		s.decodeErrs = append(s.decodeErrs, &FormatError{Off: 7, Check: CheckLayout, Field: "header.auxhdr_len",
			Msg: fmt.Sprintf("auxiliary header runs past the end of the %d-byte section", len(data)), Val: h.AuxHdrLen})
		return s, s.decodeErrs
	}
	s.AuxHeader = data[HeaderSize:hs]
	s.decodeFDEs(r)
	s.buildIndex()
	return s, s.decodeErrs.err()
}

func (s *Section) errorf(off int64, check Check, field string, val any, format string, args ...any) {
	s.decodeErrs = append(s.decodeErrs, &FormatError{Off: off, Check: check, Field: field, Msg: fmt.Sprintf(format, args...), Val: val})
}

// fdeArray returns the section offset of the FDE sub-section and the stride.
func (s *Section) fdeArray() (off int64, stride int64) {
	return s.Header.Size() + int64(s.Header.FDEOff), int64(s.Header.Version.fdeSize())
}

// freArea returns the section offsets of the FRE sub-section as the header
// states it (unclamped).
func (s *Section) freArea() (start, end int64) {
	start = s.Header.Size() + int64(s.Header.FREOff)
	return start, start + int64(s.Header.FRELen)
}

func (s *Section) decodeFDEs(r *reader) {
	h := &s.Header
	size := int64(len(s.Data))
	fdeStart, stride := s.fdeArray()
	n := int64(h.NumFDEs)
	if avail := max(size-fdeStart, 0) / stride; n > avail {
		s.errorf(8, CheckLayout, "header.num_fdes", h.NumFDEs,
			"FDE sub-section at %#x with %d entries of %d bytes runs past the end of the %d-byte section; reading %d",
			fdeStart, h.NumFDEs, stride, size, avail)
		n = avail
	}
	freStart, freEnd := s.freArea()
	s.Len = max(fdeStart+n*stride, min(freEnd, size))
	if freStart > size {
		s.errorf(24, CheckLayout, "header.freoff", h.FREOff,
			"FRE sub-section starts at %#x, past the end of the %d-byte section", freStart, size)
		freStart, freEnd = size, size
	} else if freEnd > size {
		s.errorf(16, CheckLayout, "header.fre_len", h.FRELen,
			"FRE sub-section [%#x, %#x) runs past the end of the %d-byte section", freStart, freEnd, size)
		freEnd = size
	}

	s.FDEs = make([]FDE, n)
	// FREs and words of all FDEs share one backing array each; an FRE takes at
	// least two bytes, which bounds the allocation by the section size.
	fres := make([]FRE, 0, min(int64(h.NumFREs), (freEnd-freStart)/2))
	words := make([]int32, 0, cap(fres)*2)
	type span struct{ fre0, fre1 int }
	spans := make([]span, n)
	type wspan struct{ w0, w1 int }
	var wspans []wspan

	pcrel := h.PCRel()
	for i := range n {
		f := &s.FDEs[i]
		off := fdeStart + i*stride
		f.Off = off
		f.AttrOff = -1
		switch h.Version {
		case Version1, Version2:
			f.StartField = int64(int32(r.u32(off)))
			f.Size = r.u32(off + 4)
			f.FREOff = r.u32(off + 8)
			f.NumFREs = r.u32(off + 12)
			f.Info = r.u8(off + 16)
			if h.Version == Version2 {
				f.RepSize = r.u8(off + 17)
			}
		case Version3:
			f.StartField = int64(r.u64(off))
			f.Size = r.u32(off + 8)
			f.FREOff = r.u32(off + 12)
		}
		if pcrel {
			f.Start = s.Addr + uint64(off) + uint64(f.StartField)
		} else {
			f.Start = s.Addr + uint64(f.StartField)
		}
		pos := freStart + int64(f.FREOff)
		if h.Version == Version3 {
			if pos+AttrSize > freEnd {
				s.errorf(off+12, CheckLayout, fdeName(i)+".func_start_fre_off", f.FREOff,
					"attribute record at %#x does not fit in the FRE sub-section [%#x, %#x)", pos, freStart, freEnd)
				continue
			}
			f.AttrOff = pos
			f.NumFREs = uint32(r.u16(pos))
			f.Info = r.u8(pos + 2)
			f.Info2 = r.u8(pos + 3)
			f.RepSize = r.u8(pos + 4)
			pos += AttrSize
		}
		if f.NumFREs == 0 {
			continue
		}
		if pos > freEnd {
			s.errorf(off+8, CheckLayout, fdeName(i)+".func_start_fre_off", f.FREOff,
				"first FRE at %#x is past the end of the FRE sub-section at %#x", pos, freEnd)
			continue
		}
		asz := f.FREType().Size()
		if asz == 0 {
			s.errorf(s.infoOff(f), CheckFDE, fdeName(i)+".func_info", f.Info,
				"invalid FRE type %d, FREs cannot be read", f.Info&infoFRETypeMask)
			continue
		}
		count := int64(f.NumFREs)
		if maxFit := (freEnd - pos) / int64(asz+1); count > maxFit {
			s.errorf(s.numFREsOff(f), CheckLayout, fdeName(i)+".num_fres", f.NumFREs,
				"%d FREs cannot fit in the %d bytes left in the FRE sub-section", f.NumFREs, freEnd-pos)
			count = maxFit // decode what fits; an error below stops at the first bad one
		}
		first := len(fres)
		for j := range count {
			if pos+int64(asz)+1 > freEnd {
				s.errorf(pos, CheckLayout, freName(i, j), nil, "FRE runs past the end of the FRE sub-section at %#x", freEnd)
				break
			}
			fre := FRE{Off: pos, Start: r.uN(pos, asz), Info: r.u8(pos + int64(asz))}
			ws := fre.WordSize()
			if ws == 0 {
				s.errorf(pos+int64(asz), CheckFRE, freName(i, j)+".fre_info", fre.Info, "invalid data-word size code 3")
				break
			}
			nw := fre.Count()
			wpos := pos + int64(asz) + 1
			if wpos+int64(nw*ws) > freEnd {
				s.errorf(pos+int64(asz), CheckLayout, freName(i, j)+".fre_info", fre.Info,
					"%d data words of %d bytes run past the end of the FRE sub-section at %#x", nw, ws, freEnd)
				break
			}
			w0 := len(words)
			for k := range nw {
				words = append(words, r.sN(wpos+int64(k*ws), ws))
			}
			wspans = append(wspans, wspan{w0, len(words)})
			fres = append(fres, fre)
			pos = wpos + int64(nw*ws)
		}
		spans[i] = span{first, len(fres)}
	}
	for k := range fres {
		w := wspans[k]
		fres[k].Words = words[w.w0:w.w1:w.w1]
	}
	for i := range s.FDEs {
		sp := spans[i]
		if sp.fre1 > sp.fre0 {
			s.FDEs[i].FREs = fres[sp.fre0:sp.fre1:sp.fre1]
		}
	}
}

// fdeName and freName name FDE i and its FRE j in error messages; they are
// only called on error paths, so decoding valid data formats nothing.
func fdeName(i int64) string    { return "FDE[" + strconv.FormatInt(i, 10) + "]" }
func freName(i, j int64) string { return fdeName(i) + ".FRE[" + strconv.FormatInt(j, 10) + "]" }

// infoOff returns the section offset of an FDE's func_info byte.
func (s *Section) infoOff(f *FDE) int64 {
	if s.Header.Version == Version3 {
		return f.AttrOff + 2
	}
	return f.Off + 16
}

// numFREsOff returns the section offset of an FDE's FRE count.
func (s *Section) numFREsOff(f *FDE) int64 {
	if s.Header.Version == Version3 {
		return f.AttrOff
	}
	return f.Off + 12
}

// buildIndex sorts the FDEs by function start for lookups.
func (s *Section) buildIndex() {
	s.index.build(s.FDEs)
}

// DecodeErrors returns the structural problems Decode met, in section order.
func (s *Section) DecodeErrors() Errors { return s.decodeErrs }
