//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestVerifyGuestIO: verify gives the program what run gives it — this
// command's stdin, the files named by --allow-read, the --env variables,
// stdout to itself (its stdout holds exactly the program's output; the
// summary is on stderr; with --json -, the program's stdout goes to
// stderr) — so a program that reads its input verifies the run the user
// asked for.
func TestVerifyGuestIO(t *testing.T) {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	lua := filepath.Join(root, "testdata", "realworld", "v3", "x86-64", "lua-static")
	if _, err := os.Stat(lua); err != nil {
		t.Fatalf("%v (make testdata unpacks the real-world corpus)", err)
	}
	data := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(data, []byte("from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `local f = assert(io.open(os.getenv("DATA"))) io.write(f:read("a")) print(os.getenv("GREETING"), io.read("l"))`
	stdin := func(s string) {
		in := filepath.Join(t.TempDir(), "stdin")
		if err := os.WriteFile(in, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		old := os.Stdin
		os.Stdin = f
		t.Cleanup(func() { os.Stdin = old })
	}
	want := "from a file\nhello\tfrom stdin\n"

	stdin("from stdin\n")
	out, errOut, status := runCmd(t, "", "verify", "--allow-read", data, "--env", "GREETING=hello", "--env", "DATA="+data, lua, "--", "-e", script)
	if status != exitOK || out != want || !strings.HasPrefix(errOut, lua+": x86-64, SFrame V3\n") || !strings.Contains(errOut, "result:       OK") {
		t.Fatalf("status %d, stdout:\n%s\nstderr:\n%s", status, out, errOut)
	}

	stdin("from stdin\n")
	out, errOut, status = runCmd(t, "", "verify", "--json", "-", "--allow-read", data, "--env", "GREETING=hello", "--env", "DATA="+data, lua, "--", "-e", script)
	var rep struct{ Instructions uint64 }
	if err := json.Unmarshal([]byte(out), &rep); status != exitOK || err != nil || rep.Instructions == 0 || !strings.HasPrefix(errOut, want) {
		t.Fatalf("status %d, JSON %v, stdout:\n%.300s\nstderr:\n%s", status, err, out, errOut)
	}

	// Without --allow-read the file does not exist for the program.
	stdin("")
	out, errOut, status = runCmd(t, "", "verify", "--env", "DATA="+data, lua, "--", "-e", script)
	if status != exitOK || !strings.Contains(errOut, data+": No such file or directory") || !strings.Contains(errOut, "exited with status 1") {
		t.Fatalf("status %d, stdout:\n%s\nstderr:\n%s", status, out, errOut)
	}
}

// TestAllowReadDir: a directory named with --allow-read is walked by the
// program under run and under verify alike (linux/testdata/src/tree.c:
// opendir, readdir, fstatat and openat relative to the directory), its
// files read whole, in sorted order, and verify's result is OK; a file
// outside it stays hidden. Before, the directory could not be opened.
func TestAllowReadDir(t *testing.T) {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(root, "linux", "testdata", "tree-x86_64")
	base := t.TempDir()
	dir := filepath.Join(base, "dir")
	for name, content := range map[string]string{"dir/b/c.txt": "c\n", "dir/a.txt": "aaa\n", "outside.txt": "no\n"} {
		path := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(base, "outside.txt")
	want := strings.NewReplacer("$D", dir, "$O", outside).Replace(`d $D mode 755 nlink 3 size 4096
f $D/a.txt size 4 read 4 sum 2985961
d $D/b mode 755 nlink 2 size 4096
f $D/b/c.txt size 2 read 2 sum 3079
? $O stat errno 2
`)
	for _, cmd := range []string{"run", "verify"} {
		out, errOut, status := runCmd(t, "", cmd, "--allow-read", dir, prog, "--", dir, outside)
		if status != exitOK || out != want || cmd == "verify" && !strings.Contains(errOut, "result:       OK") {
			t.Errorf("%s: status %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", cmd, status, out, want, errOut)
		}
	}
}
