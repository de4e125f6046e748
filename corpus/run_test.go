//go:build cgo

package corpus

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// committed returns the committed corpus directory and its expectations
// (testdata/expect.json).
func committed(tb testing.TB) (string, *Expectations) {
	dir := testcorpus.Dir(tb)
	root, err := testcorpus.Root()
	if err != nil {
		tb.Fatal(err)
	}
	exp, err := ReadExpectations(filepath.Join(root, "testdata", "expect.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return dir, exp
}

// smallJobs are short corpus programs of both arches and all versions,
// with known problems among them.
func smallJobs(t *testing.T) ([]Job, *Expectations) {
	dir, exp := committed(t)
	var jobs []Job
	for _, key := range []string{
		"v1/x86-64/asm-O2-static", "v2/x86-64/nolibc-O2", "v3/aarch64/recurse-O2-static-pac-standard",
		"v3/x86-64/asm-O2-static", "v3/x86-64/realign-O2-static", "v1/aarch64/setjmp-O2-static", "v3/x86-64/vla-O2-dynamic",
	} {
		jobs = append(jobs, Job{Key: key, Path: filepath.Join(dir, key)})
	}
	return jobs, exp
}

// TestRunParallel: every worker has its own emulator; what they find does
// not depend on how many run at once.
func TestRunParallel(t *testing.T) {
	jobs, exp := smallJobs(t)
	summary := func(results []Result) []string {
		var out []string
		for _, r := range results {
			s := fmt.Sprintf("%s %s", r.Key, r.Status)
			if r.Report != nil {
				s += fmt.Sprintf(" %d %v %s", r.Report.Instructions, r.Report.Counts, r.Report.Stop)
				for _, p := range r.Report.Problems {
					s += fmt.Sprintf(" [%s %#x %d]", p.Kind, p.PC, p.Hits)
				}
			}
			out = append(out, s)
		}
		return out
	}
	serial := summary(Run(jobs, exp, Options{Workers: 1}))
	for i, s := range serial {
		if want := jobs[i].Key; s[:len(want)] != want {
			t.Fatalf("result %d is %s, want %s: results are in the order of the jobs", i, s, want)
		}
	}
	var done atomic.Int32
	parallel := summary(Run(jobs, exp, Options{Workers: 3, Progress: func(n int, r *Result) { done.Store(int32(n)) }}))
	if !reflect.DeepEqual(serial, parallel) {
		t.Errorf("1 worker:\n%q\n3 workers:\n%q", serial, parallel)
	}
	if int(done.Load()) != len(jobs) {
		t.Errorf("progress saw %d of %d", done.Load(), len(jobs))
	}
	// Longest first: costs that start the jobs in reverse order change
	// the schedule, not the results or their order.
	var started []string
	costly := append([]Job(nil), jobs...)
	for i := range costly {
		costly[i].Cost = uint64(i + 1)
	}
	byCost := summary(Run(costly, exp, Options{Workers: 1, Progress: func(n int, r *Result) { started = append(started, r.Key) }}))
	if !reflect.DeepEqual(serial, byCost) {
		t.Errorf("key order:\n%q\ncostliest first:\n%q", serial, byCost)
	}
	if started[0] != jobs[len(jobs)-1].Key || started[len(started)-1] != jobs[0].Key {
		t.Errorf("with 1 worker the jobs ran in the order %q, want the costliest first", started)
	}
	for _, s := range serial {
		t.Log(s)
	}
}

// TestRunInterrupt: after Ctrl-C no binary starts; the ones done keep
// their verdicts.
func TestRunInterrupt(t *testing.T) {
	jobs, exp := smallJobs(t)
	var interrupt atomic.Bool
	results := Run(jobs, exp, Options{Workers: 1, Interrupt: &interrupt, Progress: func(done int, r *Result) {
		if done == 2 {
			interrupt.Store(true)
		}
	}})
	for i, r := range results {
		switch {
		case i < 2 && !r.Status.OK():
			t.Errorf("%s (before the interrupt): %s %v", r.Key, r.Status, r.Findings)
		case i >= 2 && (r.Status != StatusInterrupted || r.Report != nil || r.Incomplete != "not run: interrupted"):
			t.Errorf("%s (after the interrupt): %s, %q, report %v", r.Key, r.Status, r.Incomplete, r.Report != nil)
		}
	}
	s := Summarize(Summary{Interrupted: interrupt.Load()}, results)
	if s.OK() || s.Unexpected != 0 || s.Statuses[StatusInterrupted] != len(jobs)-2 {
		t.Errorf("summary: %+v", s)
	}
}
