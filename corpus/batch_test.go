package corpus

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/symbols"
	"github.com/sframesim/sframesim/verify"
)

func keys(jobs []Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Key)
	}
	return out
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `[
  {"path": "b/prog", "args": ["-v"], "exit_status": 3, "stdout": "hi\n", "toolchain": "sid"},
  {"path": "/abs/a", "arch": "aarch64", "sframe_version": 2, "sysroot": "/sr", "toolchain": "sid", "expect": {"unsupported": "ABI", "reason": "s390x"}}
]`)
	in, err := ReadManifest(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Jobs) != 2 || in.Jobs[0].Key != "/abs/a" || in.Jobs[1].Key != "b/prog" {
		t.Fatalf("jobs %+v", in.Jobs)
	}
	b := in.Jobs[1]
	if b.Path != filepath.Join(dir, "b/prog") || !reflect.DeepEqual(b.Args, []string{"-v"}) || *b.ExitStatus != 3 || *b.Stdout != "hi\n" {
		t.Errorf("entry b: %+v", b)
	}
	if a := in.Jobs[0]; a.ExitStatus != nil || a.Stdout != nil || a.Arch != "aarch64" || a.SFrameVersion != 2 || a.Sysroot != "/sr" || a.Toolchain != "sid" {
		t.Errorf("entry a: %+v", a)
	}
	if x := in.Expect.Lookup("/abs/a"); x == nil || x.Unsupported != "ABI" || x.Reason != "s390x" || in.Expect.Lookup("b/prog") != nil {
		t.Errorf("inline expectations: %s", dumpExpect(in.Expect.Binaries))
	}
	// An expectations file overrides them.
	file := &Expectations{Binaries: map[string]*Expect{"/abs/a": {Problems: []ExpectedProblem{{Kind: "cfa"}}}}}
	file.Merge(in.Expect)
	if x := file.Lookup("/abs/a"); x.Unsupported != "" || len(x.Problems) != 1 {
		t.Errorf("merged: %s", dumpExpect(file.Binaries))
	}
	for _, tt := range []struct{ text, errSub string }{
		{`[{"path": "a"},`, "offset 15 (line 1, column 16)"},
		{"[\n {\"path\": 3}]", "line 2, column"},
		{`{"path": "a"}`, "cannot unmarshal object"},
		{`[]`, "lists no binaries"},
		{`[{"args": []}]`, `entry 0: no "path"`},
		{`[{"path": "a"}, {"path": "./a"}]`, `entry 0 (path a) and entry 1 (path ./a) have the same key "a": give them distinct "name"s`},
		{`[{"path": "a", "expect": {"problems": [{"kind": "pc"}]}}]`, `entry 0 (a): expect: problem 0: kind "pc" is not one of`},
	} {
		p := write("bad.json", tt.text)
		_, err := ReadManifest(p)
		if err == nil || !strings.Contains(err.Error(), tt.errSub) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v, want one naming the file and %q", tt.text, err, tt.errSub)
		}
	}
}

func TestReadExpectations(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "expect.json")
	for _, tt := range []struct{ text, errSub string }{
		{`{"binaries": {"a": {"problems": [{"kind": "cfa", "reason": "r"}]}}}`, ""},
		{`{"binaries": {"a": {"unsupported": "is not one sframesim unwinds"}}}`, ""},
		{`{"binaries": {"a": {"malformed": "flagged sorted", "reason": "ld 2.40", "problems": [{"kind": "cfa", "reason": "r"}]}}}`, ""},
		{`{"binaries": {"a": {}}}`, `binary a: lists neither "unsupported" nor "malformed" nor "problems"`},
		{`{"binaries": {"a": {"unsupported": "ABI", "problems": [{"kind": "cfa"}]}}}`, `lists "unsupported" with "problems" or "malformed"`},
		{`{"binaries": {"a": {"unsupported": "ABI", "malformed": "sorted"}}}`, `lists "unsupported" with "problems" or "malformed"`},
		{`{"binaries": {"a": {"problems": [{"kind": "ok"}]}}}`, `problem 0: kind "ok" is not one of cfa, ended-early, fp, limited, ra, too-short, unterminated, unwind-error`},
		{`{"binaries": {"a": {"problem": []}}}`, `unknown field "problem"`},
		{`{"binaries": {"a": {"problems": [{"kind": 1}]}}}`, "offset"},
	} {
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadExpectations(p)
		switch {
		case tt.errSub == "" && err != nil:
			t.Errorf("%s: %v", tt.text, err)
		case tt.errSub != "" && (err == nil || !strings.Contains(err.Error(), tt.errSub) || !strings.Contains(err.Error(), p)):
			t.Errorf("%s: err %v, want one naming the file and %q", tt.text, err, tt.errSub)
		}
	}
	if e, err := ReadOrNew(filepath.Join(dir, "none.json")); err != nil || len(e.Binaries) != 0 {
		t.Errorf("ReadOrNew of a missing file: %v, %v", e, err)
	}
}

