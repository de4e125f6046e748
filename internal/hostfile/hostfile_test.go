package hostfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpen: regular files are read (through a link too, unless NoFollow);
// a FIFO, a socket, a device and a directory are refused with their type,
// at once.
func TestOpen(t *testing.T) {
	d := t.TempDir()
	file, link, fifo, sock := filepath.Join(d, "file"), filepath.Join(d, "link"), filepath.Join(d, "fifo"), filepath.Join(d, "sock")
	if err := os.WriteFile(file, []byte("contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	for _, read := range []func(string) ([]byte, error){ReadFile, ReadFileNoFollow} {
		if b, err := read(file); err != nil || string(b) != "contents" {
			t.Errorf("%s: %q, %v", file, b, err)
		}
	}
	if b, err := ReadFile(link); err != nil || string(b) != "contents" {
		t.Errorf("%s: %q, %v", link, b, err)
	}
	if _, err := ReadFileNoFollow(link); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("%s without following: %v, want ELOOP", link, err)
	}
	start := time.Now()
	for path, want := range map[string]string{
		fifo:        fifo + ": not a regular file (FIFO)",
		sock:        sock + ": not a regular file (socket)",
		"/dev/null": "/dev/null: not a regular file (character device)",
		"/dev/zero": "/dev/zero: not a regular file (character device)",
		d:           d + ": not a regular file (directory)",
	} {
		for _, open := range []func(string) (*os.File, error){Open, OpenNoFollow} {
			f, err := open(path)
			if f != nil || !errors.Is(err, ErrNotRegular) || err.Error() != want {
				t.Errorf("%s: %v, %v; want %q", path, f, err, want)
			}
		}
		if _, err := ReadFile(path); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s): %v", path, err)
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("refusing took %v", time.Since(start))
	}
	if _, err := Open(filepath.Join(d, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
