package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

func runCmd(t *testing.T, dir string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var o, e bytes.Buffer
	status = run(args, &o, &e)
	return o.String(), e.String(), status
}

// oneOfEachVersion picks a corpus binary with SFrame V1, V2 and V3.
func oneOfEachVersion(t *testing.T) []testcorpus.Entry {
	var picked []testcorpus.Entry
	seen := map[int]bool{}
	for _, e := range testcorpus.Entries(t) {
		if !seen[e.SFrameVersion] && e.ObjdumpStatus == 0 {
			seen[e.SFrameVersion] = true
			picked = append(picked, e)
		}
	}
	if len(picked) != 3 {
		t.Fatalf("corpus lacks a version: %v", seen)
	}
	return picked
}

func TestDumpMatchesGolden(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, e := range oneOfEachVersion(t) {
		t.Run(e.Path, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, e.Golden()))
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, status := runCmd(t, dir, "dump", e.Path)
			if status != exitOK || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			if d := golden.Diff(want, []byte(out)); d != "" {
				t.Errorf("stdout differs from the golden %s:\n%s", e.Golden(), d)
			}
		})
	}
}

// TestDumpRawSection: a section written by objcopy --dump-section, with
// --base, dumps as objdump does after its banner.
func TestDumpRawSection(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, e := range oneOfEachVersion(t) {
		t.Run(e.Path, func(t *testing.T) {
			f, err := sframe.Open(filepath.Join(dir, e.Path))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			raw := filepath.Join(t.TempDir(), "out.sframe")
			if err := os.WriteFile(raw, f.Raw.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, e.Golden()))
			if err != nil {
				t.Fatal(err)
			}
			_, section, _ := strings.Cut(string(want), "\n\n")
			out, errOut, status := runCmd(t, "", "dump", "--base", fmt.Sprintf("%#x", f.Raw.Addr), raw)
			if status != exitOK {
				t.Errorf("status %d stderr %q", status, errOut)
			}
			if d := golden.Diff([]byte(section), []byte(out)); d != "" {
				t.Errorf("stdout differs from the golden's section:\n%s", d)
			}
		})
	}
}

// patched copies a corpus binary into a temp dir and lets f modify it.
func patched(t *testing.T, e testcorpus.Entry, f func(data []byte, raw *sframe.RawSection, ef *elf.File)) string {
	t.Helper()
	src := filepath.Join(testcorpus.Dir(t), e.Path)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sframe.FindELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	f(data, raw, ef)
	out := filepath.Join(t.TempDir(), filepath.Base(e.Path))
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExitStatuses(t *testing.T) {
	e := oneOfEachVersion(t)[2]
	notELF := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notELF, []byte("just text\n"), 0o644)
	// No .sframe: rename the section and turn PT_GNU_SFRAME into PT_NULL.
	noSFrame := patched(t, e, func(data []byte, raw *sframe.RawSection, ef *elf.File) {
		i := bytes.Index(data, []byte("\x00.sframe\x00"))
		if i < 0 {
			t.Fatal("no .sframe in the string table")
		}
		copy(data[i+1:], ".sfrXme")
		phoff := binary.LittleEndian.Uint64(data[0x20:])
		phentsize := uint64(binary.LittleEndian.Uint16(data[0x36:]))
		for k := range uint64(len(ef.Progs)) {
			p := data[phoff+k*phentsize:]
			if elf.ProgType(binary.LittleEndian.Uint32(p)) == sframe.PT_GNU_SFRAME {
				binary.LittleEndian.PutUint32(p, uint32(elf.PT_NULL))
			}
		}
	})
	badVersion := patched(t, e, func(data []byte, raw *sframe.RawSection, _ *elf.File) {
		data[raw.Offset+2] = 9
	})
	// FRE sub-section longer than the section: a partial dump.
	truncated := patched(t, e, func(data []byte, raw *sframe.RawSection, _ *elf.File) {
		binary.LittleEndian.PutUint32(data[raw.Offset+16:], 1<<20)
	})
	tests := []struct {
		name   string
		args   []string
		status int
		stdout string // substring
		stderr string // substring
	}{
		{"no arguments", nil, exitUsage, "", "usage"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", "unknown command"},
		{"help", []string{"help"}, exitOK, "exit status", ""},
		{"missing file", []string{"dump", "/nonexistent/x"}, exitError, "", "no such file"},
		{"not ELF", []string{"dump", notELF}, exitError, "", "not an ELF file"},
		{"no sframe", []string{"dump", noSFrame}, exitNoSFrame, "", "no .sframe section"},
		{"bad version", []string{"dump", badVersion}, exitProblems, "", "offset 0x2: preamble.version: unknown SFrame version"},
		{"truncated", []string{"dump", truncated}, exitProblems, "Contents of the SFrame section .sframe:", "header.fre_len"},
		// Problems on stderr, the summary on stdout.
		{"validate truncated", []string{"validate", truncated}, exitProblems, " errors, ", "header.fre_len"},
		{"validate good", []string{"validate", filepath.Join(testcorpus.Dir(t), e.Path)}, exitOK, "0 errors", ""},
		{"bad style", []string{"dump", "--style", "2.39", notELF}, exitUsage, "", "unknown dump style"},
		{"bad base", []string{"dump", "--base", "zz", notELF}, exitUsage, "", "not an address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := runCmd(t, "", tt.args...)
			if status != tt.status || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("status %d (want %d)\nstdout %q (want ⊇ %q)\nstderr %q (want ⊇ %q)", status, tt.status, trim(out), tt.stdout, trim(errOut), tt.stderr)
			}
		})
	}
}

