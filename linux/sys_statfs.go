//go:build cgo

package linux

import (
	"encoding/binary"
	"strings"
)

// statfs and fstatfs describe the file system a file is on, as the
// sandbox has them, the same on every machine:
//
//   - the overlay, which holds the writable trees (the working directory,
//     /tmp) and what the guest writes there: tmpfs (the guest's memory
//     holds it), its size the memory cap and its free blocks what is left
//     of it, as tmpfs counts against RAM; mounted nosuid, nodev;
//   - the view's files outside them (the sysroot, the trees named with
//     --allow-read): a read-only ext4 of no size (nothing of the host's
//     disk is shown);
//   - /proc and /sys: procfs and sysfs; the devices of /dev: devtmpfs
//     (tmpfs's magic);
//   - pipes and the standard streams: pipefs; eventfd, epoll, timerfd,
//     signalfd: the anonymous inodes' file system.
//
// f_flags has ST_VALID, as Linux sets it; f_fsid is 0. gnulib's fts (find,
// du, grep -r) calls fstatfs on each directory: for tmpfs and ext4 it
// trusts the link counts of directories, which the layer keeps as Linux
// does.

// Magic numbers of statfs's f_type (linux/magic.h).
const (
	tmpfsMagic     = 0x01021994
	ext4Magic      = 0xef53
	procMagic      = 0x9fa0
	sysfsMagic     = 0x62656572
	pipefsMagic    = 0x50495045
	anonInodeMagic = 0x09041934
)

// statfs's f_flags (ST_*).
const (
	stRdonly   = 0x1
	stNosuid   = 0x2
	stNodev    = 0x4
	stNoexec   = 0x8
	stValid    = 0x20
	stRelatime = 0x1000
)

// fsInfo is a struct statfs.
type fsInfo struct {
	typ, bsize, blocks, bfree, bavail, files, ffree, namelen, flags uint64
}

// bytes is the struct statfs of x86-64 and AArch64 (the same: 120 bytes,
// every field 64 bits but f_fsid, two ints).
func (s fsInfo) bytes() []byte {
	b := make([]byte, 120)
	le := binary.LittleEndian
	for i, v := range []uint64{s.typ, s.bsize, s.blocks, s.bfree, s.bavail, s.files, s.ffree, 0, s.namelen, s.bsize, s.flags} {
		le.PutUint64(b[8*i:], v)
	}
	return b
}

// overlayFS is the overlay's statfs: tmpfs, of the memory cap's size.
func (p *Process) overlayFS() fsInfo {
	const bs = 4096
	total, free := uint64(1<<62), p.room()
	if p.vm.max != 0 {
		total = p.vm.max
	}
	blocks, bfree := total/bs, min(free, total)/bs
	nodes := uint64(len(p.ov.nodes))
	return fsInfo{typ: tmpfsMagic, bsize: bs, blocks: blocks, bfree: bfree, bavail: bfree,
		files: blocks, ffree: blocks - min(blocks, nodes), namelen: 255, flags: stValid | stNosuid | stNodev | stRelatime}
}

// viewFS is the statfs of the view's files outside the writable trees: a
// read-only ext4 of no size.
var viewFS = fsInfo{typ: ext4Magic, bsize: 4096, namelen: 255, flags: stValid | stRdonly | stRelatime}

// specialFS is the statfs of procfs, sysfs, devtmpfs, pipefs and the
// anonymous inodes' file system.
func specialFS(magic, flags uint64) fsInfo {
	return fsInfo{typ: magic, bsize: 4096, namelen: 255, flags: stValid | flags}
}

// pathFS is the statfs of the file system of the guest's path abs (links
// followed), or an errno.
func (p *Process) pathFS(abs string) (fsInfo, int) {
	if _, ok := devMinor[abs]; ok {
		return specialFS(tmpfsMagic, stNosuid|stRelatime), 0
	}
	if _, ok := p.procFile(abs, true); ok {
		if abs == "/sys" || strings.HasPrefix(abs, "/sys/") {
			return specialFS(sysfsMagic, stNosuid|stNodev|stNoexec|stRelatime), 0
		}
		return specialFS(procMagic, stNosuid|stNodev|stNoexec|stRelatime), 0
	}
	if fd, ok := fdPath(abs); ok {
		if f := p.fds[fd]; f != nil {
			return p.fileFS(f), 0
		}
		return fsInfo{}, eNOENT
	}
	ent, e := p.lookup(abs, true)
	if e != 0 {
		return fsInfo{}, e
	}
	if ent.node != nil || p.ov.writable(ent.path) {
		return p.overlayFS(), 0
	}
	return viewFS, 0
}

// fileFS is the statfs of the file system open file f is on.
func (p *Process) fileFS(f *openFile) fsInfo {
	switch {
	case f.proc != nil:
		if strings.HasPrefix(f.path, "/sys/") {
			return specialFS(sysfsMagic, stNosuid|stNodev|stNoexec|stRelatime)
		}
		return specialFS(procMagic, stNosuid|stNodev|stNoexec|stRelatime)
	case f.kind == fileDevice:
		return specialFS(tmpfsMagic, stNosuid|stRelatime)
	case f.kind == fileSignalfd || f.kind == fileEpoll || f.kind == fileEventfd || f.kind == fileTimerfd:
		return specialFS(anonInodeMagic, 0)
	case f.kind == fileRegular || f.kind == fileDir:
		if f.node != nil || f.path != "" && p.ov.writable(f.path) {
			return p.overlayFS()
		}
		return viewFS
	}
	return specialFS(pipefsMagic, 0) // pipes, the standard streams
}

func (p *Process) sysStatfs(a *[6]uint64) uint64 {
	abs, e := p.guestPath(atFDCWD, a[0])
	if e != 0 {
		return sysErr(e)
	}
	fs, e := p.pathFS(abs)
	if e != 0 {
		return sysErr(e)
	}
	if !p.writeGuest(a[1], fs.bytes()) {
		return sysErr(eFAULT)
	}
	return 0
}

func (p *Process) sysFstatfs(a *[6]uint64) uint64 {
	f := p.fds[int(int32(a[0]))]
	if f == nil {
		return sysErr(eBADF)
	}
	if !p.writeGuest(a[1], p.fileFS(f).bytes()) {
		return sysErr(eFAULT)
	}
	return 0
}
