package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestUndecodableRest: on x86-64 an undecodable instruction has no
// length, so nothing after it in its function can be checked: every byte
// from it to the FDE's end is an unknown PC, under its own row, not the
// whole rest as one PC; the PCs before it are checked as before.
func TestUndecodableRest(t *testing.T) {
	const rel = "v3/x86-64/nolibc-O2"
	ef, sec := openSection(t, rel)
	// The largest function, its second instruction made undecodable
	// (0x06, push %es, does not exist in 64-bit mode).
	fi := 0
	for i := range sec.FDEs {
		if sec.FDEs[i].Size > sec.FDEs[fi].Size {
			fi = i
		}
	}
	f := &sec.FDEs[fi]
	text := ef.Section(".text")
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	_, n := arch.AMD64.Disasm(code[f.Start-text.Addr:], f.Start, nil)
	bad := f.Start + uint64(n)
	data, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	data[text.Offset+bad-text.Addr] = 0x06
	path := filepath.Join(t.TempDir(), "patched")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	orig, err := File(filepath.Join(testcorpus.Dir(t), rel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := File(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rest := f.End() - bad
	var reason string
	for r, k := range rep.Unknown {
		if strings.HasPrefix(r, "undecodable instruction") {
			reason = r
			if k != rest {
				t.Errorf("%d PCs unknown for %q, want the %d bytes from %#x to the function's end %#x", k, r, rest, bad, f.End())
			}
		}
	}
	if reason == "" || rep.Complete() {
		t.Fatalf("no undecodable instruction reported (unknown: %v)", rep.Unknown)
	}
	var rowPCs, rowUnknown uint64
	for j := range f.FREs {
		v := rep.Row(fi, j)
		rowPCs += v.PCs
		rowUnknown += v.Unknown
	}
	if rowUnknown != rest || rowPCs != 1+rest {
		t.Errorf("rows of FDE %d: %d PCs, %d unknown; want %d and %d", fi, rowPCs, rowUnknown, 1+rest, rest)
	}
	// The function had n + rest bytes' worth of instructions: the PCs
	// checked elsewhere are the same.
	var origFDE uint64
	for j := range f.FREs {
		origFDE += orig.Row(fi, j).PCs
	}
	if rep.PCs-(1+rest) != orig.PCs-origFDE {
		t.Errorf("%d PCs in all (%d in the function), unpatched %d (%d in the function): the other functions changed", rep.PCs, 1+rest, orig.PCs, origFDE)
	}
}
