package sframe

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sframesim/sframesim/internal/hostfile"
)

// ELF constants not in debug/elf.
const (
	// SHT_GNU_SFRAME is the section type binutils 2.45 and later give
	// .sframe; older ones use SHT_PROGBITS [SFrame §1.1].
	SHT_GNU_SFRAME elf.SectionType = 0x6ffffff4
	// PT_GNU_SFRAME is the segment linked files add for .sframe.
	PT_GNU_SFRAME elf.ProgType = 0x6474e554
)

// SectionName is the name of the SFrame section.
const SectionName = ".sframe"

// maxSectionSize bounds how much of a section or segment is read: far more
// than any real .sframe, far less than a hostile size field could ask for.
const maxSectionSize = 1 << 30

// RawSection is the .sframe bytes of an ELF file with where they came from.
type RawSection struct {
	Data []byte
	Addr uint64
	// Offset is the file offset of the section's first byte.
	Offset int64
	// FromSegment is set when the data came from PT_GNU_SFRAME because the
	// file has no section headers naming .sframe.
	FromSegment bool
	// Relocatable is set for a section of a relocatable object (ET_REL).
	// Relocs are then its start field relocations, and Relocated is the
	// section with all of them applied, as objdump 2.45 and later dump
	// every relocatable object (nil when it has no relocations). Data has
	// them applied only where the start fields are field-relative (V3, V2
	// with SFRAME_F_FDE_FUNC_START_PCREL): a section-relative reading of a
	// relocated field would be meaningless.
	Relocatable bool
	Relocs      []StartReloc
	Relocated   []byte
	// Class is the ELF class and Format the BFD target name objdump
	// prints for the file (FormatName).
	Format string
}

// FindELF returns the raw .sframe of an ELF file: the section named .sframe
// (of type SHT_PROGBITS or SHT_GNU_SFRAME), or failing that the PT_GNU_SFRAME
// segment. It returns ErrNoSection when there is neither. In a relocatable
// object with field-relative starts, the start fields' relocations are
// applied, as newest objdump does (see RawSection).
func FindELF(f *elf.File) (*RawSection, error) {
	if s := f.Section(SectionName); s != nil {
		if s.Type == elf.SHT_NOBITS {
			return nil, fmt.Errorf("%s section has type SHT_NOBITS: no data in the file: %w", SectionName, ErrNoSection)
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, fmt.Errorf("%s section is compressed, which SFrame sections never are", SectionName)
		}
		if s.FileSize > maxSectionSize {
			return nil, fmt.Errorf("%s section size %#x is implausibly large", SectionName, s.FileSize)
		}
		data, err := readAt(s.Open(), s.FileSize)
		if err != nil {
			return nil, fmt.Errorf("reading %s section at file offset %#x: %w", SectionName, s.Offset, err)
		}
		raw := &RawSection{Data: data, Addr: s.Addr, Offset: int64(s.Offset), Relocatable: f.Type == elf.ET_REL, Format: FormatName(f)}
		if raw.Relocs, err = startRelocs(f, s, len(data)); err != nil {
			return nil, err
		}
		if raw.Relocs != nil {
			raw.Relocated = applyStartRelocs(f, data, s.Addr, raw.Relocs)
			if len(data) >= HeaderSize && Version(data[2]) >= Version2 && Flags(data[3])&FlagFDEFuncStartPCRel != 0 {
				raw.Data = raw.Relocated
			}
		}
		return raw, nil
	}
	for _, p := range f.Progs {
		if p.Type != PT_GNU_SFRAME {
			continue
		}
		if p.Filesz > maxSectionSize {
			return nil, fmt.Errorf("PT_GNU_SFRAME segment size %#x is implausibly large", p.Filesz)
		}
		data, err := readAt(p.Open(), p.Filesz)
		if err != nil {
			return nil, fmt.Errorf("reading PT_GNU_SFRAME segment at file offset %#x: %w", p.Off, err)
		}
		return &RawSection{Data: data, Addr: p.Vaddr, Offset: int64(p.Off), FromSegment: true, Format: FormatName(f)}, nil
	}
	return nil, ErrNoSection
}

// readAt reads exactly n bytes from r. It grows its buffer as data arrives
// instead of trusting n up front, so a corrupt size field costs no more
// memory than the file really has.
func readAt(r io.Reader, n uint64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != n {
		return nil, fmt.Errorf("%d bytes, but the file ends after %d: %w", n, len(data), io.ErrUnexpectedEOF)
	}
	return data, nil
}

