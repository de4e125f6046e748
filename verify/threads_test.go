//go:build cgo

package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
)

// The threads program of the linux package's tests (linux/testdata/src/
// threads.c): main and two workers, with SFrame data for its own
// functions.
func threadsProgram(arch string) string {
	return filepath.Join("..", "linux", "testdata", "threads-"+arch)
}

// TestThreads verifies a program with threads: every instruction of every
// thread is checked against that thread's own shadow stack, the report
// counts them per thread, batched and exact checking agree, and two runs
// give the same report.
func TestThreads(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		for _, q := range []uint64{0, 37} {
			t.Run(a+"/quantum="+map[uint64]string{0: "default", 37: "37"}[q], func(t *testing.T) {
				t.Parallel()
				path := threadsProgram(a)
				run := func(batch int) *Report {
					rep, err := Run(path, Options{Batch: batch, Config: linux.Config{Quantum: q}})
					if err != nil {
						t.Fatal(err)
					}
					rep.Seconds = 0
					return rep
				}
				rep := run(0)
				if !rep.OK() || rep.Threads != 3 || len(rep.PerThread) != 3 {
					t.Fatalf("%s: %d threads %+v, stop %s, counts %v", rep.Verdict(), rep.Threads, rep.PerThread, rep.Stop, rep.Counts)
				}
				var sum uint64
				for i, th := range rep.PerThread {
					if th.TID != 4242+i || th.Instructions == 0 {
						t.Errorf("thread %d: %+v", i, th)
					}
					sum += th.Instructions
				}
				if sum != rep.Instructions {
					t.Errorf("per thread %d instructions, in all %d", sum, rep.Instructions)
				}
				// The workers run work() (SFrame data) in their threads.
				workers := 0
				for _, f := range rep.Functions {
					if f.Name == "work" && f.Covered > 0 {
						workers++
					}
				}
				if workers != 1 {
					t.Errorf("work() not checked: %+v", rep.Functions)
				}
				if again := run(0); !reflect.DeepEqual(again, rep) {
					t.Errorf("second run differs:\n%+v\n%+v", rep, again)
				}
				if exact := run(1); !reflect.DeepEqual(exact, rep) {
					t.Errorf("exact run differs:\n%+v\n%+v", rep, exact)
				}
			})
		}
	}
}

// TestThreadsMutated: a wrong CFA offset in work(), which only the worker
// threads run, is caught in those threads, and nowhere else.
func TestThreadsMutated(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			path := threadsProgram(a)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if n := mutateFunction(t, path, f.Section, "work", 8); n == 0 {
				t.Fatal("work has no rows")
			}
			rep, err := runSection(path, f.Section, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failures == 0 || len(rep.Problems) == 0 {
				t.Fatalf("the mutation was not caught: %v", rep.Counts)
			}
			for _, pr := range rep.Problems {
				if !strings.HasPrefix(pr.FrameSymbol, "work") {
					t.Errorf("problem outside work: %+v", pr)
				}
			}
		})
	}
}

// TestThreadsDeterministic: ten runs of a multi-threaded program give
// byte-identical guest output and reports, JSON and text, on both
// architectures: the interleaving and everything the report says depend on
// the program and its input only (no map order, host clock, host pid or
// host scheduling). The cases switch threads every 500 instructions and
// at blocking calls, and at blocking calls only (the default quantum is
// longer than the threads run between two) with problems found in several
// threads (work()'s CFA offsets off by 8). (cmd/sframesim's TestThreadsDeterministicProcesses
// does the same with separate processes.)
func TestThreadsDeterministic(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		quantum uint64
		mutate  bool
		output  string // the end of the guest's output
	}{
		{name: "quantum=500", quantum: 500, output: "total 52500 joined 21\n"},
		{name: "mutated", mutate: true, output: "total 52500 joined 21\n"},
	}
	for _, a := range []string{"x86_64", "aarch64"} {
		for _, tc := range tests {
			t.Run(a+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				var first []byte
				for i := range 10 {
					got := deterministicRun(t, threadsProgram(a), tc.args, tc.quantum, tc.mutate, tc.output)
					if i == 0 {
						first = got
					} else if d := golden.Diff(first, got); d != "" {
						t.Fatalf("run %d differs from the first:\n%s", i+1, d)
					}
				}
			})
		}
	}
}

