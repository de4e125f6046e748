package codeflow

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/cfi"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/lsda"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// noReturnNames are functions that never return to their caller.
var noReturnNames = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "abort": true, "__stack_chk_fail": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true, "__cxa_bad_cast": true,
	"__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true, "_ZSt9terminatev": true,
	"__cxa_call_terminate": true, "longjmp": true, "siglongjmp": true, "_longjmp": true,
	"__longjmp_chk": true, "__assert_fail": true, "__chk_fail": true, "__fortify_fail": true,
	"__libc_fatal": true, "pthread_exit": true, "sys_exit_group": true, "exit_group": true,
	"_ZSt17__throw_bad_allocv": true, "_ZSt20__throw_length_errorPKc": true,
	"_ZSt24__throw_out_of_range_fmtPKcz": true, "_ZSt19__throw_logic_errorPKc": true,
	"_ZSt20__throw_system_errori": true, "_ZSt20__throw_future_errori": true, "_ZSt25__throw_bad_function_callv": true,
	"__cxa_pure_virtual": true, "__libc_start_main": true, "__libc_start_call_main": true,
}

// corpusBinary is one corpus binary opened for the comparison.
type corpusBinary struct {
	entry testcorpus.Entry
	f     *sframe.File
	a     *arch.Arch
	syms  *symbols.Table
	text  map[*elf.Section][]byte
	// pads: the landing pads of each function with an LSDA, by start.
	pads map[uint64][]LandingPad
	mem  func(addr uint64, n int) ([]byte, bool)
	// noRet: the functions the analysis shows never return (as package
	// check finds them), by start.
	noRet map[uint64]bool
}

// loadPads reads the LSDA of every FDE of the file's CFI.
// newCorpusBinary makes the corpusBinary of entry e, whose file f is open,
// with its landing pads and memory loaded.
func newCorpusBinary(tb testing.TB, e testcorpus.Entry, f *sframe.File) *corpusBinary {
	b := &corpusBinary{entry: e, f: f, a: arch.ForMachine(f.ELF.Machine), syms: symbols.New(f.ELF, 0)}
	b.loadPads(tb)
	b.mem = elfMem(f.ELF)
	return b
}

func (b *corpusBinary) loadPads(tb testing.TB) {
	tab, err := cfi.Load(b.f.ELF)
	if err != nil {
		tb.Fatalf("%s: %v", b.entry.Path, err)
	}
	b.pads = map[uint64][]LandingPad{}
	for _, fde := range tab.FDEs {
		if fde.LSDA == 0 {
			continue
		}
		l, err := lsda.Read(b.f.ELF, fde.LSDA, fde.Start)
		if err != nil {
			tb.Fatalf("%s: FDE %#x: %v", b.entry.Path, fde.Start, err)
		}
		for _, c := range l.CallSites {
			if c.LandingPad != 0 {
				b.pads[fde.Start] = append(b.pads[fde.Start], LandingPad{Start: c.Start, End: c.End, Pad: c.LandingPad})
			}
		}
	}
}

func (b *corpusBinary) code(start uint64, size int) []byte {
	for _, s := range b.f.ELF.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && start >= s.Addr && start+uint64(size) <= s.Addr+s.Size {
			data, ok := b.text[s]
			if !ok {
				var err error
				if data, err = s.Data(); err != nil {
					return nil
				}
				if b.text == nil {
					b.text = map[*elf.Section][]byte{}
				}
				b.text[s] = data
			}
			return data[start-s.Addr : start-s.Addr+uint64(size)]
		}
	}
	return nil
}

func (b *corpusBinary) inPLT(addr uint64) bool {
	for _, s := range b.f.ELF.Sections {
		if strings.HasPrefix(s.Name, ".plt") && addr >= s.Addr && addr < s.Addr+s.Size {
			return true
		}
	}
	return false
}

func (b *corpusBinary) noReturn(target uint64) bool {
	if b.noRet[target] {
		return true
	}
	name, off, ok := b.syms.Lookup(target)
	if !ok || off != 0 {
		return false
	}
	name = strings.TrimSuffix(name, "@plt")
	return noReturnNames[name]
}

