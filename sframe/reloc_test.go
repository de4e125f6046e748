package sframe

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// TestRelocatableObjects dumps .o files of all three toolchains, whose start
// fields are relocated only where newest objdump relocates them.
func TestRelocatableObjects(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "objects"))
	for _, name := range []string{"calls-v1.o", "calls-v2.o", "calls-v3.o", "calls-v3-aarch64.o"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(name + ".objdump")
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got bytes.Buffer
			if err := DumpFile(&got, name, f, DumpAuto); err != nil {
				t.Fatal(err)
			}
			if d := golden.Diff(want, got.Bytes()); d != "" {
				t.Errorf("dump differs from objdump:\n%s", d)
			}
		})
	}
}
