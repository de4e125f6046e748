//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/sframesim/sframesim/emu"
)

// This file is the ELF loader of the Linux user-mode layer: the guest's
// memory map (addrSpace), the PT_LOAD segments, and the initial stack with argv,
// envp and the auxiliary vector as Linux's binfmt_elf builds it.

// Auxiliary vector tags (include/uapi/linux/auxvec.h).
const (
	AT_NULL         = 0
	AT_PHDR         = 3
	AT_PHENT        = 4
	AT_PHNUM        = 5
	AT_PAGESZ       = 6
	AT_BASE         = 7
	AT_FLAGS        = 8
	AT_ENTRY        = 9
	AT_UID          = 11
	AT_EUID         = 12
	AT_GID          = 13
	AT_EGID         = 14
	AT_PLATFORM     = 15
	AT_HWCAP        = 16
	AT_CLKTCK       = 17
	AT_SECURE       = 23
	AT_RANDOM       = 25
	AT_HWCAP2       = 26
	AT_EXECFN       = 31
	AT_SYSINFO_EHDR = 33
	AT_MINSIGSTKSZ  = 51
)

// Guest identity, as the auxiliary vector and the id system calls report it.
const (
	guestPID = 4242
	guestUID = 1000
	guestGID = 1000
)

// stackSize is the size of the main thread's stack: RLIMIT_STACK's usual
// 8 MiB, mapped at once (host pages are only allocated when touched).
const stackSize = 8 << 20

// pageUp rounds v up to a page boundary.
func pageUp(v uint64) uint64 { return (v + emu.PageSize - 1) &^ (emu.PageSize - 1) }

// pageDown rounds v down to a page boundary.
func pageDown(v uint64) uint64 { return v &^ (emu.PageSize - 1) }

// errMemCap is returned by addrSpace when a mapping would exceed the memory cap.
var errMemCap = errors.New("guest memory cap exceeded")

// vma is one guest-visible mapping [start, end).
type vma struct {
	start, end uint64
	prot       emu.Prot
	name       string
	// file backs a private file mapping, from file offset off at start
	// (madvise(MADV_DONTNEED) reads it again); nil for anonymous memory.
	file *sharedFile
	off  uint64
	// node is the overlay file of a shared mapping (MAP_SHARED of a
	// descriptor open for reading and writing), from file offset off at
	// start: kept coherent with the file at every system call (shared.go).
	node *oNode
	// shared: shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS, /dev/zero),
	// whose pages MADV_DONTNEED does not drop.
	shared bool
	// loaded: a segment of a program or its interpreter the loader put in
	// memory (PT_LOAD[i]), from file offset off at start, as
	// /proc/self/maps shows it.
	loaded bool
}

// slice returns the part [start, end) of v, with its file offset.
func (v vma) slice(start, end uint64) vma {
	c := v
	c.start, c.end = start, end
	if c.file != nil || c.node != nil || c.loaded {
		c.off += start - v.start
	}
	return c
}

// addrSpace keeps the guest's memory map. Unicorn regions are never unmapped:
// the binding has no Unmap, and munmap'd pages may well be mapped again.
// So "backed" lists what is mapped in the engine (a superset of the
// guest's mappings), and pages the guest unmapped stay backed but are
// zeroed and made inaccessible (PROT_NONE) until a later mmap reuses them.
// The memory cap counts the guest's accessible mappings and the host
// memory held for the guest besides (file contents). A PROT_NONE mapping
// (address space reserved, as Go's runtime reserves a gigabyte for its
// heap, or glibc 64 MiB per malloc arena) counts only once made
// accessible: the guest cannot touch it before, and untouched host pages
// take no memory. The engine's limit on regions bounds the reservations.
type addrSpace struct {
	e      *emu.Engine
	vmas   []vma       // sorted, non-overlapping
	backed [][2]uint64 // sorted, non-overlapping [start, end) mapped in the engine
	total  uint64      // bytes in vmas whose protection is not PROT_NONE
	held   uint64      // host bytes held for the guest outside its mappings
	max    uint64      // cap on total+held (used)
	// peak is the most used has been, as last noted before it went down
	// (notePeak; maxUsed).
	// cutFiles are the files of mappings removed since the last look
	// (Process.releaseCut).
	cutFiles []*sharedFile
	peak     uint64
}

// covered reports whether every byte of [start, end) is in a VMA.
func (m *addrSpace) covered(start, end uint64) bool { return m.allows(start, end, 0) }

