//go:build cgo

package linux

import (
	"encoding/binary"
	"io"
	"strings"
)

// copy_file_range and sendfile: bytes from one open file to another in
// the kernel, without passing through the guest's memory.
//
// The overlay is one file system (as tmpfs, which has no copy_file_range
// of its own: Linux splices within it); the files of the view, the
// host's, read-only, are on another. Linux 6.1 answers copy_file_range
// across file systems without a common copy_file_range with EXDEV, and
// programs fall back to read and write (coreutils' cp, which tries it
// first). sendfile copies from any regular file to a file of the overlay
// or to the standard output or error (procfs's files of the machine
// included, not those of a process: EINVAL, as on Linux); to a pipe
// between threads it stops the run (not emulated).

// regularErr is 0 for a regular file, else the errno copy_file_range and
// sendfile give for its type: EISDIR for a directory, EINVAL for a pipe
// (the standard streams are pipes to the guest) or a signalfd.
func regularErr(f *openFile) int {
	switch f.kind {
	case fileRegular:
		return 0
	case fileDir:
		return eISDIR
	}
	return eINVAL
}

// readable and writable report whether f was opened for reading and for
// writing (the standard streams as the guest sees them: pipes, stdin's
// read end, stdout's and stderr's write ends).
func readable(f *openFile) bool {
	return f.kind != fileStdout && f.kind != fileStderr && f.flags&oACCMODE != oWRONLY
}

func writable(f *openFile) bool {
	return f.kind == fileStdout || f.kind == fileStderr || f.kind != fileStdin && f.flags&oACCMODE != 0
}

// readFileAt copies regular file f's bytes from off into b, as many as
// there are (short at the end), or gives an errno if the host's file
// cannot be read.
func (p *Process) readFileAt(f *openFile, b []byte, off int64) (int, int) {
	if f.proc != nil && off == 0 && !p.procRemake(f) {
		return 0, eSRCH // a made file is made again when read from its start (readInto)
	}
	switch {
	case f.node != nil:
		return f.node.data.readAt(b, off), 0
	case f.sf != nil:
		hf := f.sf.file()
		if hf == nil {
			return 0, eIO
		}
		k, err := hf.ReadAt(b, off)
		if err != nil && err != io.EOF && k < len(b) {
			return k, eIO
		}
		return k, 0
	case off < int64(len(f.data)):
		return copy(b, f.data[off:]), 0
	}
	return 0, 0
}

// offsetArg reads the loff_t a copy call's offset pointer addr points to
// (0: none, the file's own offset def is used).
func (p *Process) offsetArg(addr uint64, def int64) (int64, bool) {
	if addr == 0 {
		return def, true
	}
	b, ok := p.readGuest(addr, 8)
	if !ok {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b)), true
}

// advance moves an offset past k copied bytes: the guest's loff_t at addr,
// or the file's own offset.
func (p *Process) advance(f *openFile, addr uint64, pos int64, k uint64) {
	if addr != 0 {
		p.put64(addr, uint64(pos)+k)
		return
	}
	f.off = pos + int64(k)
}

// sysCopyFileRange is copy_file_range(fd_in, off_in, fd_out, off_out, len,
// flags), in the order of Linux's checks.
func (p *Process) sysCopyFileRange(a *[6]uint64) uint64 {
	if a[5] != 0 {
		return sysErr(eINVAL)
	}
	in, out := p.fds[int(int32(a[0]))], p.fds[int(int32(a[2]))]
	if in == nil || !readable(in) || out == nil || !writable(out) {
		return sysErr(eBADF)
	}
	posIn, ok := p.offsetArg(a[1], in.off)
	if !ok {
		return sysErr(eFAULT)
	}
	posOut, ok := p.offsetArg(a[3], out.off)
	if !ok {
		return sysErr(eFAULT)
	}
	if e := regularErr(in); e != 0 {
		return sysErr(e)
	}
	if e := regularErr(out); e != 0 {
		return sysErr(e)
	}
	if out.flags&oAPPEND != 0 {
		return sysErr(eBADF)
	}
	n := min(a[4], maxRW)
	if posIn < 0 || posOut < 0 {
		return sysErr(eINVAL)
	}
	if in.node != nil && in.node == out.node && uint64(posOut)+n > uint64(posIn) && uint64(posOut) < uint64(posIn)+n {
		return sysErr(eINVAL) // overlapping ranges of one file
	}
	if size := in.size(); posIn >= size {
		n = 0
	} else {
		n = min(n, uint64(size-posIn))
	}
	if n == 0 {
		return 0
	}
	if in.node == nil || out.node == nil {
		return sysErr(eXDEV)
	}
	p.accessed(in.node) // read, as by read(2)
	k, e := p.fillNode(out.node, n, posOut, func(piece []byte, off uint64) bool {
		in.node.data.readAt(piece, posIn+int64(off))
		return true
	})
	if e != 0 {
		return sysErr(e)
	}
	p.advance(in, a[1], posIn, k)
	p.advance(out, a[3], posOut, k)
	return k
}

