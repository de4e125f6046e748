//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

func TestVerifyCommand(t *testing.T) {
	dir := testcorpus.Dir(t)
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	tests := []struct {
		name    string
		args    []string
		status  int
		summary string // in the summary, on stderr
		stderr  string
	}{
		{"sample", []string{"verify"}, exitOK, "result:       OK, no mismatch", "embedded sample"},
		// gas 2.40 keeps an SP-based CFA for a function whose CFA is on rbx.
		{"gas 2.40 bug", []string{"verify", "--json", jsonPath, filepath.Join(dir, "v1/x86-64/asm-O2-static")}, exitProblems,
			// (how many depends on the stack layout, hence on argv[0]'s length)
			" failures: 000000000040183e  sp+16     u         u (asm_regcfa_call+0x4)", ""},
		// A run stopped early is never OK.
		{"budget", []string{"verify", "--max-insns", "1000", filepath.Join(dir, "v3/x86-64/nolibc-O2")}, exitError,
			"result:       INCOMPLETE, no mismatch in the 1000 instructions checked, but the run stopped before the program's end: instruction budget of 1000 reached", ""},
		{"malformed", []string{"verify", corruptSFrame(t, filepath.Join(dir, "v3/x86-64/nolibc-O2"), 8, 0xff, 0xff, 0xff, 0x7f)}, exitProblems,
			"", "num_fdes"},
		{"missing", []string{"verify", "/nonexistent"}, exitError, "", "no such file"},
		// A dynamic PIE with ld.so and sid's glibc: the main program's rows
		// (PLT stubs included) are checked at their run-time addresses.
		{"dynamic", []string{"verify", "--sysroot", sysroot(t, "v3/aarch64/recurse-O2-dynamic"), filepath.Join(dir, "v3/aarch64/recurse-O2-dynamic")}, exitOK,
			"result:       OK, no mismatch", ""},
		// ld's .plt.got row says sp+16 where the stub, entered by a call, has
		// its CFA at sp+8.
		{"plt.got", []string{"verify", "--sysroot", sysroot(t, "v3/x86-64/recurse-O2-dynamic"), filepath.Join(dir, "v3/x86-64/recurse-O2-dynamic")}, exitProblems,
			"        1 failures: 0000000000000000  sp+16     u         f", ""},
		// --static: the rows the run did not execute are proven by check.
		{"static", []string{"verify", "--static", filepath.Join(dir, "v3/x86-64/many-O2-static")}, exitOK,
			"  static:       67 rows did not run; check (SFrame vs CFI: .eh_frame, ", ""},
		// A noreturn call ends thrower.cold: the run never unwinds through
		// its return address (the callee has no SFrame data), check finds it.
		{"static call-at-end", []string{"verify", "--static", filepath.Join(dir, "v1/x86-64/except-O2-static")}, exitProblems,
			"CALL-AT-END at 0x40117c thrower(int, long) [clone .cold]+0x7c (except.cc:12)", ""},
		{"no interpreter", []string{"verify", "--sysroot", t.TempDir(), filepath.Join(dir, "v3/x86-64/recurse-O2-dynamic")}, exitError,
			"", "program interpreter /lib64/ld-linux-x86-64.so.2 is not in the sysroot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := runCmd(t, "", tt.args...)
			// stdout is the program's alone.
			if status != tt.status || !strings.Contains(errOut, tt.summary) || !strings.Contains(errOut, tt.stderr) || strings.Contains(out, "result:") {
				t.Errorf("status %d (want %d)\nstdout %q\nstderr %q (want ⊇ %q and %q)", status, tt.status, trim(out), trim(errOut), tt.summary, tt.stderr)
			}
		})
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Counts   map[string]uint64 `json:"counts"`
		Problems []struct {
			Kind string `json:"kind"`
			Row  string `json:"row"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Counts["cfa"] == 0 || len(rep.Problems) == 0 || rep.Problems[0].Kind != "cfa" || !strings.Contains(rep.Problems[0].Row, "sp+16") {
		t.Errorf("report: counts %v, problems %+v", rep.Counts, rep.Problems)
	}
}

// TestMutateThenVerify: a fault injected with mutate is what verify reports.
func TestMutateThenVerify(t *testing.T) {
	dir := testcorpus.Dir(t)
	src := filepath.Join(dir, "v3/x86-64/nolibc-O2")
	out := filepath.Join(t.TempDir(), "mutated")
	o, e, status := runCmd(t, "", "mutate", "--pc", "0x401020", "--field", "cfa", "--delta", "16", "-o", out, src)
	if status != exitOK || !strings.Contains(o, "sp+8") || !strings.Contains(o, "sp+24") {
		t.Fatalf("mutate: status %d\n%s%s", status, o, e)
	}
	o, e, status = runCmd(t, "", "verify", out)
	if status != exitProblems || !strings.Contains(e, "CFA at 0x40101a sys_exit_group") || !strings.Contains(e, "sp+24") {
		t.Errorf("verify of the mutated copy: status %d\n%s%s", status, o, e)
	}
	// The original is untouched and clean.
	if _, _, status := runCmd(t, "", "verify", src); status != exitOK {
		t.Errorf("verify of the original: status %d", status)
	}
	for _, bad := range [][]string{
		{"mutate", "--pc", "0x401020", "--field", "ra", "-o", out, src},   // AMD64: fixed RA offset
		{"mutate", "--pc", "0x1", "-o", out, src},                         // no FDE
		{"mutate", "--fde", "999", "-o", out, src},                        // no such FDE
		{"mutate", "--pc", "0x401020", "--field", "size", "-o", out, src}, // unknown field
		{"mutate", "--pc", "0x401020", src},                               // no -o
	} {
		if _, e, status := runCmd(t, "", bad...); status != exitError {
			t.Errorf("%v: status %d, stderr %q", bad, status, e)
		}
	}
}

// corruptSFrame writes a copy of the ELF file src with bytes at offset off
// of its .sframe section replaced by b.
func corruptSFrame(t *testing.T, src string, off int, b ...byte) string {
	t.Helper()
	sf, err := sframe.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	at := int(sf.Raw.Offset) + off
	sf.Close()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[at:], b)
	out := filepath.Join(t.TempDir(), filepath.Base(src)+"-corrupt")
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// sysroot returns the sysroot of a dynamic corpus binary.
func sysroot(t *testing.T, rel string) string {
	e := testcorpus.Lookup(t, rel)
	return testcorpus.Sysroot(t, &e)
}
