//go:build cgo

package verify

import (
	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/unwind"
)

// Checker checks instruction after instruction, unwinding the frames below
// the topmost one only when their inputs changed.
//
// The unwind of the callers is a pure function of the topmost frame's
// results (its return address, CFA and caller FP) and of the memory words
// it reads. The Checker keeps the last such walk with every word it read;
// when the next instruction's topmost frame yields the same three values
// and every recorded word still holds the same value (re-read from guest
// memory, without a cgo call), the frames are the same and are reused.
// Every instruction is still compared frame by frame with the truth.
type Checker struct {
	u    *unwind.Unwinder
	mem  unwind.Memory
	regs func(sframe.Reg) (uint64, bool)

	valid   bool
	key     [3]uint64 // caller pc, sp, fp
	reads   []memRead
	tail    []unwind.Frame
	tailErr error
	rec     recorder
	frames  []unwind.Frame

	// Reused and Walked count the tails reused and unwound.
	Reused, Walked uint64
}

type memRead struct {
	addr, val uint64
	ok        bool
}

// recorder reads memory and remembers every word read.
type recorder struct {
	mem   unwind.Memory
	reads *[]memRead
}

func (r recorder) ReadUint64(addr uint64) (uint64, error) {
	v, err := r.mem.ReadUint64(addr)
	*r.reads = append(*r.reads, memRead{addr, v, err == nil})
	return v, err
}

// NewChecker returns a Checker over u, reading memory through mem and the
// topmost frame's other registers through regs (may be nil).
func NewChecker(u *unwind.Unwinder, mem unwind.Memory, regs func(sframe.Reg) (uint64, bool)) *Checker {
	return &Checker{u: u, mem: mem, regs: regs}
}

// Check unwinds from the state r and compares with the shadow frames
// (outermost first).
func (c *Checker) Check(r emu.Record, shadow []emu.Frame) Result {
	it := c.u.Walk(unwind.Registers{PC: r.PC, SP: r.SP, FP: r.FP, LR: r.RA, Get: c.regs}, c.mem)
	c.frames = c.frames[:0]
	if !it.Next() {
		return compare(c.frames, it.Err(), shadow)
	}
	f0 := it.Frame()
	c.frames = append(c.frames, f0)
	if f0.Err != nil || f0.Outermost {
		return compare(c.frames, it.Err(), shadow)
	}
	key := [3]uint64{f0.RA, f0.CFA, f0.CallerFP}
	if !c.valid || key != c.key || !c.unchanged() {
		c.reads = c.reads[:0]
		c.rec = recorder{mem: c.mem, reads: &c.reads}
		tail := c.u.WalkCaller(f0.RA, f0.CFA, f0.CallerFP, c.rec)
		c.tail = c.tail[:0]
		for tail.Next() {
			c.tail = append(c.tail, tail.Frame())
		}
		c.tailErr = tail.Err()
		c.key, c.valid = key, true
		c.Walked++
	} else {
		c.Reused++
	}
	c.frames = append(c.frames, c.tail...)
	return compare(c.frames, c.tailErr, shadow)
}

// unchanged reports whether every recorded word still reads the same.
func (c *Checker) unchanged() bool {
	for _, rd := range c.reads {
		v, err := c.mem.ReadUint64(rd.addr)
		if (err == nil) != rd.ok || v != rd.val {
			return false
		}
	}
	return true
}