// allows reports whether every byte of [start, end) is in a VMA with at
// least the permissions need.
func (m *addrSpace) allows(start, end uint64, need emu.Prot) bool {
	at := start
	for _, v := range m.vmas {
		if v.end <= at {
			continue
		}
		if v.start > at || v.prot&need != need {
			return false
		}
		at = v.end
		if at >= end {
			return true
		}
	}
	return at >= end
}

// free reports whether no VMA intersects [start, end).
func (m *addrSpace) free(start, end uint64) bool {
	for _, v := range m.vmas {
		if v.start < end && start < v.end {
			return false
		}
	}
	return true
}

// overlap returns how many bytes of [start, end) are in accessible VMAs
// (those total counts).
func (m *addrSpace) overlap(start, end uint64) uint64 {
	var n uint64
	for _, v := range m.vmas {
		s, e := max(v.start, start), min(v.end, end)
		if s < e && v.prot != 0 {
			n += e - s
		}
	}
	return n
}

// used returns what counts against the cap: the accessible mappings and
// the host memory held besides.
func (m *addrSpace) used() uint64 { return m.total + m.held }

// notePeak is called before used goes down: maxUsed is then the most it
// has ever been.
func (m *addrSpace) notePeak() { m.peak = max(m.peak, m.used()) }

// maxUsed returns the most memory the guest has held at once
// (getrusage's ru_maxrss).
func (m *addrSpace) maxUsed() uint64 { return max(m.peak, m.used()) }

// fitsMore reports whether n more bytes keep the cap.
func (m *addrSpace) fitsMore(n uint64) bool { return m.max == 0 || m.used()+n <= m.max }

// carve removes [start, end) from the VMAs (splitting those that straddle
// its ends) and returns the removed pieces.
func (m *addrSpace) carve(start, end uint64) []vma {
	m.notePeak()
	var keep, cut []vma
	for _, v := range m.vmas {
		if v.end <= start || v.start >= end {
			keep = append(keep, v)
			continue
		}
		if v.start < start {
			keep = append(keep, v.slice(v.start, start))
		}
		if v.end > end {
			keep = append(keep, v.slice(end, v.end))
		}
		c := v.slice(max(v.start, start), min(v.end, end))
		cut = append(cut, c)
		if c.file != nil {
			m.cutFiles = append(m.cutFiles, c.file)
		}
		if c.prot != 0 {
			m.total -= c.end - c.start
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].start < keep[j].start })
	m.vmas = keep
	return cut
}

// insert adds v, which overlaps no VMA, and joins it with its neighbours
// where they continue it (as Linux merges VMAs): an arena that malloc
// grows by an mprotect at a time stays one VMA, not one per step (the
// map's every change is linear in their number).
func (m *addrSpace) insert(v vma) {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].start > v.start })
	if v.prot != 0 {
		m.total += v.end - v.start
	}
	if i > 0 && continues(m.vmas[i-1], v) {
		m.vmas[i-1].end = v.end
		if i < len(m.vmas) && continues(m.vmas[i-1], m.vmas[i]) {
			m.vmas[i-1].end = m.vmas[i].end
			m.vmas = append(m.vmas[:i], m.vmas[i+1:]...)
		}
		return
	}
	if i < len(m.vmas) && continues(v, m.vmas[i]) {
		m.vmas[i].start, m.vmas[i].off = v.start, v.off
		return
	}
	m.vmas = append(m.vmas, vma{})
	copy(m.vmas[i+1:], m.vmas[i:])
	m.vmas[i] = v
}

// continues reports whether b starts where a ends and is the same mapping
// going on: the same protection, name, file or shared node, at the next
// offset.
func continues(a, b vma) bool {
	return a.end == b.start && a.prot == b.prot && a.name == b.name && a.file == b.file && a.node == b.node && a.shared == b.shared &&
		(a.file == nil && a.node == nil || a.off+(a.end-a.start) == b.off)
}

// zero clears backed guest memory [start, end) through the host mapping.
func (m *addrSpace) zero(start, end uint64) { m.e.ZeroMem(start, end-start) }

// mmap makes [start, end) (page-aligned) a fresh zeroed mapping with prot,
// replacing whatever the guest had mapped there (as MAP_FIXED does).
func (m *addrSpace) mmap(start, end uint64, prot emu.Prot, name string) error {
	return m.mmapFile(start, end, prot, name, nil, 0)
}

