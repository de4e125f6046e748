//go:build cgo

package main

import (
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/corpus"
)

func TestRun(t *testing.T) {
	dir := corpus.Dir(t)
	want := map[string]corpus.Entry{}
	for _, e := range corpus.Entries(t) {
		want[e.Path] = e
	}
	// The program's output and exit status pass through.
	for _, path := range []string{"v1/x86-64/except-O2-static", "v3/aarch64/recurse-O2-static-pac-bkey", "v2/x86-64/nolibc-O0"} {
		out, errOut, status := runCmd(t, dir, "run", path)
		if e := want[path]; out != e.Stdout || status != e.ExitStatus || errOut != "" {
			t.Errorf("run %s: status %d, stdout %q, stderr %q; want %d, %q", path, status, out, errOut, e.ExitStatus, e.Stdout)
		}
	}
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"run", "--max-insns", "1000", "v3/x86-64/cold-O2-static", "--", "a", "b"},
			"sframesim run: v3/x86-64/cold-O2-static: instruction budget of 1000 exhausted at pc 0x"},
		{[]string{"run", "--max-mem", "4M", "v3/aarch64/many-O2-static"},
			"loading needs more than the memory cap of 4194304 bytes"},
		{[]string{"run", "v3/aarch64/recurse-O2-dynamic"}, "PT_INTERP /lib/ld-linux-aarch64.so.1: dynamically linked programs cannot run"},
		{[]string{"run", "--max-mem", "lots", "v3/aarch64/recurse-O2-static"}, `--max-mem "lots"`},
		{[]string{"run"}, "usage: sframesim run"},
		{[]string{"run", "no-such-file"}, "no such file"},
	} {
		out, errOut, status := runCmd(t, dir, c.args...)
		if status != exitFailed || out != "" || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want status 2 and %q on stderr", c.args, status, out, errOut, c.stderr)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]uint64{"4096": 4096, "64K": 64 << 10, "3M": 3 << 20, "2G": 2 << 30} {
		if got, err := parseSize(s); got != want || err != nil {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "1T", "G", "99999999999G"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) succeeded", s)
		}
	}
}
