//go:build cgo

package linux

import (
	"debug/elf"
	"errors"

	"github.com/sframesim/sframesim/emu"
)

// System calls on memory: brk, mmap, munmap, mprotect, mremap, madvise.

// mmapMin is the lowest address mmap hands out (vm.mmap_min_addr).
const mmapMin = 0x10000

// overcommitLimit is the size from which a writable private mapping (or
// brk growth) is refused, as no machine is taken to grant it: Linux's
// heuristic overcommit (__vm_enough_memory, OVERCOMMIT_GUESS) refuses one
// larger than all its RAM and swap at once, so malloc(1 TiB) natively
// returns NULL on about any machine. It is a constant, not the host's
// memory, so that every machine answers alike. A smaller mapping that
// does not fit under the memory cap stops the run instead (memCap): Linux
// would have mapped it.
const overcommitLimit = 1 << 40

// overcommits reports whether a new mapping of size bytes with prot and
// flags is refused at once (ENOMEM): writable, private or anonymous,
// without MAP_NORESERVE, and of overcommitLimit or more.
func overcommits(size uint64, prot, flags uint64) bool {
	const protWrite, mapNoreserve = 2, 0x4000
	return prot&protWrite != 0 && (flags&0xf == mapPrivate || flags&mapAnonymous != 0) && flags&mapNoreserve == 0 && size >= overcommitLimit
}

func (p *Process) sysBrk(a *[6]uint64) uint64 {
	want := a[0]
	if want < p.brkStart || want > p.abi.stackTop-stackSize {
		return p.brk
	}
	oldTop, newTop := pageUp(p.brk), pageUp(want)
	switch {
	case newTop > oldTop:
		if !p.vm.free(oldTop, newTop) || newTop-oldTop >= overcommitLimit {
			return p.brk
		}
		if err := p.vm.mmap(oldTop, newTop, emu.ProtRead|emu.ProtWrite, "[heap]"); err != nil {
			if errors.Is(err, errMemCap) {
				p.memCap("brk", newTop-oldTop)
			}
			if errors.Is(err, emu.ErrRegionLimit) {
				p.regionCap("brk", oldTop, newTop-oldTop)
			}
			return p.brk
		}
	case newTop < oldTop:
		if err := p.vm.munmap(newTop, oldTop); err != nil {
			if errors.Is(err, emu.ErrRegionLimit) {
				p.regionCap("brk", newTop, oldTop-newTop)
			}
			return p.brk
		}
	}
	p.brk = want
	return want
}

// mmap flags shared by both targets.
const (
	mapShared         = 0x01
	mapPrivate        = 0x02
	mapSharedValidate = 0x03
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapFixedNoreplace = 0x100000
)

