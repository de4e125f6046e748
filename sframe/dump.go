package sframe

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DumpStyle selects whose `objdump --sframe` text Dump reproduces. The
// formats differ between binutils releases [SFrame §7.5], and each
// section is best shown as the binutils that made it shows it.
type DumpStyle uint8

// Dump styles.
const (
	// DumpAuto picks by version: V1 → Dump240, V2 without the PCREL flag →
	// Dump244, V2 with it and V3 → DumpLatest.
	DumpAuto DumpStyle = iota
	// Dump240 is binutils 2.40 (SFrame V1): one-line flags, no fixed-offset
	// lines, AMD64 RA shown as "u".
	Dump240
	// Dump244 is binutils 2.41–2.44 (SFrame V2): one-line flags (only the
	// last flag name survives a copy bug), fixed-offset lines, RA "f".
	Dump244
	// DumpLatest is binutils 2.45 and later (tested against 2.47.50):
	// one flag per line, attr = "S"/"F", RA "U", "RA undefined", FLEX rows.
	DumpLatest
)

func (d DumpStyle) String() string {
	switch d {
	case DumpAuto:
		return "auto"
	case Dump240:
		return "2.40"
	case Dump244:
		return "2.44"
	case DumpLatest:
		return "latest"
	}
	return "DumpStyle(" + strconv.Itoa(int(d)) + ")"
}

// ParseDumpStyle parses "auto", "2.40", "2.44" or "latest".
func ParseDumpStyle(s string) (DumpStyle, error) {
	for _, d := range []DumpStyle{DumpAuto, Dump240, Dump244, DumpLatest} {
		if d.String() == s {
			return d, nil
		}
	}
	return DumpAuto, fmt.Errorf("unknown dump style %q (want auto, 2.40, 2.44 or latest)", s)
}

// styleFor resolves DumpAuto for a section.
func (s *Section) styleFor(d DumpStyle) DumpStyle {
	if d != DumpAuto {
		return d
	}
	switch {
	case s.Header.Version == Version1:
		return Dump240
	case s.Header.Version == Version2 && !s.Header.PCRel():
		return Dump244
	}
	return DumpLatest
}

// missingWord is what libsframe's accessors return for a data word that is
// not present (SFRAME_ERR); old dumpers print it unchecked.
const missingWord = -1

