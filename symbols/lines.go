package symbols

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
)

// Lines maps code addresses to source lines ("file:line") from the DWARF
// line tables (.debug_line) of a program.
type Lines struct {
	addrs []uint64
	locs  []string // "file:line"
}

// NewLines reads the line programs of f, whose code is loaded bias bytes
// above its link-time addresses. A program without DWARF gives a Lines
// that finds nothing.
func NewLines(f *elf.File, bias uint64) *Lines {
	d, err := f.DWARF()
	if err != nil {
		return &Lines{}
	}
	t := &Lines{}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		var e dwarf.LineEntry
		for {
			if err := lr.Next(&e); err != nil {
				if !errors.Is(err, io.EOF) {
					break
				}
				break
			}
			if e.EndSequence || e.File == nil {
				continue
			}
			t.addrs = append(t.addrs, e.Address+bias)
			t.locs = append(t.locs, fmt.Sprintf("%s:%d", path.Base(e.File.Name), e.Line))
		}
		r.SkipChildren()
	}
	if len(t.addrs) == 0 {
		return t
	}
	idx := make([]int, len(t.addrs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t.addrs[idx[a]] < t.addrs[idx[b]] })
	addrs := make([]uint64, len(idx))
	locs := make([]string, len(idx))
	for i, k := range idx {
		addrs[i], locs[i] = t.addrs[k], t.locs[k]
	}
	t.addrs, t.locs = addrs, locs
	return t
}

// Lookup returns the source line of pc, or "".
func (t *Lines) Lookup(pc uint64) string {
	if t == nil {
		return ""
	}
	i := sort.Search(len(t.addrs), func(i int) bool { return t.addrs[i] > pc }) - 1
	if i < 0 || pc-t.addrs[i] > 4096 {
		return ""
	}
	return t.locs[i]
}
