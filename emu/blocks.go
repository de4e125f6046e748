//go:build cgo

package emu

/*
#include "hook.h"
*/
import "C"

import (
	"fmt"
	"time"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
)

// CountBlocks switches the engine between counting instructions with a
// hook on every instruction (off, the default: what observers, StopBefore
// and the stepping session need) and counting them per translated block
// (on: several times faster, for plain runs). Counting per block gives the
// same Executed, LastInsn, LastFault and stops as the per-instruction hook
// at every point Go can see: at the count given to Start, at every system
// call, interrupt and fault, and at the end of a Start. Each block's
// instruction count is taken once, by decoding it, and again when its code
// changes; a block that would pass Start's count, whose instructions
// cannot be decoded or that holds an x86 in or out runs with a code hook
// on that block only. Observers switch it off. The translations of
// executable memory are dropped on a switch.
func (e *Engine) CountBlocks(on bool) error {
	if on == e.blocks {
		return nil
	}
	v := 0
	if on {
		v = 1
	}
	if err := check(C.sfs_block_counting(e.st, C.int(v))); err != nil {
		return fmt.Errorf("switching instruction counting: %w", err)
	}
	if e.started {
		// Translations made for the other way of counting must go: those
		// of every executable range (a flush would clear the whole
		// translation buffer, a second or two).
		for _, r := range e.prots {
			if r.prot&ProtExec != 0 {
				e.removeCache(r.lo, r.hi)
			}
		}
	}
	e.blocks = on
	return nil
}

// DisableCounting makes counting per block (CountBlocks) count nothing:
// no hook is called as the guest runs, so Unicorn runs at its own speed.
// It is for measuring that speed (BenchmarkRunVsQemu's floor): Executed
// stays where it was, so neither Start's count nor a thread's time slice
// ever ends a run, the fake clock stands still and a fault cannot be
// placed. It must come before CountBlocks(true).
func (e *Engine) DisableCounting() {
	e.st.nocount = 1
}

// CountingBlocks reports whether instructions are counted per block.
func (e *Engine) CountingBlocks() bool { return e.blocks }

// maxUncounted is how many blocks whose instructions could not be counted
// (an instruction the decoder does not know, port I/O, a large block of
// writable code) may run one instruction at a time before Start counts
// every instruction so, as with CountBlocks(false). Each costs a code hook
// added and deleted and the block's translations dropped twice, and
// Unicorn 2.1.1 crashed in uc_hook_del (tb_invalidate_phys_page_range)
// after enough of them: a lua built with -fcf-protection, when endbr64
// was not decoded, after 18 s of this instead of 0.2 s of running.
const maxUncounted = 1000

// startBlocks is Start when counting per block: count is enforced by the
// block hook (it stops before a block that would pass it), and the block
// that would pass it runs with a code hook on it alone.
//
// The engine also stops every probeEvery instructions, or when the
// translation buffer is found full (see codeBufferSize), and goes on at
// once, after dropping all translations in the latter case.
func (e *Engine) startBlocks(begin, until uint64, timeout time.Duration, count uint64) error {
	st := e.st
	e.started = true
	lim := C.uint64_t(^uint64(0))
	if count > 0 {
		lim = st.count + C.uint64_t(count)
	}
	st.fault_type, st.fault_addr = 0, 0
	pc := begin
	start, left := time.Now(), timeout
	var err error
	for {
		if st.cg_want != 0 {
			e.flushCode()
		}
		st.limit = e.probeLimit(lim)
		st.stopping, st.stopped_before, st.stop_rewritten = 0, 0, 0
		err = check(C.uc_emu_start(e.uc, C.uint64_t(pc), C.uint64_t(until), C.uint64_t(left/time.Microsecond), 0))
		if st.stopped_before != 0 && err == nil {
			// The block at stop_addr did not run; Unicorn may have put
			// the PC back to the start of the block before it.
			if perr := e.SetReg(e.RegID(e.arch.PC), uint64(st.stop_addr)); perr != nil {
				err = perr
			}
		}
		if serr := check(C.sfs_slow_end(st)); serr != nil && err == nil {
			err = serr
		}
		if err == nil && !e.stopReq && st.stop_rewritten == 0 && st.limit < lim &&
			(st.stopped_before != 0 && st.stop_n != 0 && st.count+C.uint64_t(st.stop_n) <= lim ||
				st.stopped_before == 0 && st.count >= st.limit) {
			// Stopped only for a look at the translation buffer: before a
			// block that would pass st.limit but not lim, or inside a
			// block run per instruction.
			var ok bool
			if left, ok = remaining(timeout, start); !ok {
				break
			}
			e.flushCodeIfFull()
			pc = uint64(st.stop_addr)
			if st.stopped_before == 0 {
				if pc, err = e.PC(); err != nil {
					break
				}
			}
			continue
		}
		if err != nil || st.stopped_before == 0 || st.count >= lim {
			break
		}
		pc = uint64(st.stop_addr)
		var ok bool
		if left, ok = remaining(timeout, start); !ok {
			break
		}
		if st.stop_rewritten != 0 {
			// Its code was rewritten in place: its translations go, and it
			// runs from the new code (hook_block_slow).
			e.removeCache(uint64(st.stop_addr), uint64(st.stop_addr)+uint64(st.stop_size))
			continue
		}
		// The block at stop_addr would pass the limit, or must be seen
		// instruction by instruction.
		if st.uncounted > maxUncounted {
			// Too many of the latter: count every instruction from here.
			st.stopping, st.limit = 0, C.uint64_t(^uint64(0))
			var rest uint64
			if count > 0 {
				rest = uint64(lim - st.count)
			}
			if err := e.CountBlocks(false); err != nil {
				return err
			}
			return e.Start(pc, until, left, rest)
		}
		if serr := check(C.sfs_slow_begin(st, st.stop_addr, st.stop_addr+C.uint64_t(st.stop_size))); serr != nil {
			err = serr
			break
		}
	}
	st.stopping = 0
	st.limit = C.uint64_t(^uint64(0))
	if err != nil && st.cur_slow == 0 && st.blk_size != 0 {
		// A fault inside a block counted whole: which instruction
		// faulted is not known (Unicorn leaves the PC at an earlier
		// one, and x86 flags may be pending), unless it was fetching
		// the next block, which then never started.
		if f, ok := e.LastFault(); !ok || f.Kind != "fetch" {
			err = &InexactError{Insns: uint64(st.count) - uint64(len(e.lastBlock())), Err: err}
		}
	}
	if e.st.track < 0 {
		return fmt.Errorf("recording guest stores: out of memory")
	}
	return err
}

