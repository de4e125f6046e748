//go:build cgo

package linux

import (
	"io"
	"math"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Waiting for the caller's streams (Config.Stdin, Stdout, Stderr) without
// letting a wait outlast the run's limits.
//
// A guest that reads its stdin waits for whoever feeds it (sleep 30 |
// sframesim verify ... cat), one that writes its stdout waits for whoever
// reads it (sframesim run yes | sleep 30), and neither may make the run
// outlast its timeout or an interrupt (Ctrl-C). When a stream is a host
// descriptor that can block (a pipe, a terminal, a socket: hostFD), the
// layer waits for it with poll(2), in slices of at most waitSlice, and
// checks between two slices whether the run must stop (stopWaiting):
// then it moves only what the descriptor can take without blocking, all
// on the goroutine that runs the guest:
//
//   - a read after POLLIN returns what is there (a pipe or a terminal
//     with data, or at its end, does not block);
//   - a write after POLLOUT writes at most pipeBuf (PIPE_BUF) bytes: POLLOUT on a
//     pipe means a free buffer slot, which holds PIPE_BUF bytes, so a
//     blocking write of that many returns at once (on a terminal or a
//     socket, POLLOUT likewise means room for a write of that size).
//
// Why not the alternatives: setting O_NONBLOCK on the descriptor would
// change the open file description the user's shell shares with us (and
// leave it so if sframesim died), and a read or write on another
// goroutine, abandoned when the run stops, cannot be cancelled (the
// goroutine and its buffer stay, and it may still consume input). A wake-up
// descriptor instead of slices would need every source of a stop to write
// to it, but verify's interrupt is a flag it sets (WaitLimits): a slice
// of 50 ms bounds how late a stop is seen, at the cost of 20 wake-ups a
// second while the guest waits.
//
// What is left: the poll and the read or write are two steps, so another
// process that shares the pipe or terminal can empty it (or fill it) in
// between, and the read (or the write) then blocks as before, until that
// other process lets it go on. Regular files and block devices never
// block: they are read and written as before, in ioChunk pieces, without
// polling. A stream that is not a host descriptor (an io.Reader or
// io.Writer of a caller of this package) is read or written on a goroutine
// (hostIO), abandoned when the run stops.

// waitSlice is the longest poll(2) between two looks at the run's limits.
const waitSlice = 50 * time.Millisecond

// What hostFD returns for a stream without a descriptor to poll.
const (
	notHostFD   = -1 // not a host file: read or written on a goroutine (hostIO)
	neverBlocks = -2 // a regular file or a block device: read or written directly
)

// hostFD returns the host descriptor beneath s, a stream of the Config,
// if reading or writing it may block (a pipe, FIFO, terminal or other
// character device, socket); else neverBlocks for a regular file or a
// block device, notHostFD for a stream that is not a host file. It looks
// through the wrappers of RunFast (replayReader, onceWriter), and takes
// the descriptor through SyscallConn, which leaves it as it is (os.File's
// Fd would make it blocking).
func hostFD(s any) int {
	switch t := s.(type) {
	case *replayReader:
		return hostFD(t.r)
	case *onceWriter:
		return hostFD(t.w)
	case syscall.Conn:
		rc, err := t.SyscallConn()
		if err != nil {
			return notHostFD
		}
		fd := notHostFD
		err = rc.Control(func(u uintptr) {
			var st unix.Stat_t
			if u > math.MaxInt32 || unix.Fstat(int(u), &st) != nil {
				return
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG, unix.S_IFBLK, unix.S_IFDIR:
				fd = neverBlocks
			default:
				fd = int(u)
			}
		})
		if err != nil {
			return notHostFD
		}
		return fd
	}
	return notHostFD
}

// WaitLimits sets what ends a wait for the caller's streams (a read of
// Config.Stdin, a write to Stdout or Stderr, that cannot go on yet) for a
// caller that runs the program through Continue (a Session) and checks
// its own limits between instructions, as verify does: while the guest
// waits, no instruction runs and no observer is called. When deadline (if
// not zero) passes, the run ends with StopTimeout, as Config.Timeout
// (timeout) would end it; when *interrupt (if not nil) becomes true, with
// StopInterrupted, as Interrupt ends it. Run sets the deadline itself,
// from Config.Timeout.
func (p *Process) WaitLimits(deadline time.Time, timeout time.Duration, interrupt *atomic.Bool) {
	p.deadline, p.waitInterrupt = deadline, interrupt
	if timeout > 0 {
		p.cfg.Timeout = timeout
	}
}

// stopWaiting reports whether a wait for the host must end now (the
// deadline passed, an interrupt came), and if so ends the run.
func (p *Process) stopWaiting() bool {
	if p.waitInterrupt != nil && p.waitInterrupt.Load() {
		p.interrupted.Store(true)
	}
	p.endedFromOutside()
	if !p.interrupted.Load() && !p.timedOut.Load() {
		if p.deadline.IsZero() || time.Now().Before(p.deadline) {
			return false
		}
		p.timedOut.Store(true)
	}
	p.stopForSignal()
	return true
}

// testHostWait, if not nil, is called as a wait for the host begins (tests).
var testHostWait func()

// waitEnd says how a wait for the host ended.
type waitEnd int

const (
	waitReady   waitEnd = iota // the descriptor is ready (or has an error, or its end)
	waitStopped                // the run must stop (stopWaiting)
	waitSignal                 // a signal from outside came (Config.Signals)
)

// waitFD waits until the host descriptor fd has one of events (or an
// error, or its end), or until the run must stop (stopWaiting), or a
// signal from outside comes for the guest to take (hostsignal.go).
func (p *Process) waitFD(fd int, events int16) waitEnd {
	if testHostWait != nil {
		testHostWait()
	}
	for {
		if p.stopWaiting() {
			return waitStopped
		}
		if p.hostSignalsWaiting() {
			return waitSignal
		}
		d := waitSlice
		if !p.deadline.IsZero() {
			d = min(d, time.Until(p.deadline))
		}
		ms := int((d + time.Millisecond - 1) / time.Millisecond) // rounded up: no busy loop before the deadline
		if ms <= 0 {
			continue
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(pfd, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return waitReady // a POLLERR, POLLHUP or POLLNVAL the read or write reports
		}
	}
}

// hostRead reads into b from r, the stream Config.Stdin whose host
// descriptor (hostFD) is fd, waiting for it as the file's comment says;
// end says whether the wait ended otherwise (the run was stopped, a signal
// came), and nothing was read then (after a stop, b is not the read's: it
// returned).
func (p *Process) hostRead(r io.Reader, fd int, b []byte) (n int, end waitEnd, err error) {
	if rr, ok := r.(*replayReader); ok && rr.replaying() {
		n, err = rr.Read(b) // what the first run read, again: no wait
		return n, waitReady, err
	}
	switch fd {
	case neverBlocks:
		n, err = r.Read(b)
		return n, waitReady, err
	case notHostFD:
		return p.hostIO(func() (int, error) { return r.Read(b) })
	}
	if end := p.waitFD(fd, unix.POLLIN); end != waitReady {
		return 0, end, nil
	}
	n, err = r.Read(b)
	return n, waitReady, err
}

// hostWrite writes b to w, the stream Config.Stdout or Stderr whose host
// descriptor (hostFD) is fd, waiting for it as the file's comment says:
// with a descriptor, in pieces of at most pipeBuf bytes, each after
// POLLOUT. It returns how much was written; end says that the wait ended
// otherwise (the run was stopped, a signal came) before all of it was (for
// a stream that is not a host file, the write may then go on after a stop,
// and owns b).
func (p *Process) hostWrite(w io.Writer, fd int, b []byte) (n int, end waitEnd, err error) {
	switch fd {
	case neverBlocks:
		n, err = w.Write(b)
		return n, waitReady, err
	case notHostFD:
		return p.hostIO(func() (int, error) { return w.Write(b) })
	}
	if ow, ok := w.(*onceWriter); ok {
		// What a run before passed on is skipped, not written: no wait.
		if k := int(min(int64(len(b)), ow.toSkip())); k > 0 {
			if n, err = w.Write(b[:k]); err != nil {
				return n, waitReady, err
			}
		}
	}
	for n < len(b) {
		if end := p.waitFD(fd, unix.POLLOUT); end != waitReady {
			return n, end, nil
		}
		k, err := w.Write(b[n:min(len(b), n+pipeBuf)])
		n += k
		if err != nil {
			return n, waitReady, err
		}
	}
	return n, waitReady, nil
}
