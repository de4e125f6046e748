//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/hostfile"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// specialFiles makes a FIFO, a Unix socket, a directory, a regular file
// and a symbolic link to it in a temporary directory.
func specialFiles(t *testing.T) (fifo, sock, dir, file, link string) {
	t.Helper()
	d := t.TempDir()
	fifo, sock, dir, file, link = filepath.Join(d, "fifo"), filepath.Join(d, "sock"), filepath.Join(d, "dir"), filepath.Join(d, "data.txt"), filepath.Join(d, "link")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("allowed content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	return
}

// catCase is a path the "cat" test program opens, and what it must get:
// the errno as its exit status, or (0) the file's first bytes.
type catCase struct {
	path  string
	allow []string
	errno int
	out   string // with errno 0: a prefix of the output
}

// runCat runs the "cat" program of arch a on each case, with the sysroot
// root; view, if not nil, replaces the view Load made.
func runCat(t *testing.T, a *arch.Arch, root string, view *fsView, cases []catCase) {
	t.Helper()
	prog, _ := testELF(t, a, elf.ET_EXEC, "cat")
	for _, c := range cases {
		var out bytes.Buffer
		p, err := Load(prog, Config{Args: []string{"cat", c.path}, Stdout: &out, ReadAllow: c.allow, Sysroot: root, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if view != nil {
			p.view = *view
		}
		x, err := p.Run()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		if x.Reason != StopExited || x.Status != c.errno || !strings.HasPrefix(out.String(), c.out) || (c.errno != 0 && out.Len() > 0) {
			t.Errorf("%s: open %s (allow %v): %v, output %q; want status %d (errno), output %q...",
				a.Name, c.path, c.allow, x, out.String(), c.errno, c.out)
		}
	}
}

// synthPasswd is the start of the /etc/passwd the layer makes when the
// guest sees none.
const synthPasswd = "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:"

// TestFSViewHost: with the host's "/" as sysroot (the x86-64 default),
// the guest sees ld.so's files and what the user named, nothing else:
// neither the host's /etc/passwd (a made one), /root, /proc (but /proc/self/exe, fd and the files
// procfs.go makes) nor /dev
// (but the emulated devices: devices.go, never the host's); the host's
// devices, FIFOs and sockets are refused even when named, and opening them
// does not block.
func TestFSViewHost(t *testing.T) {
	fifo, sock, dir, file, link := specialFiles(t)
	environ := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", environ); err != nil {
		t.Fatal(err)
	}
	cases := []catCase{
		{path: "/etc/passwd", out: synthPasswd}, // made (procfs.go): never the host's
		{path: "/etc/shadow", errno: eNOENT},
		{path: "/root", errno: eNOENT},
		{path: "/root/.profile", errno: eNOENT},
		{path: "/proc/self/environ"}, // generated: the guest's (empty) environment
		{path: "/proc/self/maps", out: "00"},
		{path: "/proc/self/mounts", errno: eNOENT},
		{path: "/proc/self/fd/0"},                // stdin: none, an empty read
		{path: "/proc/self/fd/7", errno: eNOENT}, // not open
		{path: "/proc/1/environ", errno: eNOENT},
		{path: "/sys/devices/system/cpu/online", out: "0\n"},
		{path: "/sys/devices/system/cpu/cpu0/online", errno: eNOENT},
		{path: "/dev/zero", out: "\x00\x00\x00\x00"},
		{path: "/dev/mem", errno: eNOENT},
		{path: "/dev/sda", errno: eNOENT},
		{path: "/usr/lib/../../etc/passwd", out: synthPasswd},
		{path: "/usr/bin/ls", errno: eNOENT},
		{path: file, errno: eNOENT},
		{path: "/proc/self/exe", out: "\x7fELF"},
		{path: "/usr/lib"}, // a directory opens; its read (EISDIR) prints nothing
		// Named with --allow-read.
		{path: file, allow: []string{file}, out: "allowed content\n"},
		{path: link, allow: []string{link}, out: "allowed content\n"},
		{path: link, allow: []string{file}, errno: eNOENT},
		{path: dir, allow: []string{dir}},
		{path: "/dev/null", allow: []string{"/dev/null"}},             // emulated: never the host's
		{path: "/dev/tty", allow: []string{"/dev/tty"}, errno: eNXIO}, // emulated: no controlling terminal
		{path: "/dev/console", allow: []string{"/dev/console"}, errno: eACCES},
		{path: fifo, allow: []string{fifo}, errno: eACCES},
		{path: sock, allow: []string{sock}, errno: eACCES},
		{path: "/proc/self/environ", allow: []string{"/proc/self/environ"}}, // generated, never the host's
		{path: environ, allow: []string{environ}, errno: eNOENT},
	}
	// ".." is taken from where /lib leads: on a merged /usr (/lib ->
	// usr/lib), /usr, which has no etc/passwd (as natively).
	if fi, err := os.Lstat("/lib"); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		cases = append(cases, catCase{path: "/lib/../etc/passwd", errno: eNOENT})
	} else {
		cases = append(cases, catCase{path: "/lib/../etc/passwd", out: synthPasswd})
	}
	for _, f := range []string{"/etc/ld.so.cache", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
		if data, err := os.ReadFile(f); err == nil {
			cases = append(cases, catCase{path: f, out: string(data[:min(len(data), 256)])})
		}
	}
	if _, err := os.Stat("/etc/ld.so.cache"); err != nil {
		t.Logf("the host has no /etc/ld.so.cache: %v", err)
	}
	for _, a := range testArches {
		runCat(t, a, "/", nil, cases)
	}
}

// fakeRoot builds a directory laid out as a Debian root file system
// (merged /usr) with an ld.so.conf that includes a directory of files,
// and symbolic links in the library directories that lead out of what
// ld.so reads.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"usr/lib/x86_64-linux-gnu/libc.so.6":            "\x7fELF libc",
		"usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2": "\x7fELF ld.so",
		"usr/lib/x86_64-linux-gnu/gconv/UTF-16.so":      "\x7fELF gconv",
		"usr/lib64/.keep":                               "",
		"usr/bin/ls":                                    "\x7fELF ls",
		"opt/mylib/libx.so":                             "\x7fELF libx",
		"opt/other/liby.so":                             "\x7fELF liby",
		"etc/ld.so.cache":                               "ld.so-1.7.0",
		"etc/passwd":                                    "root:x:0:0",
		"etc/hosts":                                     "127.0.0.1",
		"etc/ssl/private/key.pem":                       "secret",
		"etc/ld.so.conf":                                "include /etc/ld.so.conf.d/*.conf\n# a comment\n",
		"etc/ld.so.conf.d/mylib.conf":                   "/opt/mylib # mine\ninclude extra/*.conf\n",
		"etc/ld.so.conf.d/extra/bad.conf":               "/etc/hosts/sub\n",
		"root/.profile":                                 "secret",
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"lib":                                    "usr/lib",
		"lib64":                                  "usr/lib64",
		"bin":                                    "usr/bin",
		"usr/lib64/ld-linux-x86-64.so.2":         "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"usr/lib/x86_64-linux-gnu/passwd-abs":    "/etc/passwd",
		"usr/lib/x86_64-linux-gnu/passwd-rel":    "../../../etc/passwd",
		"usr/lib/x86_64-linux-gnu/etc":           "/etc",
		"usr/lib/x86_64-linux-gnu/ssl":           "../../../etc/ssl",
		"usr/lib/x86_64-linux-gnu/libc-again.so": "/lib/x86_64-linux-gnu/libc.so.6",
		"usr/lib/x86_64-linux-gnu/cache":         "/etc/ld.so.cache",
		"usr/lib/x86_64-linux-gnu/mylib":         "/opt/mylib/libx.so",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "usr/lib/x86_64-linux-gnu/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// partView is the view newFSView makes of the host's "/", made of root.
func partView(root string) *fsView {
	v := &fsView{root: root, part: true, allow: map[string]bool{}}
	v.showLoaderPaths()
	v.show("/lib64/ld-linux-x86-64.so.2")
	return v
}

// TestFSViewPart: the part of a root file system shown (ld.so's paths, as
// for the host's "/") with symbolic links that point out of it:
// resolved, then checked, they lead nowhere.
func TestFSViewPart(t *testing.T) {
	root := fakeRoot(t)
	v := partView(root)
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	for _, c := range []struct {
		guest      string
		followLast bool
		host       string // "": want errno
		errno      int
	}{
		{"/lib/x86_64-linux-gnu/libc.so.6", true, lib + "/libc.so.6", 0},
		{"/lib64/ld-linux-x86-64.so.2", true, lib + "/ld-linux-x86-64.so.2", 0},
		{"/lib64/ld-linux-x86-64.so.2", false, root + "/usr/lib64/ld-linux-x86-64.so.2", 0},
		{"/usr/lib/x86_64-linux-gnu/gconv/UTF-16.so", true, lib + "/gconv/UTF-16.so", 0},
		{"/lib/x86_64-linux-gnu/libc-again.so", true, lib + "/libc.so.6", 0},
		{"/etc/ld.so.cache", true, root + "/etc/ld.so.cache", 0},
		{"/lib/x86_64-linux-gnu/cache", true, root + "/etc/ld.so.cache", 0},
		{"/opt/mylib/libx.so", true, root + "/opt/mylib/libx.so", 0}, // named by an included ld.so.conf file
		{"/lib/x86_64-linux-gnu/mylib", true, root + "/opt/mylib/libx.so", 0},
		{"/lib/x86_64-linux-gnu/fifo", true, lib + "/fifo", 0}, // shown, but not opened (TestFSViewPartOpen)
		// The directories on the way exist, nothing else in them.
		{"/", true, root, 0},
		{"/etc", true, root + "/etc", 0},
		{"/opt", true, root + "/opt", 0},
		{"/lib", false, root + "/lib", 0},
		{"/etc/passwd", true, "", eNOENT},
		{"/etc/hosts", true, "", eNOENT}, // on the way to /etc/hosts/sub, which an ld.so.conf names: not a directory
		{"/etc/hosts/sub", true, "", eNOENT},
		{"/etc/ld.so.conf", true, "", eNOENT},
		{"/root/.profile", true, "", eNOENT},
		{"/root", true, "", eNOENT},
		{"/bin/ls", true, "", eNOENT},
		{"/usr/bin", true, "", eNOENT},
		{"/opt/other/liby.so", true, "", eNOENT},
		{"/proc/self/environ", true, "", eNOENT},
		// Links out of a shown directory.
		{"/lib/x86_64-linux-gnu/passwd-abs", true, "", eNOENT},
		{"/lib/x86_64-linux-gnu/passwd-rel", true, "", eNOENT},
		{"/lib/x86_64-linux-gnu/passwd-abs", false, lib + "/passwd-abs", 0}, // the link itself is shown (readlink, lstat)
		{"/lib/x86_64-linux-gnu/etc/passwd", true, "", eNOENT},
		{"/lib/x86_64-linux-gnu/etc/ld.so.cache", true, root + "/etc/ld.so.cache", 0},
		{"/lib/x86_64-linux-gnu/ssl/private/key.pem", true, "", eNOENT},
		{"/lib/x86_64-linux-gnu/../../../etc/passwd", true, "", eNOENT},
		{"/lib/../../../../etc/passwd", true, "", eNOENT},
	} {
		vf, e := v.lookup(c.guest, c.followLast)
		if vf.host != c.host || e != c.errno {
			t.Errorf("%s (follow %v): %q, errno %d; want %q, %d", c.guest, c.followLast, vf.host, e, c.host, c.errno)
		}
	}
	// A dedicated sysroot is shown whole (but /proc and /sys).
	whole, err := newFSView(root, nil, "/nonexistent/prog")
	if err != nil {
		t.Fatal(err)
	}
	for guest, want := range map[string]int{"/etc/passwd": 0, "/usr/bin/ls": 0, "/lib/x86_64-linux-gnu/passwd-abs": 0, "/proc": eNOENT} {
		if _, e := whole.lookup(guest, true); e != want {
			t.Errorf("whole sysroot: %s: errno %d, want %d", guest, e, want)
		}
	}
}

// TestFSViewPartOpen: a guest opening through the system calls sees the
// same part of fakeRoot: links out of it are ENOENT, a FIFO in it EACCES.
func TestFSViewPartOpen(t *testing.T) {
	root := fakeRoot(t)
	runCat(t, arch.AMD64, root, partView(root), []catCase{
		{path: "/lib/x86_64-linux-gnu/libc.so.6", out: "\x7fELF libc"},
		{path: "/lib/x86_64-linux-gnu/mylib", out: "\x7fELF libx"},
		{path: "/etc/ld.so.cache", out: "ld.so-1.7.0"},
		{path: "/etc/passwd", out: synthPasswd}, // hidden: the made one
		{path: "/lib/x86_64-linux-gnu/passwd-abs", errno: eNOENT},
		{path: "/lib/x86_64-linux-gnu/passwd-rel", errno: eNOENT},
		{path: "/lib/x86_64-linux-gnu/etc/passwd", errno: eNOENT},
		{path: "/lib/x86_64-linux-gnu/ssl/private/key.pem", errno: eNOENT},
		{path: "/lib/x86_64-linux-gnu/fifo", errno: eACCES},
		{path: "/etc"}, // on the way to /etc/ld.so.cache: a directory, which opens
	})
	// In a dedicated sysroot, all of it, but still no FIFO.
	runCat(t, arch.ARM64, root, nil, []catCase{
		{path: "/etc/passwd", out: "root:x:0:0"},
		{path: "/lib/x86_64-linux-gnu/passwd-abs", out: "root:x:0:0"},
		{path: "/lib/x86_64-linux-gnu/fifo", errno: eACCES},
		{path: "/proc/self/environ"}, // generated (procfs.go), not the sysroot's
	})
}

// TestLoadSpecialFiles: a FIFO or a device as the program or as its
// program interpreter is refused at once, with a message naming it.
func TestLoadSpecialFiles(t *testing.T) {
	fifo, _, dir, _, _ := specialFiles(t)
	for _, c := range []struct{ path, want string }{
		{fifo, fifo + ": not a regular file (FIFO)"},
		{"/dev/zero", "/dev/zero: not a regular file (character device)"},
		{dir, dir + ": not a regular file (directory)"},
	} {
		_, err := Load(c.path, Config{})
		if !errors.Is(err, hostfile.ErrNotRegular) || err.Error() != c.want {
			t.Errorf("Load(%s): %v, want %q", c.path, err, c.want)
		}
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	interp := filepath.Join(root, "lib64/ld-linux-x86-64.so.2")
	if err := syscall.Mkfifo(interp, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(testcorpus.Dir(t), "v1/x86-64/recurse-O2-dynamic")
	_, err := Load(prog, Config{Sysroot: root})
	if want := prog + ": program interpreter /lib64/ld-linux-x86-64.so.2: " + interp + ": not a regular file (FIFO)"; err == nil || err.Error() != want {
		t.Errorf("FIFO as the interpreter: %v, want %q", err, want)
	}
}
