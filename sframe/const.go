package sframe

import "strconv"

// Magic is the SFrame preamble magic number, stored in the producer's byte
// order [SFrame §1.2].
const Magic = 0xdee2

// HeaderSize is the size of the fixed part of the SFrame header; an
// auxiliary header of Header.AuxHdrLen bytes may follow it [SFrame §1.3].
const HeaderSize = 28

// Sizes of one function descriptor entry in the FDE sub-section, per version
// [SFrame §2.1–2.3]. In V3 each function also has an attribute record of
// AttrSize bytes at the head of its FREs.
const (
	FDESizeV1 = 17
	FDESizeV2 = 20
	FDESizeV3 = 16
	AttrSize  = 5
)

// MaxWords is the largest data-word count newest libsframe accepts in one FRE
// (MAX_NUM_DATAWORDS). The 4-bit field itself can hold up to 15.
const MaxWords = 6

// Version is the SFrame format version in the preamble.
type Version uint8

// Known versions [SFrame §1.6].
const (
	Version1 Version = 1 // binutils 2.40
	Version2 Version = 2 // binutils 2.41–2.45
	Version3 Version = 3 // binutils 2.46 and later
)

func (v Version) String() string {
	switch v {
	case Version1, Version2, Version3:
		return "SFRAME_VERSION_" + strconv.Itoa(int(v))
	}
	return "SFRAME_VERSION_?" + strconv.Itoa(int(v))
}

// fdeSize returns the stride of the FDE sub-section, or 0 for an unknown
// version.
func (v Version) fdeSize() int {
	switch v {
	case Version1:
		return FDESizeV1
	case Version2:
		return FDESizeV2
	case Version3:
		return FDESizeV3
	}
	return 0
}

// Flags is the preamble flags byte [SFrame §1.4].
type Flags uint8

// Preamble flags.
const (
	FlagFDESorted         Flags = 0x1 // SFRAME_F_FDE_SORTED
	FlagFramePointer      Flags = 0x2 // SFRAME_F_FRAME_POINTER (V1, V2 only)
	FlagFDEFuncStartPCRel Flags = 0x4 // SFRAME_F_FDE_FUNC_START_PCREL (V2 errata 1, V3)
)

// validFlags returns the flag bits a version may carry, as newest libsframe
// accepts them (V1 is checked against the V2 mask there; PCREL did not exist
// in V1, so it is not allowed here).
func (v Version) validFlags() Flags {
	switch v {
	case Version1:
		return FlagFDESorted | FlagFramePointer
	case Version2:
		return FlagFDESorted | FlagFramePointer | FlagFDEFuncStartPCRel
	case Version3:
		return FlagFDESorted | FlagFDEFuncStartPCRel
	}
	return 0
}

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagFDESorted, "SFRAME_F_FDE_SORTED"},
	{FlagFramePointer, "SFRAME_F_FRAME_POINTER"},
	{FlagFDEFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL"},
}

func (f Flags) String() string {
	if f == 0 {
		return "NONE"
	}
	s := ""
	for _, n := range flagNames {
		if f&n.f != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
			f &^= n.f
		}
	}
	if f != 0 {
		if s != "" {
			s += "|"
		}
		s += "0x" + strconv.FormatUint(uint64(f), 16)
	}
	return s
}

// ABI is the abi_arch header byte [SFrame §1.5].
type ABI uint8

// ABI/arch identifiers.
const (
	ABIAArch64BE ABI = 1 // SFRAME_ABI_AARCH64_ENDIAN_BIG
	ABIAArch64LE ABI = 2 // SFRAME_ABI_AARCH64_ENDIAN_LITTLE
	ABIAMD64LE   ABI = 3 // SFRAME_ABI_AMD64_ENDIAN_LITTLE
	ABIS390XBE   ABI = 4 // SFRAME_ABI_S390X_ENDIAN_BIG
)

var abiNames = [...]string{
	ABIAArch64BE: "SFRAME_ABI_AARCH64_ENDIAN_BIG",
	ABIAArch64LE: "SFRAME_ABI_AARCH64_ENDIAN_LITTLE",
	ABIAMD64LE:   "SFRAME_ABI_AMD64_ENDIAN_LITTLE",
	ABIS390XBE:   "SFRAME_ABI_S390X_ENDIAN_BIG",
}

func (a ABI) String() string {
	if int(a) < len(abiNames) && abiNames[a] != "" {
		return abiNames[a]
	}
	return "SFRAME_ABI_?" + strconv.Itoa(int(a))
}

// Known reports whether a is one of the four defined ABIs.
func (a ABI) Known() bool { return a >= ABIAArch64BE && a <= ABIS390XBE }

// BigEndian reports whether the ABI's sections are big-endian.
func (a ABI) BigEndian() bool { return a == ABIAArch64BE || a == ABIS390XBE }

// AArch64 reports whether a is one of the two AArch64 ABIs.
func (a ABI) AArch64() bool { return a == ABIAArch64BE || a == ABIAArch64LE }

