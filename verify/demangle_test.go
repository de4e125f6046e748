//go:build cgo

package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
)

// TestDemangledReport verifies a C++ binary with a known problem in a
// .cold partition: the text report prints the demangled name, the JSON
// keeps the mangled one with the demangled one beside it.
func TestDemangledReport(t *testing.T) {
	const rel = "v1/x86-64/except-O2-dynamic"
	e := testcorpus.Lookup(t, rel)
	rep, err := Run(filepath.Join(testcorpus.Dir(t), rel), Options{Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	const mangled, demangled = "_ZL6middleil.constprop.0.cold", "middle(int, long) [clone .constprop.0] [clone .cold]"
	var pr *Problem
	for i := range rep.Problems {
		if strings.HasPrefix(rep.Problems[i].FrameSymbol, mangled) {
			pr = &rep.Problems[i]
		}
	}
	if pr == nil {
		t.Fatalf("no problem in %s: %+v", mangled, rep.Problems)
	}
	if want := demangled + strings.TrimPrefix(pr.FrameSymbol, mangled); pr.FrameSymbolDemangled != want {
		t.Errorf("frame symbol %q demangled %q, want %q", pr.FrameSymbol, pr.FrameSymbolDemangled, want)
	}
	if pr.Symbol == pr.SymbolDemangled || strings.HasPrefix(pr.Symbol, "_Z") != (pr.SymbolDemangled != "") {
		t.Errorf("symbol %q demangled %q", pr.Symbol, pr.SymbolDemangled)
	}

	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"frame_symbol":"` + pr.FrameSymbol + `"`, `"frame_symbol_demangled":"` + pr.FrameSymbolDemangled + `"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	var text bytes.Buffer
	rep.WriteText(&text, 100)
	if !strings.Contains(text.String(), fmt.Sprintf("frame %d at %#x %s", pr.Depth, pr.FramePC, pr.FrameSymbolDemangled)) {
		t.Errorf("text report does not name %q:\n%s", pr.FrameSymbolDemangled, text.String())
	}
	if !strings.Contains(pr.Cause, "first byte of "+demangled) {
		t.Errorf("cause %q does not name %q", pr.Cause, demangled)
	}
	if strings.Contains(text.String(), "_ZL6middle") {
		t.Errorf("text report has a mangled name:\n%s", text.String())
	}
}