// problem makes a verify.Problem of a kind at a row of fn.
func problem(kind, fn, row string, hits uint64) verify.Problem {
	return verify.Problem{
		Kind: kind, PC: 0x401010, Symbol: fn + "+0x10", Insn: "ret", Depth: 1,
		FramePC: 0x401020, FrameSymbol: fn + "+0x20", FDE: 2, FRE: 1,
		FDEText: "func idx [2]: pc = 0x401000, size = 64 bytes", Row: row + "\n",
		Want: 0x7ff0, Got: 0x7fe0, PCs: 1, Hits: hits,
	}
}

func report(problems ...verify.Problem) *verify.Report {
	r := &verify.Report{Binary: "b", Arch: "x86-64", SFrameVersion: 3, Stop: "exited with status 0", Exited: true,
		Instructions: 1000, Covered: 900, Counts: map[string]uint64{"ok": 900, "no-fde": 100}, Problems: problems, Seconds: 0.5}
	for _, p := range problems {
		r.Counts[p.Kind] += p.Hits
		if p.Kind != "limited" && p.Kind != "unterminated" {
			r.Failures += p.Hits
		}
	}
	return r
}

const rowA = "0000000000401010  sp+16     u         u"

// malformed marks r as a report of a section that breaks a rule of the
// format, checked anyway.
func malformed(r *verify.Report) *verify.Report {
	r.Malformed = []string{"sframe: offset 0x44: FDE[2].func_start_address: flagged sorted, but the start is not above FDE 1's 0x401860"}
	return r
}

