//go:build cgo

package linux

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testdata/tree-x86_64 is testdata/src/tree.c, built with
//
//	gcc -O2 -static -Wa,--gsframe -o tree-x86_64 src/tree.c
//
// (gcc 12, glibc 2.36 of Debian bookworm, binutils 2.40): it walks the
// directories it is given with openat, fdopendir/readdir (getdents64),
// fstatat and readlinkat relative to each directory's descriptor, as
// find, grep -r and tar do, and prints what it met. The path through the
// layer is the same on both architectures: x86-64 only.

// TestNamedTree: a directory named with --allow-read (Config.ReadAllow)
// shows its whole tree read-only: listed in sorted order, directories
// 0555 (0755 here: below /tmp, a writable tree) with a link count of 2
// and one per subdirectory and a size of
// 4096, files read whole, links inside the tree followed; a link or a
// ".." that leads out of it shows nothing of the host (ENOENT), nor does a
// named directory that is sframesim's /proc, and a FIFO in the tree is
// refused (EACCES) without blocking. Before, the directory could not be
// opened (EISDIR), and nothing below it existed.
func TestNamedTree(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	for _, d := range []string{"sub/deeper", "empty"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"../secret.txt":      "secret\n",
		"a.txt":              "aaa\n",
		"sub/b.txt":          "bbb\nb",
		"sub/deeper/c.txt":   "c\n",
		"sub/deeper/.hidden": "",
	} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"tree/in-link":     "sub/b.txt",
		"tree/abs-in":      filepath.Join(tree, "sub/deeper"),
		"tree/dirlink-in":  "sub",
		"tree/dirlink-out": "/etc",
		"tree/out-abs":     "/etc/passwd",
		"tree/out-rel":     "../secret.txt",
		"tree/sub/up":      "../../secret.txt",
		"tree/loop":        "loop",
		"tree/named-out":   "../secret.txt", // named itself: followed as a named file is
		"tree/proc":        "/proc/self",
		"procdir":          "/proc/self",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	procdir := filepath.Join(base, "procdir")
	want := strings.NewReplacer("$T", tree, "$P", procdir).Replace(`d $T mode 755 nlink 4 size 4096
f $T/a.txt size 4 read 4 sum 2985961
l $T/abs-in -> $T/sub/deeper follow errno 0 dir
l $T/dirlink-in -> sub follow errno 0 dir
l $T/dirlink-out -> /etc follow errno 2
d $T/empty mode 755 nlink 2 size 4096
? $T/fifo mode 10000 open errno 13
l $T/in-link -> sub/b.txt follow errno 0
l $T/loop -> loop follow errno 40
l $T/named-out -> ../secret.txt follow errno 0
l $T/out-abs -> /etc/passwd follow errno 2
l $T/out-rel -> ../secret.txt follow errno 2
l $T/proc -> /proc/self follow errno 2
d $T/sub mode 755 nlink 3 size 4096
f $T/sub/b.txt size 5 read 5 sum 93519162
d $T/sub/deeper mode 755 nlink 2 size 4096
f $T/sub/deeper/.hidden size 0 read 0 sum 0
f $T/sub/deeper/c.txt size 2 read 2 sum 3079
l $T/sub/up -> ../../secret.txt follow errno 2
f $T/dirlink-in/b.txt size 5 read 5 sum 93519162
l $P -> /proc/self follow errno 2
? $T/sub/../../secret.txt stat errno 2
? $P/environ stat errno 2
`)
	out, x, _ := runGuest(t, filepath.Join("testdata", "tree-x86_64"), Config{
		Args:      []string{"tree", tree, tree + "/dirlink-in/b.txt", procdir, tree + "/sub/../../secret.txt", procdir + "/environ"},
		ReadAllow: []string{tree, procdir, filepath.Join(tree, "named-out")},
		Timeout:   time.Minute,
	})
	if x.Reason != StopExited || x.Status != 0 || out != want {
		t.Errorf("%v, output:\n%s\nwant:\n%s", x, out, want)
	}
}
