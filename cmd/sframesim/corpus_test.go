//go:build cgo

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/corpus"
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
			[]string{"(shard 2/2, from --shard): 2 binaries,", "OK: 2 of 2 binaries as expected (0 clean, 2 with known problems"}, ""},
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

// TestCorpusShardMerge: the fixture corpus run whole, and split into n
// shards (by --shard, by the environment of a Kubernetes Indexed Job or a
// CI matrix, with and without recorded costs) whose reports corpus merge
// combines, give the same summary, JSON and JUnit (but for times, worker
// counts and the shard fields) and the same exit status — here 1: an
// expected problem that occurs in no shard is reported as gone, as a whole
// run reports it. Reports that do not fit together are refused.
func TestCorpusShardMerge(t *testing.T) {
	fx := corpusFixture(t)
	dir := fx.dir
	var exp map[string]any
	data, err := os.ReadFile(fx.expect)
	if err == nil {
		err = json.Unmarshal(data, &exp)
	}
	if err != nil {
		t.Fatal(err)
	}
	exp["binaries"].(map[string]any)[fxClean] = map[string]any{"problems": []map[string]string{{"kind": "fp", "function": "fib", "reason": "was wrong once"}}}
	expect := writeJSON(t, filepath.Join(dir, "gone.json"), exp)
	gone := fxClean + ": expected fp problem (fib) did not occur: was wrong once"

	report := func(name string) (jsonPath, junitPath string) {
		return filepath.Join(dir, name+".json"), filepath.Join(dir, name+".xml")
	}
	wholeJSON, wholeJUnit := report("whole")
	wholeOut, errOut, wholeStatus := runCmd(t, "", "corpus", "--progress", "none", "--expect", expect, "--json", wholeJSON, "--junit", wholeJUnit, fx.manifest)
	if wholeStatus != exitProblems || !strings.Contains(wholeOut, gone) {
		t.Fatalf("whole run: status %d\n%s%s", wholeStatus, wholeOut, errOut)
	}
	want := normalizedReports(t, wholeOut, wholeJSON, wholeJUnit)

	for _, tt := range []struct {
		n     int
		env   string // "": --shard; else the variable holding the index
		costs bool
	}{{1, "", false}, {2, "", false}, {3, "JOB_COMPLETION_INDEX", true}, {2, "SFRAMESIM_SHARD_INDEX", true}, {4, "", true}, {5, "", false}} {
		name := fmt.Sprintf("n=%d,env=%s,costs=%v", tt.n, tt.env, tt.costs)
		t.Run(name, func(t *testing.T) {
			var shards []string
			for i := 1; i <= tt.n; i++ {
				jsonPath := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d.json", i))
				args := []string{"corpus", "--progress", "none", "--expect", expect, "--json", jsonPath}
				source := "--shard"
				if tt.env == "" {
					args = append(args, "--shard", fmt.Sprintf("%d/%d", i, tt.n))
				} else {
					t.Setenv(tt.env, fmt.Sprint(i-1))
					t.Setenv("SFRAMESIM_SHARD_COUNT", fmt.Sprint(tt.n))
					source = fmt.Sprintf("%s=%d, SFRAMESIM_SHARD_COUNT=%d", tt.env, i-1, tt.n)
				}
				if tt.costs {
					args = append(args, "--costs", wholeJSON)
				}
				out, errOut, status := runCmd(t, "", append(args, fx.manifest)...)
				if status == exitError || !strings.Contains(out, fmt.Sprintf("(shard %d/%d, from %s)", i, tt.n, source)) {
					t.Fatalf("shard %d/%d: status %d\n%s%s", i, tt.n, status, out, errOut)
				}
				if tt.n == 5 && i == 5 && !strings.Contains(errOut, "shard 5/5 (from --shard) has no binaries: the 4 binaries selected fill fewer shards") {
					t.Errorf("empty shard: stderr %q", errOut)
				}
				shards = append(shards, jsonPath)
			}
			jsonPath, junitPath := report("merged-" + fmt.Sprint(tt.n))
			args := append([]string{"corpus", "merge", "--expect", expect, "--json", jsonPath, "--junit", junitPath}, shards...)
			out, errOut, status := runCmd(t, "", args...)
			if status != wholeStatus || !strings.Contains(out, fmt.Sprintf("(%d shards merged)", tt.n)) {
				t.Fatalf("merge: status %d (want %d)\n%s%s", status, wholeStatus, out, errOut)
			}
			got := normalizedReports(t, out, jsonPath, junitPath)
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("merged %s differs from the whole run's:\n%s\nwant:\n%s", k, got[k], want[k])
				}
			}
			var doc corpus.Document
			if data, err := os.ReadFile(jsonPath); err != nil || json.Unmarshal(data, &doc) != nil || len(doc.Shards) != tt.n {
				t.Errorf("merged JSON: %v, shards %+v", err, doc.Shards)
			}
			if tt.n == 2 && tt.env == "" {
				// Refused: a missing shard, a shard twice, other expectations.
				for _, c := range []struct {
					args   []string
					status int
					errSub string
				}{
					{[]string{shards[1]}, exitError, "missing shard report 1/2: all 2 shards are needed"},
					{[]string{shards[0], shards[0]}, exitError, "shard 1/2 twice: " + shards[0] + " and " + shards[0]},
					{[]string{shards[0], wholeJSON}, exitError, shards[0] + " is shard 1/2 but " + wholeJSON + " is shard 1/1"},
					{[]string{"--expect", fx.expect, shards[0], shards[1]}, exitError, "--expect " + fx.expect + ": not the expectations the shards were judged against"},
					{[]string{jsonPath}, exitError, jsonPath + " is a merged report (of 2 shards)"},
					{[]string{fx.expect}, exitError, fx.expect + `: not a corpus JSON report`},
					{nil, exitUsage, "no REPORT.json given"},
				} {
					_, errOut, status := runCmd(t, "", append([]string{"corpus", "merge"}, c.args...)...)
					if status != c.status || !strings.Contains(errOut, c.errSub) {
						t.Errorf("merge %q: status %d (want %d), stderr %q (want ⊇ %q)", c.args, status, c.status, errOut, c.errSub)
					}
				}
			}
		})
	}

	// A half-set or misspelt environment is a usage error, not a whole or
	// empty run; --shard overrides the environment.
	for _, c := range []struct {
		env    map[string]string
		args   []string
		status int
		errSub string
	}{
		{map[string]string{"JOB_COMPLETION_INDEX": "1"}, nil, exitUsage, "JOB_COMPLETION_INDEX=1 is set (a Kubernetes Indexed Job), but SFRAMESIM_SHARD_COUNT is not"},
		{map[string]string{"SFRAMESIM_SHARD_INDEX": "", "SFRAMESIM_SHARD_COUNT": "2"}, nil, exitUsage, "SFRAMESIM_SHARD_INDEX is set but empty"},
		{map[string]string{"SFRAMESIM_SHARD": "1/2"}, []string{"--update"}, exitUsage, "--update needs the whole corpus, not shard 1/2 (from SFRAMESIM_SHARD=1/2)"},
		{map[string]string{"SFRAMESIM_SHARD_IDX": "1", "SFRAMESIM_SHARDS_COUNT": "2"}, nil, exitUsage, "shard from the environment: SFRAMESIM_SHARDS_COUNT, SFRAMESIM_SHARD_IDX: not a variable sframesim reads"},
		{map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"--shard", "1/1", "--run", "asm"}, exitOK, "OK: 1 of 1"},
	} {
		t.Run(fmt.Sprint(c.env), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := append(append([]string{"corpus", "--progress", "none", "--expect", fx.expect}, c.args...), fx.manifest)
			out, errOut, status := runCmd(t, "", args...)
			if status != c.status || !strings.Contains(errOut+out, c.errSub) {
				t.Errorf("status %d (want %d)\n%s%s\nwant ⊇ %q", status, c.status, out, errOut, c.errSub)
			}
		})
	}
}

