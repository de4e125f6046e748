package emu

/*
#include "hook.h"
*/
import "C"

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Unicorn translates guest code into a buffer of its own (QEMU's
// code_gen_buffer), one mapping of the host's, readable, writable and
// executable, which it fills from the start, translation after
// translation: a translation dropped (code the guest rewrote, a range
// Start counts per instruction for a while, memory re-protected) leaves
// its bytes there, and the block is translated anew further on. Only
// dropping all translations (uc_ctl_flush_tb, QEMU's tb_flush) starts the
// buffer over; Unicorn 2.1.1's also zeroes the whole buffer (a memset),
// which brings every page of it into memory.
//
// Unicorn does that itself when the buffer is full, in the middle of a
// run, and then crashes (SIGSEGV in tb_set_jmp_target: the block it came
// from was zeroed, or SIGBUS): a long run of a threaded program (pigz -p
// 4, which drops a few translations at every switch of threads) filled
// its default buffer of 1 GiB in about 4 minutes, a JIT rewriting code in
// a loop under verify in 15 s. The engine therefore watches the buffer
// itself:
//
//   - it asks for a buffer of codeBufferSize bytes, finds it in the
//     process's mappings as it is made (openWatched), and has the host
//     back it with small pages only;
//   - the buffer counts as full once its page at codeBufferFull is in
//     memory (mincore: Unicorn writes the buffer in order, and the pages
//     past the bytes written were never touched, or were given back);
//   - that is looked at when Start begins, every probeEvery instructions
//     while it runs (the engine stops on the way and goes on at once), and
//     at every 16th event that makes Unicorn translate again (sfs_cg_tick:
//     a store into code, translations dropped);
//   - when full, Start drops all translations between two runs of the
//     engine, where no translated block is running, and gives the buffer's
//     pages back to the host (MADV_DONTNEED), all but the first ones,
//     where Unicorn put the code that enters and leaves translated code.
//
// Between two looks, at most probeEvery instructions run: even at a new
// block per instruction (some 600 bytes of translation each, counting per
// instruction), that is less than the codeBufferSize - codeBufferFull
// bytes left. Host memory for translations stays under codeBufferFull,
// but for the moment of a flush (the memset), where Unicorn's default let
// it grow to 1 GiB for good. A program whose translations in use take
// more than codeBufferFull would have them all dropped again and again: a
// 2 MiB static SQLite takes 6 MiB under verify. The translations dropped
// change only the speed, and they are dropped at the same points in every
// run: what the guest sees does not depend on them.
const (
	codeBufferSize = 256 << 20
	codeBufferFull = 128 << 20
	probeEvery     = 1 << 17
)

// codeFull is codeBufferFull, but for tests.
var codeFull uintptr = codeBufferFull

// codeBuffer is Unicorn's translation buffer of an engine: the mapping
// [lo, hi) and, from keep on, the part given back when all translations
// are dropped.
type codeBuffer struct {
	lo, keep, hi uintptr
	flushes      int
}

// openMu serializes opening and closing engines, so that the mapping a
// new engine's buffer adds is the one new between two reads of the
// process's mappings.
var openMu sync.Mutex

// hostSpan is an address range of the process.
type hostSpan struct{ lo, hi uintptr }

// rwxMappings returns the process's anonymous mappings that are readable,
// writable and executable: Unicorn's translation buffers (Go maps none).
func rwxMappings() (map[hostSpan]bool, error) {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	out := make(map[hostSpan]bool)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || string(f[1]) != "rwxp" || string(f[4]) != "0" || len(f) > 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		l, err1 := strconv.ParseUint(string(lo), 16, 64)
		h, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil {
			out[hostSpan{uintptr(l), uintptr(h)}] = true
		}
	}
	return out, sc.Err()
}

