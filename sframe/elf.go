package sframe

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

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
}

// FindELF returns the raw .sframe of an ELF file: the section named .sframe
// (of type SHT_PROGBITS or SHT_GNU_SFRAME), or failing that the PT_GNU_SFRAME
// segment. It returns ErrNoSection when there is neither. In a relocatable
// object with field-relative starts, the start fields' relocations are
// applied, as newest objdump does.
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
		if err := relocate(f, s, data); err != nil {
			return nil, err
		}
		return &RawSection{Data: data, Addr: s.Addr, Offset: int64(s.Offset)}, nil
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
		return &RawSection{Data: data, Addr: p.Vaddr, Offset: int64(p.Off), FromSegment: true}, nil
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
		return nil, fmt.Errorf("malformed ELF: %w", err)
	}
	f := &File{ELF: ef}
	f.Raw, err = FindELF(ef)
	if err != nil {
		return nil, err
	}
	f.Section, err = Decode(f.Raw.Data, f.Raw.Addr)
	if err != nil {
		err = fmt.Errorf("%s at file offset %#x: %w", SectionName, f.Raw.Offset, err)
		if f.Section == nil {
			return nil, err
		}
	}
	return f, err
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