// funcs builds the Funcs of every non-PCMASK FDE: the ELF entry point is
// the outermost frame; the functions the analysis shows never return are
// noreturn too (to a fixed point, as package check does); a .cold
// partition is entered where its hot part's exits jump, with their rules.
func (b *corpusBinary) funcs() (fns []Func, fdes []int) {
	s := b.f.Section
	exits := map[uint64]Entry{}
	var cold []int
	for i := range s.FDEs {
		fde := &s.FDEs[i]
		if fde.PCType() == sframe.PCMask || b.inPLT(fde.Start) {
			continue // PLT stubs are entered by jumps with their own rules: the checker's part
		}
		name, _, _ := b.syms.Lookup(fde.Start)
		if strings.Contains(name, ".cold") {
			cold = append(cold, i)
			continue
		}
		fn := Func{Name: name, Start: fde.Start, Code: b.code(fde.Start, int(fde.Size)), NoReturn: b.noReturn, LandingPads: b.pads[fde.Start], Mem: b.mem}
		if fde.Start == b.f.ELF.Entry {
			fn.Entry = &Row{CFA: sframe.Rule{Kind: sframe.RuleUndefined}, RA: sframe.Rule{Kind: sframe.RuleUndefined}}
		}
		fns, fdes = append(fns, fn), append(fdes, i)
	}
	b.noRet = map[uint64]bool{}
	for changed := true; changed; {
		changed = false
		for _, fn := range fns {
			if !b.noRet[fn.Start] && fn.Entry == nil && Analyze(b.a, fn).NoReturn {
				b.noRet[fn.Start], changed = true, true
			}
		}
	}
	for _, fn := range fns {
		for _, e := range Analyze(b.a, fn).Exits {
			if e.Known {
				exits[e.Target] = e.Entry()
			}
		}
	}
	for _, i := range cold {
		fde := &s.FDEs[i]
		name, _, _ := b.syms.Lookup(fde.Start)
		fn := Func{Name: name, Start: fde.Start, Code: b.code(fde.Start, int(fde.Size)), NoReturn: b.noReturn, EntriesOnly: true, LandingPads: b.pads[fde.Start], Mem: b.mem}
		for t, e := range exits {
			if fde.Contains(t) {
				fn.Entries = append(fn.Entries, e)
			}
		}
		sort.Slice(fn.Entries, func(i, j int) bool { return fn.Entries[i].Addr < fn.Entries[j].Addr })
		fns, fdes = append(fns, fn), append(fdes, i)
	}
	return fns, fdes
}

// expectRows reads testdata/expect.json: per binary, the FRE rows listed
// as generator problems (the row's start address) with their kind.
func expectRows(t *testing.T) map[string]map[uint64]string {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "testdata", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Binaries map[string]struct {
			Problems []struct{ Kind, Function, Row, Reason string }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[uint64]string{}
	for bin, v := range doc.Binaries {
		for _, p := range v.Problems {
			f := strings.Fields(p.Row)
			if len(f) == 0 {
				continue
			}
			pc, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatalf("expect.json %s: row %q: %v", bin, p.Row, err)
			}
			if out[bin] == nil {
				out[bin] = map[uint64]string{}
			}
			out[bin][pc] = p.Kind
		}
	}
	return out
}

type tally struct {
	pcs, known, agree int
}