func TestJudge(t *testing.T) {
	zero, three := 0, 3
	hello, bye := "hello\n", "bye\n"
	cfaA := problem("cfa", "f", rowA, 5)
	known := &Expect{Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Row: "0000000000401010 sp+16 u u", Reason: "gas bug"}}}
	anyRow := &Expect{Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Reason: "gas bug"}}}
	cfaCxx := problem("cfa", "_ZN3foo3barEv", rowA, 5)
	cxx := func(fn string) *Expect {
		return &Expect{Problems: []ExpectedProblem{{Kind: "cfa", Function: fn, Row: rowA, Reason: "gas bug"}}}
	}
	tests := []struct {
		name     string
		job      Job
		o        Outcome
		exp      *Expect
		status   Status
		findings []string // What of each finding
		msgSub   string   // in the first finding's message
	}{
		{name: "clean", o: Outcome{Report: report()}, status: StatusClean},
		{name: "known problem (row spacing differs)", o: Outcome{Report: report(cfaA)}, exp: known, status: StatusKnown},
		{name: "known problem, any row", o: Outcome{Report: report(cfaA, problem("cfa", "f", "other", 1))}, exp: anyRow, status: StatusKnown},
		{name: "new problem", o: Outcome{Report: report(cfaA)}, status: StatusFail, findings: []string{"new-problem"},
			msgSub: `prog: unexpected cfa problem at 0x401010 f+0x10, frame 1 at 0x401020 f+0x20, func idx [2]: pc = 0x401000, size = 64 bytes, row "` + rowA + `": expected 0x7ff0, SFrame gives 0x7fe0 (5 instructions)`},
		{name: "problem of another kind", o: Outcome{Report: report(problem("fp", "f", rowA, 1))}, exp: known, status: StatusFail,
			findings: []string{"new-problem", "missing-problem"}, msgSub: "unexpected fp problem"},
		{name: "fixed", o: Outcome{Report: report()}, exp: known, status: StatusFail, findings: []string{"missing-problem"},
			msgSub: "prog: expected cfa problem (f, row 0000000000401010 sp+16 u u) did not occur: gas bug"},
		{name: "exit status", job: Job{ExitStatus: &three}, o: Outcome{Report: report()}, status: StatusFail, findings: []string{"exit-status"},
			msgSub: "exited with status 0, but the manifest says exit status 3"},
		{name: "exit and stdout as the manifest says", job: Job{ExitStatus: &zero, Stdout: &hello}, o: Outcome{Report: report(), Stdout: hello}, status: StatusClean},
		{name: "stdout", job: Job{Stdout: &bye}, o: Outcome{Report: report(), Stdout: hello}, status: StatusFail, findings: []string{"stdout"},
			msgSub: `stdout differs from the manifest's at byte 0 (line 1): got "hello", want "bye"`},
		{name: "unsupported as expected", o: Outcome{Err: os.ErrInvalid}, exp: &Expect{Unsupported: "invalid"}, status: StatusUnsupported},
		{name: "unsupported, another error", o: Outcome{Err: os.ErrNotExist}, exp: &Expect{Unsupported: "invalid"}, status: StatusError, findings: []string{"error"},
			msgSub: `prog: could not be verified: file does not exist (expected an error saying "invalid")`},
		{name: "error", o: Outcome{Err: os.ErrNotExist}, exp: known, status: StatusError, findings: []string{"error"}, msgSub: "prog: could not be verified: file does not exist"},
		{name: "now runs", o: Outcome{Report: report(cfaA)}, exp: &Expect{Unsupported: "invalid"}, status: StatusFail,
			findings: []string{"now-runs", "new-problem"}, msgSub: `expected to be unsupported ("invalid"), but verify ran it`},
		{name: "budget: new problems only", job: Job{ExitStatus: &three},
			o: Outcome{Report: &verify.Report{Stop: "instruction budget of 10 reached", Instructions: 10}, Budget: true}, exp: known, status: StatusClean},
		{name: "timeout", o: Outcome{Report: &verify.Report{Stop: "timeout", Instructions: 10}, TimedOut: true, Timeout: time.Second}, status: StatusFail,
			findings: []string{"timeout"}, msgSub: "timed out after 1s (10 instructions checked)"},
		{name: "stopped", o: Outcome{Report: &verify.Report{Stop: "unsupported system call fork", Instructions: 10}}, exp: known, status: StatusFail,
			findings: []string{"stopped"}, msgSub: "stopped before the program ended, after 10 instructions: unsupported system call fork"},
		{name: "lost track", o: Outcome{Report: func() *verify.Report {
			r := report()
			r.Counts["untracked"] = 4
			r.LostTrack = []verify.LostTrack{{CallSite: 0x7ff0, Why: "why", Hits: 4}}
			return r
		}()}, status: StatusFail, findings: []string{"lost-track"}, msgSub: "prog: the shadow stack lost track of 1 true frame(s) (first: the call at 0x7ff0, why): at 4 instructions"},
		{name: "killed by its own signal", job: Job{ExitStatus: &[]int{134}[0]}, o: Outcome{Report: &verify.Report{Stop: "SIGABRT", ExitStatus: 134}}, status: StatusClean},
		{name: "interrupted", o: Outcome{Report: report(cfaA), Interrupted: true}, exp: known, status: StatusInterrupted},
		// C++: expectations name the function mangled or demangled;
		// messages print it demangled.
		{name: "known C++ problem, mangled", o: Outcome{Report: report(cfaCxx)}, exp: cxx("_ZN3foo3barEv"), status: StatusKnown},
		{name: "known C++ problem, demangled", o: Outcome{Report: report(cfaCxx)}, exp: cxx("foo::bar()"), status: StatusKnown},
		{name: "C++ problem in another function", o: Outcome{Report: report(cfaCxx)}, exp: cxx("foo::baz()"), status: StatusFail,
			findings: []string{"new-problem", "missing-problem"}, msgSub: "at 0x401010 foo::bar()+0x10, frame 1 at 0x401020 foo::bar()+0x20,"},
		{name: "fixed C++ problem", o: Outcome{Report: report()}, exp: cxx("_ZN3foo3barEv"), status: StatusFail, findings: []string{"missing-problem"},
			msgSub: "expected cfa problem (foo::bar(), row"},
		// Sections that break rules of the format, checked anyway
		// (--check-malformed).
		{name: "malformed, unexpected", o: Outcome{Report: malformed(report())}, status: StatusFail, findings: []string{"malformed"},
			msgSub: "prog: the SFrame section breaks 1 rule(s) of the format, which the Linux kernel refuses (checked anyway): sframe: offset 0x44: FDE[2].func_start_address: flagged sorted"},
		{name: "malformed as expected", o: Outcome{Report: malformed(report())}, exp: &Expect{Malformed: "flagged sorted"}, status: StatusKnown},
		{name: "malformed as expected, with a known problem", o: Outcome{Report: malformed(report(cfaA))},
			exp: &Expect{Malformed: "flagged sorted", Problems: known.Problems}, status: StatusKnown},
		{name: "malformed otherwise", o: Outcome{Report: malformed(report())}, exp: &Expect{Malformed: "empty FDE"}, status: StatusFail, findings: []string{"malformed"}},
		{name: "malformed no more", o: Outcome{Report: report()}, exp: &Expect{Malformed: "flagged sorted"}, status: StatusFail, findings: []string{"now-well-formed"},
			msgSub: `expected a malformed SFrame section ("flagged sorted"), but it breaks no rule`},
		{name: "malformed, not checked", o: Outcome{Err: os.ErrInvalid}, exp: &Expect{Malformed: "flagged sorted"}, status: StatusError, findings: []string{"error"},
			msgSub: "run with --check-malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Key = "prog"
			r := Judge(tt.job, tt.o, tt.exp)
			var what []string
			for _, f := range r.Findings {
				what = append(what, f.What)
			}
			if r.Status != tt.status || !reflect.DeepEqual(what, tt.findings) {
				t.Errorf("status %s, findings %v; want %s, %v\n%+v", r.Status, what, tt.status, tt.findings, r.Findings)
			}
			if tt.msgSub != "" && (len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, tt.msgSub)) {
				t.Errorf("first finding %+v\nwant it to contain %q", r.Findings, tt.msgSub)
			}
			for _, g := range r.Groups {
				if want := symbols.Demangled(g.Function); g.FunctionDemangled != want {
					t.Errorf("group %s: function_demangled %q, want %q", g.Function, g.FunctionDemangled, want)
				}
			}
		})
	}
}

