// Package atomicfile writes files so that readers see the old contents or
// the new, never a part: reports a run writes while CI collects them.
//
// Only a regular file is replaced, or a new name created: a symbolic link
// (/dev/stdout is one), a device, a FIFO, a socket or a directory at the
// path is refused with an error wrapping [ErrNotRegular], and nothing is
// written through it or put in its place. Every step works relative to
// the directory opened once, so a directory renamed meanwhile does not
// redirect the write.
//
// # Temporary files
//
// The data goes first into an unnamed file (open(2) with O_TMPFILE in the
// target's directory): a process killed while writing, even by SIGKILL,
// leaves nothing behind. The finished file is then given its name with
// linkat(2) through /proc/self/fd: a new name directly (linkat never
// replaces an existing name, so this is atomic and needs no temporary
// name at all); to replace an existing file, a temporary name
// ".NAME.NNNN" beside it followed by renameat(2). Only between those two
// system calls does a temporary name exist. SIGINT, SIGTERM and SIGHUP
// are held off over that window (and, if one came, raised again right
// after the rename), so only SIGKILL landing between two consecutive
// system calls can leave a temporary file.
//
// Where O_TMPFILE is not supported (other systems than Linux, some file
// systems), or the file cannot be linked (no /proc), the data goes into a
// named temporary file beside the target instead: SIGINT, SIGTERM and
// SIGHUP during the write remove it before the signal takes effect, but
// SIGKILL leaves it.
//
// A rename replaces whatever has the name at that moment: a program that
// swaps the checked regular file for a symbolic link between the check
// and the rename (microseconds) has the link replaced, never followed.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is wrapped by the error Write returns for a path that
// names something other than a regular file.
var ErrNotRegular = errors.New("a report is written only to a regular file or a new name")

// Mode is the permission of a written file.
const Mode = 0o644

// Write writes data to path atomically: to an unnamed or temporary file in
// the same directory, then linked or renamed to path (see the package
// documentation). A path that exists must be a regular file.
func Write(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%s: not a file name", path)
	}
	dir = filepath.Clean(dir) // "." for ""
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	w := &writer{dfd: dfd, base: base, path: path}
	// Refuse before writing anything.
	if _, err := w.check(); err != nil {
		return err
	}
	for {
		aborted, err := w.write(data)
		// A signal removed the temporary file and the process lived on (the
		// program handles that signal itself): write it again.
		if !aborted {
			return err
		}
	}
}

// Check returns the error Write would give for what path names now if it
// is not a regular file (wrapping [ErrNotRegular]), and nil otherwise:
// for a report that is written at the end of a long run, a mistake is
// told at the start.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // Write tells what is wrong with a missing directory
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(dfd)
	_, err = (&writer{dfd: dfd, base: base, path: path}).check()
	if !errors.Is(err, ErrNotRegular) {
		return nil
	}
	return err
}

// Test hooks, called at each stage of a write (nil outside tests).
var (
	noTmpfile bool               // write through a named temporary file
	testHook  func(stage string) // "written": the data is written; "linked": the temporary name exists
)

func hook(stage string) {
	if testHook != nil {
		testHook(stage)
	}
}

type writer struct {
	dfd  int    // the directory
	base string // the name in it
	path string // as given, for messages
}

// check reports whether the name exists; it refuses anything but a regular
// file.
func (w *writer) check() (exists bool, err error) {
	var st unix.Stat_t
	err = unix.Fstatat(w.dfd, w.base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return false, nil
	case err != nil:
		return false, &fs.PathError{Op: "lstat", Path: w.path, Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		return true, nil
	}
	kind := "not a regular file"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		kind = "a symbolic link"
	case unix.S_IFCHR:
		kind = "a character device"
	case unix.S_IFBLK:
		kind = "a block device"
	case unix.S_IFIFO:
		kind = "a FIFO"
	case unix.S_IFSOCK:
		kind = "a socket"
	case unix.S_IFDIR:
		kind = "a directory"
	}
	return false, fmt.Errorf("%s is %s: refusing to replace it or write through it (%w)", w.path, kind, ErrNotRegular)
}

// errNoLink: the unnamed file cannot be given a name here.
var errNoLink = errors.New("cannot link an O_TMPFILE file")

// write writes data once. aborted is set when a signal removed the
// temporary file and the process survived it.
func (w *writer) write(data []byte) (aborted bool, err error) {
	if !noTmpfile {
		fd, err := openUnnamed(w.dfd)
		if err == nil {
			f := os.NewFile(uintptr(fd), w.path)
			err := w.writeUnnamed(f, data)
			f.Close()
			if err != errNoLink {
				return false, err
			}
		}
		// O_TMPFILE unsupported here: a named temporary file.
	}
	return w.writeNamed(data)
}

// fill writes data to f and sets its mode.
func fill(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Chmod(Mode)
}