func (p *Process) sysMmap(a *[6]uint64) uint64 {
	addr, length, prot, flags, fd, off := a[0], a[1], a[2], a[3], int(int32(a[4])), a[5]
	size := pageUp(length)
	switch {
	case length == 0 || off%emu.PageSize != 0:
		return sysErr(eINVAL)
	case size < length || size > p.abi.stackTop:
		return sysErr(eNOMEM)
	}
	switch flags & 0xf {
	case mapShared, mapPrivate, mapSharedValidate:
	default:
		return sysErr(eINVAL)
	}
	defer p.releaseCut()
	var file *openFile
	name := "[anon]"
	if f := p.fds[fd]; flags&mapAnonymous == 0 && f != nil && f.kind == fileDevice {
		if f.minor != devZero {
			return sysErr(eNODEV)
		}
		if flags&0xf != mapPrivate && prot&2 != 0 && f.flags&oACCMODE != oRDWR {
			return sysErr(eACCES) // a shared writable mapping needs the file open for writing
		}
		// /dev/zero: anonymous memory (shmem_zero_setup, vma_set_anonymous).
		flags |= mapAnonymous
	}
	if flags&mapAnonymous == 0 {
		file = p.fds[fd]
		if file == nil || file.pathOnly() {
			return sysErr(eBADF)
		}
		if file.kind != fileRegular {
			return sysErr(eACCES)
		}
		if file.proc != nil {
			return sysErr(eNODEV) // procfs's files have no mmap
		}
		if flags&0xf != mapPrivate && prot&2 != 0 && (file.node == nil || file.flags&oACCMODE != oRDWR) {
			return sysErr(eACCES) // not open for reading and writing
		}
		name = file.path
	}
	if overcommits(size, prot, flags) {
		return sysErr(eNOMEM)
	}
	if file == nil && flags&0xf != mapPrivate {
		name = "/dev/zero (deleted)" // shared anonymous memory, as /proc/self/maps names it
	}
	var start uint64
	if flags&(mapFixed|mapFixedNoreplace) != 0 {
		if addr%emu.PageSize != 0 || addr+size < addr || addr+size > p.abi.stackTop {
			return sysErr(eINVAL)
		}
		if flags&mapFixedNoreplace != 0 && !p.vm.free(addr, addr+size) {
			return sysErr(eEXIST)
		}
		start = addr
	} else {
		if hint := pageDown(addr); hint >= mmapMin && hint+size > hint && hint+size <= p.abi.mmapTop && p.vm.free(hint, hint+size) {
			start = hint
		} else if start = p.vm.findFree(size, max(pageUp(p.brk), mmapMin), p.abi.mmapTop); start == 0 {
			return sysErr(eNOMEM)
		}
	}
	var sf *sharedFile
	if file != nil {
		sf = file.sf
	}
	if err := p.vm.mmapFile(start, start+size, protFromLinux(prot), name, sf, off); err != nil {
		if errors.Is(err, errMemCap) {
			return p.memCap("mmap", size)
		}
		if errors.Is(err, emu.ErrRegionLimit) {
			return p.regionCap("mmap", start, size)
		}
		return sysErr(eNOMEM)
	}
	if file == nil && flags&0xf != mapPrivate {
		p.vm.markShared(start, start+size)
	}
	if file != nil {
		p.fillFromFile(file, start, off, length)
		if flags&0xf != mapPrivate && file.node != nil && file.flags&oACCMODE == oRDWR {
			p.vm.share(start, start+size, file.node, off)
		}
		if off == 0 && (sf == nil || sf.objects < maxObjectsPerFile) {
			if sf != nil && file.data == nil && p.isELF(sf) {
				// mappedFile reads the ELF object from data: the file's
				// contents, held once per file.
				if err := p.loadData(sf); errors.Is(err, errMemCap) {
					return p.memCap("mapping the ELF file "+file.path, uint64(sf.size))
				}
				file.data = sf.data
			}
			n := len(p.objects)
			p.mappedFile(file, start)
			if sf != nil && len(p.objects) > n {
				sf.objects++
			}
		}
	}
	return start
}

// fillFromFile copies n bytes of file f from offset off (as far as the
// file goes) into the mapping at addr.
func (p *Process) fillFromFile(f *openFile, addr, off, n uint64) {
	if f.node != nil {
		p.accessed(f.node)
		if size := uint64(f.node.data.Len()); off < size {
			f.node.data.each(int64(off), int64(min(size, off+n)), func(piece []byte, at int64) bool {
				p.Engine.WriteMem(addr+uint64(at)-off, piece)
				return true
			})
		}
		return
	}
	if f.sf != nil {
		p.fileToGuest(f.sf, int64(off), addr, n)
		return
	}
	if off < uint64(len(f.data)) {
		p.Engine.WriteMem(addr, f.data[off:min(uint64(len(f.data)), off+n)])
	}
}

// isELF reports whether sf starts with the ELF magic.
func (p *Process) isELF(sf *sharedFile) bool {
	f := sf.file()
	if f == nil {
		return false
	}
	var magic [4]byte
	_, err := f.ReadAt(magic[:], 0)
	return err == nil && string(magic[:]) == elf.ELFMAG
}