// S390X reports whether a is the s390x ABI.
func (a ABI) S390X() bool { return a == ABIS390XBE }

// FixedOffsets returns the header's cfa_fixed_fp_offset and
// cfa_fixed_ra_offset the ABI requires [SFrame §1.5], the same in V1, V2
// and V3: AMD64 always saves the return address at CFA-8 (-8) and has no
// fixed frame-pointer slot (0); AArch64 and s390x track both per FRE (0,
// 0). ok is false for an unknown ABI.
func (a ABI) FixedOffsets() (fp, ra int8, ok bool) {
	switch a {
	case ABIAArch64BE, ABIAArch64LE, ABIS390XBE:
		return 0, 0, true
	case ABIAMD64LE:
		return 0, -8, true
	}
	return 0, 0, false
}

// Regs returns the DWARF numbers of the stack pointer, frame pointer and
// return-address register of the ABI [SFrame §1.5], or ok=false for an unknown
// ABI.
func (a ABI) Regs() (sp, fp, ra Reg, ok bool) {
	switch a {
	case ABIAArch64BE, ABIAArch64LE:
		return 31, 29, 30, true
	case ABIAMD64LE:
		return 7, 6, 16, true
	case ABIS390XBE:
		return 15, 11, 14, true
	}
	return 0, 0, 0, false
}

// s390xCFABias is the CFA offset bias of s390x: CFA offsets are stored as
// (offset-160)/8 [SFrame §4.3, pitfall 11].
const s390xCFABias = 160

// FREType is the width of the FRE start-address field (func_info bits 0–3)
// [SFrame §3.1].
type FREType uint8

// FRE start-address widths.
const (
	FREAddr1 FREType = 0 // SFRAME_FRE_TYPE_ADDR1: u8
	FREAddr2 FREType = 1 // SFRAME_FRE_TYPE_ADDR2: u16
	FREAddr4 FREType = 2 // SFRAME_FRE_TYPE_ADDR4: u32
)

// Size returns the byte width of the start field, or 0 if t is invalid.
func (t FREType) Size() int {
	switch t {
	case FREAddr1:
		return 1
	case FREAddr2:
		return 2
	case FREAddr4:
		return 4
	}
	return 0
}

func (t FREType) String() string {
	switch t {
	case FREAddr1:
		return "ADDR1"
	case FREAddr2:
		return "ADDR2"
	case FREAddr4:
		return "ADDR4"
	}
	return "FRE_TYPE_?" + strconv.Itoa(int(t))
}

// PCType says how a PC is matched against FRE start addresses (func_info
// bit 4; "FDE type" in V1/V2) [SFrame §3.3].
type PCType uint8

// PC types.
const (
	PCInc  PCType = 0 // SFRAME_FDE_TYPE_PCINC: offset from the function start
	PCMask PCType = 1 // SFRAME_FDE_TYPE_PCMASK: offset modulo rep_size (PLT stubs)
)

func (t PCType) String() string {
	if t == PCMask {
		return "PCMASK"
	}
	return "PCINC"
}

// FDEType is the V3 FDE type in the low five bits of info2 [SFrame §3.2].
type FDEType uint8

// V3 FDE types.
const (
	FDETypeDefault FDEType = 0 // SFRAME_FDE_TYPE_DEFAULT: ABI rules of §4.3
	FDETypeFlex    FDEType = 1 // SFRAME_FDE_TYPE_FLEX: control/offset pairs of §4.4
)

func (t FDEType) String() string {
	switch t {
	case FDETypeDefault:
		return "DEFAULT"
	case FDETypeFlex:
		return "FLEX"
	}
	return "FDE_TYPE_?" + strconv.Itoa(int(t))
}

// BaseReg is the CFA base register id of a DEFAULT FRE (fre_info bit 0).
type BaseReg uint8

// CFA base registers.
const (
	BaseFP BaseReg = 0 // SFRAME_BASE_REG_FP
	BaseSP BaseReg = 1 // SFRAME_BASE_REG_SP
)

func (b BaseReg) String() string {
	if b == BaseSP {
		return "sp"
	}
	return "fp"
}

// Info-byte bit fields [SFrame §3.1, §3.2, §4.2].
const (
	infoFRETypeMask = 0x0f
	infoPCTypeBit   = 0x10
	infoKeyBBit     = 0x20
	infoUnusedBit6  = 0x40
	infoSignalBit   = 0x80
	info2TypeMask   = 0x1f

	freBaseSPBit   = 0x01
	freCountShift  = 1
	freCountMask   = 0x0f
	freSizeShift   = 5
	freSizeMask    = 0x03
	freMangledBit  = 0x80
	flexRegPBit    = 0x1
	flexDerefBit   = 0x2
	flexRegShift   = 3
	flexUnusedBit2 = 0x4
)

// wordSizes maps the FRE size code to the data-word width; code 3 is invalid.
var wordSizes = [4]int{1, 2, 4, 0}