// normalizedReports returns a run's summary text, JSON and JUnit with
// what differs between a whole run and merged shards removed: times,
// worker counts, the shard fields, and the slowest binaries (ordered by
// time).
func normalizedReports(t *testing.T, text, jsonPath, junitPath string) map[string]string {
	t.Helper()
	header := regexp.MustCompile(`(?m)^(sframesim corpus \S+)(?: \([^)]*\))?: (\d+ binar\w+), \d+ workers, [\d.]+s \([\d.]+s of verification\)$`)
	text = header.ReplaceAllString(text, "$1: $2")
	text = regexp.MustCompile(`(?m)^slowest:\n(  .*\n)*`).ReplaceAllString(text, "")
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seconds", "verify_seconds", "workers", "shard", "shard_source", "shards", "costs_sha256", "slowest"} {
		delete(doc, k)
	}
	for _, r := range doc["results"].([]any) {
		r := r.(map[string]any)
		delete(r, "seconds")
		if rep, ok := r["report"].(map[string]any); ok {
			delete(rep, "seconds")
		}
	}
	js, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	xmlData, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	junit := regexp.MustCompile(` time="[^"]*"`).ReplaceAllString(string(xmlData), "")
	return map[string]string{"summary": text, "JSON": string(js), "JUnit": junit}
}
