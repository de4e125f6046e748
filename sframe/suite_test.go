package sframe

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// ldR240 is why the ld -r outputs of binutils 2.40 and 2.44 are invalid.
const ldR240 = "ld -r of binutils 2.40/2.44 merges the inputs' .sframe sections but leaves their start " +
	"relocations at the offsets plain concatenation would give (e.g. v2/x86-64: cold-O2.o's first at " +
	"0xd4 = 0xb8 (multi-O2.o's 0xb4-byte .sframe, aligned) + 0x1c), in the FRE sub-section; linking " +
	"the object with the same binutils fails: \"BFD (GNU Binutils for Debian) 2.44 assertion fail " +
	"../../bfd/elf-sframe.c:133\" (2.40: line 134)"

// pltSec240 is why ld 2.40's IBT PLT SFrame is invalid.
const pltSec240 = "ld 2.40 describes .plt.sec (0x400360, 0x20 bytes) with the lazy .plt's two FDEs: " +
	"PLT0's rows (CFA sp+16, sp+24) at 0x400360 for 16 bytes and a 32-byte PCMASK FDE at 0x400370 " +
	"that runs into _start at 0x400380 (FDE 4); ld 2.44 gives one 32-byte PCMASK FDE at 0x400360"

// suiteValidateExceptions lists the outputs of testdata/suite on which
// Validate rightly reports errors, with the evidence: generator bugs.
var suiteValidateExceptions = map[string]string{
	"v1/x86-64/relocatable.o":     ldR240,
	"v1/x86-64/relocatable-fs.o":  ldR240,
	"v1/x86-64/x32-relocatable.o": ldR240 + " (converted to ELFCLASS32 by objcopy, relocations and all)",
	"v1/aarch64/relocatable.o":    ldR240,
	"v1/aarch64/relocatable-fs.o": ldR240,
	"v2/x86-64/relocatable.o":     ldR240,
	"v2/x86-64/relocatable-fs.o":  ldR240,
	"v2/x86-64/x32-relocatable.o": ldR240 + " (converted to ELFCLASS32 by objcopy, relocations and all)",
	"v2/aarch64/relocatable.o":    ldR240,
	"v2/aarch64/relocatable-fs.o": ldR240,
	"v1/x86-64/plt-ibt":           pltSec240,
	"v1/x86-64/plt-ibt-now":       pltSec240,
	"clang23/x86-64/lld-concat":   lldConcat,
}

// lldConcat is why lld 23's link of several clang objects is invalid.
const lldConcat = "lld 23 concatenates the inputs' .sframe sections (start.o's 0x33 bytes, padding to 0x38, " +
	"then prog.o's, lib.o's and multi-O2.o's sections, each with its own header): the output's header " +
	"describes start.o's one FDE and the bytes after it are the other sections' (validate: non-zero " +
	"padding at 0x38, 0xe2 = the next preamble's magic)"

// objdumpAborts240 is why newest objdump aborts on those ld -r outputs.
const objdumpAborts240 = "objdump 2.47.50 applies the misplaced relocations (see ldR240), which overwrite FRE " +
	"bytes, and libsframe then aborts: \"sframe.c:1877: sframe_decoder_get_fre: Assertion " +
	"`ifre.fre_start_addr <= fdep->func_size' failed\" (exit status 134); the header and function " +
	"lines it printed before must start the dump (its rows read from the overwritten FREs are garbage)"

// suiteDumpExceptions lists the outputs where objdump itself fails, with
// why: the dump must then begin with what objdump printed before it
// failed.
var suiteDumpExceptions = map[string]string{
	"v2/x86-64/relocatable.o.objdump-latest":     objdumpAborts240,
	"v2/x86-64/relocatable-fs.o.objdump-latest":  objdumpAborts240,
	"v2/x86-64/x32-relocatable.o.objdump-latest": objdumpAborts240,
	"v2/aarch64/relocatable.o.objdump-latest":    objdumpAborts240,
	"v2/aarch64/relocatable-fs.o.objdump-latest": objdumpAborts240,
}

