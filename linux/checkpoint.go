//go:build cgo

package linux

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/shadow"
)

// A Checkpoint is the complete state of a Session between two
// instructions: the engine's (CPU context, guest memory: emu.Snapshot),
// the memory map and the Linux layer's state (brk, files, the files the
// guest wrote (its overlay), signal actions, clocks, random stream, denied
// calls, exit, threads and the scheduler) and every thread's shadow stack.
// Restoring it puts the session back exactly there, so that running on
// repeats the same instructions (the guest is deterministic).
//
// Memory pages unchanged since the previous checkpoint are shared with it
// (emu.Snapshot), so a series of checkpoints costs the pages that changed
// between them; likewise the overlay's file contents are shared until
// written. Not covered: what the guest read from Config.Stdin and
// wrote to Config.Stdout and Config.Stderr (the caller's readers and
// writers).
type Checkpoint struct {
	engine  *emu.Snapshot
	vmas    []vma
	total   uint64
	peak    uint64
	brk     uint64
	rng     []byte
	fds     map[int]*openFile
	cloexec fdSet
	limits  [16]rlimitSet
	ov      *overlay
	cwd     string
	sig     sigState
	sleep   time.Duration
	denied  map[string]uint64
	exit    *Exit
	stalls  int
	cur     shadow.Record
	// The threads (the running one's registers are in engine), the
	// scheduler's state and every thread's shadow stack.
	threads     []thread
	running     int // index in threads
	exited      []ExitedThread
	exitedMore  int
	exitedInsns uint64
	thrNext     int
	thrSeq      uint64
	switches    uint64
	shadows     map[int]shadow.State
	retired     map[string]retiredKind // Session.retired
}

// Insns returns the instruction count the checkpoint was taken at.
func (c *Checkpoint) Insns() uint64 { return c.engine.Insns() }

// OwnBytes returns the memory the checkpoint holds beyond what it shares
// with the checkpoint it was taken after: its own pages and CPU context.
func (c *Checkpoint) OwnBytes() int { return c.engine.OwnBytes() }

// Checkpoint captures the session's state. prev, if not nil, is an
// earlier checkpoint of the same session whose unchanged pages are shared.
// It must be called between runs (not from an observer).
func (s *Session) Checkpoint(prev *Checkpoint) (*Checkpoint, error) {
	p := s.P
	var prevSnap *emu.Snapshot
	if prev != nil {
		prevSnap = prev.engine
	}
	snap, err := p.Engine.Snapshot(prevSnap)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	c := &Checkpoint{
		engine: snap, total: p.vm.total, peak: p.vm.peak,
		brk: p.brk, sig: p.sig.clone(), sleep: p.sleep, stalls: p.stalls, cur: s.cur,
	}
	c.ov, c.fds, c.vmas = p.ov.clone(p.fds, p.vm.vmas)
	c.cloexec, c.limits = p.cloexec, p.limits
	c.cwd = p.cwd
	c.thrNext, c.thrSeq, c.switches = p.thr.nextTID, p.thr.seq, p.thr.switches
	// Exited threads are only ever appended: the checkpoint shares them.
	c.exited, c.exitedMore, c.exitedInsns = p.thr.exited[:len(p.thr.exited):len(p.thr.exited)], p.thr.exitedMore, p.thr.exitedInsns
	for i, t := range p.thr.list {
		c.threads = append(c.threads, *t)
		c.threads[i].sig.pending = t.sig.pending.clone()
		if t == p.thr.cur {
			c.running = i
		}
	}
	c.retired = maps.Clone(s.retired)
	c.shadows = make(map[int]shadow.State, len(s.stacks))
	for tid, st := range s.stacks {
		c.shadows[tid] = st.Save()
	}
	c.denied = p.Denied()
	if c.rng, err = p.rng.c.MarshalBinary(); err != nil {
		return nil, fmt.Errorf("checkpoint: random stream: %w", err)
	}
	if p.exit != nil {
		x := *p.exit
		c.exit = &x
	}
	return c, nil
}

