//go:build cgo

package tui

import (
	"sort"

	"github.com/sframesim/sframesim/linux"
)

// history keeps checkpoints of a run at multiples of an interval, so that
// going back to any instruction is a restore plus a replay of less than
// one interval. When there are more than maxCheckpoints, or they hold more
// than maxBytes, the interval doubles and every other one goes: memory
// stays bounded while replays grow only logarithmically with the length of
// the run. Instruction 0 is always kept.
type history struct {
	cps      []checkpoint // by instruction count
	every    uint64
	maxCount int
	maxBytes int
	bytes    int // sum of the kept checkpoints' own bytes (an estimate: pages may outlive their owner)
}

type checkpoint struct {
	cp  *linux.Checkpoint
	out int // length of the program's output then
}

// Defaults: a replay of at most 50 000 instructions (about 10 ms at the
// emulator's observed speed) until the run is 10 M instructions long.
const (
	defaultEvery    = 50_000
	defaultMaxCount = 200
	defaultMaxBytes = 256 << 20
)

func newHistory() history {
	return history{every: defaultEvery, maxCount: defaultMaxCount, maxBytes: defaultMaxBytes}
}

// next returns the instruction count of the next checkpoint after n.
func (h *history) next(n uint64) uint64 { return (n/h.every + 1) * h.every }

// add checkpoints the debugger's state if it is at a checkpoint position
// that has none (or always, with force: the start).
func (h *history) add(d *Debugger, force bool) error {
	n := d.s.Executed()
	if !force && n%h.every != 0 {
		return nil
	}
	i := sort.Search(len(h.cps), func(i int) bool { return h.cps[i].cp.Insns() >= n })
	if i < len(h.cps) && h.cps[i].cp.Insns() == n {
		return nil
	}
	var prev *linux.Checkpoint
	if i > 0 {
		prev = h.cps[i-1].cp
	}
	cp, err := d.s.Checkpoint(prev)
	if err != nil {
		return err
	}
	h.cps = append(h.cps, checkpoint{})
	copy(h.cps[i+1:], h.cps[i:])
	h.cps[i] = checkpoint{cp: cp, out: d.out.Len()}
	h.bytes += cp.OwnBytes()
	for len(h.cps) > h.maxCount || h.bytes > h.maxBytes && len(h.cps) > 2 {
		h.thin()
	}
	return nil
}

// thin doubles the interval and drops the checkpoints off it.
func (h *history) thin() {
	h.every *= 2
	keep := h.cps[:1]
	h.bytes = h.cps[0].cp.OwnBytes()
	for _, c := range h.cps[1:] {
		if c.cp.Insns()%h.every == 0 {
			keep = append(keep, c)
			h.bytes += c.cp.OwnBytes()
		}
	}
	clear(h.cps[len(keep):])
	h.cps = keep
}

// before returns the latest checkpoint at or before instruction n.
func (h *history) before(n uint64) checkpoint {
	i := sort.Search(len(h.cps), func(i int) bool { return h.cps[i].cp.Insns() > n })
	return h.cps[max(i-1, 0)]
}
