//go:build cgo

package emu_test

import (
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// TestPagesSameReports verifies AArch64 programs that map, unmap and
// protect memory as they run (thread stacks and guard pages, ld.so, malloc
// arenas, a signal on an unmapped page, file mappings, pointer
// authentication) with the engine's 4 KiB pages and with QEMU's 1 KiB
// ones: the reports must be identical. The 4 KiB engine must have 4 KiB
// pages (pagesize.c) and room for more regions.
func TestPagesSameReports(t *testing.T) {
	e, err := emu.NewEngine(arch.ARM64)
	if err != nil {
		t.Fatal(err)
	}
	room4K := e.RegionRoom()
	e.Close()
	was := emu.SetSmallPages(true)
	e, err = emu.NewEngine(arch.ARM64)
	emu.SetSmallPages(was)
	if err != nil {
		t.Fatal(err)
	}
	room1K := e.RegionRoom()
	e.Close()
	if room4K < 4000 || room1K > 1024 {
		t.Errorf("room for %d regions with 4 KiB pages, %d with 1 KiB: want 4 KiB pages (over 4000) and 1 KiB (under 1024)", room4K, room1K)
	}
	pages4K := func(on bool) bool { return !emu.SetSmallPages(!on) }
	sameReports(t, []string{
		"v3/aarch64/pthreads-O0-dynamic", "v3/aarch64/signals-O2-static", "v1/aarch64/files-O2-static",
		"v3/aarch64/nolibc-O0-pac-standard", "v2/aarch64/stdthread-O2-dynamic", "v3/aarch64/vla-O0-static",
	}, pages4K, "1 KiB pages", "4 KiB pages")
}
