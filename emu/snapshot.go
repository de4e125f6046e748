//go:build cgo

package emu

/*
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>
*/
import "C"

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"time"
	"unsafe"
)

// A Checkpoint is the complete state of a Session between two
// instructions: CPU context, guest memory and its map, the Linux layer's
// state (brk, files, signal actions, clocks, random stream, exit) and the
// shadow stack. Restoring it puts the session back exactly there, so that
// running on repeats the same instructions (the guest is deterministic).
//
// Guest memory is kept per 4 KiB page. A page equal to the one the
// previous checkpoint holds shares its storage, and zero pages take none,
// so a series of checkpoints costs the pages that changed between them.
// Not covered: what the guest read from Config.Stdin and wrote to
// Config.Stdout and Config.Stderr (the caller's readers and writers).
type Checkpoint struct {
	insns   uint64
	cpu     []byte // uc_context blob (CPU registers only)
	regions []ckRegion
	vmas    []lxVMA
	total   uint64
	brk     uint64
	rng     []byte
	fds     map[int]*lxFile
	sig     lxSignals
	sleep   time.Duration
	exit    *Exit
	stalls  int
	shadow  shadowState
	cur     Record
	own     int // pages stored by this checkpoint, not shared with the previous one
}

// ckRegion is the memory of one engine region: a page slice per 4 KiB,
// nil for a zero page.
type ckRegion struct {
	addr  uint64
	pages [][]byte
}

type shadowState struct {
	frames    []Frame
	anomalies int
	prev      Record
	prevFlow  Flow
	havePrev  bool
	insn      uint64
	unwound   uint64
}

// Insns returns the instruction count the checkpoint was taken at.
func (c *Checkpoint) Insns() uint64 { return c.insns }

// OwnBytes returns the memory the checkpoint holds beyond what it shares
// with the checkpoint it was taken after: its own pages and CPU context.
func (c *Checkpoint) OwnBytes() int { return c.own*PageSize + len(c.cpu) }

// Checkpoint captures the session's state. prev, if not nil, is an
// earlier checkpoint of the same session whose unchanged pages are shared.
// It must be called between runs (not from an observer).
func (s *Session) Checkpoint(prev *Checkpoint) (*Checkpoint, error) {
	p, e := s.P, s.P.Engine
	c := &Checkpoint{
		insns: e.Executed(), vmas: append([]lxVMA(nil), p.vm.vmas...), total: p.vm.total,
		brk: p.brk, sig: p.sig, sleep: p.sleep, stalls: p.stalls, cur: s.cur,
	}
	cpu, err := saveContext(e)
	if err != nil {
		return nil, err
	}
	c.cpu = cpu
	if c.rng, err = p.rng.c.MarshalBinary(); err != nil {
		return nil, fmt.Errorf("checkpoint: random stream: %w", err)
	}
	if p.exit != nil {
		x := *p.exit
		c.exit = &x
	}
	c.fds = copyFiles(p.fds)
	sh := s.Shadow
	c.shadow = shadowState{frames: append([]Frame(nil), sh.frames...), anomalies: len(sh.anomalies),
		prev: sh.prev, prevFlow: sh.prevFlow, havePrev: sh.havePrev, insn: sh.insn, unwound: sh.unwound}
	var old map[uint64]*ckRegion
	if prev != nil {
		old = make(map[uint64]*ckRegion, len(prev.regions))
		for i := range prev.regions {
			old[prev.regions[i].addr] = &prev.regions[i]
		}
	}
	c.regions = make([]ckRegion, len(e.regions))
	for i, r := range e.regions {
		cr := ckRegion{addr: r.addr, pages: make([][]byte, len(r.mem)/PageSize)}
		pr := old[r.addr]
		for k := range cr.pages {
			page := r.mem[k*PageSize : (k+1)*PageSize]
			if pr != nil && k < len(pr.pages) && pr.pages[k] != nil && bytes.Equal(pr.pages[k], page) {
				cr.pages[k] = pr.pages[k]
				continue
			}
			if isZero(page) {
				continue
			}
			cr.pages[k] = bytes.Clone(page)
			c.own++
		}
		c.regions[i] = cr
	}
	return c, nil
}

