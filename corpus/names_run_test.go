//go:build cgo

package corpus

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// echoCode (x86-64) copies up to 64 bytes of stdin to stdout and exits
// with argc: mov rbx,[rsp]; read(0, rsp-128, 64); write(1, rsp-128, n);
// exit_group(rbx).
const echoCode = "488b1c24" + "31ff" + "488d742480" + "ba40000000" + "31c0" + "0f05" +
	"4889c2" + "bf01000000" + "488d742480" + "b801000000" + "0f05" +
	"4889df" + "b8e7000000" + "0f05"

// writeEcho writes echoCode as a static x86-64 program whose .sframe
// section describes it (one outermost frame) and returns its path.
func writeEcho(t *testing.T, dir string) string {
	t.Helper()
	code, err := hex.DecodeString(echoCode)
	if err != nil {
		t.Fatal(err)
	}
	const base, ehsize, phsize, shsize = 0x400000, 64, 56, 64
	codeOff := uint64(ehsize + phsize)
	sfOff := (codeOff + uint64(len(code)) + 7) &^ 7
	sec := &sframe.Section{Addr: base + sfOff, Order: binary.LittleEndian, Header: sframe.Header{
		Version: sframe.Version2, Flags: sframe.FlagFDESorted, ABI: sframe.ABIAMD64LE, CFAFixedRAOffset: -8}}
	sec.FDEs = []sframe.FDE{{Start: base + codeOff, Size: uint32(len(code)),
		Info: sframe.FDEInfo(sframe.FREAddr1, sframe.PCInc, false, false),
		FREs: []sframe.FRE{{Info: sframe.FREInfo(sframe.BaseSP, false)}}}}
	sf, err := sec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	shstrtab := []byte("\x00.sframe\x00.shstrtab\x00")
	loadEnd := sfOff + uint64(len(sf))
	shstrOff := loadEnd
	shOff := (shstrOff + uint64(len(shstrtab)) + 7) &^ 7
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(arch.AMD64.Machine), Version: 1, Entry: base + codeOff,
		Phoff: ehsize, Shoff: shOff, Ehsize: ehsize, Phentsize: phsize, Phnum: 1, Shentsize: shsize, Shnum: 3, Shstrndx: 2}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	binary.Write(&b, le, hdr)
	binary.Write(&b, le, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: base, Paddr: base,
		Filesz: loadEnd, Memsz: loadEnd, Align: 0x1000})
	b.Write(code)
	b.Write(make([]byte, sfOff-uint64(b.Len())))
	b.Write(sf)
	b.Write(shstrtab)
	b.Write(make([]byte, shOff-uint64(b.Len())))
	for _, s := range []elf.Section64{
		{},
		{Name: 1, Type: uint32(sframe.SHT_GNU_SFRAME), Flags: uint64(elf.SHF_ALLOC), Addr: base + sfOff, Off: sfOff, Size: uint64(len(sf)), Addralign: 8},
		{Name: 9, Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstrtab)), Addralign: 1},
	} {
		binary.Write(&b, le, s)
	}
	path := filepath.Join(dir, "echo")
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunNamedEntries: one binary listed three times, with different
// arguments and stdin, runs as three jobs, each judged against its own
// entry and reported under its name (results, summary, JUnit).
func TestRunNamedEntries(t *testing.T) {
	dir := t.TempDir()
	writeEcho(t, dir)
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, []byte(`[
  {"name": "echo-hello", "path": "echo", "stdin": "hello\n", "stdout": "hello\n", "exit_status": 1},
  {"name": "echo-args", "path": "echo", "args": ["a", "b"], "stdin": "bye\n", "stdout": "bye\n", "exit_status": 3},
  {"name": "echo-wrong", "path": "echo", "stdin": "one\n", "stdout": "two\n", "exit_status": 1},
  {"path": "echo", "stdout": "", "exit_status": 1}
]`), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	results := Run(in.Jobs, in.Expect, Options{Workers: 2})
	var got []string
	for _, r := range results {
		got = append(got, fmt.Sprintf("%s %s", r.Key, r.Status))
	}
	if want := "echo clean|echo-args clean|echo-hello clean|echo-wrong fail"; strings.Join(got, "|") != want {
		t.Errorf("results %q, want %q", got, want)
	}
	if f := results[3].Findings; len(f) != 1 || f[0].What != "stdout" || !strings.HasPrefix(f[0].Message, "echo-wrong: ") {
		t.Errorf("echo-wrong findings %+v", f)
	}
	s := Summarize(Summary{Input: manifest}, results)
	var text bytes.Buffer
	s.WriteText(&text, results)
	if !strings.Contains(text.String(), "\n  echo-wrong: ") {
		t.Errorf("summary does not name the entry:\n%s", text.String())
	}
	junit, err := JUnit(s, results)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"echo-hello", "echo-args", "echo-wrong"} {
		if !bytes.Contains(junit, []byte(`name="`+name+`"`)) {
			t.Errorf("JUnit lacks a case named %s:\n%s", name, junit)
		}
	}
}
