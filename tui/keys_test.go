//go:build cgo

package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// README's key table sits between these lines of the `sframesim step`
// paragraph, indented as the paragraph is.
const (
	readmeKeysBegin = "<!-- key table: generated from tui/keys.go; go test ./tui -run TestREADMEKeys -update rewrites it -->"
	readmeKeysEnd   = "<!-- end of key table -->"
	readmeIndent    = "  "
)

// readmeKeyTable is README's key table: the ? screen's bindings as a
// Markdown table, each key in backquotes.
func readmeKeyTable() string {
	rows := [][2]string{{"Key", "Command"}}
	for _, group := range keys.FullHelp() {
		for _, b := range group {
			ks := strings.Split(b.Help().Key, ", ")
			for i, k := range ks {
				ks[i] = "`" + k + "`"
			}
			rows = append(rows, [2]string{strings.Join(ks, ", "), b.Help().Desc})
		}
	}
	var w [2]int
	for _, r := range rows {
		w[0], w[1] = max(w[0], len(r[0])), max(w[1], len(r[1]))
	}
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, "%s| %-*s | %-*s |\n", readmeIndent, w[0], r[0], w[1], r[1])
		if i == 0 {
			fmt.Fprintf(&b, "%s| %s | %s |\n", readmeIndent, strings.Repeat("-", w[0]), strings.Repeat("-", w[1]))
		}
	}
	return b.String()
}

// TestREADMEKeys keeps README's key table equal to the key map; -update
// rewrites it.
func TestREADMEKeys(t *testing.T) {
	path := filepath.Join(pkgDir, "..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	begin := strings.Index(readme, readmeIndent+readmeKeysBegin+"\n")
	end := strings.Index(readme, readmeIndent+readmeKeysEnd+"\n")
	if begin < 0 || end < begin {
		t.Fatalf("README.md lacks the lines %q and %q around the key table", readmeKeysBegin, readmeKeysEnd)
	}
	begin += len(readmeIndent + readmeKeysBegin + "\n")
	table := readmeKeyTable()
	if golden.Update() {
		if err := os.WriteFile(path, []byte(readme[:begin]+table+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if d := golden.Diff([]byte(readme[begin:end]), []byte(table)); d != "" {
		t.Errorf("README.md's key table differs from the key map (go test ./tui -run TestREADMEKeys -update rewrites it):\n%s", d)
	}
}

// TestKeysDistinct: no key is bound to two commands.
func TestKeysDistinct(t *testing.T) {
	bound := map[string]string{}
	for _, group := range keys.FullHelp() {
		for _, b := range group {
			for _, k := range b.Keys() {
				if prev, dup := bound[k]; dup {
					t.Errorf("%q is bound to %q and %q", k, prev, b.Help().Desc)
				}
				bound[k] = b.Help().Desc
			}
		}
	}
}