// suiteEntry is one output of testdata/suite with objdump's exit status.
type suiteEntry struct {
	dir, name string
	status    int
}

// readSuiteStatus reads DIR/FILE ("NAME STATUS" lines, build.sh writes
// them); a missing file gives no entries.
func readSuiteStatus(t *testing.T, dir, file string) []suiteEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []suiteEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, st, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(st)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %q", file, sc.Text())
		}
		out = append(out, suiteEntry{dir, name, n})
	}
	return out
}

func suiteDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "suite", "v[123]", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 6 {
		t.Fatalf("want 6 directories testdata/suite/v{1,2,3}/{x86-64,aarch64}, have %d", len(dirs))
	}
	return append(dirs, filepath.Join("testdata", "suite", "clang23", "x86-64"))
}

// TestSuiteDump dumps every object and link output of testdata/suite (the
// shapes of binutils' own SFrame tests, built by the three toolchains) and
// compares with its toolchain's `objdump --sframe` (DumpAuto), and the
// V1 and V2 outputs also with newest objdump's (DumpLatest): stdout byte
// for byte, and where objdump reported a decode failure on stderr, the
// same failure.
func TestSuiteDump(t *testing.T) {
	n := 0
	for _, dir := range suiteDirs(t) {
		for _, c := range []struct {
			status, suffix string
			style          DumpStyle
		}{{"objdump.status", ".objdump", DumpAuto}, {"objdump-latest.status", ".objdump-latest", DumpLatest}} {
			for _, e := range readSuiteStatus(t, dir, c.status) {
				n++
				rel, _ := filepath.Rel(filepath.Join("testdata", "suite"), filepath.Join(e.dir, e.name))
				t.Run(rel+c.suffix, func(t *testing.T) {
					_, aborts := suiteDumpExceptions[rel+c.suffix]
					if aborts != (e.status != 0) {
						t.Fatalf("objdump exited %d, listed as an exception: %v", e.status, aborts)
					}
					checkSuiteDump(t, e, c.suffix, c.style)
				})
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d goldens in testdata/suite", n)
	}
}

func checkSuiteDump(t *testing.T, e suiteEntry, suffix string, style DumpStyle) {
	path := filepath.Join(e.dir, e.name)
	want, err := os.ReadFile(path + suffix)
	if err != nil {
		t.Fatal(err)
	}
	wantErr, err := os.ReadFile(path + suffix + ".stderr")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	f, err := Open(path)
	if f == nil {
		t.Fatalf("Open: %v", err)
	}
	defer f.Close()
	if err != nil && !errors.Is(err, ErrNoData) {
		t.Fatalf("Open: %v", err)
	}
	var got bytes.Buffer
	// The banner names the file as objdump was given it.
	err = DumpFile(&got, e.name, f, style)
	if e.status != 0 {
		// objdump aborted on bytes the misplaced relocations overwrote:
		// its header and the "func idx" lines it printed must start the
		// dump's (its rows of the overwritten FREs are garbage).
		heads := func(b []byte) []string {
			var out []string
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "    func idx") || !strings.HasPrefix(l, "    ") || strings.Contains(l, ":") {
					out = append(out, l)
				}
			}
			return out[:max(len(out)-1, 0)] // objdump's last line is cut short
		}
		// Where objdump had flushed nothing, there is nothing to compare.
		w, g := heads(want), heads(got.Bytes())
		if len(g) < len(w) || strings.Join(w, "\n") != strings.Join(g[:len(w)], "\n") {
			t.Errorf("objdump's header and functions before it aborted do not start the dump's:\n%s",
				golden.Diff([]byte(strings.Join(w, "\n")), []byte(strings.Join(g, "\n"))))
		}
		return
	}
	var fail *DumpFailure
	switch {
	case errors.As(err, &fail):
		if !strings.HasSuffix(strings.TrimSpace(string(wantErr)), fail.Error()) {
			t.Errorf("DumpFile reports %q, objdump's stderr is %q", fail.Error(), wantErr)
		}
	case err != nil:
		t.Fatalf("DumpFile: %v", err)
	case len(wantErr) > 0:
		t.Errorf("DumpFile reports no failure, objdump's stderr is %q", wantErr)
	}
	if d := golden.Diff(want, got.Bytes()); d != "" {
		t.Errorf("dump differs from objdump:\n%s", d)
	}
}

