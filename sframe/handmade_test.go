package sframe

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// handmade lists sections built with the encoder for what no toolchain here
// emits: big-endian, V2 with the PCREL flag, s390x, FLEX rows, PCMASK, signal
// FDEs, wide words and starts. Each is written to testdata/handmade/NAME.sframe
// (with -update) and dumped by a real objdump into NAME.objdump; see
// testdata/handmade/README.md.
func handmade() []struct {
	name string
	sec  *Section
} {
	le, be := binary.LittleEndian, binary.BigEndian
	sp := func(off ...int32) FRE { return FRE{Info: FREInfo(BaseSP, false), Words: off} }
	fp := func(off ...int32) FRE { return FRE{Info: FREInfo(BaseFP, false), Words: off} }
	signed := func(r FRE) FRE { r.Info |= freMangledBit; return r }
	at := func(start uint32, r FRE) FRE { r.Start = start; return r }
	flex := func(words ...int32) FRE { return FRE{Words: words} }
	undef := FRE{}
	const (
		rsp, rbp, r10, rcx = 7, 6, 10, 2
		s390sp, s390fp     = 15, 11
	)
	inc1 := FDEInfo(FREAddr1, PCInc, false, false)
	return []struct {
		name string
		sec  *Section
	}{
		{"v3-aarch64-be-pauth", &Section{
			Header: Header{Version: Version3, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIAArch64BE},
			Order:  be, Addr: 0x10000,
			FDEs: []FDE{
				{Start: 0x400, Size: 0x40, Info: FDEInfo(FREAddr1, PCInc, true, false), FREs: []FRE{
					at(0, sp(0)), at(4, signed(sp(0))), at(8, signed(sp(32, -24, -32))),
					at(12, signed(fp(32, -24, -32))), at(0x38, signed(sp(0))), at(0x3c, sp(0))}},
				{Start: 0x440, Size: 0x1200, Info: FDEInfo(FREAddr2, PCInc, false, false), FREs: []FRE{
					at(0, sp(0)), at(4, sp(70000, -8, -16)), at(0x11f0, sp(0))}},
			}}},
		{"v2-aarch64-be", &Section{
			Header: Header{Version: Version2, Flags: FlagFDESorted, ABI: ABIAArch64BE},
			Order:  be, Addr: 0x20000,
			FDEs: []FDE{
				{Start: 0x1000, Size: 0x20, Info: inc1, FREs: []FRE{at(0, sp(0)), at(4, sp(16, -8, -16)), at(8, fp(16, -8, -16))}},
				{Start: 0x1020, Size: 0x10, Info: FDEInfo(FREAddr1, PCInc, true, false), FREs: []FRE{at(0, signed(sp(0)))}},
			}}},
		{"v1-aarch64-be", &Section{
			Header: Header{Version: Version1, Flags: FlagFDESorted, ABI: ABIAArch64BE},
			Order:  be, Addr: 0x20000,
			FDEs: []FDE{
				{Start: 0x1000, Size: 0x20, Info: inc1, FREs: []FRE{at(0, sp(0)), at(4, sp(16, -8, -16)), at(8, fp(16, -8, -16))}},
			}}},
		{"v2-amd64-pcrel", &Section{
			Header: Header{Version: Version2, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIAMD64LE, CFAFixedRAOffset: -8},
			Order:  le, Addr: 0x402000,
			FDEs: []FDE{
				{Start: 0x401000, Size: 0x1a, Info: inc1, FREs: []FRE{at(0, sp(8)), at(1, sp(16, -16)), at(4, fp(16, -16)), at(0x19, sp(8, -16))}},
				{Start: 0x401020, Size: 0x100000, Info: FDEInfo(FREAddr4, PCInc, false, false), FREs: []FRE{
					at(0, sp(8)), at(0x10, sp(0x10010)), at(0xfff00, sp(8))}},
			}}},
		{"v2-amd64-fp-flags", &Section{
			Header: Header{Version: Version2, Flags: FlagFDESorted | FlagFramePointer, ABI: ABIAMD64LE, CFAFixedRAOffset: -8},
			Order:  le, Addr: 0x3000,
			FDEs: []FDE{{Start: 0x1000, Size: 0x10, Info: inc1, FREs: []FRE{at(0, sp(8))}}},
		}},
		{"v3-amd64-plt", &Section{
			Header: Header{Version: Version3, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIAMD64LE, CFAFixedRAOffset: -8},
			Order:  le, Addr: 0x2000,
			FDEs: []FDE{
				{Start: 0x1020, Size: 16, Info: inc1, FREs: []FRE{at(0, sp(16)), at(6, sp(24))}},
				{Start: 0x1030, Size: 48, Info: FDEInfo(FREAddr1, PCMask, false, false), RepSize: 16, FREs: []FRE{at(0, sp(8)), at(11, sp(16))}},
				{Start: 0x1060, Size: 16, Info: FDEInfo(FREAddr1, PCMask, false, false), RepSize: 8, FREs: []FRE{at(0, sp(16))}},
			}}},
		{"v3-amd64-flex", &Section{
			Header: Header{Version: Version3, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIAMD64LE, CFAFixedRAOffset: -8},
			Order:  le, Addr: 0x5000,
			FDEs: []FDE{
				// DRAP: CFA = r10+0, then *(rbp-8); FP = *(rbp+0); RA padding.
				{Start: 0x1000, Size: 0x60, Info: inc1, Info2: uint8(FDETypeFlex), FREs: []FRE{
					at(0, flex(FlexCtrl(rsp, false), 8)),
					at(4, flex(FlexCtrl(r10, false), 0)),
					at(0x10, flex(FlexCtrl(r10, false), 0, 0, FlexCtrl(rbp, true), 0)),
					at(0x18, flex(FlexCtrl(rbp, true), -8, 0, FlexCtrl(rbp, true), 0)),
					at(0x50, flex(FlexCtrl(rsp, false), 8, FlexCtrl(RegCFA, true), -8, FlexCtrl(RegCFA, true), -16)),
				}},
				// .cfi_register rip, rcx
				{Start: 0x1060, Size: 0x10, Info: inc1, Info2: uint8(FDETypeFlex), FREs: []FRE{
					at(0, flex(FlexCtrl(rsp, false), 0, FlexCtrl(rcx, false), 0)),
				}},
				// signal trampoline without rows
				{Start: 0x1070, Size: 0x9, Info: FDEInfo(FREAddr1, PCInc, false, true)},
				// signal trampoline with rows, and an outermost _start
				{Start: 0x1080, Size: 0x20, Info: FDEInfo(FREAddr1, PCInc, false, true), FREs: []FRE{at(0, sp(160, -16))}},
				{Start: 0x10a0, Size: 0x10, Info: inc1, FREs: []FRE{at(0, undef)}},
			}}},
		{"v3-s390x", &Section{
			Header: Header{Version: Version3, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIS390XBE},
			Order:  be, Addr: 0x8000,
			FDEs: []FDE{
				// CFA sp+160 stored as 0; RA and FP saved.
				{Start: 0x1000, Size: 0x40, Info: inc1, FREs: []FRE{at(0, sp(0)), at(6, sp(20, -48, -72)), at(0x20, fp(20, -48, -72))}},
				// FP saved, RA not (padding 0).
				{Start: 0x1040, Size: 0x20, Info: inc1, FREs: []FRE{at(0, sp(0)), at(4, sp(0, 0, -72))}},
				// FLEX: FP and RA kept in FPRs r17/r16; non-SP CFA.
				{Start: 0x1060, Size: 0x20, Info: inc1, Info2: uint8(FDETypeFlex), FREs: []FRE{
					at(0, flex(FlexCtrl(s390sp, false), 0, FlexCtrl(16, false), 0, FlexCtrl(17, false), 0)),
					at(8, flex(FlexCtrl(s390fp, false), 20, FlexCtrl(RegCFA, true), -48, FlexCtrl(RegCFA, true), -72)),
				}},
			}}},
		{"v2-s390x", &Section{
			Header: Header{Version: Version2, Flags: FlagFDESorted | FlagFDEFuncStartPCRel, ABI: ABIS390XBE},
			Order:  be, Addr: 0x8000,
			FDEs: []FDE{
				{Start: 0x1000, Size: 0x40, Info: inc1, FREs: []FRE{at(0, sp(0)), at(6, sp(20, -48, -72)), at(0x20, fp(20, -48, -72))}},
				// V2: odd words name the register holding RA (r16 → 33) and FP (r17 → 35).
				{Start: 0x1040, Size: 0x20, Info: inc1, FREs: []FRE{at(0, sp(0)), at(4, sp(0, 33, 35)), at(8, sp(0, 0, -72))}},
			}}},
	}
}

// TestHandmadeInputs keeps testdata/handmade/*.sframe in step with the
// table: -update rewrites them.
func TestHandmadeInputs(t *testing.T) {
	for _, hm := range handmade() {
		t.Run(hm.name, func(t *testing.T) {
			data, err := hm.sec.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			golden.Check(t, filepath.Join("testdata", "handmade", hm.name+".sframe"), data)
			s, err := Decode(data, hm.sec.Addr)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if errs := s.Validate(ValidateOptions{}); errs.HasErrors() {
				t.Errorf("Validate: %v", errs)
			}
		})
	}
}