// TestCorpusAgreesWithSFrame: over every function with an SFrame FDE in
// the committed corpus, the rules derived from the code agree with the
// SFrame row at every PC where they are known, except in the rows
// testdata/expect.json lists as generator problems; the only unknown PCs
// are unreachable code.
func TestCorpusAgreesWithSFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("whole corpus")
	}
	dir := testcorpus.Dir(t)
	expect := expectRows(t)
	byGroup := map[string]*tally{}
	reasons := map[string]int{}
	var groups []string
	disagreements, noRow, listedSeen := 0, 0, 0
	for _, e := range testcorpus.Entries(t) {
		f, err := sframe.Open(filepath.Join(dir, e.Path))
		if errors.Is(err, sframe.ErrNoSection) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		b := newCorpusBinary(t, e, f)
		// expect.json gives run-time addresses: a PIE is loaded at
		// ELF_ET_DYN_BASE (linux/abi_*.go).
		bias := uint64(0)
		if f.ELF.Type == elf.ET_DYN {
			bias = map[elf.Machine]uint64{elf.EM_X86_64: 0x5555_5555_4000, elf.EM_AARCH64: 0x55_5555_0000}[f.ELF.Machine]
		}
		excl := map[uint64]string{}
		for start, kind := range expect[e.Path] {
			if start == 0 {
				continue // a PCMASK row (PLT), not analysed here
			}
			start -= bias
			lo, hi, ok := f.Section.RowExtent(start)
			if !ok {
				t.Errorf("%s: expect.json row %#x is not an FRE start", e.Path, start)
				continue
			}
			for pc := lo; pc < hi; pc++ {
				excl[pc] = kind
			}
		}
		group := fmt.Sprintf("v%d/%s", e.SFrameVersion, e.Arch)
		g := byGroup[group]
		if g == nil {
			g = &tally{}
			byGroup[group] = g
			groups = append(groups, group)
		}
		fns, fdes := b.funcs()
		for k, fn := range fns {
			res := Analyze(b.a, fn)
			for i := range res.Insns {
				in := &res.Insns[i]
				g.pcs++
				if !in.Known {
					r := in.Reason
					if strings.HasPrefix(e.Path, "clang23/") && r == "return address unknown" {
						r = clangAlloca
					}
					reasons[r]++
					if where := os.Getenv("CODEFLOW_WHERE"); where != "" && strings.Contains(in.Reason, where) {
						t.Logf("%s %s %#x: %s", e.Path, fn.Name, in.Addr, in.Reason)
					}
					continue
				}
				g.known++
				row, err := f.Section.Lookup(in.Addr)
				if errors.Is(err, sframe.ErrNoFRE) {
					noRow++ // an FDE without rows: SFrame cannot describe the function
					continue
				}
				if err != nil {
					t.Errorf("%s %s %#x: %v", e.Path, fn.Name, in.Addr, err)
					continue
				}
				if ok, what := agrees(in, &row); !ok {
					if kind, listed := excl[in.Addr]; listed {
						listedSeen++ // a known generator problem
						if os.Getenv("CODEFLOW_LISTED") != "" {
							t.Logf("listed %s: %s FDE %d %s %#x: %s: code says %s, SFrame says %s", kind,
								e.Path, fdes[k], fn.Name, in.Addr, what, fmtAlt(b.a, in), fmtSFrame(b.a, &row))
						}
						continue
					}
					disagreements++
					if disagreements <= 40 {
						t.Errorf("%s FDE %d %s %#x: %s: code says %s, SFrame says %s",
							e.Path, fdes[k], fn.Name, in.Addr, what, fmtAlt(b.a, in), fmtSFrame(b.a, &row))
					}
					continue
				}
				g.agree++
			}
		}
		f.Close()
	}
	sort.Strings(groups)
	total := tally{}
	for _, gname := range groups {
		g := byGroup[gname]
		total.pcs += g.pcs
		total.known += g.known
		total.agree += g.agree
		t.Logf("%-12s PCs %7d  known %7d (%.2f%%)  agree %7d of known", gname, g.pcs, g.known, pct(g.known, g.pcs), g.agree)
	}
	t.Logf("%-12s PCs %7d  known %7d (%.2f%%)  agree %7d, %d disagreements", "all", total.pcs, total.known, pct(total.known, total.pcs), total.agree, disagreements)
	t.Logf("known PCs where SFrame has no row: %d; disagreements in rows expect.json lists: %d", noRow, listedSeen)
	type rc struct {
		r string
		n int
	}
	var rs []rc
	for r, n := range reasons {
		rs = append(rs, rc{r, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].r < rs[j].r })
	for _, x := range rs {
		t.Logf("unknown %6d  %s", x.n, x.r)
		if acceptedUnknown[x.r] == "" {
			t.Errorf("unknown %d PCs: %s", x.n, x.r)
		}
	}
}

// acceptedUnknown lists the reasons for unknown PCs the corpus may have,
// with why. With the landing pads and the .cold entries they lead to,
// what is left is code no path reaches, and one table form.
var acceptedUnknown = map[string]string{
	"padding not reached from the entry":                             "padding between functions is never executed",
	"not reached from the entry (after a call that does not return)": "dead code after a noreturn call",
	// GCC -O0 (files-O0, errname's switch) loads the table entry with
	// `mov (%rdx,%rax,1),%eax; cltq`, the index scaled by an earlier lea
	// and bounds-checked in its stack slot: the analysis recognises only
	// the optimised `movslq (%base,%idx,4)` form, so the cases stay
	// unreached. Knowable, not recognised yet; check falls back on the CFI
	// there.
	"not reached from the entry (the function has an indirect jump without a recognised table: a jump through a register not loaded by movslq (%base,%idx,4))": "GCC -O0's switch-table form",
	clangAlloca: "clang's alloca and VLA sequence",
}