func (p *Process) sysMunmap(a *[6]uint64) uint64 {
	defer p.releaseCut()
	addr, size := a[0], pageUp(a[1])
	if addr%emu.PageSize != 0 || size == 0 || addr+size < addr || addr > p.abi.stackTop || size > p.abi.stackTop-addr {
		return sysErr(eINVAL) // beyond TASK_SIZE
	}
	if err := p.vm.munmap(addr, addr+size); err != nil {
		if errors.Is(err, emu.ErrRegionLimit) {
			return p.regionCap("munmap", addr, size)
		}
		return sysErr(eINVAL)
	}
	return 0
}

// sysMsync has nothing to write: shared mappings are written into their
// files at every system call (shared.go). It checks its arguments as
// Linux does: EINVAL for an unaligned address, unknown flags or both
// MS_ASYNC and MS_SYNC, ENOMEM for a range not all mapped.
func (p *Process) sysMsync(a *[6]uint64) uint64 {
	const msAsync, msInvalidate, msSync = 1, 2, 4
	addr, size, flags := a[0], pageUp(a[1]), a[2]
	switch {
	case addr%emu.PageSize != 0 || flags&^(msAsync|msInvalidate|msSync) != 0 || flags&msAsync != 0 && flags&msSync != 0:
		return sysErr(eINVAL)
	case addr+size < addr || !p.vm.covered(addr, addr+size):
		return sysErr(eNOMEM)
	}
	return 0
}

// protIgnored are PROT_* bits accepted and ignored: PROT_BTI and
// PROT_MTE (AArch64).
const protIgnored = 0x10 | 0x20

func (p *Process) sysMprotect(a *[6]uint64) uint64 {
	addr, size, prot := a[0], pageUp(a[1]), a[2]
	if addr%emu.PageSize != 0 || addr+size < addr || prot&^(7|protIgnored) != 0 {
		return sysErr(eINVAL)
	}
	if size == 0 {
		return 0
	}
	defer p.releaseCut()
	if err := p.vm.protect(addr, addr+size, protFromLinux(prot)); err != nil {
		if errors.Is(err, errMemCap) {
			return p.memCap("mprotect", size)
		}
		if errors.Is(err, emu.ErrRegionLimit) {
			return p.regionCap("mprotect", addr, size)
		}
		return sysErr(eNOMEM)
	}
	return 0
}

