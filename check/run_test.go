//go:build cgo

package check_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/verify"
)

func init() { check.RunPCs = runPCs }

// runPCs runs a corpus program as verify does and returns the PCs of its
// own code (file addresses) it executed.
func runPCs(t *testing.T, rel string) map[uint64]bool {
	t.Helper()
	e := testcorpus.Lookup(t, rel)
	path := filepath.Join(testcorpus.Dir(t), rel)
	tg, err := verify.Open(path, linux.Config{Args: []string{path}, Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Batch(0); err != nil {
		t.Fatal(err)
	}
	base, s := tg.Process.Base, tg.Session
	pcs := map[uint64]bool{}
	s.Observe(func(r shadow.Record) bool {
		pcs[r.PC-base] = true
		return true
	})
	exit, _, err := s.RunUntil(nil, 0)
	if err != nil || exit == nil || exit.Reason != linux.StopExited {
		t.Fatalf("%s: run: %v %v", rel, exit, err)
	}
	return pcs
}
