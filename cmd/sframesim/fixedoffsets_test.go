//go:build cgo

package main

import (
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestWrongFixedOffsets: a header whose fixed RA or FP offset is not the
// ABI's (AMD64: RA at CFA-8, no fixed FP; AArch64: neither) is malformed
// in every version: validate names the field at its section offset, and
// check and verify refuse the section instead of unwinding with it.
func TestWrongFixedOffsets(t *testing.T) {
	for _, c := range []struct {
		path  string
		off   int64 // 5: cfa_fixed_fp_offset, 6: cfa_fixed_ra_offset
		value int8
	}{
		{"v1/x86-64/asm-O2-static", 6, -16},
		{"v2/x86-64/asm-O2-static", 6, 0},
		{"v3/x86-64/nolibc-O2", 6, -4},
		{"v3/x86-64/nolibc-O2", 5, -16},
		{"v2/aarch64/asm-O2-static", 6, -8},
		{"v3/aarch64/recurse-O2-static", 5, -16},
	} {
		field := map[int64]string{5: "header.cfa_fixed_fp_offset", 6: "header.cfa_fixed_ra_offset"}[c.off]
		t.Run(fmt.Sprintf("%s %s=%d", c.path, field, c.value), func(t *testing.T) {
			var secOff int64
			bin := patched(t, testcorpus.Lookup(t, c.path), func(data []byte, raw *sframe.RawSection, _ *elf.File) {
				data[raw.Offset+c.off] = byte(c.value)
				secOff = raw.Offset
			})
			want := fmt.Sprintf("sframe: offset %#x: %s: ", c.off, field)
			for _, args := range [][]string{{"validate", bin}, {"check", bin}, {"verify", bin}} {
				_, errOut, status := runCmd(t, "", args...)
				if status != exitProblems || !strings.Contains(errOut, want) {
					t.Errorf("%s: status %d, stderr %q; want %d and %q", args[0], status, trim(errOut), exitProblems, want)
				}
				// verify names where the section is in the file.
				if where := fmt.Sprintf("(.sframe at file offset %#x)", secOff); args[0] == "verify" && !strings.Contains(errOut, where) {
					t.Errorf("verify: stderr %q; want %q", trim(errOut), where)
				}
			}
		})
	}
}