func (p *Process) sysMremap(a *[6]uint64) uint64 {
	const mayMove, fixed = 1, 2
	old, oldSize, newSize, flags, newAddr := a[0], pageUp(a[1]), pageUp(a[2]), a[3], a[4]
	if old%emu.PageSize != 0 || newSize == 0 || flags&^(mayMove|fixed) != 0 || (flags&fixed != 0 && flags&mayMove == 0) {
		return sysErr(eINVAL)
	}
	if oldSize == 0 || old+oldSize < old || !p.vm.covered(old, old+oldSize) {
		return sysErr(eFAULT)
	}
	defer p.releaseCut()
	var from vma // the mapping at old: its permissions and file
	for _, v := range p.vm.vmas {
		if v.start <= old && old < v.end {
			from = v.slice(old, v.end)
		}
	}
	// grown fills [at, end) of a mapping that now reaches further, from
	// its file as Linux does (zeros for anonymous memory).
	grown := func(start, at, end uint64) {
		if from.file != nil {
			p.fileToGuest(from.file, int64(from.off+at-start), at, end-at)
		}
	}
	move := func(dst uint64) uint64 {
		// Map the new place first (the old one does not count against
		// the cap: it is about to go), then copy a piece at a time.
		if err := p.vm.mmapFileOver(dst, dst+newSize, from.prot, from.name, from.file, from.off, p.vm.overlap(old, old+oldSize)); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize)
			}
			if errors.Is(err, emu.ErrRegionLimit) {
				return p.regionCap("mremap", dst, newSize)
			}
			return sysErr(eNOMEM)
		}
		buf := p.scratchBuf()
		n := min(oldSize, newSize)
		for done := uint64(0); done < n; {
			piece := buf[:min(uint64(len(buf)), n-done)]
			p.Engine.ReadMem(old+done, piece)
			p.Engine.WriteMem(dst+done, piece)
			done += uint64(len(piece))
		}
		if err := p.vm.munmap(old, old+oldSize); err != nil {
			if errors.Is(err, emu.ErrRegionLimit) {
				return p.regionCap("mremap", old, oldSize)
			}
			return sysErr(eINVAL)
		}
		if newSize > oldSize {
			grown(dst, dst+oldSize, dst+newSize)
		}
		if from.node != nil {
			p.vm.share(dst, dst+newSize, from.node, from.off)
		}
		return dst
	}
	if flags&fixed != 0 {
		if newAddr%emu.PageSize != 0 || newAddr+newSize < newAddr || newAddr+newSize > p.abi.stackTop || (newAddr < old+oldSize && old < newAddr+newSize) {
			return sysErr(eINVAL)
		}
		return move(newAddr)
	}
	switch {
	case newSize <= oldSize:
		if err := p.vm.munmap(old+newSize, old+oldSize); errors.Is(err, emu.ErrRegionLimit) {
			return p.regionCap("mremap", old+newSize, oldSize-newSize)
		}
		return old
	case old+newSize > old && old+newSize <= p.abi.mmapTop && p.vm.free(old+oldSize, old+newSize):
		if err := p.vm.mmapFile(old+oldSize, old+newSize, from.prot, from.name, from.file, from.off+oldSize); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize-oldSize)
			}
			if errors.Is(err, emu.ErrRegionLimit) {
				return p.regionCap("mremap", old+oldSize, newSize-oldSize)
			}
			return sysErr(eNOMEM)
		}
		grown(old, old+oldSize, old+newSize)
		if from.node != nil {
			p.vm.share(old+oldSize, old+newSize, from.node, from.off+oldSize)
		}
		return old
	case flags&mayMove != 0:
		dst := p.vm.findFree(newSize, max(pageUp(p.brk), mmapMin), p.abi.mmapTop)
		if dst == 0 {
			return sysErr(eNOMEM)
		}
		return move(dst)
	}
	return sysErr(eNOMEM)
}

// sysMincore answers mincore(addr, length, vec): every page of a mapping
// is resident (1 in vec, one byte per page: there is no paging to report,
// and the answer stays the same on every run); EINVAL for an unaligned
// addr, ENOMEM where the range holds unmapped memory (what gnulib's
// c-stack, in grep, diff and m4, probes with), EFAULT for vec.
func (p *Process) sysMincore(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	switch {
	case addr%emu.PageSize != 0:
		return sysErr(eINVAL)
	case addr+size < addr || a[1] > 0 && size == 0:
		return sysErr(eNOMEM)
	case size == 0:
		return 0
	case !p.vm.covered(addr, addr+size):
		return sysErr(eNOMEM)
	}
	vec := make([]byte, size/emu.PageSize)
	for i := range vec {
		vec[i] = 1
	}
	if !p.writeGuest(a[2], vec) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysMadvise(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	switch advice := int32(a[2]); {
	case advice >= 0 && advice <= 4, advice >= 8 && advice <= 25:
	case advice == 100 || advice == 101: // MADV_HWPOISON, MADV_SOFT_OFFLINE
		return sysErr(ePERM)
	default:
		return sysErr(eINVAL) // madvise_behavior_valid
	}
	if addr%emu.PageSize != 0 || addr+size < addr {
		return sysErr(eINVAL)
	}
	if !p.vm.covered(addr, addr+size) {
		return sysErr(eNOMEM)
	}
	if a[2] == 4 { // MADV_DONTNEED
		// Private anonymous pages read as zero again, those of a file
		// mapping as the file's contents.
		for _, v := range p.vm.vmas {
			s, e := max(v.start, addr), min(v.end, addr+size)
			if s >= e || v.shared || v.node != nil {
				continue // shared memory keeps its contents (shmem, the page cache)
			}
			p.vm.zero(s, e)
			if v.file != nil {
				p.fileToGuest(v.file, int64(v.off+s-v.start), s, e-s)
			}
		}
	}
	return 0
}
