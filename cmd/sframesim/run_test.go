//go:build cgo

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

func TestRun(t *testing.T) {
	dir := testcorpus.Dir(t)
	want := map[string]testcorpus.Entry{}
	for _, e := range testcorpus.Entries(t) {
		want[e.Path] = e
	}
	// The program's output and exit status pass through; dynamically
	// linked programs run with the default sysroot of their arch (bookworm's
	// libraries on this Debian 12 host) or --sysroot.
	for _, path := range []string{"v1/x86-64/except-O2-static", "v3/aarch64/recurse-O2-static-pac-bkey", "v2/x86-64/nolibc-O0",
		"v1/x86-64/except-O2-dynamic", "v1/aarch64/cold-O2-dynamic", "v3/x86-64/except-O2-dynamic", "v2/aarch64/setjmp-O0-dynamic"} {
		e := want[path]
		args := []string{"run", path}
		if e.Toolchain != "bookworm" {
			args = []string{"run", "--sysroot", testcorpus.Sysroot(t, &e), path}
		}
		out, errOut, status := runCmd(t, dir, args...)
		if out != e.Stdout || status != e.ExitStatus || errOut != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, %q", args, status, out, errOut, e.ExitStatus, e.Stdout)
		}
	}
	empty := t.TempDir()
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"run", "--max-insns", "1000", "v3/x86-64/cold-O2-static", "--", "a", "b"},
			"sframesim run: v3/x86-64/cold-O2-static: instruction budget of 1000 exhausted at pc 0x"},
		{[]string{"run", "--max-mem", "4M", "v3/aarch64/many-O2-static"},
			"loading needs more than the memory cap of 4194304 bytes"},
		{[]string{"run", "--sysroot", empty, "v3/aarch64/recurse-O2-dynamic"}, "program interpreter /lib/ld-linux-aarch64.so.1 is not in the sysroot " + empty},
		{[]string{"run", "--max-mem", "lots", "v3/aarch64/recurse-O2-static"}, `--max-mem "lots"`},
		{[]string{"run"}, "sframesim run: no BINARY given\nrun 'sframesim help run'\n"},
		{[]string{"run", "no-such-file"}, "no such file"},
	} {
		out, errOut, status := runCmd(t, dir, c.args...)
		if status != exitError || out != "" || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want status 2 and %q on stderr", c.args, status, out, errOut, c.stderr)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]uint64{"4096": 4096, "64K": 64 << 10, "3M": 3 << 20, "2G": 2 << 30} {
		if got, err := parseSize(s); got != want || err != nil {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "1T", "G", "99999999999G"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) succeeded", s)
		}
	}
}

// TestRunDenied: the calls the sandbox denied are listed on stderr at the
// end of a run; the program's status passes through (here the errno its
// socket call got, EACCES).
func TestRunDenied(t *testing.T) {
	code := map[*arch.Arch]string{
		// socket(2, 1, 0) twice; connect(3, 0, 0); exit_group(-socket's result)
		arch.AMD64: "bf02000000be0100000031d2b8290000000f05bf02000000be0100000031d2b8290000000f05" +
			"4989c4bf0300000031f631d2b82a0000000f054c89e748f7dfb8e70000000f05",
		arch.ARM64: "400080d2210080d2020080d2c81880d2010000d4400080d2210080d2020080d2c81880d2010000d4" +
			"f30300aa600080d2010080d2020080d2681980d2010000d4e00313cbc80b80d2010000d4",
	}
	dir := t.TempDir()
	for a, hexCode := range code {
		path := filepath.Join(dir, a.Name)
		writeTinyELF(t, path, a, hexCode)
		out, errOut, status := runCmd(t, "", "run", path)
		want := "sframesim run: " + path + ": denied: socket 2, connect 1 (sandbox: EACCES)\n"
		if status != 13 || out != "" || errOut != want {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want 13 and %q", a.Name, status, out, errOut, want)
		}
	}
}

// writeTinyELF writes a static ET_EXEC program for a at 0x400000 whose one
// PT_LOAD holds the headers and code (hex), the entry point.
func writeTinyELF(t *testing.T, path string, a *arch.Arch, hexCode string) {
	t.Helper()
	code, err := hex.DecodeString(hexCode)
	if err != nil {
		t.Fatal(err)
	}
	const base, ehsize, phsize = 0x400000, 64, 56
	var b bytes.Buffer
	hdr := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(a.Machine), Version: 1,
		Entry: base + ehsize + phsize, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 1}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	binary.Write(&b, binary.LittleEndian, hdr)
	size := uint64(ehsize + phsize + len(code))
	binary.Write(&b, binary.LittleEndian, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Vaddr: base, Paddr: base, Filesz: size, Memsz: size, Align: 0x1000})
	b.Write(code)
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
}