// TestProblemsCapped: a section that breaks a rule at nearly every FRE
// (three bytes of header.freoff changed) gets its first 100 problems
// printed, then how many more there are; validate's summary still counts
// them all.
func TestProblemsCapped(t *testing.T) {
	e := testcorpus.Lookup(t, "v3/x86-64/except-O2-static")
	flipped := patched(t, e, func(data []byte, raw *sframe.RawSection, _ *elf.File) {
		copy(data[raw.Offset+22:], []byte{0, 0, 0x80})
	})
	name := filepath.Base(flipped)
	// A raw V2 section of 150 FDEs whose FRE type (3) does not exist: 150
	// decode errors.
	var raw bytes.Buffer
	binary.Write(&raw, binary.LittleEndian, struct {
		Magic                    uint16
		Version, Flags, ABI      uint8
		CFAFixedFP, CFAFixedRA   int8
		AuxLen                   uint8
		NumFDEs, NumFREs, FRELen uint32
		FDEOff, FREOff           uint32
	}{0xdee2, 2, 1, 3, 0, -8, 0, 150, 150, 0, 0, 150 * 20})
	for i := range uint32(150) {
		binary.Write(&raw, binary.LittleEndian, struct {
			Start                 int32
			Size, FREOff, NumFREs uint32
			Info, RepSize         uint8
			Padding               uint16
		}{int32(0x1000 + 16*i), 16, 0, 1, 3, 0, 0})
	}
	rawPath := filepath.Join(t.TempDir(), "raw.sframe")
	if err := os.WriteFile(rawPath, raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args       []string
		stdout     string
		problems   string // the first problem line
		suppressed string
	}{
		{[]string{"validate", flipped}, "FREs: 141 errors, 2 warnings\n",
			flipped + ": sframe: offset 0xc: header.num_fres: the FDEs have 32654 FREs in all (0x1f)\n", flipped + ": 43 more problems suppressed"},
		{[]string{"validate", "--quiet", flipped}, "FREs: 141 errors, 2 warnings\n",
			flipped + ": sframe: offset 0xc: header.num_fres", flipped + ": 41 more problems suppressed"},
		{[]string{"dump", "--base", "0x1000", rawPath}, "Contents of the SFrame section .sframe:",
			"sframesim dump: " + rawPath + ": sframe: offset 0x2c: FDE[0].func_info: invalid FRE type 3, FREs cannot be read (0x3)\n", "sframesim dump: " + rawPath + ": 50 more problems suppressed"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:len(tt.args)-1], " "), func(t *testing.T) {
			out, errOut, status := runCmd(t, "", tt.args...)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			last := lines[len(lines)-1]
			if status != exitProblems || !strings.Contains(out, tt.stdout) || strings.Contains(out, name+": sframe:") ||
				!strings.HasPrefix(errOut, tt.problems) || len(lines) != maxProblems+1 ||
				last != tt.suppressed {
				t.Errorf("status %d (want %d)\nstdout %q (want ⊇ %q, no problem)\nstderr (%d lines) %q\nlast %q (want %q)",
					status, exitProblems, trim(out), tt.stdout, len(lines), trim(errOut), last, tt.suppressed)
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

// TestSample: the embedded sample is the corpus binary it claims to be, and
// both commands work on it without a FILE.
func TestSample(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), sampleCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, sampleELF) {
		t.Fatalf("sample/%s differs from testdata/corpus/%s: copy it again", filepath.Base(sampleName), sampleCorpus)
	}
	objdump, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), sampleCorpus+".objdump"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runCmd(t, "", "dump")
	if status != exitOK || !strings.Contains(errOut, "embedded sample") {
		t.Errorf("dump: status %d, stderr %q", status, errOut)
	}
	renamed := strings.Replace(string(objdump), sampleCorpus+":", sampleName+":", 1)
	if d := golden.Diff([]byte(renamed), []byte(out)); d != "" {
		t.Errorf("dump of the sample differs from its golden:\n%s", d)
	}
	out, _, status = runCmd(t, "", "validate")
	if status != exitOK || !strings.Contains(out, sampleName+": SFRAME_VERSION_3 SFRAME_ABI_AMD64_ENDIAN_LITTLE") {
		t.Errorf("validate: status %d, stdout %q", status, out)
	}
}
