package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCPUProfile: with SFRAMESIM_CPUPROFILE set, the CPU profile is
// written there when the command ends (gzip-compressed, as go tool pprof
// reads it); a symbolic link there is refused, as for reports, and
// nothing is written through it; unset, nothing is written.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	busy := func() {
		for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
		}
	}

	path := filepath.Join(dir, "cpu.pprof")
	t.Setenv(cpuProfileEnv, path)
	var errOut bytes.Buffer
	stop := cpuProfile(&errOut)
	busy()
	stop()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b || errOut.Len() != 0 {
		t.Fatalf("profile: %d bytes, %v, stderr %q", len(b), err, errOut.String())
	}

	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cpuProfileEnv, link)
	errOut.Reset()
	stop = cpuProfile(&errOut)
	busy()
	stop()
	if b, _ := os.ReadFile(target); string(b) != "keep" || !strings.Contains(errOut.String(), cpuProfileEnv) {
		t.Errorf("through a link: target %q, stderr %q", b, errOut.String())
	}

	t.Setenv(cpuProfileEnv, "")
	stop = cpuProfile(&errOut)
	stop()
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("unset: %d files in the directory, want 3", len(ents))
	}
}