// sysSendfile is sendfile(out_fd, in_fd, offset, count): from a regular
// file to a file of the overlay or the standard output or error.
func (p *Process) sysSendfile(a *[6]uint64) uint64 {
	in := p.fds[int(int32(a[1]))]
	if in == nil || !readable(in) {
		return sysErr(eBADF)
	}
	pos, ok := p.offsetArg(a[2], in.off)
	switch {
	case !ok:
		return sysErr(eFAULT)
	case a[2] != 0 && in.kind != fileRegular && in.kind != fileDir:
		return sysErr(eSPIPE) // a positional read of a pipe
	case pos < 0:
		return sysErr(eINVAL)
	}
	n := min(a[3], maxRW)
	out := p.fds[int(int32(a[0]))]
	if out == nil || !writable(out) {
		return sysErr(eBADF)
	}
	if in.kind != fileRegular {
		return sysErr(eINVAL) // nothing to splice from
	}
	size := in.size()
	readAt := func(b []byte, off int64) (int, int) { return p.readFileAt(in, b, off) }
	if in.proc != nil {
		// procfs's files of a process cannot be spliced from (they have
		// no splice_read); the machine's, /proc/cpuinfo and the like,
		// copy what a read would (busybox's cat uses sendfile).
		if strings.HasPrefix(in.proc.path, procPID) {
			return sysErr(eINVAL)
		}
		if pos == 0 && !p.procRemake(in) {
			return sysErr(eSRCH)
		}
		size = int64(len(in.data))
		readAt = func(b []byte, off int64) (int, int) { // as made above, not again
			if off >= size {
				return 0, 0
			}
			return copy(b, in.data[off:]), 0
		}
	}
	if a[3] > 0 {
		p.accessed(in.node) // read, as by read(2), also at its end
	}
	if pos >= size {
		n = 0
	} else {
		n = min(n, uint64(size-pos))
	}
	var k uint64
	switch {
	case out.kind == fileRegular && out.node != nil:
		if out.flags&oAPPEND != 0 {
			return sysErr(eINVAL)
		}
		if n == 0 {
			return 0
		}
		var e int
		var rerr int
		k, e = p.fillNode(out.node, n, out.off, func(piece []byte, off uint64) bool {
			_, rerr = readAt(piece, pos+int64(off))
			return rerr == 0
		})
		if rerr != 0 {
			e = rerr
		}
		if e != 0 {
			return sysErr(e)
		}
		out.off += int64(k)
	case out.kind == fileStdout || out.kind == fileStderr:
		if n == 0 {
			return 0
		}
		var why writeEnd
		k, why = p.streamOut(p.writer(int(int32(a[0]))), n, func(buf []byte, off uint64) bool {
			got, e := readAt(buf, pos+int64(off))
			return e == 0 && got == len(buf)
		})
		if k == 0 && why != writeDone {
			return p.writeErr(why)
		}
	case out.kind == filePipe:
		p.sysStop(StopUnsupported, 0, "unsupported system call sendfile to a pipe between threads")
		return sysErr(eINVAL)
	default:
		return sysErr(eINVAL)
	}
	p.advance(in, a[2], pos, k)
	return k
}