// Restore puts the session back into the state of c, a checkpoint of this
// session. Breakpoints and the observer stay as they are.
func (s *Session) Restore(c *Checkpoint) error {
	p, e := s.P, s.P.Engine
	if err := e.Restore(c.engine); err != nil {
		return err
	}
	p.vm.held = p.vm.held - p.ov.held + c.ov.held
	var vmas []vma
	p.ov, p.fds, vmas = c.ov.clone(c.fds, c.vmas)
	p.cloexec, p.limits = c.cloexec, c.limits
	p.cwd = c.cwd
	if !sameVMAs(p.vm.vmas, vmas) {
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
	}
	p.vm.vmas = vmas
	p.vm.total, p.vm.peak = c.total, c.peak
	p.brk, p.sig, p.sleep, p.stalls = c.brk, c.sig.clone(), c.sleep, c.stalls
	p.denied = maps.Clone(c.denied)
	rng := rand.NewChaCha8([32]byte{})
	if err := rng.UnmarshalBinary(c.rng); err != nil {
		return fmt.Errorf("restore: random stream: %w", err)
	}
	p.rng.c = rng
	p.syncFDs()
	p.exit = nil
	if c.exit != nil {
		x := *c.exit
		p.exit = &x
	}
	p.lastErr = nil
	p.thr = threadTable{nextTID: c.thrNext, seq: c.thrSeq, switches: c.switches,
		exited: c.exited, exitedMore: c.exitedMore, exitedInsns: c.exitedInsns}
	for i := range c.threads {
		t := c.threads[i]
		t.sig.pending = t.sig.pending.clone()
		p.thr.list = append(p.thr.list, &t)
	}
	p.thr.cur = p.thr.list[c.running]
	for tid := range s.stacks {
		if _, ok := c.shadows[tid]; !ok {
			delete(s.stacks, tid) // a thread made after the checkpoint
		}
	}
	for tid, st := range c.shadows {
		s.stack(tid).Restore(st)
	}
	s.retired = maps.Clone(c.retired)
	s.tid = p.thr.cur.tid
	s.Shadow = s.stack(s.tid)
	s.cur, s.stopped = c.cur, false
	return nil
}

// copyFiles copies a descriptor table, keeping descriptors that share a
// file (dup) sharing its copy; node gives the copy of an overlay node.
// Host file contents are never written: shared.
func copyFiles(fds map[int]*openFile, node func(*oNode) *oNode) map[int]*openFile {
	out := make(map[int]*openFile, len(fds))
	seen := make(map[*openFile]*openFile, len(fds))
	pipes := map[*pipe]*pipe{}
	for fd, f := range fds {
		c := seen[f]
		if c == nil {
			x := *f
			x.node = node(f.node)
			if f.pipe != nil {
				pp := pipes[f.pipe]
				if pp == nil {
					y := *f.pipe
					y.buf, y.pages = slices.Clone(f.pipe.buf), slices.Clone(f.pipe.pages)
					pp = &y
					pipes[f.pipe] = pp
				}
				x.pipe = pp
			}
			if f.efd != nil {
				e := *f.efd
				x.efd = &e
			}
			if f.tfd != nil {
				tf := *f.tfd
				x.tfd = &tf
			}
			c = &x
			seen[f] = c
		}
		out[fd] = c
	}
	// An epoll instance's entries refer to the copies of their files
	// (dropped, as epoll_wait would drop them, where no descriptor refers
	// to one any more).
	for _, c := range seen {
		if c.ep == nil {
			continue
		}
		ep := &epoll{}
		for _, it := range c.ep.items {
			if f := seen[it.file]; f != nil {
				x := *it
				x.file = f
				ep.items = append(ep.items, &x)
			}
		}
		c.ep = ep
	}
	return out
}

func sameVMAs(a, b []vma) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.node, y.node = nil, nil // the copies of one overlay node
		if x != y || (a[i].node == nil) != (b[i].node == nil) {
			return false
		}
	}
	return true
}
