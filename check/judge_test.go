package check

import (
	"bytes"
	"debug/elf"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/sframetest"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestCodeCannotRefuteUnplacedSlot: lua (Debian's lua5.4, built by gcc 16
// for AArch64) allocates luaL_loadfilex's 8 KiB frame with `mov x12,
// #8288; sub sp, sp, x12`, which the code analysis does not follow: the
// CFA is unknown to it, so it cannot say where `stp x29, x30, [sp]` stored
// the return address and must not call SFrame's (and the CFI's) `ra
// *(cfa-8280)` wrong — it reported ra and fp problems there before.
func TestCodeCannotRefuteUnplacedSlot(t *testing.T) {
	rep, err := File("../testdata/realworld/v3/aarch64/lua-dynamic", Options{})
	if err != nil {
		t.Fatalf("%v (the real-world corpus is unpacked by make testdata)", err)
	}
	for _, p := range rep.Problems {
		if strings.HasPrefix(p.Symbol, "luaL_loadfilex") {
			t.Errorf("%s problem at %s (%s): SFrame %s, CFI %s, code %s", p.Kind, p.Symbol, p.Insn, p.SFrame, p.CFI, p.Code)
		}
	}
	if rep.PCs == 0 {
		t.Fatal("no PCs checked")
	}
}

// TestRuleDiffersColdPart: gas 2.47.50 ignores GCC's DW_CFA_restore of
// rbp in the .cold parts of sqlite3's shell_exec (its SFrame keeps `fp
// *(cfa-48)` where the CFI says rbp is restored). Where the cold part has
// just stored rbp into that slot again (`mov %rbp,0x80(%rsp)`), both
// rules recover the caller's FP: a "rule differs" finding, not a
// problem. Before the store, the code shows no slot holds the caller's
// FP on the path from shell_exec's entry that never saved rbp (`jne` at
// 0x562a2f, before `mov %rbp,0x80(%rsp)` at 0x562a35): SFrame reads a
// stale slot there, a problem.
func TestRuleDiffersColdPart(t *testing.T) {
	rep, err := File("../testdata/realworld/v3/x86-64/sqlite3-static", Options{})
	if err != nil {
		t.Fatalf("%v (the real-world corpus is unpacked by make testdata)", err)
	}
	find := func(list []Problem, kind string, pc uint64) *Problem {
		for i := range list {
			if list[i].Kind == kind && list[i].PC == pc {
				return &list[i]
			}
		}
		return nil
	}
	d := find(rep.RuleDiffers, "fp", 0x401dae)
	if d == nil || d.PCs != 2 || !strings.Contains(d.Detail, "still holds the caller's FP") || !strings.Contains(d.Code, "*(cfa-48)") || !strings.Contains(d.Code, "same") {
		t.Errorf("shell_exec.cold+0x3a: rule-differs finding %+v; want fp at 2 PCs, the slot still holding the caller's FP", d)
	}
	if p := find(rep.Problems, "fp", 0x401dae); p != nil {
		t.Errorf("shell_exec.cold+0x3a reported as a problem too: %+v", p)
	}
	p := find(rep.Problems, "fp", 0x401d93)
	if p == nil || p.PCs != 4 || !strings.HasSuffix(p.Code, "fp same") || !strings.HasPrefix(p.Detail, "the code is right") {
		t.Errorf("shell_exec.cold+0x1f: problem %+v; want fp at 4 PCs, the code knowing only `fp same`", p)
	}
	// Every fp problem there (9, in shell_exec.cold and recoverStep.cold,
	// whose hot part reaches its cold blocks through a switch table
	// indexed by a load of the memory its bounds check compares) has the
	// code's evidence: at its PCs the code knows the caller's FP only in
	// rbp.
	fps := 0
	for _, p := range rep.Problems {
		if p.Kind != "fp" {
			continue
		}
		fps++
		if !strings.HasPrefix(p.Detail, "the code is right") || !strings.HasSuffix(p.Code, "fp same") {
			t.Errorf("fp problem at %s without the code's evidence: code %s; %s", p.Symbol, p.Code, p.Detail)
		}
	}
	if fps != 9 {
		t.Errorf("%d fp problems, want 9", fps)
	}
	if rep.RuleDiffersPCs == 0 || rep.Clean() {
		t.Errorf("%d rule-differs PCs, clean %v", rep.RuleDiffersPCs, rep.Clean())
	}
}

// TestCodeAtReadsAsData: codeAt reads the executable sections lazily, in
// spans around the FDEs; at every FDE's range, the instructions around
// its ends, the sections' ends and PCs between FDEs it must give the
// bytes the whole section's Data gives.
func TestCodeAtReadsAsData(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, e := range testcorpus.Entries(t) {
		ef, sec := openSection(t, e.Path)
		c := &checker{ef: ef, sec: sec}
		c.loadCode()
		whole := map[*elf.Section][]byte{}
		for _, s := range ef.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_ALLOC != 0 {
				data, err := s.Data()
				if err != nil {
					t.Fatal(err)
				}
				whole[s] = data
			}
		}
		want := func(pc, end uint64) []byte {
			for s, data := range whole {
				if pc < s.Addr || pc-s.Addr >= s.Size {
					continue
				}
				b := data[pc-s.Addr:]
				if n := end - pc; n < uint64(len(b)) {
					b = b[:n]
				}
				return b
			}
			return nil
		}
		var ranges [][2]uint64
		for i := range sec.FDEs {
			f := &sec.FDEs[i]
			ranges = append(ranges, [2]uint64{f.Start, f.End()}, [2]uint64{f.Start, f.Start + 16}, [2]uint64{f.End() - 1, f.End() + 15}, [2]uint64{f.End(), f.End() + 16})
		}
		for _, s := range ef.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
				ranges = append(ranges, [2]uint64{s.Addr, s.Addr + 16}, [2]uint64{s.Addr + s.Size - 3, s.Addr + s.Size + 13}, [2]uint64{s.Addr, s.Addr + s.Size})
				for range 50 {
					pc := s.Addr + rng.Uint64N(s.Size)
					ranges = append(ranges, [2]uint64{pc, pc + 1 + rng.Uint64N(64)})
				}
			}
		}
		for _, r := range ranges {
			if got, w := c.codeAt(r[0], r[1]), want(r[0], r[1]); !bytes.Equal(got, w) || (got == nil) != (w == nil) {
				t.Fatalf("%s: codeAt(%#x, %#x): %d bytes, want %d", e.Path, r[0], r[1], len(got), len(w))
			}
		}
	}
}

