//go:build cgo

package linux

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestRewrittenCode runs testdata/jit (testdata/src/jit.c): functions
// generated into writable and executable memory, called many times, then
// generated again in place, as a JIT reuses its buffer. Under run (counting
// per block, RunFast) Unicorn 2.1.1 kept executing the old translation:
// on AArch64 every round after the first returned the first round's
// result, and Debian's pcre2test -jit crashed; the block hook now finds
// the block's bytes changed and has its translation dropped. Counting per
// instruction without an observer (run's way on after a fault inside a
// block) did the same, and now has a store hook that does nothing, which
// makes Unicorn drop such translations itself. The expected output is the
// native run's.
func TestRewrittenCode(t *testing.T) {
	want := "round 1: 10\nround 2: 20\nround 3: 30\nround 4: 40\nround 5: 50\nround 6: 60\n" +
		"leaf 0: 1499500\nleaf 1: 1498500\nleaf 2: 1499500\nleaf 3: 1498500\n"
	runBothWays(t, "jit", func(a string, blocks bool, x *Exit, out string) {
		if x.Reason != StopExited || x.Status != 0 || out != want {
			t.Errorf("%s, per block %v: %v, output\n%s\nwant\n%s", a, blocks, x, out, want)
		}
	})
}

// runBothWays runs testdata/NAME-x86_64 and NAME-aarch64 (argv[0] NAME),
// per block (RunFast) and per instruction, and gives check each run's
// exit and standard output.
func runBothWays(t *testing.T, name string, check func(a string, blocks bool, x *Exit, out string)) {
	t.Helper()
	for _, a := range []string{"x86_64", "aarch64"} {
		prog := filepath.Join("testdata", name+"-"+a)
		if _, err := os.Stat(prog); err != nil {
			t.Fatal(err)
		}
		for _, blocks := range []bool{true, false} {
			var out bytes.Buffer
			cfg := Config{Args: []string{name}, Stdout: &out, Stderr: io.Discard}
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
			check(a, blocks, x, out.String())
			p.Close()
		}
	}
}