// TestSuiteValidate validates every output of testdata/suite: all are
// what the toolchains make of valid input, so none may have an error.
func TestSuiteValidate(t *testing.T) {
	for _, dir := range suiteDirs(t) {
		for _, e := range readSuiteStatus(t, dir, "objdump.status") {
			rel, _ := filepath.Rel(filepath.Join("testdata", "suite"), filepath.Join(e.dir, e.name))
			t.Run(rel, func(t *testing.T) {
				f, err := Open(filepath.Join(e.dir, e.name))
				if f == nil {
					t.Fatalf("Open: %v", err)
				}
				defer f.Close()
				if errors.Is(err, ErrNoData) {
					return // ld --discard-sframe: nothing to validate
				}
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				problems := f.Section.Validate(f.ValidateOptions())
				if why, ok := suiteValidateExceptions[rel]; ok {
					if !problems.HasErrors() {
						t.Errorf("listed as an exception (%s), but valid", why)
					}
					return
				}
				for _, p := range problems {
					if !p.Warn {
						t.Errorf("%v", p)
					}
				}
			})
		}
	}
}

// TestSuiteLookupIn looks up every function symbol of every object of
// testdata/suite by section and offset: each FDE's function must be found
// at every offset it covers, in its own section only, whatever other
// sections' FDEs start at the same offset (cfi.o: push_pop, own_section
// and grouped all start at offset 0 of their sections).
func TestSuiteLookupIn(t *testing.T) {
	n := 0
	for _, dir := range suiteDirs(t) {
		for _, e := range readSuiteStatus(t, dir, "objdump.status") {
			rel, _ := filepath.Rel(filepath.Join("testdata", "suite"), filepath.Join(e.dir, e.name))
			if _, broken := suiteValidateExceptions[rel]; broken || !strings.HasSuffix(e.name, ".o") {
				continue
			}
			f, err := Open(filepath.Join(e.dir, e.name))
			if errors.Is(err, ErrNoData) {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			defer f.Close()
			s := f.Section
			if s.Locations == nil {
				t.Fatalf("%s: no locations", rel)
			}
			syms, err := f.ELF.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			funcs := map[[2]uint64]bool{}
			for _, sym := range syms {
				if elf.ST_TYPE(sym.Info) == elf.STT_FUNC {
					funcs[[2]uint64{uint64(sym.Section), sym.Value}] = true
				}
			}
			for i, l := range s.Locations {
				if !l.Known || l.Discarded {
					t.Errorf("%s: FDE %d: location %v", rel, i, l)
					continue
				}
				if !funcs[[2]uint64{uint64(l.Section), l.Offset}] {
					t.Errorf("%s: FDE %d at %v: no function symbol there", rel, i, l)
				}
				for off := l.Offset; off < l.Offset+uint64(s.FDEs[i].Size); off++ {
					n++
					if got, err := s.FindFDEIn(l.Section, off); got != i {
						t.Fatalf("%s: FindFDEIn(%s+%#x) = %d, %v; want FDE %d", rel, l.Name, off, got, err, i)
					}
					row, err := s.LookupIn(l.Section, off)
					if err != nil || row.FDE != i {
						t.Fatalf("%s: LookupIn(%s+%#x) = FDE %d, %v; want FDE %d", rel, l.Name, off, row.FDE, err, i)
					}
				}
				if _, err := s.FindFDEIn(l.Section+1000, l.Offset); !errors.Is(err, ErrNoFDE) {
					t.Errorf("%s: a section without FDEs: %v", rel, err)
				}
			}
		}
	}
	if n < 10000 {
		t.Errorf("only %d offsets looked up", n)
	}
}
