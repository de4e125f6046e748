//go:build cgo

package linux

import "strings"

// Extended attributes: the guest's files have none. The host's are not
// shown (the view gives the guest its files' contents and fixed metadata
// only, as stat does), and the overlay keeps none, as tmpfs on Linux 6.1
// keeps no user attributes. So a list is empty, a read or a removal
// finds nothing (ENODATA), and a write is refused as Linux refuses it
// there: EROFS on the read-only view, EOPNOTSUPP in the overlay (EPERM
// for the trusted namespace, which needs a capability). Programs that
// copy attributes along with files (Python's shutil.copystat, cp -a)
// then copy none, as from such a file system.

const (
	xattrMax   = 65536 // XATTR_SIZE_MAX
	xattrName  = 255   // XATTR_NAME_MAX
	xattrFlags = 3     // XATTR_CREATE | XATTR_REPLACE
)

// xattrPath resolves the path at addr (following a final symbolic link
// if follow) to whether it is writable (a file of the overlay or below a
// writable tree), or gives the lookup's errno.
func (p *Process) xattrPath(addr uint64, follow bool) (bool, int) {
	abs, e := p.guestPath(atFDCWD, addr)
	if e != 0 {
		return false, e
	}
	// The emulated devices and /proc files (devices.go, procfs.go) keep
	// none either: a write is EOPNOTSUPP, as procfs answers.
	if _, ok := devMinor[abs]; ok {
		return true, 0
	}
	if fd, ok := fdPath(abs); ok {
		if p.fds[fd] == nil {
			return false, eNOENT
		}
		return true, 0
	}
	if _, ok := p.procFile(abs, follow); ok {
		return true, 0
	}
	ent, e := p.lookup(abs, follow)
	if e != 0 {
		return false, e
	}
	return ent.node != nil || p.ov.writable(ent.path), 0
}

// xattrFD is xattrPath for an open file: EBADF for none.
func (p *Process) xattrFD(fd uint64) (bool, int) {
	f := p.fds[int(int32(fd))]
	if f == nil {
		return false, eBADF
	}
	return f.node != nil || f.kind != fileRegular && f.kind != fileDir, 0
}

// xattrNameErr reads the attribute name at addr: ERANGE if it is empty or
// longer than XATTR_NAME_MAX, EFAULT if unreadable.
func (p *Process) xattrNameErr(addr uint64) (string, int) {
	name, e := p.cstring(addr)
	switch {
	case e == eNAMETOOLONG || e == 0 && (name == "" || len(name) > xattrName):
		return "", eRANGE
	case e != 0:
		return "", e
	}
	return name, 0
}

// xattrTarget resolves the target of an xattr call by its variant: "" a
// path followed, "l" a path not followed, "f" a descriptor.
func (p *Process) xattrTarget(variant string, arg uint64) (bool, int) {
	if variant == "f" {
		return p.xattrFD(arg)
	}
	return p.xattrPath(arg, variant == "")
}

// xattrList is listxattr (and llistxattr, flistxattr): an empty list.
func xattrList(variant string) handler {
	return func(p *Process, a *[6]uint64) uint64 {
		if _, e := p.xattrTarget(variant, a[0]); e != 0 {
			return sysErr(e)
		}
		return 0
	}
}

// xattrNone is getxattr (remove false) and removexattr (remove true):
// no such attribute, after the checks of the target (a removal on the
// read-only view: EROFS) and of the name.
func xattrNone(variant string, remove bool) handler {
	return func(p *Process, a *[6]uint64) uint64 {
		writable, e := p.xattrTarget(variant, a[0])
		switch {
		case e != 0:
			return sysErr(e)
		case remove && !writable:
			return sysErr(eROFS)
		}
		if _, e := p.xattrNameErr(a[1]); e != 0 {
			return sysErr(e)
		}
		return sysErr(eNODATA)
	}
}

// xattrSet is setxattr: refused, as by the file system the file is on.
func xattrSet(variant string) handler {
	return func(p *Process, a *[6]uint64) uint64 {
		if a[4]&^xattrFlags != 0 {
			return sysErr(eINVAL)
		}
		writable, e := p.xattrTarget(variant, a[0])
		switch {
		case e != 0:
			return sysErr(e)
		case !writable:
			return sysErr(eROFS)
		}
		name, e := p.xattrNameErr(a[1])
		switch {
		case e != 0:
			return sysErr(e)
		case a[3] > xattrMax:
			return sysErr(eE2BIG)
		case !p.mapped(a[2], a[3]):
			return sysErr(eFAULT)
		case strings.HasPrefix(name, "trusted."):
			return sysErr(ePERM)
		}
		return sysErr(eOPNOTSUPP)
	}
}

// addXattrHandlers adds the twelve calls to handlers.
func addXattrHandlers() {
	for _, v := range []string{"", "l", "f"} {
		handlers[v+"listxattr"] = xattrList(v)
		handlers[v+"getxattr"] = xattrNone(v, false)
		handlers[v+"removexattr"] = xattrNone(v, true)
		handlers[v+"setxattr"] = xattrSet(v)
	}
}
