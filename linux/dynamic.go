//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/hostfile"
)

// Dynamically linked programs. Load maps the program and, as Linux does,
// its program interpreter (PT_INTERP: ld.so), read from the sysroot, and
// starts at the interpreter's entry point with AT_BASE, AT_PHDR and
// AT_ENTRY describing both. ld.so then does the rest with ordinary system
// calls: it opens the shared libraries (openat, read, pread64, fstat), maps
// them (mmap of MAP_PRIVATE file mappings, MAP_FIXED segments, mprotect)
// and relocates them. The paths the guest names are resolved in the view
// of fsview.go: the sysroot (for "/", only what ld.so reads), read-only.
//
// Each ELF file mapped into the guest is an Object: the program, the
// interpreter, and each shared library, registered when ld.so maps the
// file's first page. Their symbols join Process.Symbols.

// DefaultSysroot returns the directory the shared libraries of a
// dynamically linked program for arch are read from when Config.Sysroot is
// empty: "/" for x86-64 (the host's own libraries, on an x86-64 host) and
// "/usr/aarch64-linux-gnu" for AArch64 (Debian's libc6-arm64-cross layout,
// which qemu-aarch64 -L also uses).
func DefaultSysroot(a *arch.Arch) string {
	if a == arch.ARM64 {
		return "/usr/aarch64-linux-gnu"
	}
	return "/"
}

// Objects returns the ELF files mapped so far: the program first, then
// the interpreter and the shared libraries in the order they were mapped.
func (p *Process) Objects() []*Object { return append([]*Object(nil), p.objects...) }

// ObjectAt returns the object whose segments contain addr, or nil.
func (p *Process) ObjectAt(addr uint64) *Object {
	for _, o := range p.objects {
		if o.Start <= addr && addr < o.End {
			return o
		}
	}
	return nil
}

// OnObject sets a function called for every object mapped from now on
// (as ld.so maps a library's first page, before its other segments). The
// objects mapped already are in Objects.
func (p *Process) OnObject(fn func(*Object)) { p.onObject = fn }

// SysrootDir checks that dir, a sysroot, is an existing directory, and
// says what it is otherwise. A static program needs none, but one given
// is still its view of the file system, so it must exist too.
func SysrootDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sysroot %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("sysroot %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("sysroot %s is not a directory", dir)
	}
	return nil
}

// Sysroot returns the directory guest paths are resolved in ("" for a
// static program run without Config.Sysroot: no files but
// Config.ReadAllow).
func (p *Process) Sysroot() string { return p.sysroot }

// addObject records o, adds its symbols and tells the OnObject function.
func (p *Process) addObject(o *Object) {
	p.objects = append(p.objects, o)
	if p.syms != nil {
		p.syms.AddObject(o.Name, o.ELF, o.Base, o.Start, o.End)
	}
	if p.onObject != nil {
		p.onObject(o)
	}
}

// loadInterp loads the program interpreter named by PT_INTERP from the
// sysroot, where Linux puts it (the top of the mmap area), and makes its
// entry point the first instruction.
func (p *Process) loadInterp(name string) error {
	if p.sysroot == "" {
		return fmt.Errorf("%s: needs the program interpreter %s: %w", p.Path, name, ErrNoSysroot)
	}
	p.view.show(name)
	vf, e := p.view.lookup(filepath.Clean(name), true)
	if e != 0 {
		return fmt.Errorf("%s: program interpreter %s is not in the sysroot %s (%v; see --sysroot): %w",
			p.Path, name, p.sysroot, syscall.Errno(e), ErrNoSysroot)
	}
	host := vf.host
	data, err := p.readInterp(vf)
	if err != nil {
		return fmt.Errorf("%s: program interpreter %s: %w", p.Path, name, err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: program interpreter %s: %w", p.Path, host, err)
	}
	if f.Machine != p.ELF.Machine || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: program interpreter %s is %v %v %v, not a 64-bit %v shared object", p.Path, host, f.Class, f.Type, f.Machine, p.ELF.Machine)
	}
	loads, align, err := loadSegments(host, f)
	if err != nil {
		return err
	}
	lo := pageDown(loads[0].Vaddr)
	last := loads[len(loads)-1]
	span := pageUp(last.Vaddr+last.Memsz) - lo
	free := p.vm.findFree(span+align, max(p.brkStart, mmapMin), p.abi.mmapTop)
	if free == 0 {
		return fmt.Errorf("%s: no room for the program interpreter (%d bytes)", p.Path, span)
	}
	start := (free + align) &^ (align - 1) // the highest aligned start in the free range
	base := start - lo
	if _, err := p.mapImage(host, loads, base, int64(len(data))); err != nil {
		return err
	}
	p.interpBase = base
	p.start = base + f.Entry
	p.addObject(&Object{Name: name, Path: host, Base: base, Start: start, End: start + span, ELF: f})
	return nil
}

// readInterp reads the interpreter's file whole (its ELF structures and
// symbols are kept while it runs), counting it against the memory cap: a
// huge or growing file cannot take the host's memory. Only a regular file
// is opened (hostfile): a FIFO would block, a device never end.
func (p *Process) readInterp(vf viewFile) ([]byte, error) {
	open := hostfile.OpenNoFollow // the view resolved the links itself
	if vf.follow {
		open = hostfile.Open
	}
	f, err := open(vf.host)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := uint64(fi.Size())
	if !p.vm.fitsMore(size) {
		return nil, fmt.Errorf("the file is %d bytes: %w", size, errMemCap)
	}
	// The file may grow while it is read: never more than its size.
	data, err := io.ReadAll(io.LimitReader(f, int64(size)))
	if err != nil {
		return nil, err
	}
	p.vm.held += uint64(len(data))
	return data, nil
}

// mappedFile registers the ELF file f (a snapshot opened by the guest) as
// an object when the guest maps its first page at start, as ld.so does
// when it loads a shared library.
func (p *Process) mappedFile(f *openFile, start uint64) {
	if len(f.data) < 4 || string(f.data[:4]) != elf.ELFMAG {
		return
	}
	for _, o := range p.objects {
		if o.Start == start && o.Path == f.host {
			return
		}
	}
	ef, err := elf.NewFile(bytes.NewReader(f.data))
	if err != nil || ef.Type != elf.ET_DYN || ef.Machine != p.ELF.Machine {
		return
	}
	var first, last *elf.Prog
	for _, ph := range ef.Progs {
		if ph.Type != elf.PT_LOAD || ph.Memsz == 0 {
			continue
		}
		if first == nil {
			first = ph
		}
		last = ph
	}
	if first == nil || pageDown(first.Off) != 0 {
		return
	}
	base := start - pageDown(first.Vaddr)
	end := pageUp(base + last.Vaddr + last.Memsz)
	p.addObject(&Object{Name: f.path, Path: f.host, Base: base, Start: start, End: end, ELF: ef})
}
