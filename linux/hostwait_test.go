//go:build cgo

package linux

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
)

// TestHostWaitStops: a guest that waits for the host — a read of a stdin
// that has no data yet, a write to a stdout or stderr nobody reads — ends
// the run at its deadline (StopTimeout) or at an interrupt
// (StopInterrupted: Process.Interrupt, or the flag given to WaitLimits, as
// verify's Ctrl-C sets it), whether the stream is a host pipe (waited for
// with poll) or an io.Pipe (on a goroutine). Without it the system call
// never returned (the test then unblocks it after 20 s and fails). The
// rows with a peer that reads or writes check that data still flows, in
// order and whole, through the waits.
func TestHostWaitStops(t *testing.T) {
	const big = 512 << 10 // more than a pipe holds
	type ends struct {
		guest any       // the Config stream
		peer  io.Closer // the other end, closed to unblock a failed test
	}
	osPipe := func(t *testing.T, guestReads bool) ends {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		if guestReads {
			return ends{r, w}
		}
		return ends{w, r}
	}
	ioPipe := func(t *testing.T, guestReads bool) ends {
		r, w := io.Pipe()
		t.Cleanup(func() { r.Close(); w.Close() })
		if guestReads {
			return ends{r, w}
		}
		return ends{w, r}
	}
	for _, c := range []struct {
		name   string
		fd     int // the guest's: 0 reads, 1 or 2 write
		pipe   func(*testing.T, bool) ends
		stop   string // "deadline", "flag", "Interrupt", or "" (a peer that reads or writes)
		reason StopReason
	}{
		{"stdin/pipe/deadline", 0, osPipe, "deadline", StopTimeout},
		{"stdin/pipe/flag", 0, osPipe, "flag", StopInterrupted},
		{"stdin/pipe/Interrupt", 0, osPipe, "Interrupt", StopInterrupted},
		{"stdin/io.Pipe/deadline", 0, ioPipe, "deadline", StopTimeout},
		{"stdin/io.Pipe/flag", 0, ioPipe, "flag", StopInterrupted},
		{"stdout/pipe/deadline", 1, osPipe, "deadline", StopTimeout},
		{"stdout/pipe/flag", 1, osPipe, "flag", StopInterrupted},
		{"stdout/pipe/Interrupt", 1, osPipe, "Interrupt", StopInterrupted},
		{"stderr/pipe/deadline", 2, osPipe, "deadline", StopTimeout},
		{"stdout/io.Pipe/deadline", 1, ioPipe, "deadline", StopTimeout},
		{"stdout/io.Pipe/flag", 1, ioPipe, "flag", StopInterrupted},
		{"stdin/pipe/data", 0, osPipe, "", 0},
		{"stdout/pipe/data", 1, osPipe, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := c.pipe(t, c.fd == 0)
			var cfg Config
			switch c.fd {
			case 0:
				cfg.Stdin = e.guest.(io.Reader)
			case 1:
				cfg.Stdout = e.guest.(io.Writer)
			case 2:
				cfg.Stderr = e.guest.(io.Writer)
			}
			g := newGuest(t, arch.AMD64, cfg)
			var flag atomic.Bool
			switch c.stop {
			case "deadline":
				g.p.WaitLimits(time.Now().Add(300*time.Millisecond), 300*time.Millisecond, nil)
			case "flag":
				g.p.WaitLimits(time.Time{}, 0, &flag)
				go func() { time.Sleep(300 * time.Millisecond); flag.Store(true) }()
			case "Interrupt":
				go func() { time.Sleep(300 * time.Millisecond); g.p.Interrupt() }()
			}
			// The peer: feeds stdin "hello" or reads all the guest writes.
			peerDone := make(chan []byte, 1)
			if c.stop == "" {
				go func() {
					if c.fd == 0 {
						e.peer.(io.Writer).Write([]byte("hello"))
						peerDone <- nil
						return
					}
					b, _ := io.ReadAll(io.LimitReader(e.peer.(io.Reader), big))
					peerDone <- b
				}()
			}
			want := bytes.Repeat([]byte("0123456789abcdef"), big/16)
			if err := g.p.Engine.WriteMem(g.buf, want); err != nil {
				t.Fatal(err)
			}
			done := make(chan int64, 1)
			go func() {
				if c.fd == 0 {
					done <- g.call("read", 0, g.buf, 100)
				} else {
					done <- g.call("write", uint64(c.fd), g.buf, big)
				}
			}()
			var r int64
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				e.peer.Close()
				<-done
				t.Fatalf("the system call waited for the host past its %s", c.stop)
			}
			x := g.p.Exited()
			if c.stop != "" {
				if x == nil || x.Reason != c.reason {
					t.Fatalf("= %d, exit %v; want the run ended (%v)", r, x, c.reason)
				}
				if c.reason == StopTimeout && !strings.Contains(x.Detail, "timeout: 300ms of wall-clock time passed") {
					t.Errorf("detail %q", x.Detail)
				}
				return
			}
			got := <-peerDone
			switch {
			case x != nil:
				t.Fatalf("= %d, exit %v", r, x)
			case c.fd == 0 && (r != 5 || string(readGuestBytes(t, g.p, g.buf, 5)) != "hello"):
				t.Errorf("read = %d %q, want 5 \"hello\"", r, readGuestBytes(t, g.p, g.buf, max(0, uint64(r))))
			case c.fd != 0 && (r != big || !bytes.Equal(got, want)):
				t.Errorf("write = %d, the reader got %d bytes (equal %v); want %d", r, len(got), bytes.Equal(got, want), big)
			}
		})
	}
}

// TestHostFD: only streams that can block are polled; a regular file is
// read and written as before, and a stream that is not a host file on a
// goroutine; RunFast's wrappers are seen through.
func TestHostFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	reg, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, c := range []struct {
		name string
		s    any
		want int
	}{
		{"pipe read end", r, int(r.Fd())},
		{"pipe write end", w, int(w.Fd())},
		{"character device", null, int(null.Fd())},
		{"regular file", reg, neverBlocks},
		{"replayReader on a pipe", &replayReader{r: r}, int(r.Fd())},
		{"onceWriter on a file", &onceWriter{w: reg}, neverBlocks},
		{"bytes.Buffer", &bytes.Buffer{}, notHostFD},
		{"nil", nil, notHostFD},
	} {
		if got := hostFD(c.s); got != c.want {
			t.Errorf("%s: hostFD = %d, want %d", c.name, got, c.want)
		}
	}
}
