//go:build cgo

package emu

/*
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>
#include "hook.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"unsafe"
)

// A Snapshot is the engine's state between two instructions: the CPU
// context, the contents of every mapped region and the instruction count.
// Memory is kept per 4 KiB page: a page equal to the one the previous
// snapshot holds shares its storage, and zero pages take none, so a series
// of snapshots costs the pages that changed between them. Protections are
// not part of it (the caller's memory map owns them).
type Snapshot struct {
	insns   uint64
	cpu     []byte // uc_context blob (CPU registers only)
	regions []snapRegion
	own     int // pages stored by this snapshot, not shared with the previous one
}

// snapRegion is the memory of one region: a page slice per 4 KiB, nil for
// a zero page.
type snapRegion struct {
	addr  uint64
	pages [][]byte
}

// Insns returns the instruction count the snapshot was taken at.
func (s *Snapshot) Insns() uint64 { return s.insns }

// OwnBytes returns the memory the snapshot holds beyond what it shares
// with the one it was taken after: its own pages and CPU context.
func (s *Snapshot) OwnBytes() int { return s.own*PageSize + len(s.cpu) }

// Snapshot captures the engine's state. prev, if not nil, is an earlier
// snapshot of the same engine whose unchanged pages are shared. It must be
// called between runs, not from a hook.
func (e *Engine) Snapshot(prev *Snapshot) (*Snapshot, error) {
	cpu, err := e.saveContext()
	if err != nil {
		return nil, err
	}
	s := &Snapshot{insns: e.Executed(), cpu: cpu}
	var old map[uint64]*snapRegion
	if prev != nil {
		old = make(map[uint64]*snapRegion, len(prev.regions))
		for i := range prev.regions {
			old[prev.regions[i].addr] = &prev.regions[i]
		}
	}
	s.regions = make([]snapRegion, len(e.regions))
	for i, r := range e.regions {
		sr := snapRegion{addr: r.addr, pages: make([][]byte, len(r.mem)/PageSize)}
		pr := old[r.addr]
		for k := range sr.pages {
			page := r.mem[k*PageSize : (k+1)*PageSize]
			if pr != nil && k < len(pr.pages) && pr.pages[k] != nil && bytes.Equal(pr.pages[k], page) {
				sr.pages[k] = pr.pages[k]
				continue
			}
			if isZero(page) {
				continue
			}
			sr.pages[k] = bytes.Clone(page)
			s.own++
		}
		s.regions[i] = sr
	}
	return s, nil
}

// Restore puts the engine back into the state of s, a snapshot of this
// engine: CPU, memory (regions mapped since are zeroed: regions are never
// unmapped) and instruction count. The last fault is forgotten and any
// write watch fires.
func (e *Engine) Restore(s *Snapshot) error {
	if err := e.restoreContext(s.cpu); err != nil {
		return err
	}
	C.sfs_keep_forget(e.st) // the code may have been other code
	byAddr := make(map[uint64]*snapRegion, len(s.regions))
	for i := range s.regions {
		byAddr[s.regions[i].addr] = &s.regions[i]
	}
	for _, r := range e.regions {
		sr := byAddr[r.addr]
		for k := 0; k < len(r.mem)/PageSize; k++ {
			page := r.mem[k*PageSize : (k+1)*PageSize]
			var want []byte
			if sr != nil && k < len(sr.pages) {
				want = sr.pages[k]
			}
			switch {
			case want == nil:
				if !isZero(page) {
					clear(page)
					e.hostWrote(r.addr+uint64(k*PageSize), PageSize)
				}
			case !bytes.Equal(want, page):
				copy(page, want)
				e.hostWrote(r.addr+uint64(k*PageSize), PageSize)
			}
		}
	}
	e.st.count = C.uint64_t(s.insns)
	e.st.fault_type, e.st.fault_addr = 0, 0
	e.st.last_at = e.st.count
	e.touchedAll()
	return nil
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
func (e *Engine) saveContext() ([]byte, error) {
	var ctx *C.uc_context
	if err := check(C.uc_context_alloc(e.uc, &ctx)); err != nil {
		return nil, fmt.Errorf("snapshot: allocating a CPU context: %w", err)
	}
	defer C.uc_context_free(ctx)
	// The allocation is not cleared: clear the CPU part (libunicorn's
	// uc_context starts with the size of that part) so that bytes the save
	// leaves alone read the same in every snapshot.
	size := C.uc_context_size(e.uc)
	if data := C.size_t(*(*uint64)(unsafe.Pointer(ctx))); data < size && size-data <= 256 {
		C.memset(unsafe.Add(unsafe.Pointer(ctx), size-data), 0, data)
	}
	if err := check(C.uc_context_save(e.uc, ctx)); err != nil {
		return nil, fmt.Errorf("snapshot: saving the CPU context: %w", err)
	}
	return C.GoBytes(unsafe.Pointer(ctx), C.int(size)), nil
}

// restoreContext loads a blob saveContext returned into the engine.
func (e *Engine) restoreContext(blob []byte) error {
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

// Diff describes the first difference between two snapshots (instruction
// count, CPU context, memory by page), or returns nil when they hold the
// same state.
func (s *Snapshot) Diff(o *Snapshot) error {
	switch {
	case s.insns != o.insns:
		return fmt.Errorf("instructions %d, %d", s.insns, o.insns)
	case !bytes.Equal(s.cpu, o.cpu):
		var at []int
		for i := range min(len(s.cpu), len(o.cpu)) {
			if s.cpu[i] != o.cpu[i] {
				at = append(at, i)
			}
		}
		return fmt.Errorf("CPU contexts of %d and %d bytes differ at %v", len(s.cpu), len(o.cpu), at)
	case len(s.regions) != len(o.regions):
		return fmt.Errorf("%d and %d regions", len(s.regions), len(o.regions))
	}
	for i := range s.regions {
		ra, rb := &s.regions[i], &o.regions[i]
		if ra.addr != rb.addr || len(ra.pages) != len(rb.pages) {
			return fmt.Errorf("region %d: %#x (%d pages), %#x (%d pages)", i, ra.addr, len(ra.pages), rb.addr, len(rb.pages))
		}
		for k := range ra.pages {
			if !bytes.Equal(ra.pages[k], rb.pages[k]) {
				return fmt.Errorf("page %#x differs", ra.addr+uint64(k)*PageSize)
			}
		}
	}
	return nil
}

// ReadContextRegs reads len(ids) (at most 64) registers of a saved CPU
// context into out, leaving the engine's own registers alone: what a
// debugger shows of a thread that is switched out.
func (e *Engine) ReadContextRegs(c *CPUContext, ids []RegID, out []uint64) error {
	n := len(ids)
	if n > 64 || len(out) < n {
		return fmt.Errorf("ReadContextRegs: %d registers, %d slots", n, len(out))
	}
	var ctx *C.uc_context
	if err := check(C.uc_context_alloc(e.uc, &ctx)); err != nil {
		return fmt.Errorf("reading a saved context: allocating: %w", err)
	}
	defer C.uc_context_free(ctx)
	if int(C.uc_context_size(e.uc)) != len(c.blob) {
		return fmt.Errorf("reading a saved context: %d bytes, the engine's has %d", len(c.blob), int(C.uc_context_size(e.uc)))
	}
	C.memcpy(unsafe.Pointer(ctx), unsafe.Pointer(&c.blob[0]), C.size_t(len(c.blob)))
	cids := make([]C.int, n)
	vals := make([]C.uint64_t, n)
	for i, id := range ids {
		cids[i] = C.int(id)
	}
	if n == 0 {
		return nil
	}
	if err := check(C.sfs_context_reg_read_batch(ctx, &cids[0], &vals[0], C.int(n))); err != nil {
		return fmt.Errorf("reading a saved context: %w", err)
	}
	for i := range n {
		out[i] = uint64(vals[i])
	}
	return nil
}