// newMapping returns the one mapping in after and not in before of at
// least codeFull bytes and at most codeBufferSize (Unicorn keeps its last
// page as a guard): the translation buffer made between the two reads.
func newMapping(before, after map[hostSpan]bool) (hostSpan, error) {
	var found []hostSpan
	for s := range after {
		if !before[s] && s.hi-s.lo >= codeFull && s.hi-s.lo <= codeBufferSize {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		return hostSpan{}, fmt.Errorf("%d new mappings of its size", len(found))
	}
	return found[0], nil
}

// findCodeBuffer returns the translation buffer among the mappings in
// after and not in before. Its part from keep on is what was not in
// memory then: Unicorn has written only the code that enters and leaves
// translated code into it before any translation.
func findCodeBuffer(before, after map[hostSpan]bool) (codeBuffer, error) {
	s, err := newMapping(before, after)
	if err != nil {
		return codeBuffer{}, err
	}
	b := codeBuffer{lo: s.lo, hi: s.hi}
	const page = 4096
	// Small pages only: a huge page (2 MiB, which QEMU asks for) would
	// come into memory whole at its first byte written, and the host may
	// gather small ones into huge ones at any time (khugepaged), which
	// would make the watched page's state depend on the host's timing.
	syscall.Syscall(syscall.SYS_MADVISE, b.lo, b.hi-b.lo, syscall.MADV_NOHUGEPAGE)
	vec := make([]byte, (b.hi-b.lo)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, b.lo, b.hi-b.lo, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return codeBuffer{}, fmt.Errorf("mincore: %w", e)
	}
	n := 0
	for n < len(vec) && vec[n]&1 != 0 {
		n++
	}
	// Translations begin at the page after that code at the latest (the
	// code may sit in a huge page made before the advice above).
	b.keep = b.lo + uintptr(n+1)*page
	if b.keep >= b.lo+codeFull {
		return codeBuffer{}, fmt.Errorf("%d of its pages in memory before any translation", n)
	}
	return b, nil
}

// CodeWatched reports whether the engine watches Unicorn's translation
// buffer (see codeBufferSize).
func (e *Engine) CodeWatched() bool { return e.st != nil && e.st.cg_probe != nil }

// CodeFlushes returns how many times the engine dropped all translations
// because Unicorn's buffer was full.
func (e *Engine) CodeFlushes() int { return e.code.flushes }

// flushCode drops all translations and gives the buffer's pages back. It
// runs only between runs of the engine.
func (e *Engine) flushCode() {
	C.sfs_flush_tb(e.uc)
	e.code.flushes++
	if e.code.keep != 0 {
		syscall.Syscall(syscall.SYS_MADVISE, e.code.keep, e.code.hi-e.code.keep, syscall.MADV_DONTNEED)
	}
	e.st.cg_want, e.st.cg_ticks = 0, 0
}

// flushCodeIfFull is flushCode when the buffer is full or was found so.
func (e *Engine) flushCodeIfFull() {
	if e.st.cg_want != 0 || C.sfs_cg_full(e.st) != 0 {
		e.flushCode()
	}
}

// removeCache drops Unicorn's translations of code in [lo, hi): they are
// made again, further on in the buffer, which counts as an event for its
// watch.
func (e *Engine) removeCache(lo, hi uint64) {
	C.sfs_remove_cache(e.uc, C.uint64_t(lo), C.uint64_t(hi))
	C.sfs_cg_tick(e.st)
}

// probeLimit is the limit a run of the engine gets when it may go to lim:
// probeEvery instructions on at most, while the buffer is watched.
func (e *Engine) probeLimit(lim C.uint64_t) C.uint64_t {
	if e.st.cg_probe == nil {
		return lim
	}
	if next := e.st.count + probeEvery; next > e.st.count && next < lim {
		return next
	}
	return lim
}

// remaining returns what is left of timeout (0: none) since start, and
// false if nothing is.
func remaining(timeout time.Duration, start time.Time) (time.Duration, bool) {
	if timeout == 0 {
		return 0, true
	}
	left := timeout - time.Since(start)
	return left, left >= time.Microsecond
}
