//go:build cgo

package main

import (
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

func TestRun(t *testing.T) {
	dir := testcorpus.Dir(t)
	want := map[string]testcorpus.Entry{}
	for _, e := range testcorpus.Entries(t) {
		want[e.Path] = e
	}
	// The program's output and exit status pass through; dynamically
	// linked programs run with the default sysroot of their arch (bookworm's
	// libraries on this Debian 12 host) or --sysroot.
	for _, path := range []string{"v1/x86-64/except-O2-static", "v3/aarch64/recurse-O2-static-pac-bkey", "v2/x86-64/nolibc-O0",
		"v1/x86-64/except-O2-dynamic", "v1/aarch64/cold-O2-dynamic", "v3/x86-64/except-O2-dynamic", "v2/aarch64/setjmp-O0-dynamic"} {
		e := want[path]
		args := []string{"run", path}
		if e.Toolchain != "bookworm" {
			args = []string{"run", "--sysroot", testcorpus.Sysroot(t, &e), path}
		}
		out, errOut, status := runCmd(t, dir, args...)
		if out != e.Stdout || status != e.ExitStatus || errOut != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", args, status, out, errOut, e.ExitStatus, e.Stdout)
		}
	}
	empty := t.TempDir()
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"run", "--max-insns", "1000", "v3/x86-64/cold-O2-static", "--", "a", "b"},
			"sframesim run: v3/x86-64/cold-O2-static: instruction budget of 1000 exhausted at pc 0x"},
		{[]string{"run", "--max-mem", "4M", "v3/aarch64/many-O2-static"},
			"loading needs more than the memory cap of 4194304 bytes"},
		{[]string{"run", "--sysroot", empty, "v3/aarch64/recurse-O2-dynamic"}, "program interpreter /lib/ld-linux-aarch64.so.1 is not in the sysroot " + empty},
		{[]string{"run", "--max-mem", "lots", "v3/aarch64/recurse-O2-static"}, `--max-mem "lots"`},
		{[]string{"run"}, "sframesim run: no BINARY given\nrun 'sframesim help run'\n"},
		{[]string{"run", "no-such-file"}, "no such file"},
	} {
		out, errOut, status := runCmd(t, dir, c.args...)
		if status != exitError || out != "" || !strings.Contains(errOut, c.stderr) {
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
