package atomicfile

import (
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file in the directory dfd for writing.
func openUnnamed(dfd int) (int, error) {
	return unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
}

// link gives the O_TMPFILE file f the name in dfd: through /proc/self/fd
// as open(2) shows, or with AT_EMPTY_PATH where /proc is not mounted
// (allowed to root, and since Linux 6.10 to the file's opener). It returns
// errNoLink when neither works.
func link(f *os.File, dfd int, name string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), dfd, name, unix.AT_SYMLINK_FOLLOW)
	if err != unix.ENOENT {
		return err
	}
	err = unix.Linkat(int(f.Fd()), "", dfd, name, unix.AT_EMPTY_PATH)
	switch err {
	case unix.ENOENT, unix.EPERM, unix.EINVAL:
		return errNoLink
	}
	return err
}

// renameNoReplace renames from to to in dfd unless to exists (EEXIST).
func renameNoReplace(dfd int, from, to string) error {
	return unix.Renameat2(dfd, from, dfd, to, unix.RENAME_NOREPLACE)
}

// raise sends sig to the calling thread: a signal that ends the process
// does so before raise returns, not later, after Write returned and the
// program went on.
func raise(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
}