// clangAlloca: clang allocates a VLA or alloca with `mov %rsp,%rax; sub
// %rcx,%rax; mov %rax,%rsp` (vla's with_vla/with_alloca, realign's drap in
// the clang23 binaries): the SP is set from a register lowered by an
// unknown amount, which the analysis does not track as "below", so it
// drops the save slots and the return address becomes unknown (716 PCs).
// Knowable, not tracked yet; check falls back on the CFI there.
const clangAlloca = "return address unknown (clang23: SP set from a register lowered by an unknown amount)"

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// agrees compares the analysis with an SFrame row.
func agrees(in *Insn, row *sframe.Row) (bool, string) {
	if row.Outermost {
		if in.Accepts(RA, sframe.Rule{Kind: sframe.RuleUndefined}, false) {
			return true, ""
		}
		return false, "outermost"
	}
	if !in.Accepts(CFA, row.CFA, false) {
		return false, "CFA"
	}
	if !in.Accepts(RA, row.RA, row.MangledRA) {
		return false, "RA"
	}
	if !in.Accepts(FP, row.FP, false) {
		return false, "FP"
	}
	return true, ""
}

func fmtRules(a *arch.Arch, rs []sframe.Rule) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Format(a.ABIs[0]))
	}
	return strings.Join(s, "|")
}

func fmtAlt(a *arch.Arch, in *Insn) string {
	m := ""
	if in.Row().MangledRA {
		m = " mangled"
	}
	return fmt.Sprintf("CFA %s RA %s%s FP %s", fmtRules(a, in.Rules(CFA)), fmtRules(a, in.Rules(RA)), m, fmtRules(a, in.Rules(FP)))
}

func fmtSFrame(a *arch.Arch, r *sframe.Row) string {
	if r.Outermost {
		return "outermost"
	}
	m := ""
	if r.MangledRA {
		m = " mangled"
	}
	abi := a.ABIs[0]
	return fmt.Sprintf("CFA %s RA %s%s FP %s", r.CFA.Format(abi), r.RA.Format(abi), m, r.FP.Format(abi))
}

// TestAnalyzerSameAsAnalyze analyses every function of every corpus
// binary with one Analyzer (its work space reused from function to
// function, binary to binary) and with Analyze (a fresh or pooled one):
// the results must be the same. Decode must give the instructions
// Analyze gives for the same bytes entered nowhere.
func TestAnalyzerSameAsAnalyze(t *testing.T) {
	if testing.Short() {
		t.Skip("whole corpus")
	}
	dir := testcorpus.Dir(t)
	var z Analyzer
	n := 0
	for _, e := range testcorpus.Entries(t) {
		f, err := sframe.Open(filepath.Join(dir, e.Path))
		if errors.Is(err, sframe.ErrNoSection) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		b := newCorpusBinary(t, e, f)
		fns, _ := b.funcs()
		for _, fn := range fns {
			want := Analyze(b.a, fn)
			got := z.Analyze(b.a, fn)
			if !sameResult(&got, &want) {
				t.Fatalf("%s: %s at %#x: the Analyzer's result differs from Analyze's", e.Path, fn.Name, fn.Start)
			}
			bare := Analyze(b.a, Func{Start: fn.Start, Code: fn.Code, EntriesOnly: true})
			dec := z.Decode(b.a, fn)
			if !sameInsns(dec, bare.Insns) {
				t.Fatalf("%s: %s at %#x: Decode's instructions differ from Analyze's", e.Path, fn.Name, fn.Start)
			}
			n++
		}
		f.Close()
	}
	if n == 0 {
		t.Fatal("no function compared")
	}
}

func sameInsns(a, b []Insn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Addr != y.Addr || x.Len != y.Len || !x.SameRules(y) && !(x.Known == y.Known && x.Row() == y.Row() && x.Reason == y.Reason && *x.alts() == *y.alts()) {
			return false
		}
	}
	return true
}

func sameResult(a, b *Result) bool {
	if a.NoReturn != b.NoReturn || len(a.Exits) != len(b.Exits) || !sameInsns(a.Insns, b.Insns) {
		return false
	}
	for i := range a.Exits {
		x, y := a.Exits[i], b.Exits[i]
		if x.Insn != y.Insn || x.Target != y.Target || x.Pad != y.Pad || x.Known != y.Known || x.Row != y.Row || (x.alt == nil) != (y.alt == nil) || x.alt != nil && *x.alt != *y.alt {
			return false
		}
	}
	return true
}
