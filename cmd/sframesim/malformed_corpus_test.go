//go:build cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestCorpusCheckMalformed: corpus refuses a binary whose section breaks a
// rule of the format (an error); with --check-malformed it checks it, the
// malformed section a finding unless expected; --update records it.
func TestCorpusCheckMalformed(t *testing.T) {
	bad := emptyDuplicateFDE(t, filepath.Join(testcorpus.Dir(t), "v2/x86-64/recurse-O2-static"), 1, -1)
	dir := filepath.Dir(bad)
	expect := filepath.Join(t.TempDir(), "expect.json")
	out, _, status := runCmd(t, "", "corpus", "--progress", "none", dir)
	if status != exitError || !strings.Contains(out, "could not be verified") || !strings.Contains(out, "verify --check-malformed") {
		t.Errorf("without --check-malformed: status %d\n%s", status, out)
	}
	out, _, status = runCmd(t, "", "corpus", "--progress", "none", "--check-malformed", dir)
	if status != exitProblems || !strings.Contains(out, "the SFrame section breaks 1 rule(s) of the format, which the Linux kernel refuses (checked anyway)") {
		t.Errorf("--check-malformed: status %d\n%s", status, out)
	}
	out, _, status = runCmd(t, "", "corpus", "--progress", "none", "--check-malformed", "--expect", expect, "--update", dir)
	data, err := os.ReadFile(expect)
	if status != exitOK || err != nil || !strings.Contains(string(data), `"malformed": "sframe: offset 0x44: FDE[2].func_start_address: flagged sorted`) ||
		!strings.Contains(out, "clean → malformed, 0 known problems") || !strings.Contains(out, "1 expected problems or malformed sections have no reason") {
		t.Errorf("--update: status %d, %v\n%s\n%s", status, err, out, data)
	}
	out, _, status = runCmd(t, "", "corpus", "--progress", "none", "--check-malformed", "--expect", expect, dir)
	if status != exitOK || !strings.Contains(out, "OK: 1 of 1 binaries as expected (0 clean, 1 with known problems") {
		t.Errorf("as expected: status %d\n%s", status, out)
	}
}
