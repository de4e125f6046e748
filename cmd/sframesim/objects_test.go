package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suite is the directory of one toolchain's outputs in sframe/testdata/suite.
func suite(t *testing.T, sub string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "sframe", "testdata", "suite", sub))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDumpValidateNoData: ld --discard-sframe's empty .sframe is dumped as
// objdump 2.47.50 dumps it (banner, decode failure on stderr, exit 0) and
// is a warning, not an error, for validate.
func TestDumpValidateNoData(t *testing.T) {
	dir := suite(t, "v3/x86-64")
	want, err := os.ReadFile(filepath.Join(dir, "discard-static.objdump"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runCmd(t, dir, "dump", "discard-static")
	if status != exitOK || out != string(want) || errOut != "sframesim dump: discard-static: SFrame decode failure: Corrupt SFrame.\n" {
		t.Errorf("dump: status %d\nstdout %q (objdump: %q)\nstderr %q", status, out, want, errOut)
	}
	out, errOut, status = runCmd(t, "", "validate", "discard-static", "discard-r.o")
	if status != exitOK || out != "discard-static: no SFrame data: 0 errors, 1 warnings\ndiscard-r.o: no SFrame data: 0 errors, 1 warnings\n" ||
		!strings.Contains(errOut, "discard-static: sframe: warning: .sframe: no SFrame data: the section is empty (ld --discard-sframe)") {
		t.Errorf("validate: status %d\nstdout %q\nstderr %q", status, out, errOut)
	}
}

// TestValidateObjects: valid relocatable objects of every toolchain
// (functions in several sections, cold splits, COMDAT groups) validate
// without errors.
func TestValidateObjects(t *testing.T) {
	root := suite(t, "")
	for _, v := range []string{"v1", "v2", "v3"} {
		out, errOut, status := runCmd(t, filepath.Join(root, v, "x86-64"), "validate", "--quiet",
			"multi-O2.o", "multi-O2-fs.o", "cold-O2-fs.o", "comdat1.o", "cfi.o", "x32-cfi.o")
		if status != exitOK || errOut != "" || strings.Count(out, ": 0 errors") != 6 {
			t.Errorf("%s: status %d\nstdout %s\nstderr %s", v, status, out, errOut)
		}
	}
}

// TestMutateObject: in a relocatable object --pc takes SECTION+OFFSET,
// the row is looked up in that section only (push_pop, own_section and
// grouped all start at offset 0 of theirs), the output names the section,
// and only the row's byte changes: the start fields stay as stored.
func TestMutateObject(t *testing.T) {
	dir := suite(t, "v3/x86-64")
	in := filepath.Join(dir, "cfi.o")
	outFile := filepath.Join(t.TempDir(), "m.o")
	out, errOut, status := runCmd(t, "", "mutate", "--pc", ".text.own+1", "-o", outFile, in)
	if status != exitOK || !strings.Contains(out, "(function at .text.own+0x0)") || !strings.Contains(out, "after:      0000000000000001  sp+24") {
		t.Fatalf("status %d\nstdout %s\nstderr %s", status, out, errOut)
	}
	a, _ := os.ReadFile(in)
	b, err := os.ReadFile(outFile)
	if err != nil || len(a) != len(b) {
		t.Fatalf("%v, %d vs %d bytes", err, len(a), len(b))
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d bytes changed, want 1", changed)
	}
	_, errOut, status = runCmd(t, "", "mutate", "--pc", "0x1", "-o", outFile, in)
	if status != exitError || !strings.Contains(errOut, "give --pc SECTION+OFFSET") {
		t.Errorf("a plain address in an object: status %d, %q", status, errOut)
	}
	_, errOut, status = runCmd(t, "", "mutate", "--pc", ".text.own+3", "-o", outFile, in)
	if status != exitError || !strings.Contains(errOut, ".text.own+0x3: sframe: no FDE covers the PC") {
		t.Errorf("past the function: status %d, %q", status, errOut)
	}
}
