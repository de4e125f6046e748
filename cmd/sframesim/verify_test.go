//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
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

// sysroot returns the sysroot of a dynamic corpus binary.
func sysroot(t *testing.T, rel string) string {
	e := testcorpus.Lookup(t, rel)
	return testcorpus.Sysroot(t, &e)
}

// TestVerifyCheckMalformed: a section that breaks a rule of the format
// (here an empty FDE sharing its start with the next one, as ld 2.40 keeps
// for an empty .cold part) is refused, and with --check-malformed checked
// as read: never OK, the rules broken listed, the run's own findings
// reported beside them, batched and exact alike.
func TestVerifyCheckMalformed(t *testing.T) {
	dir := testcorpus.Dir(t)
	src := filepath.Join(dir, "v2/x86-64/recurse-O2-static")
	clean := emptyDuplicateFDE(t, src, 1, -1)
	wrong := emptyDuplicateFDE(t, src, 1, 3) // and FDE 3's first row off by 8
	const rule = "FDE 1 is empty (size 0), a function with no code at the other's address"

	_, e, status := runCmd(t, "", "verify", clean)
	if status != exitProblems || !strings.Contains(e, "--check-malformed checks the run against it anyway") || !strings.Contains(e, rule) || strings.Contains(e, "result:") {
		t.Errorf("without --check-malformed: status %d\n%s", status, e)
	}
	// A section that does not decode stays refused.
	_, e, status = runCmd(t, "", "verify", "--check-malformed", corruptSFrame(t, src, 8, 0xff, 0xff, 0xff, 0x7f))
	if status != exitProblems || !strings.Contains(e, "num_fdes") || strings.Contains(e, "result:") {
		t.Errorf("undecodable section with --check-malformed: status %d\n%s", status, e)
	}

	type report struct {
		Malformed []string          `json:"malformed"`
		Counts    map[string]uint64 `json:"counts"`
		Failures  uint64            `json:"failures"`
		Problems  []struct {
			Kind string `json:"kind"`
			Row  string `json:"row"`
		} `json:"problems"`
		Instructions uint64 `json:"instructions"`
		Complete     bool   `json:"complete"`
	}
	verify := func(bin string, exact bool) (report, string, []byte) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "report.json")
		args := []string{"verify", "--check-malformed", "--json", path}
		if exact {
			args = append(args, "--exact")
		}
		_, e, status := runCmd(t, "", append(args, bin)...)
		if status != exitProblems {
			t.Errorf("%v: status %d, want %d (MALFORMED)\n%s", args, status, exitProblems, e)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rep report
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		return rep, e, data
	}
	rep, e, batched := verify(clean, false)
	if len(rep.Malformed) != 1 || !strings.Contains(rep.Malformed[0], rule) || rep.Failures != 0 || !rep.Complete ||
		rep.Counts["ok"] == 0 || rep.Counts["ok"]+rep.Counts["no-fde"] != rep.Instructions ||
		!strings.Contains(e, "malformed:    the SFrame section breaks 1 rule(s) of the format") ||
		!strings.Contains(e, "result:       MALFORMED section, checked anyway: no mismatch in the") {
		t.Errorf("clean run of a malformed section: %+v\n%s", rep, e)
	}
	// The code of the emptied FDE has no SFrame data left; the rest is
	// checked as in the well-formed original.
	// (A copy at a path as long, for the same stack layout.)
	orig, _, status := runCmd(t, "", "verify", "--json", "-", emptyDuplicateFDE(t, src, -1, -1))
	var want report
	if err := json.Unmarshal([]byte(orig), &want); status != exitOK || err != nil {
		t.Fatalf("original: status %d, %v", status, err)
	}
	if rep.Instructions != want.Instructions || rep.Counts["ok"] >= want.Counts["ok"] || want.Counts["ok"]+want.Counts["no-fde"] != want.Instructions {
		t.Errorf("malformed copy: %d instructions, %d ok; original: %d, %d ok", rep.Instructions, rep.Counts["ok"], want.Instructions, want.Counts["ok"])
	}
	_, _, exact := verify(clean, true)
	if !sameReports(batched, exact) {
		t.Errorf("batched and exact reports differ:\n%s\n%s", batched, exact)
	}

	rep, e, batched = verify(wrong, false)
	if len(rep.Malformed) != 1 || rep.Failures == 0 || len(rep.Problems) == 0 || rep.Problems[0].Kind != "cfa" ||
		!strings.Contains(e, "result:       MALFORMED section, checked anyway: ") || !strings.Contains(e, "instructions with a wrong unwind") ||
		!strings.Contains(e, "worst rows:") {
		t.Errorf("malformed section with a wrong row: %+v\n%s", rep, e)
	}
	if _, _, exact := verify(wrong, true); !sameReports(batched, exact) {
		t.Errorf("batched and exact reports differ:\n%s\n%s", batched, exact)
	}
}

// sameReports reports whether two JSON reports are the same but for the
// seconds they took.
func sameReports(a, b []byte) bool {
	strip := func(data []byte) string {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return ""
		}
		delete(m, "seconds")
		out, _ := json.Marshal(m)
		return string(out)
	}
	sa := strip(a)
	return sa != "" && sa == strip(b)
}
