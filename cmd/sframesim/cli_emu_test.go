//go:build cgo

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

func TestUsageErrorsEmulator(t *testing.T) {
	checkUsageErrors(t, []usageErrorCase{
		{[]string{"verify", "--bogus"}, "sframesim verify: flag provided but not defined: -bogus", "sframesim help verify"},
		{[]string{"verify", "--max-insns", "many"}, `invalid value "many" for flag -max-insns`, "sframesim help verify"},
		{[]string{"verify", "--timeout", "soon", "x"}, `invalid value "soon" for flag -timeout`, "sframesim help verify"},
		{[]string{"verify", "--timeout", "-1s", "x"}, `invalid value "-1s" for flag -timeout: negative`, "sframesim help verify"},
		{[]string{"verify", "--problems", "-1", "x"}, "--problems -1: want 0 or more", "sframesim help verify"},
		{[]string{"run", "--timeout", "-5m", "x"}, `invalid value "-5m0s" for flag -timeout: negative`, "sframesim help run"},
		{[]string{"verify", "--max-frames", "-1", "x"}, "--max-frames -1: want 0 (no limit) or more", "sframesim help verify"},
		{[]string{"run"}, "sframesim run: no BINARY given", "sframesim help run"},
		{[]string{"run", "--max-mem", "lots", "x"}, `--max-mem "lots": not a size`, "sframesim help run"},
		{[]string{"run", "--env", "X", "x"}, `invalid value "X" for flag -env: "X": want NAME=VALUE`, "sframesim help run"},
		{[]string{"step", "--nope"}, "sframesim step: flag provided but not defined: -nope", "sframesim help step"},
		{[]string{"corpus"}, "sframesim corpus: no DIR or MANIFEST given", "sframesim help corpus"},
		{[]string{"corpus", "a", "-j", "2", "b"}, "too many arguments: want one DIR or MANIFEST, got 2", "sframesim help corpus"},
		{[]string{"corpus", "-j", "-1", "x"}, "-j -1: want 0 (one per CPU) or more", "sframesim help corpus"},
		{[]string{"corpus", "--progress", "fancy", "x"}, `--progress "fancy": want auto, bar, lines or none`, "sframesim help corpus"},
		{[]string{"corpus", "--run", "(", "x"}, "--run: error parsing regexp", "sframesim help corpus"},
		{[]string{"corpus", "--shard", "3/2", "x"}, `shard "3/2"`, "sframesim help corpus"},
		{[]string{"corpus", "--json", "-", "--junit", "-", "x"}, "cannot both write to stdout", "sframesim help corpus"},
		{[]string{"corpus", "--update", "--expect", "e.json", "--max-insns", "9", "x"}, "--update needs complete runs", "sframesim help corpus"},
	})
}

func TestVersionLibunicorn(t *testing.T) {
	out, _, status := runCmd(t, "", "version")
	if v := emu.Version(); status != exitOK || !strings.HasPrefix(v, "2.") || !strings.HasSuffix(out, "\nlibunicorn "+v+"\n") {
		t.Errorf("status %d, libunicorn %s, stdout:\n%s", status, v, out)
	}
}

// TestVerifyJSONToStdout: with --json -, stdout is the JSON report and
// nothing else; the summary goes to stderr.
func TestVerifyJSONToStdout(t *testing.T) {
	bin := filepath.Join(testcorpus.Dir(t), "v1/x86-64/asm-O2-static")
	out, errOut, status := runCmd(t, "", "verify", "--json", "-", bin)
	var rep struct {
		Binary   string            `json:"binary"`
		Counts   map[string]uint64 `json:"counts"`
		Problems []struct {
			Kind string `json:"kind"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, trim(out))
	}
	// (How many distinct problems depends on the stack layout, hence on
	// the length of argv[0]: the checkout's path.)
	want := fmt.Sprintf("instructions with a wrong unwind, %d distinct problems", len(rep.Problems))
	if status != exitProblems || rep.Counts["cfa"] == 0 || len(rep.Problems) == 0 ||
		!strings.Contains(errOut, want) || !strings.Contains(errOut, "asm_regcfa_call") {
		t.Errorf("status %d (want %d), report %+v\nstderr %q", status, exitProblems, rep, trim(errOut))
	}
}

// TestCorpusToStdout: --json - and --junit - write to stdout, the summary
// then goes to stderr.
func TestCorpusToStdout(t *testing.T) {
	fx := corpusFixture(t)
	out, errOut, status := runCmd(t, "", "corpus", "--progress", "none", "--expect", fx.expect, "--run", "asm", "--json", "-", fx.manifest)
	var doc struct {
		Summary struct {
			Binaries int `json:"binaries"`
		} `json:"summary"`
		Results []struct {
			Binary string `json:"binary"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json -: stdout is not one JSON document: %v\n%s", err, trim(out))
	}
	if status != exitOK || len(doc.Results) != 1 || doc.Results[0].Binary != fxGas || !strings.Contains(errOut, "OK: 1 of 1 binaries as expected") {
		t.Errorf("--json -: status %d, results %+v\nstderr %q", status, doc.Results, trim(errOut))
	}
	out, errOut, status = runCmd(t, "", "corpus", "--progress", "none", "--expect", fx.expect, "--run", "asm", "--junit", "-", fx.manifest)
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil || status != exitOK || !strings.Contains(errOut, "OK: 1 of 1") ||
		strings.Contains(out, "OK: 1 of 1") {
		t.Errorf("--junit -: status %d, error %v\nstdout %q\nstderr %q", status, err, trim(out), trim(errOut))
	}
}

// TestBadSysroot: a --sysroot (or --sysroot-for) that does not exist is
// refused before anything runs, by every command that takes one, named
// for what it is, also for a static program (whose file system view it
// would be), never as a missing program interpreter.
func TestBadSysroot(t *testing.T) {
	dir := testcorpus.Dir(t)
	bin := filepath.Join(dir, "v3/x86-64/nolibc-O2")
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"run", "--sysroot", missing, bin},
		{"verify", "--sysroot", missing, bin},
		{"step", "--sysroot", missing, bin},
		{"corpus", "--sysroot", missing, filepath.Join(dir, "v3/x86-64")},
		{"corpus", "--sysroot-for", "sid/x86-64=" + missing, filepath.Join(dir, "v3/x86-64")},
	} {
		out, errOut, status := runCmd(t, "", args...)
		flag := strings.SplitN(args[2], "=", 2)[0]
		if args[1] == "--sysroot" {
			flag = "--sysroot"
		} else {
			flag = "--sysroot-for " + flag
		}
		want := fmt.Sprintf("sframesim %s: %s: sysroot %s does not exist\n", args[0], flag, missing)
		if status != exitError || out != "" || errOut != want {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d and %q", args, status, trim(out), trim(errOut), exitError, want)
		}
	}
}
