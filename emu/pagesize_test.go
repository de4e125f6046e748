//go:build cgo

package emu_test

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/verify"
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
	dir := testcorpus.Dir(t)
	for _, name := range []string{
		"v3/aarch64/pthreads-O0-dynamic", "v3/aarch64/signals-O2-static", "v1/aarch64/files-O2-static",
		"v3/aarch64/nolibc-O0-pac-standard", "v2/aarch64/stdthread-O2-dynamic", "v3/aarch64/vla-O0-static",
	} {
		t.Run(name, func(t *testing.T) {
			e := testcorpus.Lookup(t, name)
			run := func(pages4K bool) *verify.Report {
				was := emu.SetSmallPages(!pages4K)
				defer emu.SetSmallPages(was)
				rep, err := verify.Run(filepath.Join(dir, name), verify.Options{Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard}})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep
			}
			small, large := run(false), run(true)
			if !reflect.DeepEqual(small, large) {
				t.Errorf("reports differ:\n1 KiB pages %+v\n4 KiB pages %+v", small, large)
			}
			t.Logf("%d instructions, %v", large.Instructions, large.Counts)
		})
	}
}
