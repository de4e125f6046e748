package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the helper process of TestSignals when asked to.
func TestMain(m *testing.M) {
	if spec := os.Getenv("ATOMICFILE_HELPER"); spec != "" {
		os.Exit(helper(spec))
	}
	os.Exit(m.Run())
}

// helper writes "new" to a path, stopping at a stage ("mode stage path"):
// it prints the stage on stdout and waits there for the parent's signal.
func helper(spec string) int {
	var mode, stage, path string
	fmt.Sscan(spec, &mode, &stage, &path)
	noTmpfile = mode == "named"
	testHook = func(s string) {
		if s != stage {
			return
		}
		fmt.Println(s)
		if s == "linked" {
			// The signal is held off while the temporary name exists:
			// it must take effect after the rename.
			time.Sleep(300 * time.Millisecond)
			return
		}
		time.Sleep(time.Minute)
	}
	if err := Write(path, []byte("new\n")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// modes runs f with and without O_TMPFILE.
func modes(t *testing.T, f func(t *testing.T)) {
	for _, named := range []bool{false, true} {
		name := "tmpfile"
		if named {
			name = "named"
		}
		t.Run(name, func(t *testing.T) {
			noTmpfile = named
			defer func() { noTmpfile = false }()
			f(t)
		})
	}
}

// names lists a directory.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWrite(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "r.json")
		for _, data := range []string{"first\n", "second, longer\n", ""} {
			if err := Write(path, []byte(data)); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != data {
				t.Fatalf("read %q, %v; want %q", got, err, data)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != Mode {
				t.Fatalf("stat: %v, %v; want a regular file with mode %o", fi.Mode(), err, Mode)
			}
			if n := names(t, dir); !slices.Equal(n, []string{"r.json"}) {
				t.Fatalf("directory holds %q, want only r.json", n)
			}
		}
	})
}

// TestWriteRelative: a bare file name is written in the working directory.
func TestWriteRelative(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := Write("r.json", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile("r.json"); err != nil || string(got) != "x" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// TestRefuse: a symbolic link (dangling or not), a FIFO, a device or a
// directory is neither replaced nor written through.
func TestRefuse(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "target")
		if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link")
		dangling := filepath.Join(dir, "dangling")
		fifo := filepath.Join(dir, "fifo")
		sub := filepath.Join(dir, "sub")
		for _, err := range []error{
			os.Symlink(target, link), os.Symlink(filepath.Join(dir, "nothing"), dangling),
			syscall.Mkfifo(fifo, 0o600), os.Mkdir(sub, 0o755),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		before := names(t, dir)
		for _, tt := range []struct{ path, kind string }{
			{link, "a symbolic link"},
			{dangling, "a symbolic link"},
			{fifo, "a FIFO"},
			{sub, "a directory"},
			{"/dev/null", "a character device"},
			{"/dev/stdout", "a symbolic link"},
		} {
			err := Write(tt.path, []byte("new\n"))
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tt.path+" is "+tt.kind+": refusing") {
				t.Errorf("Write(%s): %v; want %q", tt.path, err, tt.kind)
			}
			if cerr := Check(tt.path); cerr == nil || err == nil || cerr.Error() != err.Error() {
				t.Errorf("Check(%s): %v; want %v", tt.path, cerr, err)
			}
		}
		for _, p := range []string{target, filepath.Join(dir, "new"), filepath.Join(dir, "no", "new")} {
			if err := Check(p); err != nil {
				t.Errorf("Check(%s): %v", p, err)
			}
		}
		if got, _ := os.ReadFile(target); string(got) != "old\n" {
			t.Errorf("the link's target was written: %q", got)
		}
		if to, err := os.Readlink(link); err != nil || to != target {
			t.Errorf("the link was replaced: %q, %v", to, err)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was replaced: %v, %v", fi.Mode(), err)
		}
		if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("/dev/null was replaced: %v, %v", fi.Mode(), err)
		}
		if after := names(t, dir); !slices.Equal(before, after) {
			t.Errorf("directory changed: %q, was %q", after, before)
		}
	})
}

// TestWriteErrors: a missing directory and a bad name fail with the path
// in the message.
func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "r.json")
	if err := Write(missing, nil); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(dir, "no")) {
		t.Errorf("Write(%s): %v", missing, err)
	}
	if err := Write(dir+"/", nil); err == nil || !strings.Contains(err.Error(), "not a file name") {
		t.Errorf("Write(%s/): %v", dir, err)
	}
}

// TestSignals kills a process in the middle of Write: no temporary file
// may be left, and the old or the new contents must be in place, whole.
func TestSignals(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode, stage string
		sig         syscall.Signal
		want        string // the contents after the kill
	}{
		// O_TMPFILE: nothing has a name while the data is written, so
		// even SIGKILL leaves nothing behind.
		{"tmpfile", "written", syscall.SIGINT, "old\n"},
		{"tmpfile", "written", syscall.SIGTERM, "old\n"},
		{"tmpfile", "written", syscall.SIGKILL, "old\n"},
		// Between linkat and renameat the signal waits for the rename.
		{"tmpfile", "linked", syscall.SIGINT, "new\n"},
		{"tmpfile", "linked", syscall.SIGTERM, "new\n"},
		// A named temporary file is removed before the signal kills.
		{"named", "written", syscall.SIGINT, "old\n"},
		{"named", "written", syscall.SIGTERM, "old\n"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%v", tt.mode, tt.stage, tt.sig), func(t *testing.T) {
			if signal.Ignored(tt.sig) {
				t.Skipf("%v is ignored in this environment (a background job?): the helper would not die of it", tt.sig)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "r.json")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "ATOMICFILE_HELPER="+tt.mode+" "+tt.stage+" "+path)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if strings.TrimSpace(line) != tt.stage {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("helper printed %q (%v), stderr %q", line, err, stderr.String())
			}
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != tt.sig {
				t.Errorf("helper: %v, want killed by %v; stderr %q", err, tt.sig, stderr.String())
			}
			if n := names(t, dir); !slices.Equal(n, []string{"r.json"}) {
				t.Errorf("directory holds %q, want only r.json", n)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != tt.want {
				t.Errorf("r.json holds %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}

// TestSignalHandledElsewhere: when the program catches SIGINT itself, a
// SIGINT during a named write does not lose the report: it is written
// again.
func TestSignalHandledElsewhere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	noTmpfile = true
	defer func() { noTmpfile, testHook = false, nil }()
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT)
	defer signal.Stop(sig)
	calls := 0
	testHook = func(stage string) {
		if stage != "written" {
			return
		}
		calls++
		if calls == 1 {
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			// Wait for the guard to remove the temporary file.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if len(names(t, dir)) == 0 {
					return
				}
			}
			t.Error("the temporary file was not removed on SIGINT")
		}
	}
	if err := Write(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	// At least once more after the interrupted write (a loaded machine may
	// deliver the signal to the guard late, after a further attempt began).
	if calls < 2 {
		t.Errorf("%d writes, want at least 2", calls)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "new\n" {
		t.Errorf("read %q, %v", got, err)
	}
	if n := names(t, dir); !slices.Equal(n, []string{"r.json"}) {
		t.Errorf("directory holds %q, want only r.json", n)
	}
	select {
	case <-sig:
	case <-time.After(5 * time.Second):
		t.Error("the program's own handler never saw the SIGINT")
	}
}
