//go:build cgo

package linux

import (
	"errors"

	"github.com/sframesim/sframesim/emu"
)

// System calls on memory: brk, mmap, munmap, mprotect, mremap, madvise.

// mmapMin is the lowest address mmap hands out (vm.mmap_min_addr).
const mmapMin = 0x10000

func (p *Process) sysBrk(a *[6]uint64) uint64 {
	want := a[0]
	if want < p.brkStart || want > p.abi.stackTop-stackSize {
		return p.brk
	}
	oldTop, newTop := pageUp(p.brk), pageUp(want)
	switch {
	case newTop > oldTop:
		if !p.vm.free(oldTop, newTop) {
			return p.brk
		}
		if err := p.vm.mmap(oldTop, newTop, emu.ProtRead|emu.ProtWrite, "[heap]"); err != nil {
			if errors.Is(err, errMemCap) {
				p.memCap("brk", newTop-oldTop)
			}
			return p.brk
		}
	case newTop < oldTop:
		if err := p.vm.munmap(newTop, oldTop); err != nil {
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
	var data []byte
	name := "[anon]"
	if flags&mapAnonymous == 0 {
		f := p.fds[fd]
		if f == nil {
			return sysErr(eBADF)
		}
		if f.kind != fileRegular {
			return sysErr(eACCES)
		}
		if flags&0xf != mapPrivate && prot&2 != 0 {
			return sysErr(eACCES) // the file is read-only
		}
		if off < uint64(len(f.data)) {
			data = f.data[off:min(uint64(len(f.data)), off+length)]
		}
		name = f.path
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
	if err := p.vm.mmap(start, start+size, protFromLinux(prot), name); err != nil {
		if errors.Is(err, errMemCap) {
			return p.memCap("mmap", size)
		}
		return sysErr(eNOMEM)
	}
	if len(data) > 0 {
		p.Engine.WriteMem(start, data)
	}
	if f := p.fds[fd]; flags&mapAnonymous == 0 && off == 0 && f != nil {
		p.mappedFile(f, start)
	}
	return start
}

func (p *Process) sysMunmap(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	if addr%emu.PageSize != 0 || size == 0 || addr+size < addr {
		return sysErr(eINVAL)
	}
	if err := p.vm.munmap(addr, addr+size); err != nil {
		return sysErr(eINVAL)
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
	if err := p.vm.protect(addr, addr+size, protFromLinux(prot)); err != nil {
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
	if oldSize == 0 || !p.vm.covered(old, old+oldSize) {
		return sysErr(eFAULT)
	}
	var prot emu.Prot
	for _, v := range p.vm.vmas {
		if v.start <= old && old < v.end {
			prot = v.prot
		}
	}
	move := func(dst uint64) uint64 {
		data := make([]byte, min(oldSize, newSize))
		p.Engine.ReadMem(old, data)
		if err := p.vm.munmap(old, old+oldSize); err != nil {
			return sysErr(eINVAL)
		}
		if err := p.vm.mmap(dst, dst+newSize, prot, "[anon]"); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize)
			}
			return sysErr(eNOMEM)
		}
		p.Engine.WriteMem(dst, data)
		return dst
	}
	if flags&fixed != 0 {
		if newAddr%emu.PageSize != 0 || newAddr+newSize > p.abi.stackTop || (newAddr < old+oldSize && old < newAddr+newSize) {
			return sysErr(eINVAL)
		}
		return move(newAddr)
	}
	switch {
	case newSize <= oldSize:
		p.vm.munmap(old+newSize, old+oldSize)
		return old
	case old+newSize <= p.abi.mmapTop && p.vm.free(old+oldSize, old+newSize):
		if err := p.vm.mmap(old+oldSize, old+newSize, prot, "[anon]"); err != nil {
			if errors.Is(err, errMemCap) {
				return p.memCap("mremap", newSize-oldSize)
			}
			return sysErr(eNOMEM)
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

func (p *Process) sysMadvise(a *[6]uint64) uint64 {
	addr, size := a[0], pageUp(a[1])
	if addr%emu.PageSize != 0 || addr+size < addr {
		return sysErr(eINVAL)
	}
	if !p.vm.covered(addr, addr+size) {
		return sysErr(eNOMEM)
	}
	if a[2] == 4 { // MADV_DONTNEED: private anonymous pages read as zero again
		p.vm.zero(addr, addr+size)
	}
	return 0
}