// setLoaded marks the VMA starting at start as a loaded segment from file
// offset off.
func (m *addrSpace) setLoaded(start, off uint64) {
	i := sort.Search(len(m.vmas), func(i int) bool { return m.vmas[i].start >= start })
	if i < len(m.vmas) && m.vmas[i].start == start {
		m.vmas[i].loaded, m.vmas[i].off = true, off
	}
}

// fits reports whether mapping [start, end) with prot keeps the cap, with
// extra bytes (being released) not counted.
func (m *addrSpace) fits(start, end uint64, prot emu.Prot, extra uint64) bool {
	n := end - start
	if prot == 0 {
		n = 0
	}
	return m.max == 0 || m.used()-m.overlap(start, end)+n <= m.max+extra
}

// mmapFile is mmap for a private mapping of file from offset off (nil: of
// anonymous memory); the caller fills it.
func (m *addrSpace) mmapFile(start, end uint64, prot emu.Prot, name string, file *sharedFile, off uint64) error {
	return m.mmapFileOver(start, end, prot, name, file, off, 0)
}

// mmapFileOver is mmapFile where extra bytes about to be unmapped do not
// count against the cap.
func (m *addrSpace) mmapFileOver(start, end uint64, prot emu.Prot, name string, file *sharedFile, off, extra uint64) error {
	if start >= end {
		return nil
	}
	if !m.fits(start, end, prot, extra) {
		return errMemCap
	}
	if err := m.room(start, end); err != nil {
		return err
	}
	m.carve(start, end)
	// Back the parts the engine does not have yet; reuse and clear the rest.
	at := start
	var nb [][2]uint64
	for _, b := range m.backed {
		if b[1] <= at || b[0] >= end {
			continue
		}
		if b[0] > at {
			if _, err := m.e.Map(at, b[0]-at, prot, name); err != nil {
				return err
			}
			nb = append(nb, [2]uint64{at, b[0]})
		}
		s, e := max(b[0], at), min(b[1], end)
		m.zero(s, e)
		if err := m.e.Protect(s, e-s, prot); err != nil {
			return err
		}
		at = e
	}
	if at < end {
		if _, err := m.e.Map(at, end-at, prot, name); err != nil {
			return err
		}
		nb = append(nb, [2]uint64{at, end})
	}
	m.backed = append(m.backed, nb...)
	sort.Slice(m.backed, func(i, j int) bool { return m.backed[i][0] < m.backed[j][0] })
	m.insert(vma{start: start, end: end, prot: prot, name: name, file: file, off: off})
	return nil
}

// room returns emu.ErrRegionLimit unless the engine can take the regions
// that mapping [start, end) anew or changing its protection may add,
// checked before anything changes: Map's for what it does not back yet,
// and Protect's for the rest. The caller stops the run (Process.
// regionCap).
func (m *addrSpace) room(start, end uint64) error {
	need := 0
	at := start
	for _, b := range m.backed {
		if b[1] <= at || b[0] >= end {
			continue
		}
		if b[0] > at {
			need += emu.MapRegions(at, b[0]-at)
		}
		s, e := max(b[0], at), min(b[1], end)
		need += m.e.ProtectRegions(s, e-s)
		at = e
	}
	if at < end {
		need += emu.MapRegions(at, end-at)
	}
	if need > m.e.RegionRoom() {
		return emu.ErrRegionLimit
	}
	return nil
}

// munmap removes the guest's mappings in [start, end).
func (m *addrSpace) munmap(start, end uint64) error {
	need := 0 // a Protect per mapping it cuts out
	for _, v := range m.vmas {
		if s, e := max(v.start, start), min(v.end, end); s < e {
			need += m.e.ProtectRegions(s, e-s)
		}
	}
	if need > m.e.RegionRoom() {
		return emu.ErrRegionLimit
	}
	for _, c := range m.carve(start, end) {
		m.zero(c.start, c.end)
		if err := m.e.Protect(c.start, c.end-c.start, 0); err != nil {
			return err
		}
	}
	return nil
}

// protect changes the permissions of [start, end), which must be mapped;
// errMemCap if making reserved (PROT_NONE) pages accessible would exceed
// the cap.
func (m *addrSpace) protect(start, end uint64, prot emu.Prot) error {
	if !m.covered(start, end) {
		return errors.New("not mapped")
	}
	if !m.fits(start, end, prot, 0) {
		return errMemCap
	}
	if err := m.room(start, end); err != nil {
		return err
	}
	for _, c := range m.carve(start, end) {
		c.prot = prot
		m.insert(c)
	}
	return m.e.Protect(start, end-start, prot)
}

