package sframe

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// The differential test against GNU libsframe: testdata/libsframe/harness.c,
// built with the host's gcc against sid's libsframe-dev
// (scripts/fetch-libsframe.sh, which setup.sh runs), prints
// sframe_find_fre's answer at every PC; Lookup must give the same. See
// testdata/libsframe/README.md for where libsframe itself is wrong.

var harnessOnce struct {
	sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if harnessOnce.dir != "" {
		os.RemoveAll(harnessOnce.dir)
	}
	os.Exit(code)
}

// libsframeHarness builds the harness once per test binary. A missing
// libsframe or gcc fails the test: it must run wherever make test runs.
func libsframeHarness(t *testing.T) string {
	t.Helper()
	harnessOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			harnessOnce.err = err
			return
		}
		deps := filepath.Join(root, ".deps", "libsframe")
		lib := filepath.Join(deps, "lib", "libsframe.a")
		if _, err := os.Stat(lib); err != nil {
			harnessOnce.err = fmt.Errorf("no libsframe (%v): run scripts/fetch-libsframe.sh (setup.sh does)", err)
			return
		}
		dir, err := os.MkdirTemp("", "sframe-harness-")
		if err != nil {
			harnessOnce.err = err
			return
		}
		harnessOnce.dir = dir
		out := filepath.Join(dir, "harness")
		cmd := exec.Command("gcc", "-O2", "-Wall", "-Werror", "-I", filepath.Join(deps, "usr", "include"), "-I", filepath.Join(deps, "usr", "include", "libiberty"),
			filepath.Join("testdata", "libsframe", "harness.c"), lib, "-o", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			harnessOnce.err = fmt.Errorf("building the libsframe harness: %v\n%s", err, msg)
			return
		}
		harnessOnce.path = out
	})
	if harnessOnce.err != nil {
		t.Fatal(harnessOnce.err)
	}
	return harnessOnce.path
}

// libsframeAnswer is Lookup's answer at pc in the harness's words.
func libsframeAnswer(s *Section, pc uint64) string {
	row, err := s.Lookup(pc)
	if err != nil {
		return "none"
	}
	f := &s.FDEs[row.FDE]
	fre := &f.FREs[row.FRE]
	sp, fp, _, _ := s.Header.ABI.Regs()
	base := "-1"
	switch row.CFA.Reg {
	case sp:
		base = "1"
	case fp:
		base = "0"
	}
	off := func(r Rule) string {
		if r.Kind != RuleExpr {
			return "u"
		}
		return strconv.Itoa(int(r.Offset))
	}
	if f.Type() == FDETypeFlex && row.CFA.Kind == RuleExpr {
		// The CFA's control word, as Rules read it.
		ctl := uint32(row.CFA.Reg)<<flexRegShift | flexRegPBit
		if row.CFA.Deref {
			ctl |= flexDerefBit
		}
		base = "c" + strconv.FormatUint(uint64(ctl), 10)
	}
	cfa := off(row.CFA)
	if row.Outermost {
		base, cfa = strconv.Itoa(int(fre.BaseReg())), "u"
	}
	b2i := map[bool]int{false: 0, true: 1}
	return fmt.Sprintf("fde=%d start=%d info=%#x cfa=%s:%s ra=%s fp=%s mangled=%d undefined=%d",
		row.FDE, fre.Start, fre.Info, base, cfa, off(row.RA), off(row.FP), b2i[row.MangledRA], b2i[row.Outermost])
}

// libsframeDiff runs the harness on section s (its bytes data) at every
// PC from 16 bytes before its first function to 16 bytes after its last
// and returns the PCs where Lookup answers otherwise, with both answers,
// how many PCs differ only where libsframe is known to be wrong
// (flexRAPadding), and how many PCs were compared.
func libsframeDiff(t *testing.T, s *Section, data []byte) (diffs []string, known, pcs int) {
	t.Helper()
	if len(s.FDEs) == 0 {
		return nil, 0, 0
	}
	lo, hi := s.FDEs[0].Start, s.FDEs[0].End()
	for i := range s.FDEs {
		lo, hi = min(lo, s.FDEs[i].Start), max(hi, s.FDEs[i].End())
	}
	lo, hi = lo-16, hi+16
	sec := filepath.Join(t.TempDir(), "section")
	if err := os.WriteFile(sec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rel := func(pc uint64) string { return strconv.FormatInt(int64(pc-s.Addr), 10) }
	cmd := exec.Command(libsframeHarness(t), sec, rel(lo), rel(hi))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, stderr.Bytes())
	}
	type change struct {
		pc     uint64
		answer string
	}
	var changes []change
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		pcText, answer, ok := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseUint(pcText, 16, 64)
		if !ok || err != nil {
			t.Fatalf("harness printed %q", sc.Text())
		}
		changes = append(changes, change{v + s.Addr, answer})
	}
	if len(changes) == 0 || changes[0].pc != lo {
		t.Fatalf("harness printed no answer for the first PC %#x", lo)
	}
	k := 0
	for pc := lo; pc < hi; pc++ {
		for k+1 < len(changes) && changes[k+1].pc <= pc {
			k++
		}
		got := libsframeAnswer(s, pc)
		if got == changes[k].answer {
			continue
		}
		if flexRAPadding(s, pc, got) == changes[k].answer {
			known++
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%#x: Lookup %s, libsframe %s", pc, got, changes[k].answer))
	}
	return diffs, known, int(hi - lo)
}

