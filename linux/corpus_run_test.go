//go:build cgo

package linux

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestCorpusRun runs every corpus binary (static, nolibc and dynamic; both
// arches, all three toolchains; dynamic ones with ld.so and the shared
// libraries of their toolchain's sysroot) under the Linux layer and checks
// its stdout and exit status against the manifest. The subtests run in parallel; with -v
// the slowest binaries and the instruction rates are logged.
func TestCorpusRun(t *testing.T) {
	dir := testcorpus.Dir(t)
	type result struct {
		path       string
		insns      uint64
		load, wall time.Duration // Load; Run
	}
	var (
		mu      sync.Mutex
		results []result
		counts  = map[string]int{}
	)
	t.Cleanup(func() {
		if t.Failed() || len(results) == 0 {
			return
		}
		sort.Slice(results, func(i, j int) bool { return results[i].wall > results[j].wall })
		var insns uint64
		var load, wall time.Duration
		for _, r := range results {
			insns += r.insns
			load += r.load
			wall += r.wall
		}
		t.Logf("%d binaries: Load %v, Run %v for %d instructions (%.1f M instructions/s)",
			len(results), load.Round(time.Millisecond), wall.Round(time.Millisecond), insns, float64(insns)/wall.Seconds()/1e6)
		show := func(r result) {
			t.Logf("  %-45s %9d instructions, Load %6v, Run %7v: %5.1f M/s", r.path, r.insns,
				r.load.Round(100*time.Microsecond), r.wall.Round(100*time.Microsecond), float64(r.insns)/r.wall.Seconds()/1e6)
		}
		t.Log("slowest:")
		for _, r := range results[:min(8, len(results))] {
			show(r)
		}
		t.Log("most instructions:")
		sort.Slice(results, func(i, j int) bool { return results[i].insns > results[j].insns })
		for _, r := range results[:min(6, len(results))] {
			show(r)
		}
		var keys []string
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("  passed %-28s %d", k, counts[k])
		}
	})
	entries := runnable(t)
	for _, e := range entries {
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			path := filepath.Join(dir, e.Path)
			start := time.Now()
			p, err := Load(path, Config{Stdout: &stdout, Stderr: &stderr, Timeout: time.Minute, Sysroot: testcorpus.Sysroot(t, &e)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			load := time.Since(start)
			start = time.Now()
			x, err := p.Run()
			wall := time.Since(start)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if x.Reason != StopExited || x.Status != e.ExitStatus {
				t.Errorf("%v (%s), want exit status %d", x, x.Reason, e.ExitStatus)
			}
			if got := stdout.String(); got != e.Stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, e.Stdout)
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr: %q", stderr.String())
			}
			if !t.Failed() {
				mu.Lock()
				results = append(results, result{e.Path, x.Insns, load, wall})
				counts[fmt.Sprintf("v%d %s %s", e.SFrameVersion, e.Arch, strings.TrimSuffix(e.Link, ""))]++
				mu.Unlock()
			}
		})
	}
	if n := len(entries); n != 430 {
		t.Errorf("%d binaries in the corpus, want 430", n)
	}
}

// runnable returns the corpus binaries the Linux layer runs: all of them
// (static, -nostdlib, and dynamic with their sysroot: testcorpus.Sysroot).
func runnable(t *testing.T) []testcorpus.Entry {
	var out []testcorpus.Entry
	for _, e := range testcorpus.Entries(t) {
		switch e.Link {
		case "static", "nolibc", "dynamic":
			out = append(out, e)
		default:
			t.Errorf("%s: unknown link mode %q", e.Path, e.Link)
		}
	}
	return out
}