// findFree returns the highest page-aligned start of a free range of size
// bytes that ends at or below top and starts at or above bottom, or 0.
func (m *addrSpace) findFree(size, bottom, top uint64) uint64 {
	end := top
	for i := len(m.vmas) - 1; i >= -1; i-- {
		lo := bottom
		if i >= 0 {
			v := m.vmas[i]
			if v.start >= end {
				continue
			}
			lo = max(v.end, bottom)
		}
		if end >= lo+size && end-size >= bottom {
			return end - size
		}
		if i >= 0 {
			end = min(end, m.vmas[i].start)
		}
	}
	return 0
}

// protFromLinux converts Linux PROT_* bits to unicorn permissions.
func protFromLinux(p uint64) emu.Prot {
	var r emu.Prot
	if p&1 != 0 {
		r |= emu.ProtRead
	}
	if p&2 != 0 {
		r |= emu.ProtWrite
	}
	if p&4 != 0 {
		r |= emu.ProtExec
	}
	return r
}

// ErrNoSysroot is returned by Load for a dynamically linked program when
// the sysroot it needs (Config.Sysroot or DefaultSysroot) has no program
// interpreter.
var ErrNoSysroot = errors.New("no program interpreter in the sysroot")

// load maps the ELF file's PT_LOAD segments, sets up brk, loads the program
// interpreter of a dynamically linked program, and builds the initial
// stack. It fills p.Base, p.Entry, p.SP, p.phdr and p.objects.
func (p *Process) load() error {
	f := p.ELF
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: not a 64-bit little-endian ELF file", p.Path)
	}
	switch f.Type {
	case elf.ET_EXEC, elf.ET_DYN:
	default:
		return fmt.Errorf("%s: ELF type %v is not an executable", p.Path, f.Type)
	}
	var interp string
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			b, err := io.ReadAll(io.LimitReader(ph.Open(), 4096))
			if err != nil || len(b) == 0 {
				return fmt.Errorf("%s: PT_INTERP at file offset %#x: cannot read the interpreter's name", p.Path, ph.Off)
			}
			interp = string(bytes.TrimRight(b, "\x00"))
		}
	}
	loads, align, err := loadSegments(p.Path, f)
	if err != nil {
		return err
	}
	if f.Type == elf.ET_DYN {
		// A PIE: place it where Linux puts ET_DYN programs when
		// randomization is off (ELF_ET_DYN_BASE, as for a static PIE).
		p.Base = (p.abi.pieBase &^ (align - 1)) - pageDown(loads[0].Vaddr)
	}
	fileSize := int64(-1)
	if fi, err := p.file.Stat(); err == nil {
		fileSize = fi.Size()
	}
	brk, err := p.mapImage(p.Path, loads, p.Base, fileSize)
	if err != nil {
		return err
	}
	p.brkStart = pageUp(brk)
	p.brk = p.brkStart
	p.Entry = p.Base + f.Entry
	p.start = p.Entry

	// Where the program headers are in memory (AT_PHDR).
	phoff := elfPhoff(p.file)
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_PHDR {
			p.phdr = p.Base + ph.Vaddr
		}
	}
	if p.phdr == 0 {
		for _, ph := range loads {
			if phoff >= ph.Off && phoff < ph.Off+ph.Filesz {
				p.phdr = p.Base + ph.Vaddr + (phoff - ph.Off)
				break
			}
		}
	}
	if p.phdr == 0 {
		return fmt.Errorf("%s: the program headers are not in a loaded segment (no AT_PHDR)", p.Path)
	}
	abs, err := filepath.Abs(p.Path)
	if err != nil {
		abs = p.Path
	}
	p.addObject(&Object{Name: abs, Path: abs, Base: p.Base, Start: pageDown(p.Base + loads[0].Vaddr), End: pageUp(brk), ELF: f})
	if interp != "" {
		if err := p.loadInterp(interp); err != nil {
			return err
		}
	}
	if err := p.mapVDSO(); err != nil {
		return err
	}
	return p.buildStack()
}

