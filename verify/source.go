package verify

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
)

// lineTable maps code addresses to source lines from DWARF (.debug_line).
type lineTable struct {
	addrs []uint64
	locs  []string // "file:line"
}

// newLineTable reads the line programs of f; nil when there is no DWARF.
func newLineTable(f *elf.File, bias uint64) *lineTable {
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	t := &lineTable{}
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
		return nil
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

// lookup returns the source line of pc, or "".
func (t *lineTable) lookup(pc uint64) string {
	if t == nil {
		return ""
	}
	i := sort.Search(len(t.addrs), func(i int) bool { return t.addrs[i] > pc }) - 1
	if i < 0 || pc-t.addrs[i] > 4096 {
		return ""
	}
	return t.locs[i]
}