// Restore puts the session back into the state of c, a checkpoint of this
// session. Breakpoints and the observer stay as they are.
func (s *Session) Restore(c *Checkpoint) error {
	p, e := s.P, s.P.Engine
	if err := restoreContext(e, c.cpu); err != nil {
		return err
	}
	// Memory: engine regions are never unmapped, so the checkpoint's are a
	// subset of today's; the others were mapped later and are zeroed.
	byAddr := make(map[uint64]*ckRegion, len(c.regions))
	for i := range c.regions {
		byAddr[c.regions[i].addr] = &c.regions[i]
	}
	for _, r := range e.regions {
		cr := byAddr[r.addr]
		for k := 0; k < len(r.mem)/PageSize; k++ {
			page := r.mem[k*PageSize : (k+1)*PageSize]
			var want []byte
			if cr != nil && k < len(cr.pages) {
				want = cr.pages[k]
			}
			switch {
			case want == nil:
				if !isZero(page) {
					clear(page)
				}
			case !bytes.Equal(want, page):
				copy(page, want)
			}
		}
	}
	if !sameVMAs(p.vm.vmas, c.vmas) {
		// Backed ranges outside the checkpoint's mappings are inaccessible,
		// as munmap leaves them.
		for _, b := range p.vm.backed {
			if err := e.Protect(b[0], b[1]-b[0], 0); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
		}
		for _, v := range c.vmas {
			if err := e.Protect(v.start, v.end-v.start, v.prot); err != nil {
				return fmt.Errorf("restore: %w", err)
			}
		}
		p.vm.vmas = append(p.vm.vmas[:0], c.vmas...)
	}
	p.vm.total = c.total
	p.brk, p.sig, p.sleep, p.stalls = c.brk, c.sig, c.sleep, c.stalls
	rng := rand.NewChaCha8([32]byte{})
	if err := rng.UnmarshalBinary(c.rng); err != nil {
		return fmt.Errorf("restore: random stream: %w", err)
	}
	p.rng.c = rng
	p.fds = copyFiles(c.fds)
	p.exit = nil
	if c.exit != nil {
		x := *c.exit
		p.exit = &x
	}
	p.lastErr = nil
	e.st.count = C.uint64_t(c.insns)
	e.st.fault_type, e.st.fault_addr = 0, 0
	sh := s.Shadow
	sh.frames = append(sh.frames[:0], c.shadow.frames...)
	sh.anomalies = sh.anomalies[:min(len(sh.anomalies), c.shadow.anomalies)]
	sh.prev, sh.prevFlow, sh.havePrev = c.shadow.prev, c.shadow.prevFlow, c.shadow.havePrev
	sh.insn, sh.unwound = c.shadow.insn, c.shadow.unwound
	sh.version++      // the frames changed under any memo of them
	e.watchHit = true // and so did memory
	s.cur, s.stopped = c.cur, false
	return nil
}

// copyFiles copies a descriptor table, keeping descriptors that share a
// file (dup) sharing its copy. File contents are never written: shared.
func copyFiles(fds map[int]*lxFile) map[int]*lxFile {
	out := make(map[int]*lxFile, len(fds))
	seen := make(map[*lxFile]*lxFile, len(fds))
	for fd, f := range fds {
		c := seen[f]
		if c == nil {
			x := *f
			c = &x
			seen[f] = c
		}
		out[fd] = c
	}
	return out
}

func sameVMAs(a, b []lxVMA) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isZero reports whether b is all zero bytes.
func isZero(b []byte) bool {
	for len(b) >= 8 {
		if *(*uint64)(unsafe.Pointer(&b[0])) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// saveContext returns the engine's CPU context as a byte blob.
func saveContext(e *Engine) ([]byte, error) {
	var ctx *C.uc_context
	if err := check(C.uc_context_alloc(e.uc, &ctx)); err != nil {
		return nil, fmt.Errorf("checkpoint: allocating a CPU context: %w", err)
	}
	defer C.uc_context_free(ctx)
	// The allocation is not cleared: clear the CPU part (libunicorn's
	// uc_context starts with the size of that part) so that bytes the save
	// leaves alone read the same in every checkpoint.
	size := C.uc_context_size(e.uc)
	if data := C.size_t(*(*uint64)(unsafe.Pointer(ctx))); data < size && size-data <= 256 {
		C.memset(unsafe.Add(unsafe.Pointer(ctx), size-data), 0, data)
	}
	if err := check(C.uc_context_save(e.uc, ctx)); err != nil {
		return nil, fmt.Errorf("checkpoint: saving the CPU context: %w", err)
	}
	return C.GoBytes(unsafe.Pointer(ctx), C.int(size)), nil
}

// restoreContext loads a blob saveContext returned into the engine.
func restoreContext(e *Engine, blob []byte) error {
	var ctx *C.uc_context
	if err := check(C.uc_context_alloc(e.uc, &ctx)); err != nil {
		return fmt.Errorf("restore: allocating a CPU context: %w", err)
	}
	defer C.uc_context_free(ctx)
	if int(C.uc_context_size(e.uc)) != len(blob) {
		return fmt.Errorf("restore: CPU context of %d bytes, the engine's has %d", len(blob), int(C.uc_context_size(e.uc)))
	}
	C.memcpy(unsafe.Pointer(ctx), unsafe.Pointer(&blob[0]), C.size_t(len(blob)))
	if err := check(C.uc_context_restore(e.uc, ctx)); err != nil {
		return fmt.Errorf("restore: loading the CPU context: %w", err)
	}
	return nil
}
