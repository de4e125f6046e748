//go:build cgo

package linux

// The calls only a process with a capability may make (CAP_SYS_ADMIN,
// CAP_SYS_BOOT, CAP_SYSLOG, CAP_SYS_CHROOT, CAP_SYS_MODULE,
// CAP_SYS_PACCT, CAP_SYS_TTY_CONFIG) answer as Linux answers the guest,
// uid 1000 without capabilities: EPERM, after the checks Linux makes
// before the capability's (chroot's path, umount2's flags). syslog is
// EPERM for every action, as with kernel.dmesg_restrict=1, Debian's
// default (dmesg then says "Operation not permitted", as natively).
// Before, each stopped the run as unsupported.

// capDenied are the calls that check a capability first.
var capDenied = []string{
	"syslog", "reboot", "sethostname", "setdomainname", "swapon", "swapoff",
	"init_module", "finit_module", "delete_module", "acct", "kexec_load",
	"kexec_file_load", "vhangup", "pivot_root",
}

func sysCapDenied(*Process, *[6]uint64) uint64 { return sysErr(ePERM) }

// sysChroot is chroot(path): what the path names must be a directory the
// guest may search, as for chdir (ENOENT, ENOTDIR, EACCES...), then EPERM.
func (p *Process) sysChroot(a *[6]uint64) uint64 {
	_, node, e := p.dirAt(a[0])
	switch {
	case e != 0:
		return sysErr(e)
	case !allows(node, 1):
		return sysErr(eACCES)
	}
	return sysErr(ePERM)
}

// sysUmount2 is umount2(target, flags): EINVAL for unknown flags, then
// EPERM.
func (p *Process) sysUmount2(a *[6]uint64) uint64 {
	const known = 0x1 | 0x2 | 0x4 | 0x8 // MNT_FORCE, MNT_DETACH, MNT_EXPIRE, UMOUNT_NOFOLLOW
	if a[1]&^known != 0 {
		return sysErr(eINVAL)
	}
	return sysErr(ePERM)
}
