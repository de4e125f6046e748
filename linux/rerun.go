//go:build cgo

package linux

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sframesim/sframesim/emu"
)

// NeedExact is the error Run and Continue return when, counting per block
// (Config.CountBlocks), the guest faulted inside a block counted whole:
// which instruction faulted is not known there, so the run cannot go on
// exactly. Loading the program again with Config.ExactAfter = At gives the
// same run up to that block and the exact fault; RunFast does it.
type NeedExact struct {
	At uint64 // instructions before the block that faulted
}

func (e *NeedExact) Error() string {
	return fmt.Sprintf("a fault inside a block counted whole after %d instructions: run again counting per instruction from there", e.At)
}

// needExact turns an inexact fault of the engine into NeedExact.
func needExact(err error) error {
	var ie *emu.InexactError
	if errors.As(err, &ie) {
		return &NeedExact{At: ie.Insns}
	}
	return nil
}

// RunFast loads path and runs it counting per block (Config.CountBlocks),
// which is several times faster than counting per instruction and gives
// the same run. If the guest faults inside a block (NeedExact), it runs
// the program again from the start, counting per block up to that block
// and per instruction from there: what it reads from Stdin is given to it
// again, read call by read call, and what it writes to Stdout and Stderr
// again (the same bytes: the run is deterministic) is not passed on a
// second time. Config.Timeout applies to each run. The Process is the one
// that ran last; the caller closes it.
func RunFast(path string, cfg Config) (*Process, *Exit, error) {
	cfg.CountBlocks = true
	in := &replayReader{r: cfg.Stdin}
	out, errOut := &onceWriter{w: cfg.Stdout}, &onceWriter{w: cfg.Stderr}
	if cfg.Stdin != nil && !regularFile(cfg.Stdin) && !memDeviceFile(cfg.Stdin) {
		cfg.Stdin = in // a regular file is read at offsets, a device emulated: the same again
	}
	if cfg.Stdout != nil {
		cfg.Stdout = out
	}
	if cfg.Stderr != nil {
		cfg.Stderr = errOut
	}
	for {
		p, err := Load(path, cfg)
		if err != nil {
			return nil, nil, err
		}
		x, err := p.Run()
		var ne *NeedExact
		if !errors.As(err, &ne) || cfg.ExactAfter != 0 {
			return p, x, err
		}
		p.Close()
		cfg.ExactAfter = ne.At
		if cfg.ExactAfter == 0 {
			cfg.CountBlocks = false // from the first instruction on
		}
		in.rewind()
		out.rewind()
		errOut.rewind()
	}
}

// replayReader records what each Read of r returned, and after rewind
// returns the same again, call by call, before reading r further.
type replayReader struct {
	mu   sync.Mutex
	r    io.Reader
	log  []readResult
	next int // the call to replay next
}

type readResult struct {
	data []byte
	err  error
}

func (rr *replayReader) Read(b []byte) (int, error) {
	rr.mu.Lock()
	if rr.next < len(rr.log) {
		res := &rr.log[rr.next]
		n := copy(b, res.data)
		if n < len(res.data) { // a smaller buffer than the first time
			res.data = res.data[n:]
			rr.mu.Unlock()
			return n, nil
		}
		rr.next++
		rr.mu.Unlock()
		return n, res.err
	}
	rr.mu.Unlock()
	n, err := rr.r.Read(b)
	rr.mu.Lock()
	rr.log = append(rr.log, readResult{append([]byte(nil), b[:n]...), err})
	rr.next = len(rr.log)
	rr.mu.Unlock()
	return n, err
}

// replaying reports whether the next Read returns what an earlier one
// did (without reading r).
func (rr *replayReader) replaying() bool {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.next < len(rr.log)
}

func (rr *replayReader) rewind() {
	rr.mu.Lock()
	rr.next = 0
	rr.mu.Unlock()
}

// onceWriter passes on what is written to it, except, after rewind, the
// bytes it passed on before.
type onceWriter struct {
	mu      sync.Mutex
	w       io.Writer
	written int64 // passed on (or skipped) in this run
	skip    int64 // passed on by the runs before
}

func (ow *onceWriter) Write(b []byte) (int, error) {
	ow.mu.Lock()
	defer ow.mu.Unlock()
	n := len(b)
	if ow.written < ow.skip {
		k := min(int64(len(b)), ow.skip-ow.written)
		ow.written += k
		b = b[k:]
	}
	if len(b) == 0 {
		return n, nil
	}
	k, err := ow.w.Write(b)
	ow.written += int64(k)
	if err != nil {
		return n - len(b) + k, err
	}
	return n, nil
}

// toSkip returns how many of the next bytes written are skipped (passed
// on by a run before).
func (ow *onceWriter) toSkip() int64 {
	ow.mu.Lock()
	defer ow.mu.Unlock()
	return max(0, ow.skip-ow.written)
}

func (ow *onceWriter) rewind() {
	ow.mu.Lock()
	ow.skip = max(ow.skip, ow.written)
	ow.written = 0
	ow.mu.Unlock()
}
