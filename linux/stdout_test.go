//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
	"testing"
)

// failingWriter fails every write with err, as os.File does.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "|1", Err: w.err}
}

// TestBrokenStdout: a write to a stdout whose pipe lost its reader fails
// with EPIPE and raises SIGPIPE, as on Linux (blocked here, so that it
// stays pending); any other failure of the host's write is EIO, with no
// signal.
func TestBrokenStdout(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Stdout: failingWriter{syscall.EPIPE}, Stderr: failingWriter{syscall.ENOSPC}})
			pending := func() uint64 {
				t.Helper()
				if r := g.call("rt_sigpending", g.buf+4096, 8); r != 0 {
					t.Fatalf("rt_sigpending = %d", r)
				}
				return binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+4096, 8))
			}
			const sigpipe = 1 << (13 - 1)
			// Blocked, so that it stays pending (sigpending reports only
			// those).
			mask := binary.LittleEndian.AppendUint64(nil, sigpipe)
			if err := g.p.Engine.WriteMem(g.buf+4096, mask); err != nil {
				t.Fatal(err)
			}
			if r := g.call("rt_sigprocmask", 0, g.buf+4096, 0, 8); r != 0 {
				t.Fatalf("rt_sigprocmask = %d", r)
			}
			if r := g.write(2, "x"); r != -eIO || pending() != 0 {
				t.Errorf("write to a full stderr = %d, pending %#x; want -EIO, none", r, pending())
			}
			if r := g.write(1, "x"); r != -ePIPE || pending() != sigpipe {
				t.Errorf("write to a broken stdout = %d, pending %#x; want -EPIPE, SIGPIPE", r, pending())
			}
		})
	}
}

// TestBrokenStdoutIgnored: with SIGPIPE ignored, only EPIPE.
func TestBrokenStdoutIgnored(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Stdout: failingWriter{syscall.EPIPE}})
			act := make([]byte, 32) // sa_handler SIG_IGN, no flags, empty mask
			act[0] = 1
			if err := g.p.Engine.WriteMem(g.buf+4096, act); err != nil {
				t.Fatal(err)
			}
			if r := g.call("rt_sigaction", 13, g.buf+4096, 0, 8); r != 0 {
				t.Fatalf("rt_sigaction = %d", r)
			}
			if r := g.write(1, "x"); r != -ePIPE {
				t.Errorf("write = %d, want -EPIPE", r)
			}
			if r := g.call("rt_sigpending", g.buf+4096, 8); r != 0 || !bytes.Equal(readGuestBytes(t, g.p, g.buf+4096, 8), make([]byte, 8)) {
				t.Errorf("a signal is pending: %x", readGuestBytes(t, g.p, g.buf+4096, 8))
			}
		})
	}
}
