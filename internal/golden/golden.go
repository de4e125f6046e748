// Package golden compares test output with golden files, the one way every
// test in this module does it.
//
// A golden file is either the test's own (a TUI screen, a corpus summary,
// an encoded input): [Check] compares with it and `go test -update`
// rewrites it. Or it is the output of another program, the reference the
// test holds sframesim to (objdump --sframe dumps, made by scripts beside
// them): the test reads it and compares with [Diff], and -update leaves it
// alone.
//
// A mismatch is reported as a unified diff of lines, control characters
// other than tab shown escaped; binary content is reported by size and the
// first differing byte.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// flagName is the flag that rewrites golden files. teatest's
// github.com/charmbracelet/x/exp/golden registers a flag of the same name
// and meaning; where it is linked in (tui's tests), both share it. It
// registers first: the spec initializes, among the packages whose imports
// are initialized, the first in import-path order, and its imports are
// among ours (directly or not). Were it otherwise, its init would panic
// on the flag redefined and tui's tests would not start.
const flagName = "update"

func init() {
	if flag.Lookup(flagName) == nil {
		flag.Bool(flagName, false, "rewrite the golden files with the output the tests got")
	}
}

// Update reports whether the tests run with -update.
func Update() bool {
	f := flag.Lookup(flagName)
	if f == nil {
		return false
	}
	on, _ := strconv.ParseBool(f.Value.String())
	return on
}

// Check compares got with the golden file at path. With -update it
// writes got to path instead, creating the directory.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -update writes it)", err)
		return
	}
	if d := Diff(want, got); d != "" {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", path, d)
	}
}

// maxDiffLines bounds a reported diff: the first hunks show what broke.
const maxDiffLines = 200

// Diff returns "" when got equals want, else what differs: a unified
// diff from want to got for text (at most 200 lines), sizes and the
// first differing offset for binary content.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	if isBinary(want) || isBinary(got) {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		return fmt.Sprintf("binary content differs at offset %#x (want %d bytes, got %d)", i, len(want), len(got))
	}
	d := udiff.Unified("want", "got", escape(want), escape(got))
	if d == "" {
		// A control character on one side, its escape spelled out on the other.
		return fmt.Sprintf("differs only where one has a control character:\nwant %q\ngot  %q", want, got)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(d, "\n"), "\n")
	if len(lines) > maxDiffLines {
		d = strings.Join(lines[:maxDiffLines], "") + fmt.Sprintf("... %d more diff lines\n", len(lines)-maxDiffLines)
	}
	return d
}

// isBinary: not UTF-8, or holding a NUL.
func isBinary(b []byte) bool {
	return !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0
}

// escape shows control characters but newline and tab as Go escapes.
func escape(b []byte) string {
	var s strings.Builder
	for _, r := range string(b) {
		switch {
		case r == '\n' || r == '\t':
			s.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&s, `\x%02x`, r)
		default:
			s.WriteRune(r)
		}
	}
	return s.String()
}