// writeUnnamed writes data to the O_TMPFILE file f and gives it the name.
func (w *writer) writeUnnamed(f *os.File, data []byte) error {
	if err := fill(f, data); err != nil {
		return fmt.Errorf("writing %s: %w", w.path, err)
	}
	hook("written")
	g := holdSignals()
	defer g.release()
	for {
		exists, err := w.check()
		if err != nil {
			return err
		}
		if !exists {
			err := link(f, w.dfd, w.base)
			if err == unix.EEXIST {
				continue // created meanwhile: check what it is
			}
			if err != nil && err != errNoLink {
				err = &fs.PathError{Op: "link", Path: w.path, Err: err}
			}
			return err
		}
		// Replace the regular file: a temporary name, renamed over it,
		// with the signals held off in between.
		g.mu.Lock()
		tmp, err := w.tempName(func(name string) error { return link(f, w.dfd, name) })
		if err == nil {
			hook("linked")
			if err = unix.Renameat(w.dfd, tmp, w.dfd, w.base); err != nil {
				unix.Unlinkat(w.dfd, tmp, 0)
				err = &fs.PathError{Op: "rename", Path: w.path, Err: err}
			}
		} else if err != errNoLink {
			err = &fs.PathError{Op: "link", Path: w.path, Err: err}
		}
		g.mu.Unlock()
		return err
	}
}

// tempName calls create with fresh temporary names beside the target until
// one does not exist yet, and returns it.
func (w *writer) tempName(create func(name string) error) (string, error) {
	for {
		name := "." + w.base + "." + strconv.FormatUint(uint64(rand.Uint32()), 10)
		err := create(name)
		if err != unix.EEXIST {
			return name, err
		}
	}
}

// writeNamed writes data through a named temporary file.
func (w *writer) writeNamed(data []byte) (aborted bool, err error) {
	g := holdSignals()
	defer g.release()
	var f *os.File
	g.mu.Lock()
	tmp, err := w.tempName(func(name string) error {
		fd, err := unix.Openat(w.dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			f = os.NewFile(uintptr(fd), name)
		}
		return err
	})
	if err != nil {
		g.mu.Unlock()
		return false, &fs.PathError{Op: "create", Path: filepath.Join(filepath.Dir(w.path), tmp), Err: err}
	}
	g.pending, g.dfd = tmp, w.dfd
	g.mu.Unlock()

	err = fill(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	hook("written")
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.aborted {
		return true, nil
	}
	g.pending = ""
	if err != nil {
		unix.Unlinkat(w.dfd, tmp, 0)
		return false, fmt.Errorf("writing %s: %w", w.path, err)
	}
	for {
		exists, err := w.check()
		if err != nil {
			unix.Unlinkat(w.dfd, tmp, 0)
			return false, err
		}
		if exists {
			err = unix.Renameat(w.dfd, tmp, w.dfd, w.base)
		} else if err = renameNoReplace(w.dfd, tmp, w.base); err == unix.EEXIST {
			continue // created meanwhile: check what it is
		} else if err == unix.EINVAL || err == unix.ENOSYS {
			err = unix.Renameat(w.dfd, tmp, w.dfd, w.base) // no RENAME_NOREPLACE here
		}
		if err != nil {
			unix.Unlinkat(w.dfd, tmp, 0)
			return false, &fs.PathError{Op: "rename", Path: w.path, Err: err}
		}
		return false, nil
	}
}

// A guard holds off the signals that end a process while a temporary name
// exists: it removes the pending temporary file (if any) when one comes,
// and raises the signal again once the name is settled (g.mu free), so
// that it has its usual effect.
type guard struct {
	mu      sync.Mutex
	pending string // a temporary name to remove on a signal
	dfd     int
	aborted bool // a signal removed pending

	ch   chan os.Signal
	done chan struct{}
	wg   sync.WaitGroup
}

// holdSignals starts catching SIGINT, SIGTERM and SIGHUP (those not
// ignored).
func holdSignals() *guard {
	g := &guard{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	var sigs []os.Signal
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return g
	}
	signal.Notify(g.ch, sigs...)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		select {
		case s := <-g.ch:
			g.handle(s)
		case <-g.done:
			select {
			case s := <-g.ch: // came before release stopped the catching
				g.handle(s)
			default:
			}
		}
	}()
	return g
}

// handle removes the pending temporary file and raises s again.
func (g *guard) handle(s os.Signal) {
	g.mu.Lock()
	if g.pending != "" {
		unix.Unlinkat(g.dfd, g.pending, 0)
		g.pending, g.aborted = "", true
	}
	g.mu.Unlock()
	signal.Stop(g.ch)
	raise(s.(syscall.Signal))
}

// release stops catching; a signal caught meanwhile is raised again.
func (g *guard) release() {
	signal.Stop(g.ch)
	close(g.done)
	g.wg.Wait()
}
