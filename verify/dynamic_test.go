//go:build cgo

package verify

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// knownFinding is a genuine fault of the SFrame data of a dynamic corpus
// binary (a toolchain bug or a limit of the format) that verification
// must report, not a false mismatch.
type knownFinding struct {
	why   string
	match func(e *testcorpus.Entry, pr *Problem, pltGot [2]uint64) bool
}

var dynamicFindings = []knownFinding{
	{"gas 2.40 keeps an SP-based CFA in asm_regcfa_call, whose CFA is on rbx / x19 (manifest note)",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			return e.SFrameVersion == 1 && pr.Kind == "cfa" && strings.HasPrefix(pr.FrameSymbol, "asm_regcfa_call")
		}},
	{"V3 FLEX CFA on rbx in asm_regcfa_call cannot be recovered in a caller frame (limited)",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			return e.SFrameVersion == 3 && e.Arch == "x86-64" && pr.Kind == "limited" && strings.HasPrefix(pr.FrameSymbol, "asm_regcfa_call")
		}},
	{"GCC 16's DRAP epilogue: the FP rule of drap's last rows is wrong",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			return e.SFrameVersion == 3 && e.Arch == "x86-64" && pr.Kind == "fp" && strings.HasPrefix(pr.FrameSymbol, "drap")
		}},
	{"ld 2.44 and 2.47.50 give the .plt.got PCMASK FDE sp+16 (its .eh_frame says rsp+8: the stub is entered by a call and pushes nothing)",
		func(e *testcorpus.Entry, pr *Problem, pltGot [2]uint64) bool {
			return e.Arch == "x86-64" && e.SFrameVersion >= 2 && pr.Kind == "cfa" && pr.Depth == 0 &&
				pltGot[0] <= pr.FramePC && pr.FramePC < pltGot[1] && strings.HasPrefix(strings.TrimSpace(pr.Row), "0000000000000000  sp+16 ")
		}},
	{"a call to noreturn _Unwind_Resume ends the hot part (except's middle) or a .cold part (stdthread's dive.cold), so the return address is the first byte of the next .cold partition's FDE: SFrame consumers look return addresses up unchanged (no pc-1) and get that FDE's CFA",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			base := filepath.Base(e.Path)
			return e.Arch == "x86-64" && pr.Kind == "cfa" && pr.Depth > 0 && strings.HasSuffix(pr.FrameSymbol, ".cold") &&
				pr.FRE == 0 && (strings.HasPrefix(base, "except-O2") || strings.HasPrefix(base, "stdthread-O2")) && callEnded(pr)
		}},
	{"dive ends with its noreturn call to longjmp@plt, so the return address is the first byte after dive's FDE: the chain ends early while the PLT stub runs",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			return e.Arch == "x86-64" && pr.Kind == "ended-early" && pr.Depth == 1 && strings.HasPrefix(pr.FrameSymbol, "dive") &&
				strings.HasPrefix(filepath.Base(e.Path), "setjmp-O2")
		}},
	{"signals' on_segv ends with its noreturn call to siglongjmp@plt, so the return address is the first byte after on_segv's FDE: at -O2 padding (the chain ends early while the PLT stub runs), at -O0 the entry of fault_at, whose first row gives a wrong CFA",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			base := filepath.Base(e.Path)
			return e.Arch == "x86-64" && pr.Depth == 1 && strings.HasPrefix(pr.Symbol, "siglongjmp@plt") && (strings.HasPrefix(base, "signals-O2") && pr.Kind == "ended-early" && strings.HasPrefix(pr.FrameSymbol, "on_segv") ||
				strings.HasPrefix(base, "signals-O0") && pr.Kind == "cfa" && pr.FrameSymbol == "fault_at" && pr.FRE == 0 && callEnded(pr))
		}},
	{"std::future<long>::get() ends with its noreturn call to _Unwind_Resume@plt, so the return address is the first byte after its FDE: the chain ends early while the PLT stub runs",
		func(e *testcorpus.Entry, pr *Problem, _ [2]uint64) bool {
			return e.Arch == "x86-64" && pr.Kind == "ended-early" && pr.Depth == 1 && strings.HasPrefix(pr.FrameSymbol, "_ZNSt6futureIlE3getEv") &&
				strings.HasPrefix(filepath.Base(e.Path), "stdthread-O2")
		}},
}

