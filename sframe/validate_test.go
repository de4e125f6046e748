package sframe

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// exampleSection returns the worked example decoded, for tests to mutate
// before encoding.
func exampleSection(t *testing.T) *Section {
	t.Helper()
	s, err := Decode(mustHex(t, workedExample), 0x2000)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func encode(t *testing.T, s *Section) []byte {
	t.Helper()
	b, err := s.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

func le32(b []byte, off int, v uint32) []byte {
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

// TestValidateRules has one case per rule of the fact sheet's check list
// [SFrame §6.2]: each breaks one rule of a valid section and expects that
// rule to be reported, at the offending field's offset.
func TestValidateRules(t *testing.T) {
	const attr0, attr1 = 0x3c, 0x50 // worked example: attribute records
	type tc struct {
		name  string
		build func(t *testing.T) ([]byte, ValidateOptions)
		check Check
		field string // substring of FormatError.Field
		off   int64  // -1: any
	}
	bytesOf := func(f func(b []byte) []byte) func(t *testing.T) ([]byte, ValidateOptions) {
		return func(t *testing.T) ([]byte, ValidateOptions) {
			return f(mustHex(t, workedExample)), ValidateOptions{}
		}
	}
	section := func(f func(s *Section)) func(t *testing.T) ([]byte, ValidateOptions) {
		return func(t *testing.T) ([]byte, ValidateOptions) {
			s := exampleSection(t)
			f(s)
			return encode(t, s), ValidateOptions{}
		}
	}
	sp := func(start uint32, words ...int32) FRE {
		return FRE{Start: start, Info: FREInfo(BaseSP, false), Words: words}
	}
	tests := []tc{
		// §6.2.1 header
		{"unknown ABI", bytesOf(func(b []byte) []byte { b[4] = 9; return b }), CheckHeader, "header.abi_arch", 4},
		{"magic order vs ABI", bytesOf(func(b []byte) []byte { b[4] = byte(ABIAArch64BE); return b }), CheckHeader, "preamble.magic", 0},
		{"magic order vs ELF", func(t *testing.T) ([]byte, ValidateOptions) {
			return mustHex(t, workedExample), ValidateOptions{ByteOrder: binary.BigEndian}
		}, CheckHeader, "preamble.magic", 0},
		{"undefined flag", bytesOf(func(b []byte) []byte { b[3] |= 0x8; return b }), CheckHeader, "preamble.flags", 3},
		{"V1 with PCREL", section(func(s *Section) { s.Header.Version = Version1 }), CheckHeader, "preamble.flags", 3},
		{"AMD64 fixed RA not -8", bytesOf(func(b []byte) []byte { b[6] = 0xf0; return b }), CheckHeader, "header.cfa_fixed_ra_offset", 6},
		{"AMD64 fixed RA 0", bytesOf(func(b []byte) []byte { b[6] = 0; return b }), CheckHeader, "header.cfa_fixed_ra_offset", 6},
		{"AMD64 fixed RA 0, V1", section(func(s *Section) {
			s.Header.Version, s.Header.Flags, s.Header.CFAFixedRAOffset = Version1, FlagFDESorted, 0
		}), CheckHeader, "header.cfa_fixed_ra_offset", 6},
		{"AMD64 fixed RA 0, V2", section(func(s *Section) { s.Header.Version, s.Header.CFAFixedRAOffset = Version2, 0 }), CheckHeader, "header.cfa_fixed_ra_offset", 6},
		{"AMD64 fixed FP", bytesOf(func(b []byte) []byte { b[5] = 0xf0; return b }), CheckHeader, "header.cfa_fixed_fp_offset", 5},
		{"AMD64 fixed FP, V2", section(func(s *Section) { s.Header.Version, s.Header.CFAFixedFPOffset = Version2, -16 }), CheckHeader, "header.cfa_fixed_fp_offset", 5},
		{"AArch64 fixed RA", section(func(s *Section) { s.Header.ABI = ABIAArch64LE }), CheckHeader, "header.cfa_fixed_ra_offset", 6}, // AMD64's -8 kept
		{"AArch64 fixed FP", section(func(s *Section) {
			s.Header.ABI, s.Header.CFAFixedRAOffset, s.Header.CFAFixedFPOffset = ABIAArch64LE, 0, -16
		}), CheckHeader, "header.cfa_fixed_fp_offset", 5},
		// §6.2.2 layout
		{"FRE area inside FDE array", bytesOf(func(b []byte) []byte { return le32(b, 24, 16) }), CheckLayout, "header.freoff", 24},
		{"non-zero padding", bytesOf(func(b []byte) []byte { return append(b, 0, 0, 7) }), CheckLayout, "padding", 0x59},
		{"FDE array past end", bytesOf(func(b []byte) []byte { return le32(b, 8, 1000) }), CheckLayout, "header.num_fdes", 8},
		{"FRE area past end", bytesOf(func(b []byte) []byte { return le32(b, 16, 1000) }), CheckLayout, "header.fre_len", 16},
		{"attribute record outside", bytesOf(func(b []byte) []byte { return le32(b, 0x38, 0x100) }), CheckLayout, "FDE[1].func_start_fre_off", 0x38},
		{"FRE past end of area", bytesOf(func(b []byte) []byte { b[0x4d] = 0x4f; return b }), CheckLayout, "FDE[0].FRE[3].fre_info", 0x4d},
		// §6.2.3 FDE
		{"invalid FRE type", bytesOf(func(b []byte) []byte { b[attr0+2] = 3; return b }), CheckFDE, "FDE[0].func_info", attr0 + 2},
		{"invalid FRE type, no FREs", section(func(s *Section) { s.FDEs[1].Info = 5; s.FDEs[1].FREs = nil }), CheckFDE, "FDE[1].func_info", attr1 + 2},
		{"PCMASK rep_size 0", section(func(s *Section) { s.FDEs[0].Info |= infoPCTypeBit }), CheckFDE, "FDE[0].rep_size", attr0 + 4},
		{"V1 PCMASK unaligned", section(func(s *Section) {
			s.Header.Version, s.Header.Flags = Version1, FlagFDESorted
			s.FDEs[1].Info |= infoPCTypeBit
			s.FDEs[1].Start = 0x1128
		}), CheckFDE, "FDE[1].func_start_address", 0x1c + 17},
		{"unknown V3 FDE type", bytesOf(func(b []byte) []byte { b[attr0+3] = 2; return b }), CheckFDE, "FDE[0].func_info2", attr0 + 3},
		{"V3 info2 unused bits", bytesOf(func(b []byte) []byte { b[attr0+3] = 0x20; return b }), CheckFDE, "FDE[0].func_info2", attr0 + 3},
		{"outside executable code", func(t *testing.T) ([]byte, ValidateOptions) {
			return mustHex(t, workedExample), ValidateOptions{CheckText: true, Text: []AddrRange{{0x1000, 0x1110}}}
		}, CheckFDE, "FDE[0].func_start_address", 0x1c},
		{"function wraps", section(func(s *Section) { s.FDEs[1].Start, s.FDEs[1].Size = 0xffff_ffff_ffff_fff0, 0x100 }), CheckFDE, "FDE[1].func_size", 0x2c},
		// §6.2.4 ordering
		{"unsorted", section(func(s *Section) { s.FDEs[0], s.FDEs[1] = s.FDEs[1], s.FDEs[0] }), CheckOrdering, "FDE[1].func_start_address", 0x2c},
		{"empty FDE at the next one's start", section(func(s *Section) { s.FDEs[0].Start, s.FDEs[0].Size = s.FDEs[1].Start, 0 }), CheckOrdering, "FDE[1].func_start_address", 0x2c},
		{"overlap", section(func(s *Section) { s.FDEs[0].Size = 0x21 }), CheckOrdering, "FDE[1]", 0x2c},
		// §6.2.5 FRE
		{"word size code 3", bytesOf(func(b []byte) []byte { b[0x42] |= 3 << 5; return b }), CheckFRE, "FDE[0].FRE[0].fre_info", 0x42},
		{"more than 6 words", section(func(s *Section) { s.FDEs[0].FREs[0].Words = make([]int32, 7) }), CheckFRE, "FDE[0].FRE[0].fre_info", 0x42},
		{"DEFAULT words left over", section(func(s *Section) { s.FDEs[0].FREs[1].Words = []int32{16, -16, 3} }), CheckFRE, "FDE[0].FRE[1].fre_info", 0x45},
		{"FLEX with 3 words", section(func(s *Section) {
			s.FDEs[0].Info2 = uint8(FDETypeFlex)
			for j := range s.FDEs[0].FREs {
				s.FDEs[0].FREs[j].Words = []int32{FlexCtrl(7, false), 8}
			}
			s.FDEs[0].FREs[2].Words = []int32{FlexCtrl(7, false), 8, 0}
		}), CheckFRE, "FDE[0].FRE[2]", -1},
		{"FLEX CFA without register", section(func(s *Section) {
			s.FDEs[0].Info2 = uint8(FDETypeFlex)
			for j := range s.FDEs[0].FREs {
				s.FDEs[0].FREs[j].Words = []int32{FlexCtrl(7, false), 8}
			}
			s.FDEs[0].FREs[1].Words = []int32{FlexCtrl(RegCFA, false), 8}
		}), CheckFRE, "FDE[0].FRE[1]", -1},
		{"start past function end", section(func(s *Section) { s.FDEs[0].FREs[3].Start = 0x1b }), CheckFRE, "FDE[0].FRE[3].start", -1},
		{"PCMASK start past rep_size", section(func(s *Section) {
			s.FDEs[0].Info |= infoPCTypeBit
			s.FDEs[0].RepSize = 0x10
		}), CheckFRE, "FDE[0].FRE[3].start", -1},
		{"starts not increasing", section(func(s *Section) { s.FDEs[0].FREs[2].Start = 1 }), CheckFRE, "FDE[0].FRE[2].start", -1},
		// §6.2.6 totals
		{"num_fres", bytesOf(func(b []byte) []byte { return le32(b, 12, 6) }), CheckTotals, "header.num_fres", 12},
		{"fre_len", bytesOf(func(b []byte) []byte { return append(le32(b, 16, 28), 0) }), CheckTotals, "header.fre_len", 16},
		// §6.2.7 V3
		{"V3 without PCREL", section(func(s *Section) { s.Header.Flags = FlagFDESorted }), CheckV3, "preamble.flags", 3},
		{"V3 with FRAME_POINTER", bytesOf(func(b []byte) []byte { b[3] |= 2; return b }), CheckV3, "preamble.flags", 3},
		{"V1 RA undefined (warning only)", section(func(s *Section) {
			s.Header.Version, s.Header.Flags = Version1, FlagFDESorted
			s.FDEs = append(s.FDEs, FDE{Start: 0x1130, Size: 4, FREs: []FRE{sp(0, 8), sp(2, 16, 17, 18)}})
		}), CheckFRE, "FDE[2].FRE[1].fre_info", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, opts := tt.build(t)
			s, _ := Decode(data, 0x2000)
			if s == nil {
				t.Fatal("Decode returned no section")
			}
			errs := s.Validate(opts)
			for _, e := range errs {
				if e.Check == tt.check && strings.Contains(e.Field, tt.field) && (tt.off < 0 || e.Off == tt.off) {
					if e.Error() == "" || !strings.Contains(e.Error(), "offset 0x") {
						t.Errorf("message %q lacks the offset", e.Error())
					}
					return
				}
			}
			t.Errorf("want a %s problem in %q at offset %#x; got:", tt.check, tt.field, tt.off)
			for _, e := range errs {
				t.Logf("  %s %v", e.Check, e)
			}
		})
	}
}

func TestDecodeFatal(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		field string
	}{
		{"empty", nil, "header"},
		{"short", mustHex(t, workedExample)[:27], "header"},
		{"bad magic", append([]byte{0xde, 0xad}, mustHex(t, workedExample)[2:]...), "preamble.magic"},
		{"version 0", func() []byte { b := mustHex(t, workedExample); b[2] = 0; return b }(), "preamble.version"},
		{"version 4", func() []byte { b := mustHex(t, workedExample); b[2] = 4; return b }(), "preamble.version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Decode(tt.data, 0)
			if s != nil {
				t.Errorf("Decode returned a section")
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Decode error = %v, want a FormatError on %s", err, tt.field)
			}
		})
	}
}