// InexactError is the error Start returns, when counting per block, for
// a fault inside a block it counted whole: the instruction count, the PC
// and (x86) the flags are those of some instruction of the block, not
// necessarily the faulting one. Running again, counting per instruction
// from Insns on (the count before that block), gives the exact fault.
type InexactError struct {
	Insns uint64
	Err   error // Unicorn's error
}

func (e *InexactError) Error() string {
	return fmt.Sprintf("fault inside a block counted whole (after %d instructions): %v", e.Insns, e.Err)
}

func (e *InexactError) Unwrap() error { return e.Err }

// lastBlock returns the offsets of the instructions of the block counted
// last (as many as it counted).
func (e *Engine) lastBlock() []uint32 {
	st := e.st
	if st.blk_size == 0 {
		return nil
	}
	if e.arch == arch.ARM64 {
		offs := make([]uint32, st.blk_size/4)
		for i := range offs {
			offs[i] = uint32(4 * i)
		}
		return offs
	}
	offs := e.blockOffsets(uint64(st.blk_addr), uint32(st.blk_size))
	if len(offs) == 0 {
		return nil
	}
	return offs[:len(offs)-1]
}

// settle makes Executed and LastInsn exact inside a block counted whole,
// when a system call, an interrupt or port I/O stops it at an instruction
// the PC names: the instructions after that one did not run.
func (e *Engine) settle() {
	st := e.st
	if !e.blocks || st.cur_slow != 0 || st.blk_size == 0 {
		return
	}
	pc, err := e.PC()
	if err != nil {
		return
	}
	lo, end := uint64(st.blk_addr), uint64(st.blk_addr)+uint64(st.blk_size)
	if pc < lo || pc > end {
		return
	}
	var offs []uint32
	if e.arch == arch.AMD64 && pc+2 == end {
		// A system call, the last instruction of its block: nothing to
		// settle but LastInsn (without decoding the block).
		st.last_pc, st.last_size, st.last_at = C.uint64_t(pc), 2, st.count
		st.blk_size = 0
		return
	}
	if offs = e.lastBlock(); len(offs) == 0 {
		return
	}
	k := len(offs) - 1 // the block's last instruction, when pc is its end
	if pc != end {
		for i, o := range offs {
			if lo+uint64(o) == pc {
				k = i
				break
			}
		}
	}
	size := st.blk_size - C.uint32_t(offs[k])
	if k+1 < len(offs) {
		size = C.uint32_t(offs[k+1] - offs[k])
	}
	st.count -= C.uint64_t(len(offs) - 1 - k)
	st.last_pc, st.last_size, st.last_at = C.uint64_t(lo+uint64(offs[k])), size, st.count
	st.blk_size = 0 // settled: the rest of the block did not run
}

// settleLast sets LastInsn to the last instruction of the block counted
// last (the run went through it).
func (e *Engine) settleLast() {
	st := e.st
	st.last_at = st.count
	offs := e.lastBlock()
	if len(offs) == 0 {
		return
	}
	last := offs[len(offs)-1]
	st.last_pc, st.last_size = st.blk_addr+C.uint64_t(last), st.blk_size-C.uint32_t(last)
}

// blockOffsets decodes the x86-64 block [addr, addr+size) into the
// offsets of its instructions and its end; nil if it cannot be decoded
// exactly.
func (e *Engine) blockOffsets(addr uint64, size uint32) []uint32 {
	code := make([]byte, size)
	if e.ReadMem(addr, code) != nil {
		return nil
	}
	offs := make([]uint32, 0, 16)
	for off := 0; off < len(code); {
		inst, err := arch.DecodeX86(code[off:])
		if err != nil || inst.Len <= 0 {
			return nil
		}
		offs = append(offs, uint32(off))
		off += inst.Len
		if off > len(code) {
			return nil
		}
	}
	return append(offs, size)
}

// portIO reports whether op reads or writes an x86 I/O port: Unicorn
// reports it from inside a block, which would run on after it.
func portIO(op x86asm.Op) bool {
	switch op {
	case x86asm.IN, x86asm.OUT, x86asm.INSB, x86asm.INSW, x86asm.INSD, x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD:
		return true
	}
	return false
}

//export sfsGoBlock
func sfsGoBlock(slot C.int32_t, addr C.uint64_t, size C.uint32_t) C.uint32_t {
	e := lookupEngine(slot)
	code := make([]byte, size)
	if e.ReadMem(uint64(addr), code) != nil {
		return 0
	}
	n := 0
	for off := 0; off < len(code); n++ {
		inst, err := arch.DecodeX86(code[off:])
		if err != nil || inst.Len <= 0 || portIO(inst.Op) {
			return 0
		}
		off += inst.Len
		if off > len(code) {
			return 0
		}
	}
	return C.uint32_t(n)
}
