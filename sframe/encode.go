package sframe

import (
	"encoding/binary"
	"fmt"
	"math"
)

// FDEInfo builds a func_info byte [SFrame §3.1].
func FDEInfo(t FREType, pc PCType, keyB, signal bool) uint8 {
	info := uint8(t)&infoFRETypeMask | uint8(pc)<<4
	if keyB {
		info |= infoKeyBBit
	}
	if signal {
		info |= infoSignalBit
	}
	return info
}

// FREInfo builds an fre_info byte [SFrame §4.2]. The word count and size
// bits are left zero: Encode fills them in from the FRE's words.
func FREInfo(base BaseReg, mangledRA bool) uint8 {
	info := uint8(base) & freBaseSPBit
	if mangledRA {
		info |= freMangledBit
	}
	return info
}

// FlexCtrl builds a FLEX control word [SFrame §4.4]: reg is a DWARF register
// number, or RegCFA for a CFA-based rule.
func FlexCtrl(reg Reg, deref bool) int32 {
	var c int32
	if reg != RegCFA {
		c = int32(reg)<<flexRegShift | flexRegPBit
	}
	if deref {
		c |= flexDerefBit
	}
	return c
}

// Encode serializes the section in the canonical layout GNU tools write:
// header, auxiliary header, the FDE sub-section at fdeoff 0, then each FDE's
// FREs (V3: attribute record first) in FDE order.
//
// Everything that follows from the content is computed: num_fdes, num_fres,
// fre_len, fdeoff, freoff, each FDE's FRE offset and count, the function
// start fields (from FDE.Start, per version and PCREL flag), and each FRE's
// word count. Each FRE keeps its word-size code unless a word does not fit,
// in which case the smallest size that fits is used. Everything else —
// version, flags, ABI, fixed offsets, info bytes, rep_size, FRE starts and
// base registers — is written as given, valid or not, so tests can build
// malformed sections. The byte order is s.Order (little-endian if nil).
//
// Encode fails when a value cannot be represented: a function start out of
// range of its field, an FRE start wider than the FDE's FRE type, more than
// 15 words, more than 65535 FREs in a V3 function.
func (s *Section) Encode() ([]byte, error) {
	h := s.Header
	stride := int64(h.Version.fdeSize())
	if stride == 0 {
		return nil, fmt.Errorf("sframe: encode: unknown version %d", h.Version)
	}
	var order binary.AppendByteOrder = binary.LittleEndian
	if s.Order != nil {
		ao, ok := s.Order.(binary.AppendByteOrder)
		if !ok {
			return nil, fmt.Errorf("sframe: encode: byte order %v cannot append", s.Order)
		}
		order = ao
	}
	if len(s.AuxHeader) > int(h.AuxHdrLen) {
		return nil, fmt.Errorf("sframe: encode: %d bytes of auxiliary header, but auxhdr_len is %d", len(s.AuxHeader), h.AuxHdrLen)
	}
	hs := h.Size()
	n := int64(len(s.FDEs))
	if n > math.MaxUint32 {
		return nil, fmt.Errorf("sframe: encode: %d FDEs", n)
	}

	// FRE sub-section first: it fixes each FDE's FRE offset.
	var fres []byte
	var numFREs uint64
	freOffs := make([]uint32, n)
	for i := range s.FDEs {
		f := &s.FDEs[i]
		if int64(len(fres)) > math.MaxUint32 {
			return nil, fmt.Errorf("sframe: encode: FRE sub-section over 4 GiB")
		}
		freOffs[i] = uint32(len(fres))
		numFREs += uint64(len(f.FREs))
		if h.Version == Version3 {
			if len(f.FREs) > math.MaxUint16 {
				return nil, fmt.Errorf("sframe: encode: FDE %d: %d FREs, V3 allows at most 65535", i, len(f.FREs))
			}
			fres = order.AppendUint16(fres, uint16(len(f.FREs)))
			fres = append(fres, f.Info, f.Info2, f.RepSize)
		}
		asz := f.FREType().Size()
		if asz == 0 && len(f.FREs) > 0 {
			return nil, fmt.Errorf("sframe: encode: FDE %d: invalid FRE type %d", i, f.FREType())
		}
		for j := range f.FREs {
			r := &f.FREs[j]
			if asz < 4 && uint64(r.Start) >= 1<<(8*asz) {
				return nil, fmt.Errorf("sframe: encode: FDE %d FRE %d: start %#x does not fit %s", i, j, r.Start, f.FREType())
			}
			if len(r.Words) > freCountMask {
				return nil, fmt.Errorf("sframe: encode: FDE %d FRE %d: %d data words, at most %d fit", i, j, len(r.Words), freCountMask)
			}
			code := (r.Info >> freSizeShift) & freSizeMask
			if code == 3 || !wordsFit(r.Words, wordSizes[code]) {
				code = minSizeCode(r.Words)
			}
			info := r.Info&^(freCountMask<<freCountShift|freSizeMask<<freSizeShift) |
				uint8(len(r.Words))<<freCountShift | code<<freSizeShift
			switch asz {
			case 1:
				fres = append(fres, uint8(r.Start))
			case 2:
				fres = order.AppendUint16(fres, uint16(r.Start))
			default:
				fres = order.AppendUint32(fres, r.Start)
			}
			fres = append(fres, info)
			for _, w := range r.Words {
				switch wordSizes[code] {
				case 1:
					fres = append(fres, uint8(w))
				case 2:
					fres = order.AppendUint16(fres, uint16(w))
				default:
					fres = order.AppendUint32(fres, uint32(w))
				}
			}
		}
	}
	if numFREs > math.MaxUint32 || int64(len(fres)) > math.MaxUint32 {
		return nil, fmt.Errorf("sframe: encode: FRE sub-section too large")
	}

	out := make([]byte, 0, hs+n*stride+int64(len(fres)))
	out = order.AppendUint16(out, Magic)
	out = append(out, uint8(h.Version), uint8(h.Flags), uint8(h.ABI), uint8(h.CFAFixedFPOffset), uint8(h.CFAFixedRAOffset), h.AuxHdrLen)
	out = order.AppendUint32(out, uint32(n))
	out = order.AppendUint32(out, uint32(numFREs))
	out = order.AppendUint32(out, uint32(len(fres)))
	out = order.AppendUint32(out, 0)                // fdeoff
	out = order.AppendUint32(out, uint32(n*stride)) // freoff
	out = append(out, s.AuxHeader...)
	out = append(out, make([]byte, int(h.AuxHdrLen)-len(s.AuxHeader))...)

	pcrel := h.PCRel()
	for i := range s.FDEs {
		f := &s.FDEs[i]
		off := hs + int64(i)*stride
		field := f.Start - s.Addr // section-relative
		if pcrel {
			field -= uint64(off)
		}
		switch h.Version {
		case Version1, Version2:
			if v := int64(field); v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("sframe: encode: FDE %d: start %#x is out of reach of a 32-bit start field", i, f.Start)
			}
			out = order.AppendUint32(out, uint32(field))
			out = order.AppendUint32(out, f.Size)
			out = order.AppendUint32(out, freOffs[i])
			out = order.AppendUint32(out, uint32(len(f.FREs)))
			out = append(out, f.Info)
			if h.Version == Version2 {
				out = append(out, f.RepSize, 0, 0)
			}
		case Version3:
			out = order.AppendUint64(out, field)
			out = order.AppendUint32(out, f.Size)
			out = order.AppendUint32(out, freOffs[i])
		}
	}
	return append(out, fres...), nil
}

func wordsFit(words []int32, size int) bool {
	for _, w := range words {
		switch size {
		case 1:
			if w < math.MinInt8 || w > math.MaxInt8 {
				return false
			}
		case 2:
			if w < math.MinInt16 || w > math.MaxInt16 {
				return false
			}
		}
	}
	return true
}

func minSizeCode(words []int32) uint8 {
	for code, size := range wordSizes[:3] {
		if wordsFit(words, size) {
			return uint8(code)
		}
	}
	return 2
}
