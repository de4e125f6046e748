//go:build cgo

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// fixture is a small corpus in a temporary directory: links to three
// committed binaries — one clean, one with the gas 2.40 CFA bug, one
// dynamically linked (sid: its sysroot is in the manifest) with ld's
// .plt.got row — and to a real s390x binary, whose SFrame ABI verify does
// not unwind. The manifest gives their exit status and output; the
// expectations know the three problems and the unsupported binary.
type fixture struct {
	dir, manifest, expect string
	sysroot               string // of the dynamic binary
	entries               []map[string]any
}

const (
	fxClean   = "v3/x86-64/nolibc-O2"
	fxGas     = "v1/x86-64/asm-O2-static"
	fxDynamic = "v3/x86-64/recurse-O2-dynamic"
	fxS390x   = "s390x/prog"
)

func corpusFixture(t *testing.T) *fixture {
	t.Helper()
	src := testcorpus.Dir(t)
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{dir: t.TempDir()}
	link := func(from, to string) {
		if err := os.MkdirAll(filepath.Join(fx.dir, filepath.Dir(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(from, filepath.Join(fx.dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range testcorpus.Entries(t) {
		switch e.Path {
		case fxClean, fxGas, fxDynamic:
			link(filepath.Join(src, e.Path), e.Path)
			entry := map[string]any{"path": e.Path, "exit_status": e.ExitStatus, "stdout": e.Stdout, "toolchain": e.Toolchain, "arch": e.Arch}
			if e.Link == "dynamic" {
				fx.sysroot = testcorpus.Sysroot(t, &e)
				entry["sysroot"] = fx.sysroot
			}
			fx.entries = append(fx.entries, entry)
		}
	}
	link(filepath.Join(root, "sframe/testdata/handmade/s390x-real.elf"), fxS390x)
	fx.entries = append(fx.entries, map[string]any{"path": fxS390x})
	fx.manifest = writeJSON(t, filepath.Join(fx.dir, "manifest.json"), fx.entries)
	fx.expect = writeJSON(t, filepath.Join(fx.dir, "expect.json"), map[string]any{"binaries": map[string]any{
		fxGas: map[string]any{"problems": []map[string]string{
			{"kind": "cfa", "function": "asm_regcfa_call", "reason": "gas 2.40 keeps sp+16 for a CFA on rbx"}}},
		fxDynamic: map[string]any{"problems": []map[string]string{
			{"kind": "cfa", "function": "__cxa_finalize@plt", "reason": "ld's .plt.got row says sp+16"}}},
		fxS390x: map[string]any{"unsupported": "is not one sframesim unwinds", "reason": "no s390x unwinder"},
	}})
	return fx
}

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorpusFaultInjected: a corpus binary with one SFrame row changed by
// mutate makes the corpus run fail, with a message naming the binary, the
// PC and symbol, and the FDE and row as objdump prints them — on stdout,
// in the progress lines and in the JUnit failure.
func TestCorpusFaultInjected(t *testing.T) {
	fx := corpusFixture(t)
	dir, manifest, expect := fx.dir, fx.manifest, fx.expect
	out, errOut, status := runCmd(t, "", "corpus", "-j", "2", "--progress", "lines", "--expect", expect, manifest)
	if status != exitOK || !strings.Contains(out, "OK: 4 of 4 binaries as expected (1 clean, 2 with known problems, 1 unsupported)") {
		t.Fatalf("unmutated corpus: status %d\n%s\n%s", status, out, errOut)
	}

	// Replace the clean binary by a copy with a wrong CFA in one row.
	bin := filepath.Join(dir, fxClean)
	mutated := filepath.Join(dir, "mutated")
	if o, e, status := runCmd(t, "", "mutate", "--pc", "0x401020", "--field", "cfa", "--delta", "16", "-o", mutated, bin); status != exitOK {
		t.Fatalf("mutate: status %d\n%s%s", status, o, e)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(mutated, bin); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "out.xml")
	jsonOut := filepath.Join(dir, "out.json")
	out, errOut, status = runCmd(t, "", "corpus", "--progress", "lines", "--expect", expect, "--junit", junit, "--json", jsonOut, manifest)
	want := `v3/x86-64/nolibc-O2: unexpected cfa problem at 0x40101a sys_exit_group (start.S:39), frame 0 at 0x40101a sys_exit_group`
	row := `func idx [2]: pc = 0x40101a, size = 8 bytes, row "000000000040101a  sp+24     u         f": expected `
	if status != exitProblems || !strings.Contains(out, want) || !strings.Contains(out, row) ||
		!strings.Contains(out, "FAIL: 1 with unexpected outcomes; 3 of 4 binaries as expected") {
		t.Errorf("mutated corpus: status %d (want %d)\nstdout:\n%s\nwant lines with %q and %q", status, exitProblems, out, want, row)
	}
	if !strings.Contains(errOut, "fail ") || !strings.Contains(errOut, want) {
		t.Errorf("progress lines do not name the failure:\n%s", errOut)
	}

	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var failures, skipped []string
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures = append(failures, c.Name)
				if !strings.Contains(c.Failure.Message, want) || !strings.Contains(c.Failure.Message, row) || !strings.Contains(c.Failure.Text, "sp+24") {
					t.Errorf("JUnit failure of %s: %q", c.Name, c.Failure.Message)
				}
			}
			if c.Skipped != nil {
				skipped = append(skipped, c.Name)
			}
		}
	}
	if fmt.Sprint(failures) != "[nolibc-O2]" || fmt.Sprint(skipped) != "[prog]" {
		t.Errorf("JUnit failures %v, skipped %v", failures, skipped)
	}
	var rep struct {
		Statuses map[string]int `json:"statuses"`
		Results  []struct {
			Binary string `json:"binary"`
			Status string `json:"status"`
			Report *struct {
				Instructions uint64 `json:"instructions"`
			} `json:"report"`
		} `json:"results"`
	}
	if data, err = os.ReadFile(jsonOut); err == nil {
		err = json.Unmarshal(data, &rep)
	}
	if err != nil || rep.Statuses["fail"] != 1 || len(rep.Results) != 4 || rep.Results[2].Binary != fxClean || rep.Results[2].Status != "fail" ||
		rep.Results[2].Report == nil || rep.Results[2].Report.Instructions == 0 {
		t.Errorf("JSON report: %v\n%+v", err, rep)
	}
}

// TestCorpusCommand: directory input, judging against the expectations,
// the baseline update, and errors.
func TestCorpusCommand(t *testing.T) {
	fx := corpusFixture(t)
	dir, manifest, expect := fx.dir, fx.manifest, fx.expect
	// A known problem that does not occur fails the run: the baseline must
	// stay honest.
	stale := writeJSON(t, filepath.Join(dir, "stale.json"), map[string]any{"binaries": map[string]any{
		fxGas:        map[string]any{"problems": []map[string]string{{"kind": "cfa", "reason": "gas"}}},
		fxClean:      map[string]any{"problems": []map[string]string{{"kind": "fp", "function": "fib", "reason": "was wrong once"}}},
		fxDynamic:    map[string]any{"problems": []map[string]string{{"kind": "cfa", "reason": "ld"}}},
		fxS390x:      map[string]any{"unsupported": "not one sframesim unwinds"},
		"v9/removed": map[string]any{"unsupported": "gone"},
	}})
	wrongOut := writeJSON(t, filepath.Join(dir, "wrong-stdout.json"), []map[string]any{{"path": fxClean, "stdout": "nothing\n", "exit_status": 7}})
	// The dynamic binary's sysroot by toolchain and arch instead of in the
	// manifest.
	var bySysrootFor []map[string]any
	for _, e := range fx.entries {
		e = maps.Clone(e)
		delete(e, "sysroot")
		bySysrootFor = append(bySysrootFor, e)
	}
	noSysroot := writeJSON(t, filepath.Join(dir, "no-sysroot.json"), bySysrootFor)
	inline := writeJSON(t, filepath.Join(dir, "inline.json"), []map[string]any{
		{"path": fxGas, "expect": map[string]any{"problems": []map[string]string{{"kind": "cfa", "function": "asm_regcfa_call", "reason": "gas 2.40"}}}},
		{"path": fxDynamic, "sysroot": fx.sysroot, "expect": map[string]any{"problems": []map[string]string{{"kind": "cfa", "function": "__cxa_finalize@plt", "reason": "ld"}}}},
		{"path": fxS390x, "expect": map[string]any{"unsupported": "is not one sframesim unwinds", "reason": "no s390x unwinder"}},
	})
	badExpect := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badExpect, []byte(`{"binaries": {"a": {"problems": [{"kind": "cfa"}],}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		stdout []string
		stderr string
	}{
		{"directory", []string{"corpus", "--progress", "none", "--expect", expect, "--sysroot", fx.sysroot, dir}, exitOK,
			[]string{"OK: 4 of 4 binaries as expected (1 clean, 2 with known problems, 1 unsupported)", "skipped: 7 files\n  7 not an ELF file\n"}, ""},
		{"no expectations", []string{"corpus", "--progress", "none", manifest}, exitError,
			[]string{fxGas + ": unexpected cfa problem at", "asm_regcfa_call+0xe", `row "000000000040183e  sp+16     u         u"`,
				fxDynamic + ": unexpected cfa problem at", "__cxa_finalize@plt",
				fxS390x + ": could not be verified: ", "SFrame ABI SFRAME_ABI_S390X_ENDIAN_BIG is not one sframesim unwinds",
				"FAIL: 2 with unexpected outcomes, 1 could not be verified"}, ""},
		{"missing and stale", []string{"corpus", "--progress", "none", "--expect", stale, manifest}, exitProblems,
			[]string{fxClean + ": expected fp problem (fib) did not occur: was wrong once",
				"stale expectation: v9/removed is not in the input"}, ""},
		{"stdout", []string{"corpus", "--progress", "none", wrongOut}, exitProblems,
			[]string{fxClean + `: stdout differs from the manifest's at byte 2 (line 1): got "nolibc: fib(20)=6765`}, ""},
		{"shard", []string{"corpus", "--progress", "none", "--expect", expect, "--shard", "2/2", manifest}, exitOK,
			[]string{"(shard 2/2): 2 binaries,", "OK: 2 of 2 binaries as expected (0 clean, 2 with known problems"}, ""},
		{"run filter", []string{"corpus", "--progress", "none", "--expect", expect, "--run", "asm", manifest}, exitOK,
			[]string{"OK: 1 of 1 binaries as expected (0 clean, 1 with known problems"}, ""},
		{"budget", []string{"corpus", "--progress", "none", "--expect", expect, "--max-insns", "1000", manifest}, exitOK,
			[]string{"OK: 4 of 4 binaries"}, ""},
		{"sysroot by toolchain and arch", []string{"corpus", "--progress", "none", "--expect", expect, "--sysroot-for", "sid/x86-64=" + fx.sysroot, noSysroot}, exitOK,
			[]string{"OK: 4 of 4 binaries as expected (1 clean, 2 with known problems, 1 unsupported)"}, ""},
		{"inline expectations", []string{"corpus", "--progress", "none", inline}, exitOK,
			[]string{"OK: 3 of 3 binaries as expected (0 clean, 2 with known problems, 1 unsupported)"}, ""},
		{"expectations file overrides inline ones", []string{"corpus", "--progress", "none", "--expect", stale, inline}, exitProblems,
			[]string{"stale expectation: v9/removed"}, ""},
		{"bad shard", []string{"corpus", "--shard", "0/2", manifest}, exitUsage, nil, "shard \"0/2\": want i/n with 1 <= i <= n"},
		{"bad expectations", []string{"corpus", "--expect", badExpect, manifest}, exitError, nil, badExpect + ": offset 51 (line 1, column 52)"},
		{"missing input", []string{"corpus", filepath.Join(dir, "none")}, exitError, nil, "no such file or directory"},
		{"nothing selected", []string{"corpus", "--run", "^x", manifest}, exitError, nil, "no binary to verify (4 in the input, 0 files skipped)"},
		{"bad sysroot-for", []string{"corpus", "--sysroot-for", "sid=/x", manifest}, exitUsage, nil, `sysroot "sid=/x": want TOOLCHAIN/ARCH=DIR`},
		{"update without file", []string{"corpus", "--update", manifest}, exitUsage, nil, "--update needs --expect FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := runCmd(t, "", tt.args...)
			ok := status == tt.status && strings.Contains(errOut, tt.stderr)
			for _, s := range tt.stdout {
				ok = ok && strings.Contains(out, s)
			}
			if !ok {
				t.Errorf("status %d (want %d)\nstdout:\n%s\nwant ⊇ %q\nstderr %q (want ⊇ %q)", status, tt.status, out, tt.stdout, trim(errOut), tt.stderr)
			}
		})
	}

	// --update rewrites the stale baseline to what the corpus shows, keeping
	// the reasons that still hold; the run then passes.
	out, errOut, status := runCmd(t, "", "corpus", "--progress", "none", "--expect", stale, "--update", manifest)
	for _, s := range []string{"2 binaries changed", "v9/removed: dropped (no such binary)", fxClean + ": 1 known problem → clean"} {
		if status != exitOK || !strings.Contains(out, s) {
			t.Errorf("update: status %d, stdout lacks %q:\n%s%s", status, s, out, errOut)
		}
	}
	data, err := os.ReadFile(stale)
	if err != nil {
		t.Fatal(err)
	}
	// The hand-written entry for any cfa problem still matches: kept as is.
	if !strings.Contains(string(data), `{
          "kind": "cfa",
          "reason": "gas"
        }`) || strings.Contains(string(data), "nolibc") || strings.Contains(string(data), "v9") {
		t.Errorf("updated baseline:\n%s", data)
	}
	if out, _, status := runCmd(t, "", "corpus", "--progress", "none", "--expect", stale, manifest); status != exitOK {
		t.Errorf("after update: status %d\n%s", status, out)
	}
}