// TestUpdate: the new baseline keeps the reasons of what still holds,
// drops what went away or is stale, and adds what is new without a reason.
func TestUpdate(t *testing.T) {
	e := &Expectations{Binaries: map[string]*Expect{
		"known":   {Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Reason: "gas bug"}, {Kind: "fp", Function: "g", Reason: "fixed since"}}},
		"dyn":     {Unsupported: "invalid", Reason: "no ld.so"},
		"now-dyn": {Unsupported: "invalid", Reason: "no ld.so"},
		"gone":    {Unsupported: "invalid"},
		"fixed":   {Problems: []ExpectedProblem{{Kind: "cfa", Reason: "r"}}},
		"errs":    {Problems: []ExpectedProblem{{Kind: "cfa", Reason: "r"}}},
		"moved":   {Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Row: "0000000000400000  sp+16", Reason: "gas bug"}}},
		"mal":     {Malformed: "flagged sorted", Reason: "ld 2.40 keeps empty .cold FDEs"},
	}}
	judge := func(key string, o Outcome) Result {
		return Judge(Job{Key: key}, o, e.Lookup(key))
	}
	results := []Result{
		judge("known", Outcome{Report: report(problem("cfa", "f", rowA, 3), problem("ra", "h", rowA, 1))}),
		judge("dyn", Outcome{Err: os.ErrInvalid}),
		judge("now-dyn", Outcome{Report: report()}),
		judge("fixed", Outcome{Report: report()}),
		judge("new", Outcome{Err: os.ErrInvalid}),
		judge("errs", Outcome{Err: os.ErrNotExist}),
		judge("moved", Outcome{Report: report(problem("cfa", "f", rowA, 2))}),
		judge("mal", Outcome{Report: malformed(report(problem("cfa", "f", rowA, 2)))}),
		judge("newmal", Outcome{Report: malformed(report())}),
	}
	var all []Job
	for _, k := range []string{"known", "dyn", "now-dyn", "fixed", "new", "errs", "moved", "clean", "mal", "newmal"} {
		all = append(all, Job{Key: k})
	}
	changes, refused := e.Update(results, all)
	want := map[string]*Expect{
		"known": {Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Reason: "gas bug"}, {Kind: "ra", Function: "h", Row: rowA}}},
		"dyn":   {Unsupported: "invalid", Reason: "no ld.so"},
		"errs":  {Problems: []ExpectedProblem{{Kind: "cfa", Reason: "r"}}},
		// The same bug at another address keeps its reason.
		"moved": {Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Row: rowA, Reason: "gas bug"}}},
		// A malformed section keeps its expectation and reason; a new one
		// is recorded by its first rule broken.
		"mal":    {Malformed: "flagged sorted", Reason: "ld 2.40 keeps empty .cold FDEs", Problems: []ExpectedProblem{{Kind: "cfa", Function: "f", Row: rowA}}},
		"newmal": {Malformed: "sframe: offset 0x44: FDE[2].func_start_address: flagged sorted, but the start is not above FDE 1's 0x401860"},
	}
	if !reflect.DeepEqual(e.Binaries, want) {
		t.Errorf("baseline:\n%s", dumpExpect(e.Binaries))
	}
	wantChanges := []string{
		"gone: dropped (no such binary)",
		"known: known problems changed",
		"now-dyn: unsupported → clean",
		"fixed: 1 known problem → clean",
		"moved: known problems changed",
		"mal: malformed, 0 known problems → malformed, 1 known problem",
		"newmal: clean → malformed, 0 known problems",
	}
	// Errors are never baselined: only a person can say which are fine.
	if !reflect.DeepEqual(changes, wantChanges) || len(refused) != 2 || !strings.HasPrefix(refused[0], "new: could not run") || !strings.HasPrefix(refused[1], "errs: could not run") {
		t.Errorf("changes %q\nrefused %q", changes, refused)
	}
	if n := e.Unexplained(); n != 3 {
		t.Errorf("Unexplained = %d, want 3", n)
	}
	// Written and read back, it is the same.
	p := filepath.Join(t.TempDir(), "expect.json")
	if err := e.Write(p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadExpectations(p)
	if err != nil || !reflect.DeepEqual(back.Binaries, want) {
		t.Errorf("read back: %v\n%s", err, dumpExpect(back.Binaries))
	}
}

