//go:build cgo

package verify

import (
	"fmt"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/unwind"
)

// newUnwinder returns an unwinder for the loaded program p (architecture
// a) with its SFrame section sec: sec is relocated in place to where p
// runs (a PIE's load base), so that whoever shares it sees run-time
// addresses too, and shared objects with SFrame data of their own join the
// unwind as ld.so maps them (before their code can run; added is called
// after each object, saying whether it had one); the others end the SFrame chain, a coverage gap. The
// unwinder caches lookups: it is not safe for concurrent use.
func newUnwinder(p *linux.Process, a *arch.Arch, sec *sframe.Section, added func(withSection bool)) (*unwind.Unwinder, error) {
	if err := relocateSection(p, sec); err != nil {
		return nil, err
	}
	u := unwind.New(a, sec).WithCache()
	addObjects(p, u, added)
	return u, nil
}

// relocateSection moves the program's section sec, decoded at its link-time
// address, to where the program runs (p.Base, for a PIE), in place. A
// section already at its run-time address is left alone.
func relocateSection(p *linux.Process, sec *sframe.Section) error {
	if p.Base == 0 {
		return nil
	}
	raw, err := sframe.FindELF(p.ELF)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	switch sec.Addr {
	case raw.Addr + p.Base:
		return nil
	case raw.Addr:
	default:
		return fmt.Errorf("%s: SFrame section at %#x is neither at its link-time address %#x nor at its run-time address %#x", p.Path, sec.Addr, raw.Addr, raw.Addr+p.Base)
	}
	moved, _ := sframe.Decode(sec.Data, sec.Addr+p.Base)
	if moved == nil {
		return fmt.Errorf("%s: SFrame section at %#x cannot be decoded again at %#x", p.Path, sec.Addr, sec.Addr+p.Base)
	}
	*sec = *moved
	return nil
}

// objectSection decodes the SFrame section of a shared object at its
// load base: nil when it has none (or none that decodes).
func objectSection(o *linux.Object) *sframe.Section {
	raw, err := sframe.FindELF(o.ELF)
	if err != nil {
		return nil
	}
	sec, err := sframe.Decode(raw.Data, raw.Addr+o.Base)
	if sec == nil || err != nil && len(sec.FDEs) == 0 {
		return nil
	}
	return sec
}

// addObjects gives u the SFrame section of every shared object p has
// mapped or will map (the program's own section is already there), calling
// added after each object, saying whether it brought a section.
func addObjects(p *linux.Process, u *unwind.Unwinder, added func(withSection bool)) {
	add := func(o *linux.Object) {
		sec := objectSection(o)
		with := sec != nil && arch.ForABI(sec.Header.ABI) == u.Arch()
		if with {
			u.Add(sec)
		}
		added(with)
	}
	for _, o := range p.Objects()[1:] {
		add(o)
	}
	p.OnObject(add)
}

// objectStats aggregates per object for a report.
type objectStats struct {
	p     *linux.Process
	syms  *symbols.Table
	stats map[*linux.Object]*ObjectStat
	ends  map[*linux.Object]map[uint64]*chainEnd // chain ends by PC
	last  *linux.Object                          // the object of the previous instruction
	lastS *ObjectStat
	// The chain end counted last.
	lastEnd   *chainEnd
	lastEndPC uint64
	other     ObjectStat // outside every object (vDSO-less: none expected)
}

// chainEnd counts the chains that ended at one PC without SFrame data;
// stat is the object holding the PC.
type chainEnd struct {
	n    uint64
	stat *ObjectStat
}

func newObjectStats(p *linux.Process, syms *symbols.Table) *objectStats {
	return &objectStats{p: p, syms: syms, stats: map[*linux.Object]*ObjectStat{}, ends: map[*linux.Object]map[uint64]*chainEnd{}}
}

func (o *objectStats) stat(pc uint64) (*linux.Object, *ObjectStat) {
	if obj := o.last; obj != nil && pc >= obj.Start && pc < obj.End {
		return obj, o.lastS
	}
	obj := o.p.ObjectAt(pc)
	if obj == nil {
		return nil, &o.other
	}
	st := o.stats[obj]
	if st == nil {
		st = &ObjectStat{Name: obj.Name, Base: obj.Base, SFrame: obj == o.p.Objects()[0] || objectSection(obj) != nil}
		o.stats[obj] = st
	}
	o.last, o.lastS = obj, st
	return obj, st
}

// add counts the instruction at pc with its result, and returns the
// counters it bumped: pc's object's and, when the chain ended at a frame
// without SFrame data, that end's.
func (o *objectStats) add(pc uint64, res *Result) (*ObjectStat, *chainEnd) {
	_, st := o.stat(pc)
	st.Instructions++
	if res.Kind == NoFDE {
		return st, nil
	}
	st.Covered++
	f := &res.Frame
	if res.Depth == 0 || f.Err == nil || !unwind.NoData(f.Err) {
		return st, nil
	}
	if e := o.lastEnd; e != nil && o.lastEndPC == f.PC {
		e.stat.ChainEnds++
		e.n++
		return st, e
	}
	obj, at := o.stat(f.PC)
	e := &chainEnd{stat: at}
	if obj != nil {
		m := o.ends[obj]
		if m == nil {
			m = map[uint64]*chainEnd{}
			o.ends[obj] = m
		}
		if old := m[f.PC]; old != nil {
			e = old
		} else {
			m[f.PC] = e
		}
	}
	e.stat.ChainEnds++
	e.n++
	o.lastEnd, o.lastEndPC = e, f.PC
	return st, e
}

// finish lists the objects in load order (the program first); static
// programs, which are one object, get no list.
func (o *objectStats) finish(rep *Report) {
	objs := o.p.Objects()
	if len(objs) < 2 {
		return
	}
	for _, obj := range objs {
		st := o.stats[obj]
		if st == nil {
			st = &ObjectStat{Name: obj.Name, Base: obj.Base, SFrame: obj == objs[0] || objectSection(obj) != nil}
		}
		var best, bestPC uint64
		for pc, e := range o.ends[obj] {
			if n := e.n; n > best || n == best && pc < bestPC {
				best, bestPC = n, pc
			}
		}
		if best > 0 {
			st.ChainEndAt = o.syms.Format(bestPC)
			st.ChainEndAtDemangled = symbols.Demangled(st.ChainEndAt)
		}
		rep.Objects = append(rep.Objects, *st)
	}
}
