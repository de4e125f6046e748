//go:build cgo

package verify

import (
	"fmt"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/unwind"
)

// relocateSection moves the program's section sec, decoded at its link-time
// address, to where the program runs (p.Base, for a PIE), in place. A
// section already at its run-time address is left alone.
func relocateSection(p *emu.Process, sec *sframe.Section) error {
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
func objectSection(o *emu.Object) *sframe.Section {
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
// mapped or will map (the program's own section is already there).
func addObjects(p *emu.Process, u *unwind.Unwinder) {
	add := func(o *emu.Object) {
		if sec := objectSection(o); sec != nil && unwind.ArchFor(sec.Header.ABI) == u.Arch() {
			u.Add(sec)
		}
	}
	for _, o := range p.Objects()[1:] {
		add(o)
	}
	p.OnObject(add)
}