// callEnded reports whether the problem's report says its cause: the
// return address is the first byte of the frame's function.
func callEnded(pr *Problem) bool {
	return strings.HasPrefix(pr.Cause, fmt.Sprintf("the return address %#x is the first byte of ", pr.FramePC))
}

// TestDynamicCorpus verifies every dynamically linked corpus binary (both
// arches, all four toolchains, each with its toolchain's sysroot): the
// program runs to its manifest output and exit status, every problem
// reported is one of the known genuine findings above, and the .plt.got
// finding is reported wherever the binary has that FDE and calls through it.
func TestDynamicCorpus(t *testing.T) {
	dir := testcorpus.Dir(t)
	n := 0
	for _, e := range testcorpus.Entries(t) {
		if e.Link != "dynamic" {
			continue
		}
		n++
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, e.Path)
			var stdout, stderr bytes.Buffer
			rep, err := Run(path, Options{Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e), Stdout: &stdout, Stderr: &stderr}})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Exited || rep.ExitStatus != e.ExitStatus || stdout.String() != e.Stdout || stderr.Len() > 0 {
				t.Fatalf("%s, stdout %q, stderr %q; want status %d, %q", rep.Stop, stdout.String(), stderr.String(), e.ExitStatus, e.Stdout)
			}
			if rep.Covered == 0 {
				t.Errorf("no instruction had SFrame data")
			}
			// Coverage per object: main's frames end their SFrame chain in
			// libc (__libc_start_call_main), which has no SFrame data.
			var libc *ObjectStat
			for i := range rep.Objects {
				if filepath.Base(rep.Objects[i].Name) == "libc.so.6" {
					libc = &rep.Objects[i]
				}
			}
			switch {
			case len(rep.Objects) < 3 || rep.Objects[0].Name != path || !rep.Objects[0].SFrame || rep.Objects[0].Covered == 0:
				t.Errorf("objects: %+v", rep.Objects)
			case libc == nil || libc.SFrame || libc.Covered != 0 || libc.ChainEnds == 0 || !strings.HasPrefix(libc.ChainEndAt, "libc.so.6"):
				t.Errorf("libc: %+v", libc)
			}
			pltGot := sectionRange(t, path, ".plt.got", rep)
			seen := map[int]bool{}
			for i := range rep.Problems {
				pr := &rep.Problems[i]
				known := -1
				for k, f := range dynamicFindings {
					if f.match(&e, pr, pltGot) {
						known = k
						break
					}
				}
				if known < 0 {
					t.Errorf("%s at %s (frame %d at %s, row %q): want %#x got %#x %s", pr.Kind, pr.Symbol, pr.Depth, pr.FrameSymbol, pr.Row, pr.Want, pr.Got, pr.Error)
					continue
				}
				seen[known] = true
			}
			// (GNU ld's PLT FDEs: lld writes none for clang23.)
			if e.Arch == "x86-64" && e.SFrameVersion >= 2 && e.Toolchain != "clang23" && !seen[3] {
				t.Errorf("the .plt.got row (sp+16) was not reported: %s", dynamicFindings[3].why)
			}
		})
	}
	if n != 188 {
		t.Errorf("%d dynamic binaries in the corpus, want 188", n)
	}
}

// sectionRange returns the run-time range of a section of the program
// verified in rep (a PIE, at its load base).
func sectionRange(t *testing.T, path, name string, rep *Report) [2]uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil || len(rep.Objects) == 0 {
		return [2]uint64{}
	}
	base := rep.Objects[0].Base
	return [2]uint64{base + s.Addr, base + s.Addr + s.Size}
}

