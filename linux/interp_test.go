//go:build cgo

package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestHugeInterpreter: a program interpreter far larger than the memory
// cap (a sparse 4 GiB file) is refused before it is read, naming the cap.
func TestHugeInterpreter(t *testing.T) {
	root := t.TempDir()
	ld := filepath.Join(root, "lib64/ld-linux-x86-64.so.2")
	if err := os.MkdirAll(filepath.Dir(ld), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(ld)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	prog := filepath.Join(testcorpus.Dir(t), "v3/x86-64/recurse-O2-dynamic")
	p, err := Load(prog, Config{Sysroot: root, MaxMem: 64 << 20})
	if err == nil {
		p.Close()
		t.Fatal("a 4 GiB interpreter was loaded under a 64 MiB cap")
	}
	if !strings.Contains(err.Error(), "loading needs more than the memory cap of 67108864 bytes (program interpreter /lib64/ld-linux-x86-64.so.2: the file is 4294967296 bytes") {
		t.Errorf("error %v, want the memory cap named", err)
	}
}
