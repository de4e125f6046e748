//go:build cgo

package linux

// Shared file mappings. A MAP_SHARED mapping of an overlay file open for
// reading and writing (vma.node) is guest memory like any other; it is
// kept coherent with the file at every system call, the only way the
// guest can look at the file other than through the mapping: before the
// call, what the guest stored into the mapping is written into the file
// (syncSharedIn); after it, what the call wrote into the file (write,
// pwrite, ftruncate, another mapping's stores) is copied into the mapping
// (syncSharedOut). Two shared mappings of one file therefore see each
// other's stores at the next system call, not at once. Bytes of a
// mapping past the end of the file are the mapping's own (Linux would
// raise SIGBUS beyond the last page of the file); truncating the file
// leaves them as they were.

// sharedRange returns the file offsets [lo, hi) of shared mapping v that
// the file holds (lo == hi if none).
func sharedRange(v *vma) (lo, hi uint64) {
	size := uint64(v.node.data.Len())
	lo, hi = min(v.off, size), min(v.off+(v.end-v.start), size)
	return lo, hi
}

// syncSharedIn writes the guest's stores into shared mappings into their
// files. With several mappings of one file, each one's changes since the
// last syncSharedOut are applied.
func (p *Process) syncSharedIn() {
	type change struct {
		node     *oNode
		lo       uint64
		mem, old []byte
	}
	var changes []change
	for i := range p.vm.vmas {
		v := &p.vm.vmas[i]
		if v.node == nil {
			continue
		}
		lo, hi := sharedRange(v)
		if lo == hi {
			continue
		}
		mem := make([]byte, hi-lo)
		if p.Engine.ReadMem(v.start, mem) != nil {
			continue
		}
		if !v.node.data.equal(int64(lo), mem) {
			changes = append(changes, change{v.node, lo, mem, v.node.data.bytes(int64(lo), int64(hi))})
		}
	}
	for _, c := range changes {
		if c.node.shared {
			c.node.data = c.node.data.clone()
			c.node.shared = false
		}
		// Only the bytes this mapping changed: another mapping's changes
		// to the same file are kept.
		before := c.node.data.footprint()
		for i := 0; i < len(c.mem); {
			if c.mem[i] == c.old[i] {
				i++
				continue
			}
			j := i + 1
			for j < len(c.mem) && c.mem[j] != c.old[j] {
				j++
			}
			c.node.data.writeAt(c.mem[i:j], int64(c.lo)+int64(i))
			i = j
		}
		// What was a hole of the file takes memory now.
		p.chargeWritten(c.node, before)
		p.touch(c.node, touchModify|touchChange) // written through the mapping
	}
}

// syncSharedOut copies the files' contents into their shared mappings
// where they differ.
func (p *Process) syncSharedOut() {
	for i := range p.vm.vmas {
		v := &p.vm.vmas[i]
		if v.node == nil {
			continue
		}
		lo, hi := sharedRange(v)
		if lo == hi {
			continue
		}
		mem := make([]byte, hi-lo)
		if p.Engine.ReadMem(v.start, mem) != nil {
			continue
		}
		if !v.node.data.equal(int64(lo), mem) {
			v.node.data.each(int64(lo), int64(hi), func(piece []byte, at int64) bool {
				p.Engine.WriteMem(v.start+uint64(at)-lo, piece)
				return true
			})
		}
	}
}

// share makes the mappings in [start, end) shared mappings of node, from
// file offset off at start.
// markShared marks the mappings in [start, end) shared anonymous memory.
func (m *addrSpace) markShared(start, end uint64) {
	for i := range m.vmas {
		if v := &m.vmas[i]; v.start >= start && v.end <= end {
			v.shared = true
		}
	}
}

func (m *addrSpace) share(start, end uint64, node *oNode, off uint64) {
	for i := range m.vmas {
		v := &m.vmas[i]
		if v.start >= start && v.end <= end {
			v.node, v.off = node, off+v.start-start
		}
	}
}
