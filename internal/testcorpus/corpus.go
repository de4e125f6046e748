// Package corpus gives tests access to the committed cross-toolchain test
// corpus in testdata/corpus: the binaries (extracted on first use from
// testdata/corpus.tar.xz), their golden objdump dumps and the manifest.
//
// Extraction needs tar and xz on PATH; a missing tool or archive fails the
// test with a message saying how to fix it, never skips it.
package testcorpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// Entry is one binary of the manifest (testdata/corpus/manifest.json),
// written by testdata/build-corpus.sh.
type Entry struct {
	Path          string `json:"path"` // relative to the corpus directory
	Source        string `json:"source"`
	Arch          string `json:"arch"`      // "x86-64" or "aarch64"
	Toolchain     string `json:"toolchain"` // "bookworm", "trixie", "sid", "clang23"
	SFrameVersion int    `json:"sframe_version"`
	Compiler      string `json:"compiler"`
	Binutils      string `json:"binutils"`
	CFlags        string `json:"cflags"`
	Link          string `json:"link"` // "static", "dynamic", "nolibc"
	SHA256        string `json:"sha256"`
	ExitStatus    int    `json:"exit_status"`
	Stdout        string `json:"stdout"`
	Note          string `json:"note,omitempty"`
	ObjdumpStatus int    `json:"objdump_status"`
	ObjdumpStderr string `json:"objdump_stderr,omitempty"`
}

// Golden returns the path of the entry's golden objdump --sframe output,
// relative to the corpus directory.
func (e *Entry) Golden() string { return e.Path + ".objdump" }

var (
	once    sync.Once
	dir     string
	entries []Entry
	loadErr error
)

// Dir returns the absolute path of the corpus directory with every binary
// extracted and checked against the manifest's sha256.
func Dir(tb testing.TB) string {
	tb.Helper()
	load()
	if loadErr != nil {
		tb.Fatalf("corpus: %v", loadErr)
	}
	return dir
}

// Entries returns the manifest, sorted by path.
func Entries(tb testing.TB) []Entry {
	tb.Helper()
	Dir(tb)
	return entries
}

// Lookup returns the manifest entry of the binary at path rel (as
// "v3/x86-64/nolibc-O2"); the test fails if there is none.
func Lookup(tb testing.TB, rel string) Entry {
	tb.Helper()
	for _, e := range Entries(tb) {
		if e.Path == rel {
			return e
		}
	}
	tb.Fatalf("%s is not in the corpus", rel)
	return Entry{}
}

// Root returns the repository root (the directory holding go.mod).
func Root() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		d = parent
	}
}

func load() {
	once.Do(func() {
		root, err := Root()
		if err != nil {
			loadErr = err
			return
		}
		dir = filepath.Join(root, "testdata", "corpus")
		data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			loadErr = fmt.Errorf("%v (the manifest is committed; rebuild with `make corpus`)", err)
			return
		}
		if err := json.Unmarshal(data, &entries); err != nil {
			loadErr = fmt.Errorf("manifest.json: %v", err)
			return
		}
		if len(entries) == 0 {
			loadErr = fmt.Errorf("manifest.json lists no binaries")
			return
		}
		loadErr = extract(filepath.Join(root, "testdata", "corpus.tar.xz"), dir)
	})
}

// extract unpacks the archive into dir unless a stamp file says this exact
// archive is already unpacked. A lock file serialises the test binaries of
// several packages that go test runs at once.
func extract(archive, dir string) error {
	sum, err := fileSHA256(archive)
	if err != nil {
		return fmt.Errorf("%v (the archive is committed; rebuild with `make corpus`)", err)
	}
	stamp := filepath.Join(dir, ".extracted")
	if b, err := os.ReadFile(stamp); err == nil && string(bytes.TrimSpace(b)) == sum {
		return nil
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if b, err := os.ReadFile(stamp); err == nil && string(bytes.TrimSpace(b)) == sum {
		return nil // another process did it meanwhile
	}
	for _, tool := range []string{"tar", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is needed to unpack %s: install it (apt-get install tar xz-utils)", tool, archive)
		}
	}
	cmd := exec.Command("tar", "-xJf", archive, "-C", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("unpacking %s: %v\n%s", archive, err, out)
	}
	for _, e := range entries {
		got, err := fileSHA256(filepath.Join(dir, e.Path))
		if err != nil {
			return fmt.Errorf("%s: %v (archive and manifest out of step? run `make corpus`)", e.Path, err)
		}
		if got != e.SHA256 {
			return fmt.Errorf("%s: sha256 %s, manifest says %s (archive and manifest out of step? run `make corpus`)", e.Path, got, e.SHA256)
		}
	}
	return os.WriteFile(stamp, []byte(sum+"\n"), 0o644)
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:]), nil
}
