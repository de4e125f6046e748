//go:build cgo

package emu

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// residentBytes is this process's resident memory (/proc/self/statm).
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestUserModeMemory: dropping a new engine to user privilege (usermode.c)
// leaves its memory as it was. A uc_emu_start with an instruction count
// there (or a flush of every translation) made Unicorn clear its whole
// translation buffer at the engine's next start: 1 GiB more resident
// memory for every run.
func TestUserModeMemory(t *testing.T) {
	for _, c := range []struct {
		a     *arch.Arch
		code  []byte
		until uint64 // after the two nops
	}{
		{arch.AMD64, []byte{0x90, 0x90, 0xf4}, testText + 2},                                           // nop; nop; hlt
		{arch.ARM64, []byte{0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5, 0, 0, 0, 0}, testText + 8}, // nop; nop; udf
	} {
		t.Run(c.a.Name, func(t *testing.T) {
			before := residentBytes(t)
			e := newTestEngine(t, c.a, c.code)
			for i := 0; i < 2; i++ {
				if err := e.Start(testText, c.until, 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			if grew := residentBytes(t) - before; grew > 256<<20 {
				t.Errorf("a new engine that ran two instructions twice grew resident memory by %d MiB", grew>>20)
			}
		})
	}
}
