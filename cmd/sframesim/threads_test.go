//go:build cgo

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
	out, _, status = runCmd(t, "", "verify", "--quantum", "500", prog)
	if status != exitOK || !strings.Contains(out, "  threads:      3, instructions checked per thread: tid 4242: ") {
		t.Errorf("verify: status %d, stdout %q", status, out)
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
