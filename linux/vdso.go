//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// The vDSO: a small ELF shared object mapped into every guest (its address
// is AT_SYSINFO_EHDR), as Linux maps one. glibc finds its functions through
// the dynamic symbol table, with the version the kernel gives them
// (LINUX_2.6 on x86-64, LINUX_2.6.39 on AArch64), and calls them instead of
// the system calls. Here each function simply makes the system call, so
// the guest's clocks stay the layer's deterministic ones (sys_time.go).
// On AArch64 it also holds __kernel_rt_sigreturn, where signal handlers
// return (mov x8, #139; svc #0, after a nop outside the function, as in
// arch/arm64/kernel/vdso/sigreturn.S), with the unwind information the
// kernel ships for it: an .eh_frame FDE whose CIE has the "S" (signal
// frame) augmentation and whose rules are CFA = x29, x29 at CFA+0, x30 at
// CFA+8 (the frame record the kernel pushes).
//
// The image is built here, at first use, rather than committed as a
// binary: it is small, every byte is explained next to the code that
// writes it, and tests read it back with debug/elf. It is linked at
// address 0 (as the kernel's is) and holds ELF and program headers,
// .hash, .dynsym, .dynstr, .gnu.version, .gnu.version_d, .text,
// .eh_frame_hdr, .eh_frame, .dynamic and section headers, in one page
// mapped read and execute.

// vdsoFunc is one function of the vDSO.
type vdsoFunc struct {
	name   string
	code   []byte
	pad    []byte // code before the symbol, outside its FDE (the sigreturn nop)
	signal bool   // a signal trampoline: CIE "zRS" and its own CFI
}

// vdsoSpec describes one architecture's vDSO.
type vdsoSpec struct {
	machine elf.Machine
	version string // the symbols' version
	// CIE fields and the rules at a function's entry, and the FDE rules
	// of a signal trampoline.
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	initial   []byte
	sigCFI    []byte
	funcs     []vdsoFunc
}

func x86Syscall(nr uint32) []byte {
	// mov eax, nr; syscall; ret
	return []byte{0xb8, byte(nr), byte(nr >> 8), 0, 0, 0x0f, 0x05, 0xc3}
}