func dumpExpect(m map[string]*Expect) string {
	data, _ := json.MarshalIndent(m, "", "  ")
	return string(data)
}

// goldenResults is a run with one binary of each verdict.
func goldenResults() (Summary, []Result) {
	exp := &Expectations{Binaries: map[string]*Expect{
		"v1/x86-64/asm":  {Problems: []ExpectedProblem{{Kind: "cfa", Function: "asm_regcfa_call", Reason: "gas 2.40 bug"}}},
		"v1/x86-64/dyn":  {Unsupported: "invalid"},
		"v3/aarch64/bad": {Problems: []ExpectedProblem{{Kind: "fp", Function: "drap", Reason: "GCC bug"}}},
	}}
	three := 3
	jobs := []struct {
		job Job
		o   Outcome
	}{
		{Job{Key: "v1/x86-64/asm", Path: "corpus/v1/x86-64/asm"}, Outcome{Report: report(problem("cfa", "asm_regcfa_call", rowA, 7))}},
		{Job{Key: "v1/x86-64/clean", Path: "corpus/v1/x86-64/clean"}, Outcome{Report: report()}},
		{Job{Key: "v1/x86-64/dyn", Path: "corpus/v1/x86-64/dyn", Arch: "x86-64", SFrameVersion: 1}, Outcome{Err: os.ErrInvalid}},
		{Job{Key: "v3/aarch64/bad", Path: "corpus/v3/aarch64/bad", ExitStatus: &three}, Outcome{Report: report(problem("cfa", "main", rowA, 2))}},
		{Job{Key: "v3/aarch64/gone", Path: "corpus/v3/aarch64/gone"}, Outcome{Err: os.ErrNotExist}},
	}
	var results []Result
	for i, j := range jobs {
		r := Judge(j.job, j.o, exp.Lookup(j.job.Key))
		r.Seconds = float64(i+1) / 4
		if r.Report != nil {
			r.Report.Seconds = r.Seconds
			if strings.HasPrefix(j.job.Key, "v3/aarch64") {
				r.Report.Arch, r.Arch = "aarch64", "aarch64"
			}
		}
		results = append(results, r)
	}
	s := Summarize(Summary{Input: "corpus/manifest.json", Workers: 2, Seconds: 1.5,
		Skipped: []Skipped{{"README", SkipNotELF}, {"lib.so", SkipShared}}, Stale: []string{"v2/old"}}, results)
	return s, results
}

