//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// tinyELF is the smallest ELF64 executable Load takes: the ELF header, the
// program headers and the code in one R+X PT_LOAD, no section headers. A
// non-empty interp adds a PT_INTERP naming it; bss adds that many zero
// bytes of memory after the code.
func tinyELF(a *arch.Arch, typ elf.Type, code []byte, interp string, bss uint64) []byte {
	const ehsize, phsize = 64, 56
	var base uint64
	if typ == elf.ET_EXEC {
		base = 0x400000
	}
	phnum := uint64(1)
	if interp != "" {
		phnum++
	}
	codeOff := ehsize + phnum*phsize
	interpOff := codeOff + uint64(len(code))
	end := interpOff
	if interp != "" {
		end += uint64(len(interp)) + 1
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := elf.Header64{
		Type: uint16(typ), Machine: uint16(a.Machine), Version: 1, Entry: base + codeOff,
		Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: uint16(phnum),
	}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	binary.Write(&b, le, hdr)
	binary.Write(&b, le, elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W | elf.PF_X), Vaddr: base, Paddr: base,
		Filesz: end, Memsz: end + bss, Align: 0x1000,
	})
	if interp != "" {
		binary.Write(&b, le, elf.Prog64{
			Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Off: interpOff, Vaddr: base + interpOff,
			Filesz: uint64(len(interp)) + 1, Memsz: uint64(len(interp)) + 1, Align: 1,
		})
	}
	b.Write(code)
	if interp != "" {
		b.WriteString(interp + "\x00")
	}
	return b.Bytes()
}

// FuzzLoad feeds arbitrary files to the ELF loader of `sframesim run`
// (Load, then Run with small limits): whatever the file, Load returns a
// process or an error naming the file, and Run ends in an Exit; nothing
// panics or hangs. Seeds: the nolibc corpus programs of every SFrame
// version and both architectures, and hand-made tiny executables. The
// sysroot is a directory of two tiny interpreters: no host file is ever
// the interpreter.
func FuzzLoad(f *testing.F) {
	dir := testcorpus.Dir(f)
	seeds, err := filepath.Glob(filepath.Join(dir, "*/*/nolibc-O2"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no nolibc-O2 in %s: %v", dir, err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		for _, name := range []string{"hello", "loop", "mmap", "fault"} {
			code, err := hex.DecodeString(testCode[name][a])
			if err != nil {
				f.Fatal(err)
			}
			f.Add(tinyELF(a, elf.ET_EXEC, code, "", 0))
			f.Add(tinyELF(a, elf.ET_DYN, code, "", 0x2000))
		}
		// With an interpreter: the sysroot's hello program (below).
		f.Add(tinyELF(a, elf.ET_DYN, []byte{0, 0, 0, 0}, "/lib/ld-"+a.Name+".so", 0))
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))

	// The sysroot holds only an interpreter per architecture: the hello
	// program as a PIE.
	work := f.TempDir() // per fuzzing process: inputs run one at a time
	sysroot := filepath.Join(work, "sysroot")
	if err := os.MkdirAll(filepath.Join(sysroot, "lib"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		code, err := hex.DecodeString(testCode["hello"][a])
		if err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sysroot, "lib", "ld-"+a.Name+".so"), tinyELF(a, elf.ET_DYN, code, "", 0), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	path := filepath.Join(work, "prog")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() { done <- loadAndRun(path, sysroot) }()
		select {
		case problem := <-done:
			if problem != "" {
				t.Fatal(problem)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Load and Run did not return within 30 s (the timeout is 1 s)")
		}
	})
}

// loadAndRun loads and runs the program at path with small limits and
// returns what is wrong with the outcome ("" if nothing).
func loadAndRun(path, sysroot string) string {
	p, err := Load(path, Config{Sysroot: sysroot, MaxInsns: 20_000, MaxMem: 64 << 20, Timeout: time.Second})
	if err != nil {
		if !strings.HasPrefix(err.Error(), path+": ") {
			return "Load error without the file's name: " + err.Error()
		}
		return ""
	}
	defer p.Close()
	exit, err := p.Run()
	switch {
	case err != nil:
		return "" // the emulator's own failure, reported as such
	case exit == nil:
		return "Run returned neither an Exit nor an error"
	}
	return ""
}

// TestLoadTruncated: Load says what is wrong with a truncated program and
// where, not just "EOF".
func TestLoadTruncated(t *testing.T) {
	src := filepath.Join(testcorpus.Dir(t), "v3/x86-64/nolibc-O2")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(data[40:])
	dir := t.TempDir()
	for _, tt := range []struct {
		size int
		want string
	}{
		{40, "truncated ELF: the 64-byte ELF header runs past the end of the file (size 0x28)"},
		{100, "truncated ELF: program header table at offset 0x40 ("},
		{int(shoff) + 10, "truncated ELF: section header table at offset 0x"},
		{3, "not an ELF file (3 bytes)"},
	} {
		path := filepath.Join(dir, "prog")
		if err := os.WriteFile(path, data[:tt.size], 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := Load(path, Config{})
		if err == nil {
			p.Close()
			t.Errorf("%d bytes: loaded", tt.size)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, path+": "+tt.want) {
			t.Errorf("%d bytes: %v\nwant %s: %s...", tt.size, err, path, tt.want)
		}
	}
}
