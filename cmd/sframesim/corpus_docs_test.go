//go:build cgo

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/corpus"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestCIExamples: the CI examples in docs/ci use only flags that `corpus`
// and `corpus merge` have, only the shard variables sframesim reads, only
// make targets the Makefile has; the Kubernetes Job is Indexed and its
// SFRAMESIM_SHARD_COUNT is its completions; and, where python3 with PyYAML
// is installed, every file parses as YAML.
func TestCIExamples(t *testing.T) {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "ci", "*.y*ml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("docs/ci: %v, %d files", err, len(files))
	}
	flagsOf := func(args ...string) map[string]bool {
		out, _, status := runCmd(t, "", append(args, "-h")...)
		if status != exitOK {
			t.Fatalf("%q -h: status %d", args, status)
		}
		flags := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(out, -1) {
			flags[m[1]] = true
		}
		return flags
	}
	corpusFlags, mergeFlags := flagsOf("corpus"), flagsOf("corpus", "merge")
	if !corpusFlags["shard"] || !corpusFlags["costs"] || !mergeFlags["expect"] || mergeFlags["shard"] {
		t.Fatalf("flags from -h: corpus %v, merge %v", corpusFlags, mergeFlags)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{corpus.EnvShard: true, corpus.EnvShardIndex: true, corpus.EnvShardCount: true}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "\\\n", " ") // shell continuation lines
		commands := 0
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			i := strings.Index(line, "sframesim corpus")
			if i < 0 {
				continue
			}
			cmd := line[i:]
			for _, sep := range []string{"||", "&&", ";", "|"} {
				cmd, _, _ = strings.Cut(cmd, sep)
			}
			words := strings.Fields(cmd)[1:]
			flags := corpusFlags
			if len(words) > 1 && words[1] == "merge" {
				flags, words = mergeFlags, words[1:]
			}
			commands++
			for _, w := range words[1:] {
				if !strings.HasPrefix(w, "-") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				if !flags[name] {
					t.Errorf("%s: %q: sframesim %s has no flag %s", filepath.Base(file), cmd, words[0], w)
				}
			}
		}
		for _, m := range regexp.MustCompile(`\bmake ([a-z-]+)`).FindAllStringSubmatch(text, -1) {
			if !bytes.Contains(makefile, []byte("\n"+m[1]+":")) {
				t.Errorf("%s: make %s: no such target in the Makefile", filepath.Base(file), m[1])
			}
		}
		for _, v := range regexp.MustCompile(`SFRAMESIM_[A-Z_]+`).FindAllString(text, -1) {
			if !known[v] {
				t.Errorf("%s: %s is not a variable sframesim reads", filepath.Base(file), v)
			}
		}
		switch {
		case strings.HasSuffix(file, ".yaml"): // Kubernetes
			completions := regexp.MustCompile(`(?m)^  completions: (\d+)$`).FindStringSubmatch(text)
			count := regexp.MustCompile(`name: SFRAMESIM_SHARD_COUNT\s+value: "(\d+)"`).FindStringSubmatch(text)
			if !strings.Contains(text, "completionMode: Indexed") || completions == nil || count == nil || completions[1] != count[1] ||
				!strings.Contains(text, "$JOB_COMPLETION_INDEX") {
				t.Errorf("%s: want an Indexed Job whose SFRAMESIM_SHARD_COUNT is its completions: %q, %q", filepath.Base(file), completions, count)
			}
			if commands != 2 {
				t.Errorf("%s: %d sframesim corpus commands, want a shard and a merge", filepath.Base(file), commands)
			}
		default: // GitHub Actions: the shard comes from the matrix
			for _, s := range []string{"SFRAMESIM_SHARD_INDEX: ${{ strategy.job-index }}", "SFRAMESIM_SHARD_COUNT: ${{ strategy.job-total }}", "actions/upload-artifact@", "actions/download-artifact@"} {
				if !strings.Contains(text, s) {
					t.Errorf("%s lacks %q", filepath.Base(file), s)
				}
			}
			if commands != 2 {
				t.Errorf("%s: %d sframesim corpus commands, want two merges", filepath.Base(file), commands)
			}
		}
	}

	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: YAML syntax not checked")
	}
	script := "import sys, yaml\nfor f in sys.argv[1:]:\n    list(yaml.safe_load_all(open(f)))\n"
	out, err := exec.Command(python, append([]string{"-c", script}, files...)...).CombinedOutput()
	switch {
	case err != nil && bytes.Contains(out, []byte("No module named 'yaml'")):
		t.Skip("PyYAML not installed: YAML syntax not checked")
	case err != nil:
		t.Errorf("YAML: %v\n%s", err, out)
	}
}
