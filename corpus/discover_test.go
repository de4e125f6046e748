package corpus

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestDiscover: a directory's ELF executables with SFrame data are jobs
// (with arch and version read from the file), everything else is skipped
// with the reason. The odd files are copies of a corpus binary with one
// header field patched.
func TestDiscover(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), "v2/aarch64/nolibc-O2"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	patched := func(f func(b []byte)) []byte {
		b := bytes.Clone(src)
		f(b)
		return b
	}
	le := binary.LittleEndian
	write("a/prog", src)
	write("a/README", []byte("not a binary\n"))
	write("b/object.o", patched(func(b []byte) { le.PutUint16(b[16:], uint16(elf.ET_REL)) }))
	write("b/libx.so", patched(func(b []byte) { le.PutUint16(b[16:], uint16(elf.ET_DYN)) })) // no DF_1_PIE, no interpreter
	write("b/core", patched(func(b []byte) { le.PutUint16(b[16:], uint16(elf.ET_CORE)) }))
	write("b/broken", src[:40]) // ELF magic, truncated header
	write("c/nosframe", patched(func(b []byte) {
		// Rename the section and drop the PT_GNU_SFRAME segment.
		i := bytes.Index(b, []byte(".sframe\x00"))
		copy(b[i:], ".xframe")
		phoff, phentsize, phnum := le.Uint64(b[32:]), uint64(le.Uint16(b[54:])), uint64(le.Uint16(b[56:]))
		for k := uint64(0); k < phnum; k++ {
			ph := b[phoff+k*phentsize:]
			if elf.ProgType(le.Uint32(ph)) == sframe.PT_GNU_SFRAME {
				le.PutUint32(ph, uint32(elf.PT_NULL))
			}
		}
	}))
	if err := os.Symlink(filepath.Join(dir, "a/prog"), filepath.Join(dir, "c/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "c/dirlink")); err != nil {
		t.Fatal(err)
	}

	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, j := range in.Jobs {
		jobs = append(jobs, j.Key+" "+j.Arch+" "+string(rune('0'+j.SFrameVersion)))
	}
	wantJobs := []string{"a/prog aarch64 2", "b/broken  0", "c/link aarch64 2"}
	wantSkipped := []Skipped{
		{"a/README", SkipNotELF},
		{"b/core", SkipCore},
		{"b/libx.so", SkipShared},
		{"b/object.o", SkipObject},
		{"c/dirlink", "not a regular file"},
		{"c/nosframe", SkipNoSFrame},
	}
	if !reflect.DeepEqual(jobs, wantJobs) || !reflect.DeepEqual(in.Skipped, wantSkipped) {
		t.Errorf("jobs %q\nskipped %q\nwant %q\nand %q", jobs, in.Skipped, wantJobs, wantSkipped)
	}
	if _, err := Load(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("Load of a missing path: %v", err)
	}
}