// flexRAPadding returns Lookup's answer at pc as libsframe 2.47 gives it
// where it is wrong, or "" elsewhere: in a FLEX row whose RA control word
// is 0 (padding: no RA rule, the FP pair follows), sframe_fre_get_ra_offset
// returns data word 3, the FP's control word, as an RA offset (51 for
// (rbp+0), x86-64 DRAP rows); the rule is the ABI's fixed RA offset, as
// objdump's own dumper shows ("U", no RA offset).
func flexRAPadding(s *Section, pc uint64, answer string) string {
	row, err := s.Lookup(pc)
	if err != nil {
		return ""
	}
	f := &s.FDEs[row.FDE]
	fre := &f.FREs[row.FRE]
	if f.Type() != FDETypeFlex || fre.Count() < 5 || fre.UWord(2) != 0 {
		return ""
	}
	before, after, ok := strings.Cut(answer, " ra=")
	if !ok {
		return ""
	}
	_, after, _ = strings.Cut(after, " ")
	return before + " ra=" + strconv.Itoa(int(fre.Words[3])) + " " + after
}

// TestLibsframeEveryPC compares Lookup with libsframe 2.47's
// sframe_find_fre at every PC of every linked corpus binary whose function
// starts are PC-relative (V3; V2 only with SFRAME_F_FDE_FUNC_START_PCREL,
// which of the corpus's toolchains only clang 23 writes), of the V3 and
// clang 23 link outputs of testdata/suite and of the hand-made PC-relative
// sections. libsframe searches only sections flagged
// SFRAME_F_FDE_SORTED; clang's are not flagged, though in order, and are
// compared with the flag set.
func TestLibsframeEveryPC(t *testing.T) {
	libsframeHarness(t)
	type input struct {
		name string
		sec  *Section
		data []byte
	}
	var inputs []input
	dir := testcorpus.Dir(t)
	for _, e := range testcorpus.Entries(t) {
		f, ok := corpusSection(t, dir, e)
		if ok && f.Section.Header.PCRel() {
			inputs = append(inputs, input{e.Path, f.Section, f.Raw.Data})
		}
	}
	var suite []suiteEntry
	for _, d := range []string{"v3/x86-64", "v3/aarch64", "clang23/x86-64"} {
		suite = append(suite, readSuiteStatus(t, filepath.Join("testdata", "suite", d), "objdump.status")...)
	}
	for _, e := range suite {
		rel, _ := filepath.Rel(filepath.Join("testdata", "suite"), filepath.Join(e.dir, e.name))
		if _, invalid := suiteValidateExceptions[rel]; invalid {
			continue // lld's concatenated sections
		}
		f, err := Open(filepath.Join(e.dir, e.name))
		if err != nil || f.Raw.Relocatable {
			continue // no data (ld --discard-sframe, GNU ld given clang's V2), or not linked
		}
		t.Cleanup(func() { f.Close() })
		inputs = append(inputs, input{filepath.Join(e.dir, e.name), f.Section, f.Raw.Data})
	}
	for _, hm := range handmade() {
		if !hm.sec.Header.PCRel() || hm.sec.Header.ABI.S390X() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", "handmade", hm.name+".sframe"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Decode(data, hm.sec.Addr)
		if err != nil {
			t.Fatalf("%s: %v", hm.name, err)
		}
		inputs = append(inputs, input{"handmade/" + hm.name, s, data})
	}
	total, totalKnown, unsorted := 0, 0, 0
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			if in.sec.Header.Flags&FlagFDESorted == 0 {
				// clang 23's sections (lld passes them through) have no
				// SFRAME_F_FDE_SORTED: sframe_find_fre answers nothing at
				// any PC. The same FDEs, re-encoded in address order with
				// the flag set, must give the same rows everywhere (C++
				// puts __clang_call_terminate, in a COMDAT section of its
				// own, after .text but its FDE in between).
				diffs, _, _ := libsframeDiff(t, in.sec, in.data)
				for _, d := range diffs {
					if !strings.HasSuffix(d, ", libsframe none") {
						t.Errorf("without SFRAME_F_FDE_SORTED: %s", d)
					}
				}
				if len(diffs) == 0 {
					t.Errorf("libsframe finds rows in a section without SFRAME_F_FDE_SORTED")
				}
				unsorted += len(diffs)
				sorted := *in.sec
				sorted.FDEs = slices.Clone(in.sec.FDEs)
				slices.SortStableFunc(sorted.FDEs, func(a, b FDE) int { return cmp.Compare(a.Start, b.Start) })
				sorted.Header.Flags |= FlagFDESorted
				data, err := sorted.Encode()
				if err != nil {
					t.Fatal(err)
				}
				s, err := Decode(data, in.sec.Addr)
				if err != nil {
					t.Fatal(err)
				}
				// Lookup finds the same rows in both orders.
				byStart := func(sec *Section, pc uint64) string {
					a := libsframeAnswer(sec, pc)
					if row, err := sec.Lookup(pc); err == nil {
						a = strings.Replace(a, fmt.Sprintf("fde=%d ", row.FDE), fmt.Sprintf("fde@%#x ", sec.FDEs[row.FDE].Start), 1)
					}
					return a
				}
				for i := range in.sec.FDEs {
					for pc := in.sec.FDEs[i].Start; pc < in.sec.FDEs[i].End(); pc++ {
						if a, b := byStart(in.sec, pc), byStart(s, pc); a != b {
							t.Fatalf("%#x: Lookup %s in the section, %s in it sorted", pc, a, b)
						}
					}
				}
				in.sec, in.data = s, data
			}
			diffs, known, n := libsframeDiff(t, in.sec, in.data)
			total += n
			totalKnown += known
			for i, d := range diffs {
				if i == 10 {
					t.Errorf("... %d disagreements in all", len(diffs))
					break
				}
				t.Error(d)
			}
		})
	}
	t.Logf("%d sections, %d PCs, %d where libsframe is known to be wrong (FLEX RA padding); "+
		"%d PCs with rows where it finds none for want of SFRAME_F_FDE_SORTED (then compared with the flag set)",
		len(inputs), total, totalKnown, unsorted)
	if len(inputs) < 40 || total < 1_000_000 {
		t.Errorf("only %d sections and %d PCs compared", len(inputs), total)
	}
}

