package sframe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
)

// handmadeAllowedMismatch lists hand-made cases whose real-objdump golden
// may legitimately differ from Dump, with the reason (see
// testdata/handmade/README.md). Empty: every golden must match.
var handmadeAllowedMismatch = map[string]string{}

// TestHandmadeGolden compares Dump of every testdata/handmade/NAME.sframe
// with NAME.objdump, the output of a real `objdump --sframe` on the section
// wrapped into an ELF object (testdata/handmade/goldens.sh).
func TestHandmadeGolden(t *testing.T) {
	addrs := map[string]uint64{}
	for _, hm := range handmade() {
		addrs[hm.name] = hm.sec.Addr
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "handmade", "*.sframe"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".sframe")
		objdump, err := os.ReadFile(strings.TrimSuffix(path, ".sframe") + ".objdump")
		if os.IsNotExist(err) {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			addr, ok := addrs[name]
			if !ok {
				t.Fatalf("%s is not in the handmade() table", name)
			}
			want, err := stripHandmadeBanner(string(objdump))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Decode(data, addr)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var buf bytes.Buffer
			if err := s.Dump(&buf, ".sframe", DumpAuto); err != nil {
				t.Fatalf("Dump: %v", err)
			}
			checkHandmadeGolden(t, name, buf.String(), want)
		})
	}
	if n == 0 {
		t.Fatal("no testdata/handmade/*.objdump goldens")
	}
	for name := range handmadeAllowedMismatch {
		if _, err := os.Stat(filepath.Join("testdata", "handmade", name+".objdump")); err != nil {
			t.Errorf("handmadeAllowedMismatch names %s, which has no golden: %v", name, err)
		}
	}
}

// TestHandmadeRealS390x checks the s390x binary built by gas/ld 2.47.50
// with --gsframe against objdump's whole output, banner included.
func TestHandmadeRealS390x(t *testing.T) {
	path := filepath.Join("testdata", "handmade", "s390x-real.elf")
	objdump, err := os.ReadFile(path + ".objdump")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer f.Close()
	if got := FormatName(f.ELF); got != "elf64-s390" {
		t.Errorf("FormatName = %q, want elf64-s390", got)
	}
	if f.Section.Header.ABI != ABIS390XBE {
		t.Errorf("ABI = %v, want %v", f.Section.Header.ABI, ABIS390XBE)
	}
	if errs := f.Section.Validate(f.ValidateOptions()); errs.HasErrors() {
		t.Errorf("Validate: %v", errs)
	}
	var buf bytes.Buffer
	// goldens.sh runs objdump in the file's directory, so the banner
	// names the file without a directory.
	if err := DumpFile(&buf, "s390x-real.elf", f, DumpAuto); err != nil {
		t.Fatalf("DumpFile: %v", err)
	}
	checkHandmadeGolden(t, "s390x-real.elf", buf.String(), string(objdump))
}

// stripHandmadeBanner removes the "\nFILE:     file format FMT\n\n" objdump
// prints before the section.
func stripHandmadeBanner(s string) (string, error) {
	const contents = "Contents of the SFrame section .sframe:"
	i := strings.Index(s, contents)
	if i < 0 {
		return "", fmt.Errorf("golden has no %q line", contents)
	}
	banner := s[:i]
	lines := strings.Split(banner, "\n")
	if len(lines) != 4 || lines[0] != "" || !strings.Contains(lines[1], ":     file format ") ||
		lines[2] != "" || lines[3] != "" {
		return "", fmt.Errorf("golden starts with %q, not an objdump banner", banner)
	}
	return s[i:], nil
}

// checkHandmadeGolden reports how got differs from want (objdump's golden),
// unless the case is in handmadeAllowedMismatch (then it only logs, and
// complains if the case has started to match). -update does not touch
// these goldens: objdump makes them (goldens.sh).
func checkHandmadeGolden(t *testing.T, name, got, want string) {
	t.Helper()
	reason, allowed := handmadeAllowedMismatch[name]
	d := golden.Diff([]byte(want), []byte(got))
	if d == "" {
		if allowed {
			t.Errorf("%s matches its golden now; drop it from handmadeAllowedMismatch (%s)", name, reason)
		}
		return
	}
	msg := fmt.Sprintf("%s: dump differs from objdump:\n%s", name, d)
	if allowed {
		t.Logf("%s(allowed: %s)", msg, reason)
		return
	}
	t.Error(msg)
}