// loadSegments returns f's PT_LOAD segments (checked: sorted, file size within
// memory size) and their largest alignment.
func loadSegments(path string, f *elf.File) ([]*elf.Prog, uint64, error) {
	var loads []*elf.Prog
	align := uint64(emu.PageSize)
	for _, ph := range f.Progs {
		if ph.Type != elf.PT_LOAD || ph.Memsz == 0 {
			continue
		}
		if ph.Filesz > ph.Memsz {
			return nil, 0, fmt.Errorf("%s: PT_LOAD at %#x: file size %#x > memory size %#x", path, ph.Vaddr, ph.Filesz, ph.Memsz)
		}
		if len(loads) > 0 && ph.Vaddr < loads[len(loads)-1].Vaddr {
			return nil, 0, fmt.Errorf("%s: PT_LOAD segments not sorted by address", path)
		}
		loads = append(loads, ph)
		if ph.Align > align && ph.Align&(ph.Align-1) == 0 {
			align = ph.Align
		}
	}
	if len(loads) == 0 {
		return nil, 0, fmt.Errorf("%s: no PT_LOAD segment", path)
	}
	return loads, align, nil
}

// image is a PT_LOAD segment's pages and the file it came from
// (/proc/self/maps names it).
type image struct {
	start, end uint64
	path       string
}

// mapImage maps the PT_LOAD segments loads of the file path (fileSize
// bytes, or -1 if unknown) at load bias base, and returns the end of the
// last segment in memory.
func (p *Process) mapImage(path string, loads []*elf.Prog, base uint64, fileSize int64) (uint64, error) {
	var prevEnd uint64
	var prevProt emu.Prot
	var brk uint64
	for i, ph := range loads {
		if a := base + ph.Vaddr; a < ph.Vaddr || a+ph.Memsz < a || a+ph.Memsz > p.abi.stackTop-stackSize {
			return 0, fmt.Errorf("%s: PT_LOAD at %#x+%#x is outside the address space", path, ph.Vaddr, ph.Memsz)
		}
		// A segment with no file data (bss only) reads nothing: its
		// offset does not matter (Linux maps it anonymous, whatever
		// p_offset says).
		if fileSize >= 0 && ph.Filesz > 0 && (ph.Off > uint64(fileSize) || ph.Filesz > uint64(fileSize)-ph.Off) {
			return 0, fmt.Errorf("%s: PT_LOAD at %#x: file data beyond the end of the file", path, ph.Vaddr)
		}
		start := pageDown(base + ph.Vaddr)
		end := pageUp(base + ph.Vaddr + ph.Memsz)
		prot := elfProt(ph.Flags)
		name := fmt.Sprintf("PT_LOAD[%d]", i)
		if start < prevEnd {
			// The segment shares its first page(s) with the previous one
			// (a page holding the end of one and the start of the next):
			// the shared page gets both permissions.
			shared := min(prevEnd, end)
			if err := p.vm.protect(start, shared, prevProt|prot); err != nil {
				return 0, fmt.Errorf("%s: %s: %w", path, name, err)
			}
			start = shared
		}
		if start < end {
			p.images = append(p.images, image{start, end, path})
			if err := p.vm.mmap(start, end, prot, name); err != nil {
				return 0, fmt.Errorf("%s: mapping %s at %#x: %w", path, name, start, err)
			}
			// The file offset of start, as Linux maps the segment (from
			// its page of the file; a segment without file data is
			// anonymous memory: 0).
			if ph.Filesz > 0 {
				p.vm.setLoaded(start, pageDown(ph.Off)+start-pageDown(base+ph.Vaddr))
			}
		}
		// The file's bytes go to guest memory a piece at a time.
		buf := p.scratchBuf()
		for done := uint64(0); done < ph.Filesz; {
			piece := buf[:min(uint64(len(buf)), ph.Filesz-done)]
			if _, err := ph.ReadAt(piece, int64(done)); err != nil {
				return 0, fmt.Errorf("%s: reading %s: %w", path, name, err)
			}
			if err := p.Engine.WriteMem(base+ph.Vaddr+done, piece); err != nil {
				return 0, err
			}
			done += uint64(len(piece))
		}
		prevEnd, prevProt = max(prevEnd, end), prot
		brk = max(brk, base+ph.Vaddr+ph.Memsz)
	}
	return brk, nil
}

// elfProt converts PT_LOAD flags to unicorn permissions.
func elfProt(f elf.ProgFlag) emu.Prot {
	var r emu.Prot
	if f&elf.PF_R != 0 {
		r |= emu.ProtRead
	}
	if f&elf.PF_W != 0 {
		r |= emu.ProtWrite
	}
	if f&elf.PF_X != 0 {
		r |= emu.ProtExec
	}
	return r
}

