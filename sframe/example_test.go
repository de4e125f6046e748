package sframe

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// workedExample is the V3 AMD64 section of the fact sheet's worked example
// [SFrame §7.6]: .sframe at 0x2000, f at 0x1100 (26 bytes: push rbp; mov
// rbp,rsp; ...; leave at +0x19) and _start at 0x1120 (8 bytes, RA undefined).
//
//	0000 e2de 03 05 03 00 f8 00   LE magic, V3, flags SORTED|PCREL, AMD64, fixed RA -8
//	0008 02000000 05000000        2 FDEs, 5 FREs
//	0010 1b000000 00000000 20000000   fre_len 27, fdeoff 0, freoff 32
//	001c idx0: start 0x1100-0x201c, size 26, fre_off 0
//	002c idx1: start 0x1120-0x202c, size 8, fre_off 0x14
//	003c attr0: 4 FREs, info 0, info2 0, rep 0
//	0041 FREs: 00 sp+8 | 01 sp+16 c-16 | 04 fp+16 c-16 | 19 sp+8 c-16
//	0050 attr1: 1 FRE | FRE 00 info 0x00 (RA undefined)
const workedExample = "e2de030503 00f800 02000000 05000000" +
	"1b000000 00000000 20000000" +
	"e4f0ffffffffffff 1a000000 00000000" +
	"f4f0ffffffffffff 08000000 14000000" +
	"0400000000" + "0003 08" + "010510f0" + "040410f0" + "190508f0" +
	"0100000000" + "0000"

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const workedExampleDump = `Contents of the SFrame section .sframe:
  Header :

    Version: SFRAME_VERSION_3
    Flags: SFRAME_F_FDE_SORTED,
           SFRAME_F_FDE_FUNC_START_PCREL
    CFA fixed RA offset: -8
    Num FDEs: 2
    Num FREs: 5

  Function Index :

    func idx [0]: pc = 0x1100, size = 26 bytes
    STARTPC         CFA       FP        RA           
    0000000000001100  sp+8      u         f            
    0000000000001101  sp+16     c-16      f            
    0000000000001104  fp+16     c-16      f            
    0000000000001119  sp+8      c-16      f            

    func idx [1]: pc = 0x1120, size = 8 bytes
    STARTPC         CFA       FP        RA           
    0000000000001120  RA undefined
`

func TestWorkedExample(t *testing.T) {
	data := mustHex(t, workedExample)
	s, err := Decode(data, 0x2000)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if errs := s.Validate(ValidateOptions{}); len(errs) != 0 {
		t.Errorf("Validate: %v", errs)
	}
	h := s.Header
	if h.Version != Version3 || h.ABI != ABIAMD64LE || h.CFAFixedRAOffset != -8 || h.NumFDEs != 2 || h.NumFREs != 5 || h.FRELen != 27 {
		t.Errorf("header = %+v", h)
	}
	if got := []uint64{s.FDEs[0].Start, s.FDEs[1].Start}; got[0] != 0x1100 || got[1] != 0x1120 {
		t.Errorf("starts = %#x, want [0x1100 0x1120]", got)
	}
	var buf bytes.Buffer
	if err := s.Dump(&buf, ".sframe", DumpAuto); err != nil {
		t.Fatal(err)
	}
	if buf.String() != workedExampleDump {
		t.Errorf("dump:\n%s\nwant:\n%s", buf.String(), workedExampleDump)
	}
	// The canonical encoder reproduces the bytes.
	enc, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, data) {
		t.Errorf("Encode:\n%x\nwant\n%x", enc, data)
	}
}

func TestWorkedExampleLookup(t *testing.T) {
	s, err := Decode(mustHex(t, workedExample), 0x2000)
	if err != nil {
		t.Fatal(err)
	}
	cfaSP := func(off int32) Rule { return Rule{Kind: RuleExpr, Reg: 7, Offset: off} }
	cfaFP := func(off int32) Rule { return Rule{Kind: RuleExpr, Reg: 6, Offset: off} }
	atCFA := func(off int32) Rule { return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: off, Deref: true} }
	same := Rule{Kind: RuleSame}
	tests := []struct {
		pc        uint64
		fde, fre  int
		cfa, fp   Rule
		outermost bool
		err       error
	}{
		{pc: 0x10ff, err: ErrNoFDE},
		{pc: 0x1100, fde: 0, fre: 0, cfa: cfaSP(8), fp: same},
		{pc: 0x1101, fde: 0, fre: 1, cfa: cfaSP(16), fp: atCFA(-16)},
		{pc: 0x1103, fde: 0, fre: 1, cfa: cfaSP(16), fp: atCFA(-16)},
		{pc: 0x1104, fde: 0, fre: 2, cfa: cfaFP(16), fp: atCFA(-16)},
		{pc: 0x1118, fde: 0, fre: 2, cfa: cfaFP(16), fp: atCFA(-16)},
		{pc: 0x1119, fde: 0, fre: 3, cfa: cfaSP(8), fp: atCFA(-16)},
		{pc: 0x111a, err: ErrNoFDE}, // gap between the functions
		{pc: 0x1120, fde: 1, fre: 0, outermost: true},
		{pc: 0x1127, fde: 1, fre: 0, outermost: true},
		{pc: 0x1128, err: ErrNoFDE},
	}
	for _, tt := range tests {
		row, err := s.Lookup(tt.pc)
		if tt.err != nil {
			if err != tt.err {
				t.Errorf("Lookup(%#x) error = %v, want %v", tt.pc, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Lookup(%#x): %v", tt.pc, err)
			continue
		}
		if row.FDE != tt.fde || row.FRE != tt.fre || row.Outermost != tt.outermost {
			t.Errorf("Lookup(%#x) = FDE %d FRE %d outermost %v, want %d %d %v", tt.pc, row.FDE, row.FRE, row.Outermost, tt.fde, tt.fre, tt.outermost)
		}
		if tt.outermost {
			continue
		}
		if row.CFA != tt.cfa || row.FP != tt.fp || row.RA != atCFA(-8) {
			t.Errorf("Lookup(%#x) rules CFA %s FP %s RA %s, want CFA %s FP %s RA *(cfa-8)", tt.pc,
				row.CFA.Format(ABIAMD64LE), row.FP.Format(ABIAMD64LE), row.RA.Format(ABIAMD64LE),
				tt.cfa.Format(ABIAMD64LE), tt.fp.Format(ABIAMD64LE))
		}
	}
}

func TestFormatRow(t *testing.T) {
	s, err := Decode(mustHex(t, workedExample), 0x2000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.FormatRow(0, 2), "    0000000000001104  fp+16     c-16      f"; got != want {
		t.Errorf("FormatRow(0, 2) = %q, want %q", got, want)
	}
	if got, want := s.FormatRow(1, 0), "    0000000000001120  RA undefined"; got != want {
		t.Errorf("FormatRow(1, 0) = %q, want %q", got, want)
	}
}