// TestEmptyColdPart: a function's jump to its own empty .cold part
// (CPython's ast2obj_expr, for an unreachable switch default) lands on the
// next .cold part, where the linker put the empty one; it is no entry into
// that one. Taken as one, it made the code analysis find the next part
// (_PyEval_EvalFrameDefault.cold, entered by a computed goto the analysis
// cannot follow) at ast2obj_expr's stack height, and call SFrame and the
// CFI wrong there. testdata/emptycold.s has the same shape; built with
// binutils 2.40: as --gsframe -o emptycold.o emptycold.s && ld -o
// emptycold emptycold.o.
func TestEmptyColdPart(t *testing.T) {
	rep, err := File("testdata/emptycold", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.PCs != 16 || rep.Proven != 16 {
		var b bytes.Buffer
		rep.WriteText(&b, 10)
		t.Errorf("want every PC proven right, no problem:\n%s", b.String())
	}
}

// TestStopFDEByRow: the bytes an FDE covers beyond the code are counted
// a row at a time, not a byte at a time (a malformed section checked
// anyway may cover gigabytes), with the same report as byte by byte (a
// per-PC callback): for PCINC FDEs and a PCMASK one, their ends moved far
// past the code.
func TestStopFDEByRow(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, name := range []string{"v3/x86-64/recurse-O2-static", "v3/x86-64/recurse-O2-dynamic", "v2/aarch64/recurse-O2-dynamic"} {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad")
			err := sframetest.Rewrite(filepath.Join(dir, name), bad, func(sec *sframe.Section) error {
				for i := range sec.FDEs {
					if f := &sec.FDEs[i]; f.PCType() == sframe.PCMask || i == len(sec.FDEs)-1 || i == 1 {
						f.Size += 4<<20 + 3 // far past the code, and not a whole number of PLT stubs
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			run := func(each func(PCResult)) *Report {
				rep, err := File(bad, Options{CheckMalformed: true, EachPC: each})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep
			}
			byRow, byByte := run(nil), run(func(PCResult) {})
			if byRow.UnknownPCs < 1<<20 {
				t.Fatalf("%d unknown PCs: the FDEs' ends did not go past the code", byRow.UnknownPCs)
			}
			if !reflect.DeepEqual(byRow, byByte) {
				t.Errorf("by row: %d PCs, %d unknown %v; by byte: %d, %d %v", byRow.PCs, byRow.UnknownPCs, byRow.Unknown, byByte.PCs, byByte.UnknownPCs, byByte.Unknown)
			}
		})
	}
}

// TestStackClashLoop: a stack-clash probe loop (testdata/clash.s and
// clash-aarch64.s, built with binutils 2.40, which writes an SP-based CFA
// for the loop's r11- or x12-based one) has exactly one problem, the CFA
// at the loop's 4 PCs, whose evidence blames SFrame alone. Before, check
// also called the rows after the loop wrong in SFrame and the CFI alike
// (it did not learn SP = r11 where the loop ends) and, on x86-64, the FP
// rule in the loop (the analysis had lost what the slots hold): 9 problems
// there, 8 of them false; 2 on AArch64, 1 false.
func TestStackClashLoop(t *testing.T) {
	for _, tc := range []struct{ bin, cfi string }{
		{"clash", "CFI says:     cfa r11+196624"},
		{"clash-aarch64", "CFI says:     cfa r12+1966080"},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			rep, err := File(filepath.Join("testdata", tc.bin), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			rep.WriteText(&b, 10)
			text := b.String()
			if len(rep.Problems) != 1 || rep.Problems[0].kind != KindCFA || rep.ProblemPCs != 4 || rep.PCs != rep.Proven+4 ||
				strings.Contains(text, "both wrong") || !strings.Contains(text, tc.cfi) {
				t.Errorf("want the loop's CFA as the one problem, SFrame's alone, every other PC proven:\n%s", text)
			}
		})
	}
}
