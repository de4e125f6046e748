//go:build cgo

package linux

import (
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
	runBothWays(t, "ofdlocks", func(a string, blocks bool, x *Exit, out string) {
		if x.Reason != StopExited || x.Status != 0 || out != string(want) {
			t.Errorf("%s, per block %v: %v, output\n%s\nwant\n%s", a, blocks, x, out, want)
		}
	})
}