// TestLibsframeV2NotPCRel documents where libsframe 2.47 is wrong: it
// reads every V2 start field as relative to the field itself, with or
// without SFRAME_F_FDE_FUNC_START_PCREL, so in the V2 files of binutils
// 2.41-2.44 (section-relative starts, no flag) it finds each function
// shifted by its FDE's offset in the section. Lookup reads them as the
// format says (and as objdump 2.44 and the kernel do).
func TestLibsframeV2NotPCRel(t *testing.T) {
	e := testcorpus.Lookup(t, "v2/x86-64/recurse-O2-static")
	f, ok := corpusSection(t, testcorpus.Dir(t), e)
	if !ok {
		t.Fatal("no .sframe")
	}
	s := f.Section
	if s.Header.Version != Version2 || s.Header.PCRel() {
		t.Fatalf("want V2 without SFRAME_F_FDE_FUNC_START_PCREL, have %v flags %#x", s.Header.Version, s.Header.Flags)
	}
	diffs, _, n := libsframeDiff(t, s, f.Raw.Data)
	if len(diffs) == 0 {
		t.Errorf("libsframe agrees at all %d PCs", n)
	}
	t.Logf("libsframe disagrees at %d of %d PCs", len(diffs), n)
	// libsframe's FDE i starts FDE i's offset in the section later.
	for i := range s.FDEs {
		fd := &s.FDEs[i]
		shifted := fd.Start + uint64(fd.Off)
		rel := func(pc uint64) string { return strconv.FormatInt(int64(pc-s.Addr), 10) }
		sec := filepath.Join(t.TempDir(), "section")
		if err := os.WriteFile(sec, f.Raw.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(libsframeHarness(t), sec, rel(shifted), rel(shifted+1)).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := libsframeAnswer(s, fd.Start)
		if got := strings.TrimSpace(string(out)); !strings.HasSuffix(got, " "+want) {
			t.Errorf("FDE %d at %#x: libsframe at %#x (+%#x) says %q, Lookup at %#x %q", i, fd.Start, shifted, fd.Off, got, fd.Start, want)
		}
		if i == 0 {
			t.Logf("FDE 0 at %#x: libsframe answers Lookup's row at %#x (+%#x, the field's offset): %s", fd.Start, shifted, fd.Off, want)
		}
	}
}
