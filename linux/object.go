package linux

import "debug/elf"

// Object is an ELF file mapped into the guest.
type Object struct {
	// Name is the path the guest knows it by: the program's absolute
	// path, PT_INTERP, or the path ld.so opened.
	Name string
	// Path is the host file it was read from (inside the sysroot).
	Path string
	// Base is the load bias: run-time address minus ELF virtual address.
	Base uint64
	// Start and End bound its PT_LOAD segments in memory (page-aligned).
	Start, End uint64
	// ELF is the file's ELF view (the whole file is in memory).
	ELF *elf.File
}