// TestPLTRows checks the x86-64 PLT rows: every call to a library
// function goes through a .plt stub (lazily bound: the first call to each
// pushes its index and jumps to PLT0), whose PCMASK FDE describes all
// stubs with rows at offsets modulo rep_size. Both rows of that FDE must be
// exercised, also in stubs after the first (so the masked lookup is what
// found them), without a problem, and in V1, PLT0's own ordinary FDE too. The report's FRE
// coverage must count them.
func TestPLTRows(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, rel := range []string{"v1/x86-64/recurse-O2-dynamic", "v2/x86-64/recurse-O0-dynamic", "v3/x86-64/except-O2-dynamic"} {
		t.Run(rel, func(t *testing.T) {
			e := testcorpus.Lookup(t, rel)
			path := filepath.Join(dir, rel)
			sf, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer sf.Close()
			tg, err := OpenSection(path, sf.Section, linux.Config{Args: []string{rel}, Sysroot: testcorpus.Sysroot(t, &e)})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			sec := sf.Section
			plt := tg.Process.ELF.Section(".plt")
			pltStart := tg.Process.Base + plt.Addr
			var pcmask = -1
			for i := range sec.FDEs {
				if f := &sec.FDEs[i]; f.PCType() == sframe.PCMask && f.Start <= pltStart+16 && pltStart+16 < f.Start+uint64(f.Size) {
					pcmask = i
				}
			}
			if pcmask < 0 {
				t.Fatalf("no PCMASK FDE covers .plt at %#x", pltStart)
			}
			fde := &sec.FDEs[pcmask]
			if sec.RepSize(fde) == 0 {
				t.Fatalf(".plt FDE %d has rep_size 0", pcmask)
			}
			hits := map[[2]int]int{}
			stubs := map[int]map[uint64]bool{} // PCMASK row → stubs where it was the topmost row
			s := tg.Session
			s.Observe(func(r shadow.Record) bool {
				res := tg.Checker.Check(r, s.Shadow.Frames())
				if res.TopSection != sec {
					return true
				}
				hits[res.Top]++
				if res.Kind != OK && sec.FDEs[res.Top[0]].Start < pltStart+plt.Size {
					t.Errorf("%v at %s (%#x), row %s", res.Kind, s.Syms.Format(r.PC), r.PC, sec.FormatRow(res.Top[0], res.Top[1]))
				}
				if res.Top[0] == pcmask {
					if stubs[res.Top[1]] == nil {
						stubs[res.Top[1]] = map[uint64]bool{}
					}
					stubs[res.Top[1]][(r.PC-fde.Start)/uint64(sec.RepSize(fde))] = true
				}
				return true
			})
			x, err := tg.Process.Run()
			if err != nil || x.Reason != linux.StopExited || x.Status != e.ExitStatus {
				t.Fatalf("run: %v %v", x, err)
			}
			if rep := sec.RepSize(fde); rep != 16 || len(fde.FREs) != 2 {
				t.Fatalf(".plt FDE %d: rep_size %d, %d rows; want 16 and 2", pcmask, rep, len(fde.FREs))
			}
			for j := range fde.FREs {
				var others []uint64
				for stub := range stubs[j] {
					if stub > 0 {
						others = append(others, stub)
					}
				}
				if len(others) == 0 {
					t.Errorf(".plt row %d (%s) exercised in stubs %v; want stubs after the first too", j, sec.FormatRow(pcmask, j), stubs[j])
				}
			}
			if e.SFrameVersion == 1 {
				// PLT0 (push GOT[1]; jmp *GOT[2]) is an ordinary FDE.
				plt0 := -1
				for i := range sec.FDEs {
					if sec.FDEs[i].Start == pltStart {
						plt0 = i
					}
				}
				if plt0 < 0 {
					t.Fatal("V1: no FDE for PLT0")
				}
				for j := range sec.FDEs[plt0].FREs {
					if hits[[2]int{plt0, j}] == 0 {
						t.Errorf("PLT0 row %d (%s) never exercised", j, sec.FormatRow(plt0, j))
					}
				}
			}
			t.Logf(".plt FDE %d rows: %s", pcmask, fmt.Sprint(stubs))

			// The report's FRE coverage counts them.
			rep, err := Run(path, Options{Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e)}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.RowsNeverReached {
				if r.FDE == pcmask {
					t.Errorf("report: .plt row %d listed as never reached", r.FRE)
				}
			}
			if rep.RowsExercised < len(fde.FREs) {
				t.Errorf("report: %d rows exercised", rep.RowsExercised)
			}
		})
	}
}
