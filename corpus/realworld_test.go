package corpus

import (
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestRealWorldManifest: the committed real-world corpus
// (testdata/realworld, verified by make corpus-verify) reads as a
// manifest, every entry states its exit status and output (stdout_file),
// its stdin_file exists, and its expectations file parses and names only
// entries of the manifest.
func TestRealWorldManifest(t *testing.T) {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testdata", "realworld")
	in, err := ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	programs := map[string]int{}
	for _, j := range in.Jobs {
		if j.ExitStatus == nil || j.Stdout == nil || j.Arch == "" || j.Toolchain == "" || j.SFrameVersion == 0 {
			t.Errorf("%s: exit status, stdout, arch, toolchain or SFrame version missing", j.Key)
		}
		programs[filepath.Base(j.Path)]++
	}
	if len(in.Jobs) < 100 || len(programs) != 6 {
		t.Errorf("%d entries of %d binaries (%v): want every workload on every build", len(in.Jobs), len(programs), programs)
	}
	exp, err := ReadExpectations(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stale := exp.Stale(in.Jobs); len(stale) > 0 {
		t.Errorf("expect.json names runs the manifest does not have: %q", stale)
	}
	if n := exp.Unexplained(); n > 0 {
		t.Errorf("expect.json: %d problems without a reason", n)
	}
}
