//go:build cgo

package linux

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOFDLocks runs testdata/src/ofdlocks.c (open file description locks:
// conflicts between two descriptions of a file, l_pid -1, ranges joined
// and split, released with the last descriptor, F_OFD_SETLKW woken by
// another thread's unlock, a POSIX lock in their way) on both
// architectures, per block and per instruction: the output is the native
// one. Before, every F_OFD_* command was EINVAL.
func TestOFDLocks(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "ofdlocks-want"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"x86_64", "aarch64"} {
		prog := filepath.Join("testdata", "ofdlocks-"+a)
		for _, blocks := range []bool{true, false} {
			var out bytes.Buffer
			cfg := Config{Args: []string{"ofdlocks"}, Stdout: &out, Stderr: io.Discard}
			var p *Process
			var x *Exit
			var err error
			if blocks {
				p, x, err = RunFast(prog, cfg)
			} else if p, err = Load(prog, cfg); err == nil {
				x, err = p.Run()
			}
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			if x.Reason != StopExited || x.Status != 0 || out.String() != string(want) {
				t.Errorf("%s, per block %v: %v, output\n%s\nwant\n%s", a, blocks, x, out.String(), want)
			}
			p.Close()
		}
	}
}