// elfPhoff reads e_phoff, which debug/elf does not export.
func elfPhoff(r io.ReaderAt) uint64 {
	var hdr elf.Header64
	if err := binary.Read(io.NewSectionReader(r, 0, int64(binary.Size(hdr))), binary.LittleEndian, &hdr); err != nil {
		return 64 // where every linker puts them
	}
	return hdr.Phoff
}

// buildStack maps the stack and writes argc, argv, envp, the auxiliary
// vector and the strings they point to, laid out as Linux's
// create_elf_tables does: from the top, the program's file name (AT_EXECFN),
// the environment strings, the argument strings, the platform string, the
// 16 AT_RANDOM bytes, then (16-byte aligned) argc, argv[], NULL, envp[],
// NULL, auxv pairs, AT_NULL.
func (p *Process) buildStack() error {
	top := p.abi.stackTop
	bottom := top - stackSize
	if err := p.vm.mmap(bottom, top, emu.ProtRead|emu.ProtWrite, "[stack]"); err != nil {
		return fmt.Errorf("mapping the stack: %w", err)
	}
	var strs []byte // grows downwards from top: built reversed, then placed
	at := top - 8   // Linux leaves the last word 0
	push := func(b []byte) uint64 {
		at -= uint64(len(b))
		strs = append(append([]byte(nil), b...), strs...)
		return at
	}
	pushStr := func(s string) uint64 { return push(append([]byte(s), 0)) }

	execfn := pushStr(p.Path)
	envp := make([]uint64, len(p.cfg.Env))
	for i := len(p.cfg.Env) - 1; i >= 0; i-- {
		envp[i] = pushStr(p.cfg.Env[i])
	}
	args := p.cfg.Args
	if len(args) == 0 {
		args = []string{p.Path}
	}
	argv := make([]uint64, len(args))
	for i := len(args) - 1; i >= 0; i-- {
		argv[i] = pushStr(args[i])
	}
	// Where the argument strings start and end and where the
	// environment's end (/proc/self/stat): they lie in that order.
	argEnd := argv[len(argv)-1] + uint64(len(args[len(args)-1])) + 1
	envEnd := argEnd
	if n := len(envp); n > 0 {
		envEnd = envp[n-1] + uint64(len(p.cfg.Env[n-1])) + 1
	}
	p.argSpan = [3]uint64{argv[0], argEnd, envEnd}
	platform := pushStr(p.abi.platform)
	random := push(p.rng.bytes(16))
	if err := p.Engine.WriteMem(at, strs); err != nil {
		return err
	}

	auxv := []uint64{
		AT_HWCAP, p.abi.hwcap(),
		AT_PAGESZ, emu.PageSize,
		AT_CLKTCK, 100,
		AT_PHDR, p.phdr,
		AT_PHENT, uint64(binary.Size(elf.Prog64{})),
		AT_PHNUM, uint64(len(p.ELF.Progs)),
		AT_BASE, p.interpBase,
		AT_FLAGS, 0,
		AT_ENTRY, p.Entry,
		AT_UID, guestUID,
		AT_EUID, guestUID,
		AT_GID, guestGID,
		AT_EGID, guestGID,
		AT_SECURE, 0,
		AT_RANDOM, random,
		AT_HWCAP2, p.abi.hwcap2,
		AT_EXECFN, execfn,
		AT_PLATFORM, platform,
	}
	// ARCH_DLINFO comes first: the vDSO and the signal frame's size.
	auxv = append([]uint64{AT_SYSINFO_EHDR, p.vdsoBase, AT_MINSIGSTKSZ, p.abi.sigFrameMax}, auxv...)
	auxv = append(auxv, AT_NULL, 0)
	p.auxv = auxvBytes(auxv) // kept, as Linux keeps saved_auxv: the guest may overwrite its stack
	words := []uint64{uint64(len(argv))}
	words = append(words, argv...)
	words = append(words, 0)
	words = append(words, envp...)
	words = append(words, 0)
	words = append(words, auxv...)
	sp := (at - uint64(8*len(words))) &^ 15
	buf := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(buf[8*i:], w)
	}
	if err := p.Engine.WriteMem(sp, buf); err != nil {
		return err
	}
	p.SP = sp
	return nil
}