func arm64Words(w ...uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// arm64Syscall is mov x8, #nr; svc #0 (and ret).
func arm64Syscall(nr uint32, ret bool) []byte {
	w := []uint32{0xd2800008 | nr<<5, 0xd4000001}
	if ret {
		w = append(w, 0xd65f03c0)
	}
	return arm64Words(w...)
}

var amd64VDSO = &vdsoSpec{
	machine: elf.EM_X86_64, version: "LINUX_2.6",
	codeAlign: 1, dataAlign: -8, raReg: 16,
	// DW_CFA_def_cfa rsp+8; DW_CFA_offset rip at cfa-8.
	initial: []byte{0x0c, 7, 8, 0x80 | 16, 1},
	funcs: []vdsoFunc{
		{name: "__vdso_clock_gettime", code: x86Syscall(228)},
		{name: "__vdso_gettimeofday", code: x86Syscall(96)},
		{name: "__vdso_time", code: x86Syscall(201)},
		{name: "__vdso_getcpu", code: x86Syscall(309)},
		{name: "__vdso_clock_getres", code: x86Syscall(229)},
	},
}

var arm64VDSO = &vdsoSpec{
	machine: elf.EM_AARCH64, version: "LINUX_2.6.39",
	codeAlign: 4, dataAlign: -8, raReg: 30,
	// DW_CFA_def_cfa sp+0.
	initial: []byte{0x0c, 31, 0},
	// DW_CFA_def_cfa x29+0; DW_CFA_offset x29 at cfa+0;
	// DW_CFA_offset_extended_sf x30 at cfa+8 (factored -1).
	sigCFI: []byte{0x0c, 29, 0, 0x80 | 29, 0, 0x11, 30, 0x7f},
	funcs: []vdsoFunc{
		{name: "__kernel_rt_sigreturn", code: arm64Syscall(139, false), pad: arm64Words(0xd503201f), signal: true},
		{name: "__kernel_gettimeofday", code: arm64Syscall(169, true)},
		{name: "__kernel_clock_gettime", code: arm64Syscall(113, true)},
		{name: "__kernel_clock_getres", code: arm64Syscall(114, true)},
	},
}

// vdsoImage is a built vDSO: the bytes and each function's offset.
type vdsoImage struct {
	data []byte
	syms map[string]uint64
}

// file parses the image as an ELF file of its own: an elf.File is not safe
// for use by several processes at once (DynamicSymbols fills its version
// tables on first use), and the image is shared by all of them.
func (v *vdsoImage) file() (*elf.File, error) { return elf.NewFile(bytes.NewReader(v.data)) }

var (
	vdsoOnce   [2]sync.Once
	vdsoImages [2]*vdsoImage
)

// vdsoFor returns the vDSO of architecture a (nil if it has none).
func vdsoFor(a *arch.Arch) *vdsoImage {
	i, spec := 0, amd64VDSO
	switch a {
	case arch.AMD64:
	case arch.ARM64:
		i, spec = 1, arm64VDSO
	default:
		return nil
	}
	vdsoOnce[i].Do(func() {
		img, err := buildVDSO(spec)
		if err != nil {
			panic(fmt.Sprintf("building the vDSO: %v", err)) // a bug of this file
		}
		vdsoImages[i] = img
	})
	return vdsoImages[i]
}

// elfHash is the System V ABI's symbol hash (DT_HASH, vd_hash).
func elfHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		h = h<<4 + uint32(name[i])
		if g := h & 0xf0000000; g != 0 {
			h ^= g >> 24
		}
		h &^= 0xf0000000
	}
	return h
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// buildVDSO lays out the image (see the comment at the top).
func buildVDSO(s *vdsoSpec) (*vdsoImage, error) {
	const (
		ehdrSize  = 64
		phdrSize  = 56
		nphdr     = 3 // PT_LOAD, PT_DYNAMIC, PT_GNU_EH_FRAME
		shdrSize  = 64
		soname    = "linux-vdso.so.1"
		dwPCRel4  = 0x1b // DW_EH_PE_pcrel|DW_EH_PE_sdata4
		dwUdata4  = 0x03
		dwDataRel = 0x3b // DW_EH_PE_datarel|DW_EH_PE_sdata4
	)
	le := binary.LittleEndian
	var img bytes.Buffer
	img.Write(make([]byte, ehdrSize+nphdr*phdrSize))
	align := func(n int) {
		for img.Len()%n != 0 {
			img.WriteByte(0)
		}
	}
	type section struct {
		name                  string
		typ                   elf.SectionType
		flags                 elf.SectionFlag
		off, size, link, info uint64
		align, entsize        uint64
	}
	var secs []section
	add := func(name string, typ elf.SectionType, flags elf.SectionFlag, data []byte, al, entsize uint64, link, info uint64) uint64 {
		align(int(al))
		off := uint64(img.Len())
		img.Write(data)
		secs = append(secs, section{name: name, typ: typ, flags: flags, off: off, size: uint64(len(data)), align: al, entsize: entsize, link: link, info: info})
		return off
	}
	// Section indices (0 is the null section).
	const (
		iHash = 1 + iota
		iDynsym
		iDynstr
		iVersym
		iVerdef
		iText
		iEhHdr
		iEh
		iDynamic
		iShstr
	)
	// .dynstr
	var dynstr bytes.Buffer
	dynstr.WriteByte(0)
	str := func(x string) uint32 {
		off := uint32(dynstr.Len())
		dynstr.WriteString(x)
		dynstr.WriteByte(0)
		return off
	}
	sonameOff, versionOff := str(soname), str(s.version)
	nameOff := make([]uint32, len(s.funcs))
	for i, f := range s.funcs {
		nameOff[i] = str(f.name)
	}
	// .text: each function 16-byte aligned. Its address is its offset in
	// the text, fixed up once the text's offset is known.
	var text bytes.Buffer
	fnOff := make([]uint64, len(s.funcs))
	for i, f := range s.funcs {
		for text.Len()%16 != 0 {
			text.WriteByte(0)
		}
		text.Write(f.pad)
		fnOff[i] = uint64(text.Len())
		text.Write(f.code)
	}
	nsym := 1 + len(s.funcs)
	// .hash: one bucket per symbol.
	hash := make([]byte, 4*(2+2*nsym))
	le.PutUint32(hash[0:], uint32(nsym))
	le.PutUint32(hash[4:], uint32(nsym))
	buckets, chains := hash[8:8+4*nsym], hash[8+4*nsym:]
	for i, f := range s.funcs {
		sym := uint32(i + 1)
		b := elfHash(f.name) % uint32(nsym)
		// Append to the bucket's chain.
		prev := le.Uint32(buckets[4*b:])
		if prev == 0 {
			le.PutUint32(buckets[4*b:], sym)
			continue
		}
		for le.Uint32(chains[4*prev:]) != 0 {
			prev = le.Uint32(chains[4*prev:])
		}
		le.PutUint32(chains[4*prev:], sym)
	}
	hashOff := add(".hash", elf.SHT_HASH, elf.SHF_ALLOC, hash, 8, 4, iDynsym, 0)
	// .dynsym is written once .text has its offset: reserve it.
	dynsymOff := add(".dynsym", elf.SHT_DYNSYM, elf.SHF_ALLOC, make([]byte, 24*nsym), 8, 24, iDynstr, 1)
	dynstrOff := add(".dynstr", elf.SHT_STRTAB, elf.SHF_ALLOC, dynstr.Bytes(), 1, 0, 0, 0)
	// .gnu.version: version index 2 for every function.
	versym := make([]byte, 2*nsym)
	for i := 1; i < nsym; i++ {
		le.PutUint16(versym[2*i:], 2)
	}
	versymOff := add(".gnu.version", elf.SHT_GNU_VERSYM, elf.SHF_ALLOC, versym, 2, 2, iDynsym, 0)
	// .gnu.version_d: the base definition (the soname) and the version.
	verdef := make([]byte, 2*28)
	for i, v := range []struct {
		flags uint16
		name  uint32
		s     string
	}{{1, sonameOff, soname}, {0, versionOff, s.version}} { // VER_FLG_BASE
		d := verdef[28*i:]
		le.PutUint16(d[0:], 1)            // vd_version
		le.PutUint16(d[2:], v.flags)      // vd_flags
		le.PutUint16(d[4:], uint16(i+1))  // vd_ndx
		le.PutUint16(d[6:], 1)            // vd_cnt
		le.PutUint32(d[8:], elfHash(v.s)) // vd_hash
		le.PutUint32(d[12:], 20)          // vd_aux
		le.PutUint32(d[20:], v.name)      // vda_name
		if i == 0 {
			le.PutUint32(d[16:], 28) // vd_next
		}
	}
	verdefOff := add(".gnu.version_d", elf.SHT_GNU_VERDEF, elf.SHF_ALLOC, verdef, 8, 0, iDynstr, 2)
	textOff := add(".text", elf.SHT_PROGBITS, elf.SHF_ALLOC|elf.SHF_EXECINSTR, text.Bytes(), 16, 0, 0, 0)
	syms := map[string]uint64{}
	dynsym := img.Bytes()[dynsymOff:]
	for i, f := range s.funcs {
		addr := textOff + fnOff[i]
		syms[f.name] = addr
		e := dynsym[24*(i+1):]
		le.PutUint32(e[0:], nameOff[i])
		e[4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
		le.PutUint16(e[6:], iText)
		le.PutUint64(e[8:], addr)
		le.PutUint64(e[16:], uint64(len(f.code)))
	}
	// .eh_frame_hdr is sized now and filled once .eh_frame is placed.
	ehHdrOff := add(".eh_frame_hdr", elf.SHT_PROGBITS, elf.SHF_ALLOC, make([]byte, 12+8*len(s.funcs)), 4, 0, 0, 0)
	// .eh_frame: a CIE for ordinary functions, one for signal
	// trampolines, an FDE per function, a zero terminator.
	align(8)
	ehOff := uint64(img.Len())
	var eh bytes.Buffer
	record := func(body []byte) uint64 {
		for (len(body)+4)%8 != 0 {
			body = append(body, 0) // DW_CFA_nop
		}
		at := uint64(eh.Len())
		var l [4]byte
		le.PutUint32(l[:], uint32(len(body)))
		eh.Write(l[:])
		eh.Write(body)
		return at
	}
	cie := func(aug string, signal bool) uint64 {
		b := []byte{0, 0, 0, 0, 1} // CIE id, version
		b = append(b, aug...)
		b = append(b, 0)
		b = append(b, uleb(s.codeAlign)...)
		b = append(b, sleb(s.dataAlign)...)
		b = append(b, uleb(s.raReg)...)
		b = append(b, 1, dwPCRel4) // augmentation data: the FDE pointer encoding
		b = append(b, s.initial...)
		return record(b)
	}
	plainCIE := cie("zR", false)
	var sigCIE uint64
	for _, f := range s.funcs {
		if f.signal {
			sigCIE = cie("zRS", true)
			break
		}
	}
	type fdeAt struct{ pc, fde uint64 }
	var table []fdeAt
	for i, f := range s.funcs {
		at := uint64(eh.Len())
		c, cfi := plainCIE, []byte(nil)
		if f.signal {
			c, cfi = sigCIE, s.sigCFI
		}
		pc := textOff + fnOff[i]
		b := make([]byte, 12, 13+len(cfi))
		le.PutUint32(b[0:], uint32(at+4-c))                      // CIE pointer
		le.PutUint32(b[4:], uint32(int64(pc)-int64(ehOff+at+8))) // pc_begin, pc-relative
		le.PutUint32(b[8:], uint32(len(f.code)))                 // pc_range
		b = append(b, 0)                                         // augmentation data length
		b = append(b, cfi...)
		record(b)
		table = append(table, fdeAt{pc, ehOff + at})
	}
	eh.Write([]byte{0, 0, 0, 0})
	add(".eh_frame", elf.SHT_PROGBITS, elf.SHF_ALLOC, eh.Bytes(), 8, 0, 0, 0)
	// Fill .eh_frame_hdr: version, encodings, eh_frame_ptr, fde_count,
	// then the table sorted by PC, relative to the header.
	sort.Slice(table, func(i, j int) bool { return table[i].pc < table[j].pc })
	hdr := img.Bytes()[ehHdrOff:]
	hdr[0], hdr[1], hdr[2], hdr[3] = 1, dwPCRel4, dwUdata4, dwDataRel
	le.PutUint32(hdr[4:], uint32(int64(ehOff)-int64(ehHdrOff+4)))
	le.PutUint32(hdr[8:], uint32(len(table)))
	for i, e := range table {
		le.PutUint32(hdr[12+8*i:], uint32(e.pc-ehHdrOff))
		le.PutUint32(hdr[16+8*i:], uint32(e.fde-ehHdrOff))
	}
	// .dynamic
	var dyn []byte
	for _, d := range [][2]uint64{
		{uint64(elf.DT_SONAME), uint64(sonameOff)},
		{uint64(elf.DT_HASH), hashOff},
		{uint64(elf.DT_STRTAB), dynstrOff},
		{uint64(elf.DT_SYMTAB), dynsymOff},
		{uint64(elf.DT_STRSZ), uint64(dynstr.Len())},
		{uint64(elf.DT_SYMENT), 24},
		{uint64(elf.DT_VERSYM), versymOff},
		{uint64(elf.DT_VERDEF), verdefOff},
		{uint64(elf.DT_VERDEFNUM), 2},
		{uint64(elf.DT_NULL), 0},
	} {
		dyn = le.AppendUint64(dyn, d[0])
		dyn = le.AppendUint64(dyn, d[1])
	}
	dynOff := add(".dynamic", elf.SHT_DYNAMIC, elf.SHF_ALLOC, dyn, 8, 16, iDynstr, 0)
	loadEnd := uint64(img.Len())
	// .shstrtab and the section headers (not loaded).
	var shstr bytes.Buffer
	shstr.WriteByte(0)
	names := make([]uint32, len(secs)+1)
	for i, sec := range secs {
		names[i] = uint32(shstr.Len())
		shstr.WriteString(sec.name)
		shstr.WriteByte(0)
	}
	names[len(secs)] = uint32(shstr.Len())
	shstr.WriteString(".shstrtab\x00")
	shstrOff := uint64(img.Len())
	img.Write(shstr.Bytes())
	secs = append(secs, section{name: ".shstrtab", typ: elf.SHT_STRTAB, off: shstrOff, size: uint64(shstr.Len()), align: 1})
	align(8)
	shOff := uint64(img.Len())
	img.Write(make([]byte, shdrSize)) // the null section
	for i, sec := range secs {
		var h [shdrSize]byte
		le.PutUint32(h[0:], names[i])
		le.PutUint32(h[4:], uint32(sec.typ))
		le.PutUint64(h[8:], uint64(sec.flags))
		if sec.flags&elf.SHF_ALLOC != 0 {
			le.PutUint64(h[16:], sec.off) // sh_addr: linked at 0
		}
		le.PutUint64(h[24:], sec.off)
		le.PutUint64(h[32:], sec.size)
		le.PutUint32(h[40:], uint32(sec.link))
		le.PutUint32(h[44:], uint32(sec.info))
		le.PutUint64(h[48:], sec.align)
		le.PutUint64(h[56:], sec.entsize)
		img.Write(h[:])
	}
	data := img.Bytes()
	if uint64(len(data)) > emu.PageSize {
		return nil, fmt.Errorf("%d bytes do not fit in a page", len(data))
	}
	// The ELF header.
	h := data[:ehdrSize]
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(h[16:], uint16(elf.ET_DYN))
	le.PutUint16(h[18:], uint16(s.machine))
	le.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(h[24:], 0) // no entry point
	le.PutUint64(h[32:], ehdrSize)
	le.PutUint64(h[40:], shOff)
	le.PutUint16(h[52:], ehdrSize)
	le.PutUint16(h[54:], phdrSize)
	le.PutUint16(h[56:], nphdr)
	le.PutUint16(h[58:], shdrSize)
	le.PutUint16(h[60:], uint16(len(secs)+1))
	le.PutUint16(h[62:], iShstr)
	// The program headers.
	for i, ph := range []struct {
		typ       elf.ProgType
		flags     elf.ProgFlag
		off, size uint64
		align     uint64
	}{
		{elf.PT_LOAD, elf.PF_R | elf.PF_X, 0, loadEnd, emu.PageSize},
		{elf.PT_DYNAMIC, elf.PF_R, dynOff, uint64(len(dyn)), 8},
		{elf.PT_GNU_EH_FRAME, elf.PF_R, ehHdrOff, uint64(12 + 8*len(s.funcs)), 4},
	} {
		b := data[ehdrSize+phdrSize*i:]
		le.PutUint32(b[0:], uint32(ph.typ))
		le.PutUint32(b[4:], uint32(ph.flags))
		le.PutUint64(b[8:], ph.off)
		le.PutUint64(b[16:], ph.off)
		le.PutUint64(b[24:], ph.off)
		le.PutUint64(b[32:], ph.size)
		le.PutUint64(b[40:], ph.size)
		le.PutUint64(b[48:], ph.align)
	}
	v := &vdsoImage{data: data, syms: syms}
	if _, err := v.file(); err != nil {
		return nil, err
	}
	return v, nil
}

// mapVDSO maps the vDSO below the mappings made so far (after the program
// interpreter, as Linux does), for AT_SYSINFO_EHDR.
func (p *Process) mapVDSO() error {
	v := vdsoFor(p.Arch)
	if v == nil {
		return nil
	}
	size := pageUp(uint64(len(v.data)))
	start := p.vm.findFree(size, max(p.brkStart, mmapMin), p.abi.mmapTop)
	if start == 0 {
		return fmt.Errorf("%s: no room for the vDSO", p.Path)
	}
	if err := p.vm.mmap(start, start+size, emu.ProtRead|emu.ProtExec, "[vdso]"); err != nil {
		return fmt.Errorf("mapping the vDSO: %w", err)
	}
	if err := p.Engine.WriteMem(start, v.data); err != nil {
		return err
	}
	p.vdso, p.vdsoBase = v, start
	return nil
}

// vdsoSym returns the address of a vDSO function in the guest (0: none).
func (p *Process) vdsoSym(name string) uint64 {
	if p.vdso == nil {
		return 0
	}
	off, ok := p.vdso.syms[name]
	if !ok {
		return 0
	}
	return p.vdsoBase + off
}

// VDSO returns where the vDSO is mapped and its size (0, 0 if none).
func (p *Process) VDSO() (start, size uint64) {
	if p.vdso == nil {
		return 0, 0
	}
	return p.vdsoBase, pageUp(uint64(len(p.vdso.data)))
}
