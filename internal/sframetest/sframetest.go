// Package sframetest writes copies of ELF files with their SFrame section
// changed, for tests of what the tools make of wrong data and of sections
// that break the format's rules.
package sframetest

import (
	"fmt"
	"os"

	"github.com/sframesim/sframesim/sframe"
)

// Rewrite writes to dst a copy of the ELF file src whose SFrame section
// change has changed, re-encoded in place (the rest of the file as it
// was).
func Rewrite(src, dst string, change func(*sframe.Section) error) error {
	f, err := sframe.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := change(f.Section); err != nil {
		return err
	}
	data, err := f.Section.Encode()
	if err != nil {
		return err
	}
	if len(data) > len(f.Raw.Data) {
		return fmt.Errorf("%s: the changed section needs %d bytes, the file has %d", src, len(data), len(f.Raw.Data))
	}
	file, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	off := f.Raw.Offset
	copy(file[off:], data)
	clear(file[off+int64(len(data)) : off+int64(len(f.Raw.Data))])
	return os.WriteFile(dst, file, 0o755)
}

// EmptyDuplicateFDE empties FDE i of sec (size 0, one row) and moves it to
// FDE i+1's start, as ld 2.40 keeps an FDE for an empty .cold part: the
// starts then repeat, which the format's rules and the Linux kernel
// refuse.
func EmptyDuplicateFDE(sec *sframe.Section, i int) error {
	if i < 0 || i+1 >= len(sec.FDEs) {
		return fmt.Errorf("no FDEs %d and %d", i, i+1)
	}
	sec.FDEs[i].Start = sec.FDEs[i+1].Start
	sec.FDEs[i].Size = 0
	sec.FDEs[i].FREs = sec.FDEs[i].FREs[:1]
	return nil
}
