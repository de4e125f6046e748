package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		want, got string
		has       []string // substrings of the diff; none: equal
	}{
		{name: "equal", want: "a\nb\n", got: "a\nb\n"},
		{name: "line", want: "a\nb\nc\n", got: "a\nB\nc\n", has: []string{"--- want\n+++ got\n", "@@ -1,3 +1,3 @@\n", " a\n-b\n+B\n c\n"}},
		{name: "missing newline", want: "a\n", got: "a", has: []string{"-a\n+a\n\\ No newline at end of file"}},
		{name: "control", want: "x\n", got: "\x1b[1mx\r\n", has: []string{"-x\n+\\x1b[1mx\\x0d\n"}},
		{name: "only escapes", want: `\x1b` + "\n", got: "\x1b\n", has: []string{"differs only where one has a control character", `want "\\x1b\n"`}},
		{name: "binary", want: "\x00\x01\x02", got: "\x00\x01\x03\x04", has: []string{"binary content differs at offset 0x2 (want 3 bytes, got 4)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff([]byte(tt.want), []byte(tt.got))
			if (d == "") != (len(tt.has) == 0) {
				t.Fatalf("Diff = %q", d)
			}
			for _, s := range tt.has {
				if !strings.Contains(d, s) {
					t.Errorf("diff lacks %q:\n%s", s, d)
				}
			}
		})
	}
}

func TestDiffBounded(t *testing.T) {
	var want, got strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&want, "line %d\n", i)
		fmt.Fprintf(&got, "LINE %d\n", i)
	}
	d := Diff([]byte(want.String()), []byte(got.String()))
	if n := strings.Count(d, "\n"); n != maxDiffLines+1 || !strings.HasSuffix(d, "... 1803 more diff lines\n") {
		t.Errorf("%d lines, ending %q", n, d[len(d)-40:])
	}
}

// recorder is a testing.TB that keeps what Check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

func setUpdate(t *testing.T, on bool) {
	t.Helper()
	old := flag.Lookup(flagName).Value.String()
	if err := flag.Set(flagName, fmt.Sprint(on)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(flagName, old) })
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")

	setUpdate(t, false)
	r := &recorder{TB: t}
	Check(r, path, []byte("one\n"))
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "no such file") || !strings.Contains(r.errs[0], "-update writes it") {
		t.Errorf("missing file: %q", r.errs)
	}

	setUpdate(t, true)
	r = &recorder{TB: t}
	Check(r, path, []byte("one\n"))
	if data, err := os.ReadFile(path); err != nil || string(data) != "one\n" || len(r.errs) != 0 {
		t.Errorf("-update wrote %q (%v), reported %q", data, err, r.errs)
	}

	setUpdate(t, false)
	r = &recorder{TB: t}
	Check(r, path, []byte("one\n"))
	if len(r.errs) != 0 {
		t.Errorf("equal: %q", r.errs)
	}
	Check(r, path, []byte("two\n"))
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], path+" differs from the output (go test -update rewrites it):\n--- want\n+++ got\n@@ -1 +1 @@\n-one\n+two\n") {
		t.Errorf("mismatch: %q", r.errs)
	}
	if data, _ := os.ReadFile(path); string(data) != "one\n" {
		t.Errorf("a mismatch without -update wrote %q", data)
	}
}
