//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// TestThreadsCommands runs and verifies the threads program of the linux
// package's tests (three threads) with --quantum: the output is the
// program's, the report has the threads line and JSON per-thread counts,
// identical in two runs.
func TestThreadsCommands(t *testing.T) {
	prog, err := filepath.Abs(filepath.Join("..", "..", "linux", "testdata", "threads-aarch64"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runCmd(t, "", "run", "--quantum", "500", prog)
	if status != 0 || errOut != "" || !strings.HasSuffix(out, "worker 1 round 4\ntotal 52500 joined 21\n") {
		t.Errorf("run: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	out, errOut, status = runCmd(t, "", "verify", "--quantum", "500", prog)
	if status != exitOK || !strings.HasSuffix(out, "worker 1 round 4\ntotal 52500 joined 21\n") || !strings.Contains(errOut, "  threads:      3, instructions checked per thread: tid 4242: ") {
		t.Errorf("verify: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	var reports [2]string
	for i := range reports {
		js, _, status := runCmd(t, "", "verify", "--quantum", "500", "--json", "-", prog)
		var rep map[string]any // the JSON report, then the text summary
		if err := json.NewDecoder(strings.NewReader(js)).Decode(&rep); err != nil || status != exitOK {
			t.Fatalf("verify --json: status %d, %v: %q", status, err, js)
		}
		per, _ := rep["per_thread"].([]any)
		if rep["threads"] != 3.0 || len(per) != 3 || per[2].(map[string]any)["tid"] != 4244.0 || per[2].(map[string]any)["instructions"] == 0.0 {
			t.Errorf("JSON threads %v %v", rep["threads"], per)
		}
		delete(rep, "seconds")
		b, _ := json.Marshal(rep)
		reports[i] = string(b)
	}
	if reports[0] != reports[1] {
		t.Errorf("two runs give different reports:\n%s\n%s", reports[0], reports[1])
	}
}

// TestThreadsDeterministicProcesses: ten sframesim processes verifying
// the threads program (three threads, switched every 500 instructions
// and at blocking calls), and ten running it, print byte-identical JSON
// reports, text summaries and guest output, on both architectures: nothing
// depends on the host process (its pid, address layout, clock, scheduling)
// but the run's wall-clock seconds, which are taken out.
func TestThreadsDeterministicProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sframesim 40 times")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	seconds := regexp.MustCompile(`("seconds": |instructions checked in )[0-9.e+-]+`)
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			prog, err := filepath.Abs(filepath.Join("..", "..", "linux", "testdata", "threads-"+a))
			if err != nil {
				t.Fatal(err)
			}
			sframesim := func(args ...string) string {
				cmd := exec.Command(exe, args...)
				cmd.Env = append(os.Environ(), "SFRAMESIM_MAIN=1")
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("sframesim %s: %v; stderr %q", strings.Join(args, " "), err, stderr.String())
				}
				return "stdout:\n" + stdout.String() + "stderr:\n" + stderr.String()
			}
			var firstReport, firstOutput string
			for i := range 10 {
				report := sframesim("verify", "--quantum", "500", "--json", "-", prog)
				if n := len(seconds.FindAllString(report, -1)); n != 2 {
					t.Fatalf("the report has %d wall-clock figures, want 2 (JSON, text):\n%s", n, report)
				}
				report = seconds.ReplaceAllString(report, "${1}X")
				output := sframesim("run", "--quantum", "500", prog)
				if i == 0 {
					firstReport, firstOutput = report, output
					if !strings.Contains(report, `"threads": 3,`) || !strings.Contains(report, "result:       OK") ||
						!strings.HasSuffix(output, "total 52500 joined 21\nstderr:\n") {
						t.Fatalf("report:\n%s\noutput:\n%s", report, output)
					}
					continue
				}
				if d := golden.Diff([]byte(firstReport), []byte(report)); d != "" {
					t.Fatalf("process %d's report differs from the first's:\n%s", i+1, d)
				}
				if output != firstOutput {
					t.Fatalf("process %d's output differs from the first's:\n%s\nfirst:\n%s", i+1, output, firstOutput)
				}
			}
		})
	}
}
