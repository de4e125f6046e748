package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestNames: an entry's "name" is its key (in jobs and inline
// expectations) instead of its path, so one binary may be listed several
// times, with its own "args" and "stdin"; keys must not collide.
func TestManifestNames(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "manifest.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in, err := ReadManifest(write(`[
  {"name": "lua fib", "path": "bin/lua", "args": ["fib.lua"], "stdin": "10\n", "expect": {"unsupported": "x", "reason": "r"}},
  {"name": "lua-sort", "path": "./bin/lua", "args": ["sort.lua"]},
  {"path": "bin/lua"}
]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(in.Jobs); strings.Join(got, "|") != "bin/lua|lua fib|lua-sort" {
		t.Fatalf("keys %q", got)
	}
	lua := filepath.Join(dir, "bin/lua")
	for i, want := range []Job{
		{Key: "bin/lua", Path: lua},
		{Key: "lua fib", Path: lua, Args: []string{"fib.lua"}, Stdin: "10\n"},
		{Key: "lua-sort", Path: lua, Args: []string{"sort.lua"}},
	} {
		j := in.Jobs[i]
		if j.Key != want.Key || j.Path != want.Path || strings.Join(j.Args, " ") != strings.Join(want.Args, " ") || j.Stdin != want.Stdin {
			t.Errorf("job %d: %+v, want %+v", i, j, want)
		}
	}
	if x := in.Expect.Lookup("lua fib"); x == nil || x.Unsupported != "x" || in.Expect.Lookup("bin/lua") != nil || len(in.Expect.Binaries) != 1 {
		t.Errorf("inline expectations: %s", dumpExpect(in.Expect.Binaries))
	}

	for _, tt := range []struct{ text, errSub string }{
		// The same path twice without names: the keys would collide.
		{`[{"path": "lua", "args": ["a"]}, {"path": "x"}, {"path": "./lua", "args": ["b"]}]`,
			`entry 0 (path lua) and entry 2 (path ./lua) have the same key "lua": give them distinct "name"s to list one binary twice`},
		{`[{"name": "n", "path": "a"}, {"name": "n", "path": "b"}]`,
			`entry 0 (name "n", path a) and entry 1 (name "n", path b) have the same key "n": names must be unique`},
		// A name may not take another entry's path.
		{`[{"path": "a"}, {"name": "a", "path": "b"}]`,
			`entry 0 (path a) and entry 1 (name "a", path b) have the same key "a": names must be unique, and differ from the other entries' paths`},
		{`[{"name": "", "path": "a"}]`, `entry 0 (a): name "": empty`},
		{`[{"name": " a", "path": "a"}]`, `entry 0 (a): name " a": leading or trailing white space`},
		{`[{"name": "a\nb", "path": "a"}]`, `entry 0 (a): name "a\nb": a control character`},
		{`[{"name": "a", "path": "a", "stdin": 3}]`, "cannot unmarshal number"},
		{`[{"name": "a", "path": "a", "stdin": "", "stdin_file": "in"}]`, `entry 0 (a): both "stdin" and "stdin_file": give one`},
		{`[{"name": "a", "path": "a", "stdout": "x", "stdout_file": "out"}]`, `entry 0 (a): both "stdout" and "stdout_file": give one`},
		{`[{"name": "a", "path": "a", "stdout_file": "missing"}]`, `entry 0 (a): stdout_file: stat ` + filepath.Join(dir, "missing") + ": no such file"},
	} {
		p := write(tt.text)
		_, err := ReadManifest(p)
		if err == nil || !strings.Contains(err.Error(), tt.errSub) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err %v, want one naming the file and %q", tt.text, err, tt.errSub)
		}
	}
}

// TestManifestFiles: "stdin_file" and "stdout_file" give an entry's stdin
// and expected stdout as the bytes of a file (relative to the manifest, or
// absolute), binary ones included; leaving both out means no stdin and no
// stdout check.
func TestManifestFiles(t *testing.T) {
	dir := t.TempDir()
	in, out := "SELECT 1;\n", "\x1f\x8b\x08\x00\xff\xfe\n"
	if err := os.MkdirAll(filepath.Join(dir, "inputs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"inputs/q.sql": in, "q.out": out} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "manifest.json")
	text := `[
  {"name": "a", "path": "bin", "stdin_file": "inputs/q.sql", "stdout_file": "` + filepath.Join(dir, "q.out") + `"},
  {"name": "b", "path": "bin", "stdin": "x", "stdout": ""},
  {"name": "c", "path": "bin"}
]`
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := m.Jobs[0], m.Jobs[1], m.Jobs[2]
	if a.Stdin != in || a.Stdout == nil || *a.Stdout != out {
		t.Errorf("a: stdin %q, stdout %v", a.Stdin, a.Stdout)
	}
	if b.Stdin != "x" || b.Stdout == nil || *b.Stdout != "" {
		t.Errorf("b: stdin %q, stdout %v", b.Stdin, b.Stdout)
	}
	if c.Stdin != "" || c.Stdout != nil {
		t.Errorf("c: stdin %q, stdout %v", c.Stdin, c.Stdout)
	}
}
