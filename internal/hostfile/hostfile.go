// Package hostfile opens host files for reading only when they are
// regular files. A FIFO would block the open (or the read) until some
// other process writes to it, a device such as /dev/zero or /dev/random
// never ends, and opening some devices has side effects (a tape rewinds,
// a watchdog arms): sframesim reads none of them, neither for its own FILE
// arguments nor for a guest program.
//
// The file is checked twice: its type before the open (so a device or a
// FIFO is never opened), and, after an open with O_NONBLOCK (which cannot
// block even if the path was replaced by a FIFO in between), the type of
// what was actually opened.
package hostfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is matched (errors.Is) by the error of Open for a path
// that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says which path was refused and what it is.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // the file's type bits
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, TypeName(e.Mode))
}

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// TypeName names the type of a file mode: "directory", "FIFO", ...
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// Open opens path for reading if it is a regular file, following symbolic
// links. Any other file is refused with a *NotRegularError, without
// blocking.
func Open(path string) (*os.File, error) { return open(path, true) }

// OpenNoFollow is Open for a path whose last component must not be a
// symbolic link (the caller resolved the links itself): a link there is
// refused with ELOOP, as open(2) with O_NOFOLLOW does.
func OpenNoFollow(path string) (*os.File, error) { return open(path, false) }

func open(path string, follow bool) (*os.File, error) {
	stat := os.Stat
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC | syscall.O_NOCTTY
	if !follow {
		stat = os.Lstat
		flags |= syscall.O_NOFOLLOW
	}
	fi, err := stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		if !follow && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
		return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	var fd int
	for {
		fd, err = syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() { // replaced since the first look
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	return f, nil
}

// ReadFile reads the whole of the regular file path, as os.ReadFile does;
// any other file is refused as by Open.
func ReadFile(path string) ([]byte, error) { return readFile(path, true) }

// ReadFileNoFollow is ReadFile with OpenNoFollow.
func ReadFileNoFollow(path string) ([]byte, error) { return readFile(path, false) }

func readFile(path string, follow bool) ([]byte, error) {
	f, err := open(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// readAll reads f to its end, sized by its length (a regular file's size
// is known; it may still change while it is read).
func readAll(f *os.File) ([]byte, error) {
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	b := make([]byte, 0, size+1) // +1: see EOF without growing
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