func TestGolden(t *testing.T) {
	s, results := goldenResults()
	var text bytes.Buffer
	s.WriteText(&text, results)
	junit, err := JUnit(s, results)
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	p := NewProgress(&lines, len(results), false)
	for i := range results {
		p.Update(i+1, &results[i])
	}
	for _, g := range []struct {
		name string
		data []byte
	}{{"summary.golden", text.Bytes()}, {"junit.golden", junit}, {"progress.golden", lines.Bytes()}} {
		golden.Check(t, filepath.Join("testdata", g.name), g.data)
	}
	if s.OK() || s.Unexpected != 2 || !strings.HasPrefix(s.Verdict(), "FAIL: 1 with unexpected outcomes, 1 could not be verified, 1 stale expectations") {
		t.Errorf("verdict %q, unexpected %d", s.Verdict(), s.Unexpected)
	}
}

func TestProgressBar(t *testing.T) {
	_, results := goldenResults()
	var b bytes.Buffer
	p := NewProgress(&b, len(results), true)
	p.now = func() time.Time { return p.start.Add(3 * time.Second) }
	for i := range results {
		p.Update(i+1, &results[i])
	}
	p.Finish()
	out := b.String()
	for _, want := range []string{
		"\r\x1b[K[======                        ] 1/5 3s  v1/x86-64/asm",
		"\r\x1b[KFAIL v3/aarch64/bad\n    v3/aarch64/bad: unexpected cfa problem",
		"[==============================] 5/5 3s 2 UNEXPECTED  v3/aarch64/gone",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("Finish does not clear the bar: %q", out)
	}
}

func TestSysroots(t *testing.T) {
	for _, tt := range []struct{ in, label, dir, errSub string }{
		{in: "sid/x86-64=/s", label: "sid/x86-64", dir: "/s"},
		{in: "sid/aarch64=rel/dir=x", label: "sid/aarch64", dir: "rel/dir=x"},
		{in: "sid=/s", errSub: "want TOOLCHAIN/ARCH=DIR"},
		{in: "sid/x86-64", errSub: "want TOOLCHAIN/ARCH=DIR"},
		{in: "/x86-64=/s", errSub: "want TOOLCHAIN/ARCH=DIR"},
		{in: "sid/x86-64=", errSub: "want TOOLCHAIN/ARCH=DIR"},
	} {
		label, dir, err := ParseSysrootFor(tt.in)
		if tt.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Errorf("ParseSysrootFor(%q): err %v, want %q", tt.in, err, tt.errSub)
			}
		} else if err != nil || label != tt.label || dir != tt.dir {
			t.Errorf("ParseSysrootFor(%q) = %q, %q, %v", tt.in, label, dir, err)
		}
	}
	jobs := []Job{
		{Key: "a", Toolchain: "sid", Arch: "x86-64"},
		{Key: "b", Toolchain: "sid", Arch: "aarch64"},
		{Key: "c", Toolchain: "sid", Arch: "x86-64", Sysroot: "/own"},
		{Key: "d"},
	}
	ApplySysroots(jobs, map[string]string{"sid/x86-64": "/sid64"})
	var got []string
	for _, j := range jobs {
		got = append(got, j.Key+"="+j.Sysroot)
	}
	if want := []string{"a=/sid64", "b=", "c=/own", "d="}; !reflect.DeepEqual(got, want) {
		t.Errorf("ApplySysroots: %q, want %q", got, want)
	}
}
