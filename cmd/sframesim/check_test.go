package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestCheck runs check on corpus binaries: the verdicts, exit statuses,
// the JSON array (to stdout with --json -, the summary then on stderr)
// and the usage errors.
func TestCheck(t *testing.T) {
	dir := testcorpus.Dir(t)
	good := filepath.Join(dir, "v3/aarch64/nolibc-O2-pac-bkey")
	bad := filepath.Join(dir, "v2/x86-64/except-O2-dynamic") // ld's .plt.got row, noreturn calls
	out, errOut, status := runCmd(t, "", "check", good)
	if status != exitOK || errOut != "" || !strings.Contains(out, "result:       OK, every PC proven right") {
		t.Errorf("good: status %d, stderr %q, stdout:\n%s", status, errOut, out)
	}
	out, _, status = runCmd(t, "", "check", "--problems", "1", bad)
	if status != exitProblems || !strings.Contains(out, "CFA at 0x10c0 __cxa_finalize@plt: 2 PCs") ||
		!strings.Contains(out, "CFI says:     cfa sp+8, ra *(cfa-8), fp same") || !strings.Contains(out, "(2 more problems: see --json)") {
		t.Errorf("bad: status %d, stdout:\n%s", status, out)
	}
	out, errOut, status = runCmd(t, "", "check", "--json", "-", good, bad)
	var reps []struct {
		Binary   string `json:"binary"`
		PCs      uint64 `json:"pcs"`
		Proven   uint64 `json:"proven"`
		Problems []struct {
			Kind string `json:"kind"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("--json -: %v\n%s", err, out)
	}
	if status != exitProblems || len(reps) != 2 || reps[0].PCs == 0 || reps[0].Proven != reps[0].PCs || len(reps[1].Problems) != 3 ||
		!strings.Contains(errOut, "result:       PROBLEMS, 3 distinct (cfa 1, call-at-end 2)") {
		t.Errorf("--json -: status %d, reports %+v, stderr:\n%s", status, reps, errOut)
	}
	// gas 2.47.50 keeps `fp *(cfa-48)` in sqlite3's .cold parts where
	// GCC's CFI restores rbp: right where the cold code stored rbp there
	// again (listed apart), wrong before (problems: exit status 1).
	sqlite := "../../testdata/realworld/v3/x86-64/sqlite3-static"
	out, _, status = runCmd(t, "", "check", "--problems", "0", sqlite)
	if status != exitProblems || !strings.Contains(out, "  rule differs: 9 distinct (18 PCs): SFrame's rule differs from the CFI's, the code shows its value is still right (not problems)\n") ||
		!strings.Contains(out, "(9 more where SFrame's rule differs from the CFI's with the value still right: see --json)") ||
		!strings.Contains(out, "result:       PROBLEMS, 77 distinct (fp 9, call-at-end 68)") {
		t.Errorf("sqlite3-static: status %d, stdout:\n%s", status, out)
	}
	out, _, _ = runCmd(t, "", "check", "--problems", "100", sqlite)
	if !strings.Contains(out, "RULE DIFFERS FROM CFI, value still right: FP at 0x401dae shell_exec.cold+0x3a") {
		t.Errorf("sqlite3-static: no rule-differs finding at shell_exec.cold+0x3a:\n%s", out)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if _, _, status = runCmd(t, "", "check", "--json", path, good); status != exitOK {
		t.Errorf("--json FILE: status %d", status)
	}
	if data, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(data), "[\n  {\n    \"binary\"") {
		t.Errorf("--json FILE: %v\n%s", err, data)
	}
	for _, tc := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"check"}, exitUsage, "sframesim check: no FILE given\nrun 'sframesim help check'\n"},
		{[]string{"check", "--problems", "-1", good}, exitUsage, "sframesim check: --problems -1: want 0 or more\n"},
		{[]string{"check", "/nonexistent"}, exitError, "sframesim check: "},
		{[]string{"check", good, filepath.Join(dir, "manifest.json")}, exitError, "not an ELF file"},
	} {
		_, errOut, status := runCmd(t, "", tc.args...)
		if status != tc.status || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: status %d, stderr %q; want %d, %q", tc.args, status, errOut, tc.status, tc.stderr)
		}
	}
}