// Dump writes the section as `objdump --sframe` of the chosen binutils does,
// starting with "Contents of the SFrame section NAME:". Only the FREs that
// were decoded are shown; a section with decode errors is dumped as far as it
// could be read. The objdump file-format banner is the caller's.
func (s *Section) Dump(w io.Writer, name string, style DumpStyle) error {
	bw := bufio.NewWriter(w)
	d := dumper{w: bw, s: s, style: s.styleFor(style)}
	fmt.Fprintf(bw, "Contents of the SFrame section %s:", name)
	d.header()
	if d.style == Dump244 && s.Header.Version != Version2 {
		// 2.41–2.44 decline to show other versions' functions.
		fmt.Fprintf(bw, "\n No further information can be displayed.  %s", "SFrame version not supported\n")
	} else {
		fmt.Fprintf(bw, "\n  %s :\n", "Function Index")
		for i := range s.FDEs {
			d.function(i)
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

type dumper struct {
	w     *bufio.Writer
	s     *Section
	style DumpStyle
}

func (d *dumper) header() {
	h := &d.s.Header
	w := d.w
	fmt.Fprintf(w, "\n  %s :\n\n", "Header")
	fmt.Fprintf(w, "    Version: %s\n", h.Version)
	switch d.style {
	case Dump240, Dump244:
		// strcpy where strcat was meant: the frame-pointer flag's name
		// replaces the sorted flag's; other bits are not shown.
		str := ""
		if h.Flags&FlagFDESorted != 0 {
			str = "SFRAME_F_FDE_SORTED"
		}
		if h.Flags&FlagFramePointer != 0 {
			str = "SFRAME_F_FRAME_POINTER"
		}
		if h.Flags == 0 {
			str = "NONE"
		}
		fmt.Fprintf(w, "    Flags: %s\n", str)
	default:
		d.latestFlags()
	}
	if d.style != Dump240 {
		if h.CFAFixedFPOffset != 0 {
			fmt.Fprintf(w, "    CFA fixed FP offset: %d\n", h.CFAFixedFPOffset)
		}
		if h.CFAFixedRAOffset != 0 {
			fmt.Fprintf(w, "    CFA fixed RA offset: %d\n", h.CFAFixedRAOffset)
		}
	}
	// The FDE count is the number of FDEs read (libsframe's
	// sframe_decoder_get_num_fidx), printed with %d.
	nfdes := int32(h.NumFDEs)
	if int64(len(d.s.FDEs)) != int64(h.NumFDEs) {
		nfdes = int32(len(d.s.FDEs))
	}
	fmt.Fprintf(w, "    Num FDEs: %d\n", nfdes)
	fmt.Fprintf(w, "    Num FREs: %d\n", int32(h.NumFREs))
}

func (d *dumper) latestFlags() {
	h := &d.s.Header
	flags := h.Flags
	if flags == 0 {
		fmt.Fprintf(d.w, "%11sNONE\n", "Flags: ")
		return
	}
	prefix := "Flags: "
	print := func(f Flags, name string) {
		if flags&f == 0 {
			return
		}
		flags &^= f
		comma := ""
		if flags != 0 {
			comma = ","
		}
		fmt.Fprintf(d.w, "%11s%s%s\n", prefix, name, comma)
		prefix = " "
	}
	print(FlagFDESorted, "SFRAME_F_FDE_SORTED")
	if h.Version == Version2 {
		print(FlagFramePointer, "SFRAME_F_FRAME_POINTER")
	}
	print(FlagFDEFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL")
	if flags != 0 {
		fmt.Fprintf(d.w, "%11s%d\n", prefix, flags)
	}
}

// dumpPC returns the function start as the dumper computes it: the raw
// field plus the section address, plus the field's offset without fdeoff
// when PCREL is set and the style knows the flag [SFrame §7.2].
func (d *dumper) dumpPC(i int) uint64 {
	s := d.s
	f := &s.FDEs[i]
	pc := s.Addr + uint64(f.StartField)
	if d.style == DumpLatest && s.Header.PCRel() {
		pc += uint64(s.Header.Size() + int64(i)*int64(s.Header.Version.fdeSize()))
	}
	return pc
}

func (d *dumper) function(i int) {
	s := d.s
	f := &s.FDEs[i]
	w := d.w
	pc := d.dumpPC(i)
	fmt.Fprintf(w, "\n    func idx [%d]: pc = 0x%x, size = %d bytes", i, pc, int32(f.Size))
	flex := false
	if d.style == DumpLatest {
		attrs := ""
		if f.Signal() {
			attrs += "S"
		}
		if s.Header.Version == Version3 && f.Type() == FDETypeFlex {
			attrs += "F"
			flex = true
		}
		if attrs != "" {
			fmt.Fprintf(w, ", attr = \"%s\"", attrs)
		}
	}
	if s.Header.ABI.AArch64() && f.KeyB() {
		w.WriteString(", pauth = B key")
	}
	mask := f.PCType() == PCMask
	marker := "   "
	if mask {
		marker = "[m]"
	}
	fmt.Fprintf(w, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", marker, "CFA", "FP", "RA")
	for j := range f.FREs {
		w.WriteString("\n")
		d.row(&f.FREs[j], pc, mask, flex)
	}
}

// row prints one FRE line without its leading newline.
func (d *dumper) row(fre *FRE, pc uint64, mask, flex bool) {
	start := uint64(fre.Start)
	if !mask {
		start += pc
	}
	fmt.Fprintf(d.w, "    %016x", start)
	switch {
	case d.style == DumpLatest && fre.RAUndefined():
		d.w.WriteString("  RA undefined")
	case flex:
		d.flexRow(fre)
	default:
		d.defaultRow(fre)
	}
}

// FormatRow returns FRE j of FDE i as objdump --sframe prints its line,
// trailing spaces removed, in the section's own style (DumpAuto).
func (s *Section) FormatRow(i, j int) string {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	d := dumper{w: bw, s: s, style: s.styleFor(DumpAuto)}
	f := &s.FDEs[i]
	d.row(&f.FREs[j], d.dumpPC(i), f.PCType() == PCMask, d.style == DumpLatest && s.Header.Version == Version3 && f.Type() == FDETypeFlex)
	bw.Flush()
	return strings.TrimRight(b.String(), " ")
}

// word returns data word k of an FRE, or ok=false when it is absent or the
// FRE is one libsframe's sanity check refuses.
func (d *dumper) word(fre *FRE, k int) (int32, bool) {
	if k >= fre.Count() || k >= len(fre.Words) || (d.style == DumpLatest && fre.Count() > MaxWords) {
		return missingWord, false
	}
	return fre.Words[k], true
}

func (d *dumper) defaultRow(fre *FRE) {
	h := &d.s.Header
	w := d.w
	s390 := h.ABI.S390X()
	cfa, _ := d.word(fre, 0)
	if s390 && cfa != missingWord {
		cfa = cfa*8 + s390xCFABias
	}
	fmt.Fprintf(w, "  %-10s", fre.BaseReg().String()+"+"+strconv.Itoa(int(cfa)))

	// FP: fixed offset from the header, else word 1 (fixed RA) or word 2.
	var fpOff int32
	fpOK := true
	if h.CFAFixedFPOffset != 0 {
		fpOff = int32(h.CFAFixedFPOffset)
	} else if h.CFAFixedRAOffset != 0 {
		fpOff, fpOK = d.word(fre, 1)
	} else {
		fpOff, fpOK = d.word(fre, 2)
	}
	regHeld := func(v int32) bool { return s390 && h.Version == Version2 && d.style == DumpLatest && v&1 != 0 }
	fp := "u"
	if fpOK {
		if regHeld(fpOff) {
			fp = "r" + strconv.Itoa(int(fpOff>>1))
		} else {
			fp = "c" + fmtSigned(fpOff)
		}
	}
	fmt.Fprintf(w, "%-10s", fp)

	// RA: fixed offset from the header, else word 1.
	var ra string
	raOff, raOK := int32(h.CFAFixedRAOffset), true
	if h.CFAFixedRAOffset == 0 {
		raOff, raOK = d.word(fre, 1)
	}
	switch {
	case h.CFAFixedRAOffset != 0 && d.style == Dump240:
		ra = "u"
	case h.CFAFixedRAOffset != 0:
		ra = "f"
	case raOK && raOff == 0 && d.style == DumpLatest:
		ra = "U"
	case raOK && regHeld(raOff):
		ra = "r" + strconv.Itoa(int(raOff>>1))
	case raOK:
		ra = "c" + fmtSigned(raOff)
	case d.style == Dump240:
		// 2.40 leaves the FP column's text in its buffer.
		ra = fp
	default:
		ra = "u"
	}
	d.raCell(ra, fre)
}

func (d *dumper) raCell(ra string, fre *FRE) {
	if fre.MangledRA() {
		ra += "[s]"
	} else {
		ra += "   "
	}
	fmt.Fprintf(d.w, "%-13s", ra)
}

// flexRow prints a V3 FLEX row [SFrame §7.4]. Like libsframe, a control word
// without reg_p is shown as the CFA ("c"), with its deref bit ignored.
func (d *dumper) flexRow(fre *FRE) {
	h := &d.s.Header
	w := d.w
	disp := func(ctrl uint32, off int32) string {
		name := "c"
		deref := false
		if ctrl&flexRegPBit != 0 {
			name = flexRegName(h.ABI, ctrl>>flexRegShift)
			deref = ctrl&flexDerefBit != 0
		}
		t := name + fmtSigned(off)
		if deref {
			t = "(" + t + ")"
		}
		return t
	}
	uword := func(k int) (uint32, bool) {
		if _, ok := d.word(fre, k); !ok {
			return 0, false
		}
		return fre.UWord(k), true
	}
	cfaCtrl, _ := uword(0)
	cfaOff, _ := d.word(fre, 1)
	if h.ABI.S390X() && cfaOff != missingWord {
		cfaOff = cfaOff*8 + s390xCFABias
	}
	fmt.Fprintf(w, "  %-10s", disp(cfaCtrl, cfaOff))

	raCtrl, raOK := uword(2)
	raOff, _ := d.word(fre, 3)
	fpIdx := 4
	if raOK && raCtrl == 0 {
		fpIdx = 3
	}
	fpCtrl, fpCtrlOK := uword(fpIdx)
	fpOff, fpOffOK := d.word(fre, fpIdx+1)
	fp := "u"
	if fpCtrlOK && fpOffOK {
		fp = disp(fpCtrl, fpOff)
	}
	fmt.Fprintf(w, "%-10s", fp)

	var ra string
	switch {
	case !raOK && h.CFAFixedRAOffset != 0:
		ra = "f"
	case !raOK:
		ra = "u"
	case raCtrl == 0:
		ra = "U"
	default:
		ra = disp(raCtrl, raOff)
	}
	d.raCell(ra, fre)
}

// flexRegName names a DWARF register as libsframe's dumper does: "sp" and
// "fp" for the ABI's two, else "r<N>".
func flexRegName(abi ABI, n uint32) string {
	if sp, fp, _, ok := abi.Regs(); ok {
		switch Reg(n) {
		case sp:
			return "sp"
		case fp:
			return "fp"
		}
	}
	return "r" + strconv.FormatUint(uint64(n), 10)
}

// DumpFile writes what `objdump --sframe NAME` prints for an ELF file: the
// "NAME:     file format FMT" banner, then the section as Dump writes it.
//
// Where objdump cannot decode the section it prints only the banner and
// reports the failure on stderr: DumpFile then returns a *DumpFailure
// with objdump's message. That is so for a File without a Section (no
// SFrame data: ld --discard-sframe) and for V1 in DumpLatest style, which
// newest libsframe no longer reads. An empty section of a relocatable
// object gets objdump 2.47's "Can't get contents" line instead.
//
// In a relocatable object, DumpLatest shows the start fields with their
// relocations applied, as objdump 2.45 and later show every object, while
// the older styles show them as stored, as older objdump did.
func DumpFile(w io.Writer, name string, f *File, style DumpStyle) error {
	if _, err := fmt.Fprintf(w, "\n%s:     file format %s\n\n", name, FormatName(f.ELF)); err != nil {
		return err
	}
	s := f.Section
	switch {
	case s == nil && f.Raw != nil && f.Raw.Relocatable && len(f.Raw.Data) == 0:
		// objdump reads a relocatable object's section through BFD's
		// relocating reader, which refuses an empty one.
		_, err := fmt.Fprintf(w, "\nCan't get contents for section ''.\n")
		return err
	case s == nil && f.Raw != nil && len(f.Raw.Data) == 0:
		return &DumpFailure{Msg: "Corrupt SFrame."}
	case s == nil:
		return &DumpFailure{Msg: "Buffer does not contain SFrame data."}
	}
	resolved := s.styleFor(style)
	if resolved == DumpLatest && s.Header.Version == Version1 {
		return &DumpFailure{Msg: "Buffer does not contain SFrame data."}
	}
	if resolved == DumpLatest && f.Raw != nil && f.Raw.Relocated != nil && !s.Header.PCRel() {
		// The relocated fields read section-relative, as objdump does.
		rs, _ := Decode(f.Raw.Relocated, f.Raw.Addr)
		if rs != nil {
			s = rs
		}
	}
	return s.Dump(w, SectionName, resolved)
}

// A DumpFailure is objdump's report of a section libsframe cannot decode
// ("SFrame decode failure: MSG", on stderr; objdump still exits 0).
type DumpFailure struct{ Msg string }

func (e *DumpFailure) Error() string { return "SFrame decode failure: " + e.Msg }