// TestValidSectionsHaveNoErrors guards against false positives on the
// hand-made table and the worked example.
func TestValidSectionsHaveNoErrors(t *testing.T) {
	s := exampleSection(t)
	if errs := s.Validate(ValidateOptions{ByteOrder: binary.LittleEndian, CheckText: true, Text: []AddrRange{{0x1000, 0x2000}}}); len(errs) != 0 {
		t.Errorf("worked example: %v", errs)
	}
}

// TestValidateEmptyDuplicate: an empty FDE at the next one's start (ld
// 2.40 keeps one for an empty .cold part) is named as the cause of the
// repeated start.
func TestValidateEmptyDuplicate(t *testing.T) {
	ex := exampleSection(t)
	ex.FDEs[0].Start, ex.FDEs[0].Size = ex.FDEs[1].Start, 0
	s, _ := Decode(encode(t, ex), 0x2000)
	if s == nil {
		t.Fatal("Decode returned no section")
	}
	for _, e := range s.Validate(ValidateOptions{}) {
		if e.Check == CheckOrdering && !e.Warn {
			if want := "FDE 0 is empty (size 0)"; !strings.Contains(e.Error(), want) {
				t.Errorf("%q lacks %q", e.Error(), want)
			}
			return
		}
	}
	t.Error("no ordering error")
}
