package check

import (
	"debug/elf"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// explained says why a problem check reports on the corpus is a genuine
// generator issue, or "" when it is not one of the known ones: every
// problem on the corpus must be (zero false alarms).
func explained(e testcorpus.Entry, p *Problem) string {
	switch {
	case p.Kind == "cfa" && p.Symbol == "__cxa_finalize@plt" && e.SFrameVersion >= 2 && e.Arch == "x86-64":
		return "ld 2.44/2.47.50: the .plt.got PCMASK row says sp+16; the stub is entered by a call and pushes nothing (CFI: sp+8)"
	case p.Kind == "cfa" && strings.HasPrefix(p.Symbol, "asm_regcfa_call") && e.SFrameVersion == 1:
		return "gas 2.40 ignores .cfi_def_cfa_register to rbx/x19 and keeps sp+16"
	case p.Kind == "unterminated" && p.Symbol == "_start" && e.SFrameVersion <= 2:
		return "gas 2.40/2.44 drop .cfi_undefined of the RA: _start's row cannot mark the outermost frame"
	case p.Kind == "call-at-end" && strings.Contains(p.Insn, "call") || p.Kind == "call-at-end" && strings.HasPrefix(p.Insn, "bl"):
		return "a noreturn call ends its function (GCC, clang: _Unwind_Resume, __cxa_throw, longjmp, std::terminate): its return address is outside it"
	case p.Kind == "fp" && strings.HasPrefix(p.Symbol, "drap+") && e.SFrameVersion == 3 && e.Arch == "x86-64" &&
		strings.HasSuffix(p.Detail, "SFrame and the CFI are both wrong"):
		return "GCC 16's DRAP epilogue CFI keeps rbp's DW_CFA_expression after rbp is restored, and gas copies it: the code shows the FP restored"
	}
	return ""
}

// expectFile is testdata/expect.json: what verify finds in the corpus.
type expectFile struct {
	Binaries map[string]struct {
		Problems []struct {
			Kind     string `json:"kind"`
			Function string `json:"function"`
			Row      string `json:"row"`
		} `json:"problems"`
	} `json:"binaries"`
}

// TestCorpus checks every corpus binary against its CFI: every problem is
// a known, explained generator issue, and every problem verify finds
// (testdata/expect.json) is found too, unless CFI carries it as well.
func TestCorpus(t *testing.T) {
	dir := testcorpus.Dir(t)
	data, err := os.ReadFile("../testdata/expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp expectFile
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	var pcs, proven, byCode, unknown, problemPCs, cfiWrongPCs uint64
	reasons := map[string]uint64{}
	for _, e := range testcorpus.Entries(t) {
		rep, err := File(filepath.Join(dir, e.Path), Options{})
		if err != nil {
			t.Errorf("%s: %v", e.Path, err)
			continue
		}
		pcs += rep.PCs
		proven += rep.Proven
		byCode += rep.ProvenByCode
		unknown += rep.UnknownPCs
		problemPCs += rep.ProblemPCs
		cfiWrongPCs += rep.CFIWrongPCs
		for reason, n := range rep.Unknown {
			reasons[reason] += n
		}
		for i := range rep.Problems {
			p := &rep.Problems[i]
			if explained(e, p) == "" {
				t.Errorf("%s: unexplained problem %s at %#x %s: %s / %s / %s / %s", e.Path, p.Kind, p.PC, p.Symbol, p.SFrame, p.CFI, p.Code, p.Detail)
			}
		}
		// The corpus has no CFI the code shows wrong where SFrame is
		// right: a new one needs its explanation here.
		for i := range rep.CFIWrong {
			p := &rep.CFIWrong[i]
			t.Errorf("%s: CFI finding %s at %#x %s: %s / %s / %s / %s", e.Path, p.Kind, p.PC, p.Symbol, p.SFrame, p.CFI, p.Code, p.Detail)
		}
		for _, w := range exp.Binaries[e.Path].Problems {
			if !foundByCheck(rep, w.Kind, w.Function) && !foundInFDE(t, e.Path, rep, w.Kind, w.Function) {
				t.Errorf("%s: verify's %s problem in %s (row %s) not found", e.Path, w.Kind, w.Function, w.Row)
			}
		}
	}
	pct := func(a uint64) float64 { return 100 * float64(a) / float64(max(pcs, 1)) }
	t.Logf("%d PCs checked: %d proven (%.3f%%; %d, %.2f%%, by the code alone for every value), %d with problems, %d unknown; %d where the CFI is wrong and SFrame right",
		pcs, proven, pct(proven), byCode, pct(byCode), problemPCs, unknown, cfiWrongPCs)
	// The unknown PCs by reason: each reason must be a known one.
	for _, reason := range sortedKeys(reasons) {
		t.Logf("unknown %8d PCs: %s", reasons[reason], reason)
		if knownUnknown[reason] == "" {
			t.Errorf("unknown PCs for a new reason: %s (%d PCs)", reason, reasons[reason])
		}
	}
	if pcs == 0 || proven+unknown > pcs || pct(proven) < 99 {
		t.Errorf("%d PCs, %d proven, %d unknown: want at least 99%% proven", pcs, proven, unknown)
	}
}

// knownUnknown lists the reasons the corpus has unknown PCs for, with why
// neither the code nor the CFI can tell there; none so far: at every PC
// of the corpus one of them has an opinion on each value.
var knownUnknown = map[string]string{}

// foundByCheck reports whether rep has the problem verify reports as kind
// in function fn.
func foundByCheck(rep *Report, kind, fn string) bool {
	if kind == "limited" {
		return rep.Limited > 0 // right, but usable only in the topmost frame
	}
	for _, p := range rep.Problems {
		switch {
		case (kind == "cfa" || kind == "ra" || kind == "fp" || kind == "unterminated") && p.Kind == kind && (p.Symbol == fn || strings.HasPrefix(p.Symbol, fn+"+")):
			return true
		// An unwind that fails through a frame: a wrong row there.
		case kind == "unwind-error" && p.PerPC() && (p.Symbol == fn || strings.HasPrefix(p.Symbol, fn+"+")):
			return true
		// verify sees a noreturn call's return address where the unwind
		// lands: in the next function (cfa) or nowhere (ended-early).
		case (kind == "cfa" || kind == "ended-early") && p.Kind == "call-at-end" &&
			(strings.Contains(p.Detail, "("+fn+")") || strings.HasPrefix(p.Symbol, fn+"+")):
			return true
		}
	}
	return false
}

// foundInFDE: verify names a problem of a PCMASK FDE (.plt, .plt.got) by
// the stub it ran, check by the first stub the FDE covers: the problem is
// found when check reports its kind in the FDE that covers verify's stub.
func foundInFDE(t *testing.T, rel string, rep *Report, kind, fn string) bool {
	ef, sec := openSection(t, rel)
	addr, ok := symbols.New(ef, 0).Addr(fn)
	if !ok {
		return false
	}
	for _, p := range rep.Problems {
		if p.Kind == kind && p.FDE >= 0 && p.FDE < len(sec.FDEs) && sec.FDEs[p.FDE].Contains(addr) {
			return true
		}
	}
	return false
}

// openSection opens a corpus binary's ELF file and SFrame section.
func openSection(t testing.TB, rel string) (*elf.File, *sframe.Section) {
	t.Helper()
	f, err := sframe.Open(filepath.Join(testcorpus.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f.ELF, f.Section
}
