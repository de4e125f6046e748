package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestMutateRefusesItsInput: -o naming BINARY itself, by the same path,
// another path, a symbolic or a hard link, is a usage error that leaves
// BINARY as it was; a new file is written.
func TestMutateRefusesItsInput(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(dir, "hard"), filepath.Join(dir, "sym")
	if err := os.Link(bin, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("prog", sym); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{bin, dir + "/sub/../prog", dir + "//prog", hard, sym} {
		o, e, status := runCmd(t, "", "mutate", "--fde", "1", "-o", out, bin)
		if status != exitUsage || o != "" || !strings.Contains(e, "-o "+out+" is BINARY "+bin+" itself") {
			t.Errorf("-o %s: status %d, stdout %q, stderr %q; want %d and a usage error", out, status, o, e, exitUsage)
		}
		if got, err := os.ReadFile(bin); err != nil || !bytes.Equal(got, orig) {
			t.Fatalf("-o %s: BINARY changed (%v)", out, err)
		}
	}
	out := filepath.Join(dir, "mutated")
	if o, e, status := runCmd(t, "", "mutate", "--fde", "1", "-o", out, bin); status != exitOK {
		t.Errorf("-o a new file: status %d\n%s%s", status, o, e)
	}
}