// FromELF finds and decodes the .sframe data of an ELF file. The length is
// taken from the SFrame header, not from PT_GNU_SFRAME's size, which is often
// larger [SFrame §1.1]. As with Decode, a non-nil Section may come with an
// error describing what could not be read.
func FromELF(f *elf.File) (*Section, error) {
	raw, err := FindELF(f)
	if err != nil {
		return nil, err
	}
	s, err := Decode(raw.Data, raw.Addr)
	if err != nil {
		err = fmt.Errorf("%s at file offset %#x: %w", SectionName, raw.Offset, err)
	}
	return s, err
}

// A File is an ELF file opened for its SFrame data.
type File struct {
	ELF     *elf.File
	Section *Section
	Raw     *RawSection
	closer  io.Closer
}

// ErrNotELF is returned by Open for a file that is not ELF.
var ErrNotELF = errors.New("not an ELF file")

// Open opens an ELF file and decodes its SFrame section. Errors wrap
// ErrNotELF, ErrNoSection, or a decode error (with the File still returned
// when the section could be partly decoded); a path that is not a regular
// file (a FIFO, a device) is refused without being read.
func Open(path string) (*File, error) {
	osf, err := hostfile.Open(path) // a FIFO or a device would block or never end
	if err != nil {
		return nil, err
	}
	f, err := NewFile(osf)
	if f == nil {
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = osf
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return f, err
}

// NewFile reads the SFrame section of the ELF file in r, as Open does.
func NewFile(r io.ReaderAt) (*File, error) {
	ef, err := elf.NewFile(r)
	if err != nil {
		var magic [4]byte
		if _, rerr := r.ReadAt(magic[:], 0); rerr != nil || string(magic[:]) != elf.ELFMAG {
			return nil, ErrNotELF
		}
		if e := ELFError(r, err); e != err {
			return nil, e
		}
		return nil, fmt.Errorf("malformed ELF: %w", err)
	}
	f := &File{ELF: ef}
	f.Raw, err = FindELF(ef)
	if err != nil {
		return nil, err
	}
	if noData(f.Raw.Data) {
		// ld --discard-sframe's output: a File without a Section.
		return f, fmt.Errorf("%s at file offset %#x: %w", SectionName, f.Raw.Offset, &NoDataError{Size: len(f.Raw.Data)})
	}
	f.Section, err = Decode(f.Raw.Data, f.Raw.Addr)
	if err != nil {
		err = fmt.Errorf("%s at file offset %#x: %w", SectionName, f.Raw.Offset, err)
		if f.Section == nil {
			return nil, err
		}
	}
	if f.Raw.Relocatable {
		locs, stray := locations(ef, f.Section, f.Raw.Relocs)
		f.Section.SetLocations(locs)
		f.Section.strayRelocs = stray
	}
	return f, err
}

// noData reports whether a section holds no SFrame data at all: it is
// empty, or all zero bytes.
func noData(data []byte) bool {
	for _, b := range data {
		if b != 0 {
			return false
		}
	}
	return true
}

// NoDataError is the error for a .sframe section that holds no SFrame
// data: 0 bytes, as ld --discard-sframe (2.46 and later) leaves it in
// linked files and x86-64 ld -r output, or Size zero bytes, as AArch64
// ld -r --discard-sframe leaves it. It is ld's intended output, not a
// malformed section. It matches ErrNoData.
type NoDataError struct{ Size int }

// ErrNoData matches a NoDataError.
var ErrNoData = errors.New("sframe: no SFrame data")

func (e *NoDataError) Error() string {
	if e.Size == 0 {
		return "no SFrame data: the section is empty (ld --discard-sframe)"
	}
	return fmt.Sprintf("no SFrame data: the section's %d bytes are all zero (ld -r --discard-sframe)", e.Size)
}

// Is makes errors.Is(err, ErrNoData) true.
func (e *NoDataError) Is(target error) bool { return target == ErrNoData }

// locations gives each FDE of a relocatable object's section the
// location its start field's relocation names, and returns the section
// offsets of the relocations that are on no FDE's start field.
func locations(ef *elf.File, s *Section, relocs []StartReloc) ([]Location, []int64) {
	byOff := make(map[int64]StartReloc, len(relocs))
	for _, r := range relocs {
		byOff[r.Off] = r
	}
	var stray []int64
	starts := make(map[int64]bool, len(s.FDEs))
	for i := range s.FDEs {
		starts[s.FDEs[i].Off] = true
	}
	for _, r := range relocs {
		if !starts[r.Off] {
			stray = append(stray, r.Off)
		}
	}
	locs := make([]Location, len(s.FDEs))
	for i := range s.FDEs {
		r, ok := byOff[s.FDEs[i].Off]
		switch {
		case !ok:
		case r.None:
			locs[i] = Location{Known: true, Discarded: true}
		default:
			l := Location{Known: true, Section: r.Section, Name: r.SectionName, Offset: r.Target}
			if r.Section > 0 {
				l.Size = ef.Sections[r.Section].Size
				l.Offset -= ef.Sections[r.Section].Addr
			}
			locs[i] = l
		}
	}
	return locs, stray
}

// Close closes the underlying file.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// ValidateOptions returns validation options derived from the ELF file: its
// byte order and its executable address ranges.
func (f *File) ValidateOptions() ValidateOptions {
	return ELFValidateOptions(f.ELF)
}

// ELFValidateOptions returns validation options for a section of ef: the
// ELF byte order, and the executable PT_LOAD ranges (or SHF_EXECINSTR
// sections when there are no program headers).
func ELFValidateOptions(ef *elf.File) ValidateOptions {
	o := ValidateOptions{ByteOrder: ef.ByteOrder}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			o.Text = append(o.Text, AddrRange{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	if len(o.Text) == 0 {
		for _, s := range ef.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 {
				o.Text = append(o.Text, AddrRange{s.Addr, s.Addr + s.Size})
			}
		}
	}
	o.CheckText = len(o.Text) > 0 && ef.Type != elf.ET_REL
	return o
}

// FormatName returns the BFD target name objdump prints for the file
// ("elf64-x86-64", "elf64-littleaarch64", ...), or "" when unknown.
func FormatName(ef *elf.File) string {
	big := ef.Data == elf.ELFDATA2MSB
	switch ef.Machine {
	case elf.EM_X86_64:
		if ef.Class == elf.ELFCLASS32 {
			return "elf32-x86-64"
		}
		return "elf64-x86-64"
	case elf.EM_AARCH64:
		if ef.Class == elf.ELFCLASS32 {
			if big {
				return "elf32-bigaarch64"
			}
			return "elf32-littleaarch64"
		}
		if big {
			return "elf64-bigaarch64"
		}
		return "elf64-littleaarch64"
	case elf.EM_S390:
		if ef.Class == elf.ELFCLASS32 {
			return "elf32-s390"
		}
		return "elf64-s390"
	case elf.EM_386:
		return "elf32-i386"
	}
	return ""
}

// ELFError explains an error debug/elf's NewFile returned for the file in
// r. For a file that ends too early, where debug/elf says only "EOF", it
// says which part runs past the end and where, as in "truncated ELF:
// section header table at offset 0x3a40 (29 entries of 64 bytes) runs
// past the end of the file (size 0x1000)"; the error still wraps err. For
// a file without the ELF magic number it wraps ErrNotELF. Any other error
// is returned as it is.
func ELFError(r io.ReaderAt, err error) error {
	var magic [4]byte
	switch n, rerr := r.ReadAt(magic[:], 0); {
	case rerr != nil && n < len(magic):
		return fmt.Errorf("%w (%d bytes)", ErrNotELF, n)
	case string(magic[:]) != elf.ELFMAG:
		return fmt.Errorf("%w (it begins %q)", ErrNotELF, magic[:])
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	t := truncation{r: r, size: -1}
	switch v := r.(type) {
	case interface{ Size() int64 }:
		t.size = v.Size()
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			t.size = fi.Size()
		}
	}
	return &truncatedError{msg: t.explain(), err: err}
}

// truncatedError is a file that ends too early.
type truncatedError struct {
	msg string
	err error // debug/elf's
}

func (e *truncatedError) Error() string { return "truncated ELF: " + e.msg }
func (e *truncatedError) Unwrap() error { return e.err }

// truncation finds the first part of an ELF file's headers that runs past
// its end, in the order debug/elf reads them.
type truncation struct {
	r    io.ReaderAt
	size int64 // -1: unknown
}

// fits reports whether the n bytes at off are in the file.
func (t *truncation) fits(off, n uint64) bool {
	if n == 0 {
		return true
	}
	end := off + n
	if end < off || end > 1<<63-1 {
		return false
	}
	if t.size >= 0 {
		return end <= uint64(t.size)
	}
	var b [1]byte
	_, err := t.r.ReadAt(b[:], int64(end-1))
	return err == nil
}

// past says that what runs past the end of the file.
func (t *truncation) past(what string) string {
	if t.size < 0 {
		return what + " runs past the end of the file"
	}
	return fmt.Sprintf("%s runs past the end of the file (size %#x)", what, t.size)
}

func (t *truncation) explain() string {
	var ident [elf.EI_NIDENT]byte
	if !t.fits(0, elf.EI_NIDENT) {
		return t.past(fmt.Sprintf("the %d-byte ELF identification", elf.EI_NIDENT))
	}
	t.r.ReadAt(ident[:], 0)
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(ident[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	// The header fields debug/elf reads, and the sizes it wants.
	var phoff, shoff uint64
	var phentsize, phnum, shentsize, shnum, shstrndx uint64
	var ehsize, wantSh uint64
	is64 := elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS64
	if is64 {
		ehsize, wantSh = 64, 64
	} else {
		ehsize, wantSh = 52, 40
	}
	if !t.fits(0, ehsize) {
		return t.past(fmt.Sprintf("the %d-byte ELF header", ehsize))
	}
	h := make([]byte, ehsize)
	t.r.ReadAt(h, 0)
	if is64 {
		phoff, shoff = bo.Uint64(h[32:]), bo.Uint64(h[40:])
		h = h[52:]
	} else {
		phoff, shoff = uint64(bo.Uint32(h[28:])), uint64(bo.Uint32(h[32:]))
		h = h[40:]
	}
	phentsize, phnum = uint64(bo.Uint16(h[2:])), uint64(bo.Uint16(h[4:]))
	shentsize, shnum, shstrndx = uint64(bo.Uint16(h[6:])), uint64(bo.Uint16(h[8:])), uint64(bo.Uint16(h[10:]))
	table := func(name string, off, n, size uint64) string {
		return t.past(fmt.Sprintf("%s at offset %#x (%d entries of %d bytes)", name, off, n, size))
	}
	if !t.fits(phoff, phnum*phentsize) {
		return table("program header table", phoff, phnum, phentsize)
	}
	// With 0xff00 sections or more, section header 0 holds the count.
	if shoff > 0 && shnum == 0 {
		if !t.fits(shoff, wantSh) {
			return t.past(fmt.Sprintf("section header 0 (holding the number of sections) at offset %#x", shoff))
		}
		s := make([]byte, wantSh)
		t.r.ReadAt(s, int64(shoff))
		link := uint64(0)
		if is64 {
			shnum, link = bo.Uint64(s[32:]), uint64(bo.Uint32(s[40:]))
		} else {
			shnum, link = uint64(bo.Uint32(s[20:])), uint64(bo.Uint32(s[24:]))
		}
		if shstrndx == uint64(elf.SHN_XINDEX) {
			shstrndx = link
		}
	}
	if shnum > 0 && shnum*shentsize/shnum == shentsize && !t.fits(shoff, shnum*shentsize) {
		return table("section header table", shoff, shnum, shentsize)
	}
	// Each section: the compression header of a compressed one, and the
	// section name string table.
	s := make([]byte, wantSh)
	for i := uint64(0); i < shnum && shentsize >= wantSh; i++ {
		if _, err := t.r.ReadAt(s, int64(shoff+i*shentsize)); err != nil {
			break
		}
		var flags, off, size, chdr uint64
		if is64 {
			flags, off, size, chdr = bo.Uint64(s[8:]), bo.Uint64(s[24:]), bo.Uint64(s[32:]), 24
		} else {
			flags, off, size, chdr = uint64(bo.Uint32(s[8:])), uint64(bo.Uint32(s[16:])), uint64(bo.Uint32(s[20:])), 12
		}
		typ := elf.SectionType(bo.Uint32(s[4:]))
		if typ != elf.SHT_NOBITS && elf.SectionFlag(flags)&elf.SHF_COMPRESSED != 0 && !t.fits(off, min(chdr, size)) {
			return t.past(fmt.Sprintf("the compression header of section %d at offset %#x", i, off))
		}
		if i == shstrndx && !t.fits(off, size) {
			return t.past(fmt.Sprintf("the section name string table (section %d, %d bytes at offset %#x)", i, size, off))
		}
	}
	if t.size >= 0 {
		return fmt.Sprintf("the headers end early (file size %#x)", t.size)
	}
	return "the headers end early"
}
