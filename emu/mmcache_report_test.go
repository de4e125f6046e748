//go:build cgo

package emu_test

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/verify"
)

// TestRegionCacheSameReports verifies programs that map, unmap and
// protect memory as they run (thread stacks and their guard pages, ld.so
// loading libraries, malloc arenas, a signal on an unmapped page, file
// mappings) with the engines' region lookups cached and with Unicorn's
// own: the reports must be identical.
func TestRegionCacheSameReports(t *testing.T) {
	sameReports(t, []string{
		"v3/x86-64/pthreads-O2-static", "v3/aarch64/pthreads-O0-dynamic",
		"v3/x86-64/signals-O2-dynamic", "v3/aarch64/signals-O2-static",
		"v1/aarch64/files-O2-static", "v3/x86-64/files-O2-dynamic",
		"clang23/x86-64/except-O2-dynamic", "v2/x86-64/stdthread-O2-dynamic",
	}, emu.SetCacheRegions, "uncached", "cached")
}

// sameReports verifies each corpus program twice, with set(false) then
// set(true) in force (set returns the setting it replaced, which is put
// back), and wants identical reports but for the time.
func sameReports(t *testing.T, names []string, set func(on bool) bool, off, on string) {
	dir := testcorpus.Dir(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			e := testcorpus.Lookup(t, name)
			run := func(setting bool) *verify.Report {
				was := set(setting)
				defer set(was)
				rep, err := verify.Run(filepath.Join(dir, name), verify.Options{Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard}})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep
			}
			a, b := run(false), run(true)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("reports differ:\n%s %+v\n%s %+v", off, a, on, b)
			}
			t.Logf("%d instructions, %v", b.Instructions, b.Counts)
		})
	}
}
