package verify

import "debug/elf"

// Lines maps code addresses to source lines ("file:line") from the DWARF
// line tables of a program, for callers outside this package (the TUI).
type Lines struct{ t *lineTable }

// NewLines reads the line tables of f, whose code is loaded bias bytes
// above its link-time addresses. A program without DWARF gives a Lines
// that finds nothing.
func NewLines(f *elf.File, bias uint64) *Lines { return &Lines{newLineTable(f, bias)} }

// Lookup returns the source line of pc, or "".
func (l *Lines) Lookup(pc uint64) string { return l.t.lookup(pc) }