// deterministicRun verifies path once and returns the guest's output, the
// JSON report (as --json writes it) and the text report, with the run's
// wall-clock seconds, the one figure that is not the program's, zeroed.
func deterministicRun(t *testing.T, path string, args []string, quantum uint64, mutate bool, output string) []byte {
	t.Helper()
	f, err := sframe.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if mutate && mutateFunction(t, path, f.Section, "work", 8) == 0 {
		t.Fatal("work has no rows")
	}
	var out bytes.Buffer
	rep, err := runSection(path, f.Section, Options{Args: args, Config: linux.Config{Quantum: quantum, Stdout: &out}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Threads < 2 || mutate == rep.Clean() || !strings.HasSuffix(out.String(), output) {
		t.Fatalf("%s, %d threads, %d failures, stop %s, output %q", rep.Verdict(), rep.Threads, rep.Failures, rep.Stop, out.String())
	}
	rep.Seconds = 0
	js := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSONFile(js); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "output:\n%s\njson:\n%s\ntext:\n", out.Bytes(), data)
	rep.WriteText(&b, 100)
	return b.Bytes()
}

// TestEpollVerify: the epoll program of the linux package's tests (a
// thread waiting in epoll_wait for another's pipe and eventfd writes)
// verifies OK, batched and exact alike, at the default quantum and a
// small one.
func TestEpollVerify(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		for _, q := range []uint64{0, 37} {
			t.Run(fmt.Sprintf("%s/quantum=%d", a, q), func(t *testing.T) {
				t.Parallel()
				run := func(batch int) *Report {
					rep, err := Run(filepath.Join("..", "linux", "testdata", "epoll-"+a), Options{Batch: batch, Config: linux.Config{Quantum: q}})
					if err != nil {
						t.Fatal(err)
					}
					rep.Seconds = 0
					return rep
				}
				rep := run(0)
				if !rep.OK() || rep.Threads != 2 {
					t.Fatalf("%s: %d threads, stop %s, counts %v", rep.Verdict(), rep.Threads, rep.Stop, rep.Counts)
				}
				if exact := run(1); !reflect.DeepEqual(exact, rep) {
					t.Errorf("exact run differs:\n%+v\n%+v", rep, exact)
				}
			})
		}
	}
}

// TestThreadChurn: the report of a program that creates and joins 10 000
// threads (linux/testdata/src/churn.c) counts them all and the
// instructions checked in each, lists the first 1025 by tid with what
// each ran, though the collector forgot the counts of the others on the
// way (pruneThreads) (the text report lists 16, then the rest in one
// sum), and counts the anomaly every thread's shadow stack saw, the first
// in the first thread; batched and exact checking agree.
func TestThreadChurn(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			path := filepath.Join("..", "linux", "testdata", "churn-"+a)
			run := func(batch int) *Report {
				rep := runToExit(t, path, batch)
				if !rep.OK() {
					t.Fatalf("%+v", rep)
				}
				rep.Seconds = 0
				return rep
			}
			rep := run(0)
			if exact := run(1); !reflect.DeepEqual(rep, exact) {
				t.Errorf("batched and exact reports differ")
			}
			var sum uint64
			for _, th := range rep.PerThread {
				sum += th.Instructions
			}
			for _, th := range rep.PerThread {
				if th.Instructions == 0 {
					t.Errorf("thread %d: no instruction counted", th.TID)
					break
				}
			}
			if rep.Threads != 10001 || len(rep.PerThread) != 1025 || rep.UnlistedThreads != 8976 || sum+rep.UnlistedInstructions != rep.Instructions || rep.PerThread[1].TID != 4243 {
				t.Errorf("threads %d, %d listed, %d unlisted; %d + %d instructions of %d", rep.Threads, len(rep.PerThread), rep.UnlistedThreads, sum, rep.UnlistedInstructions, rep.Instructions)
			}
			if len(rep.Anomalies) != 1 || rep.Anomalies[0].Kind != "unexpected-return" || rep.Anomalies[0].Count != 10000 || rep.Anomalies[0].TID != 4243 {
				t.Errorf("shadow anomalies %+v, want 10000 unexpected-return, the first in tid 4243", rep.Anomalies)
			}
			var text bytes.Buffer
			rep.WriteText(&text, 0)
			if !strings.Contains(text.String(), "threads:      10001, instructions checked per thread: tid 4242: ") || !strings.Contains(text.String(), ", tid 4257: ") ||
				strings.Contains(text.String(), "tid 4258") || !strings.Contains(text.String(), ", 9985 more threads: ") {
				t.Errorf("text report:\n%s", text.String())
			}
		})
	}
}
