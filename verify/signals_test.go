//go:build cgo

package verify

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/unwind"
)

// sigframeProgram is testdata/src/sigframe.c: handlers that return through
// the program's own trampoline, whose SFrame V3 FDE has the signal flag.
func sigframeProgram(arch string) string {
	return filepath.Join("testdata", "sigframe-"+arch)
}

// TestSignalFramesVerified runs every scenario of sigframe on both
// architectures: the program prints what it prints natively (x86-64) and
// under qemu-aarch64 (testdata/sigframe.want), the report is OK and counts
// the deliveries, the unwind went through the signal frames into the
// interrupted code and nothing stopped at a trampoline; batched and exact
// checking agree.
func TestSignalFramesVerified(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "sigframe.want"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			run := func(batch int) (*Report, []byte) {
				var out bytes.Buffer
				rep, err := Run(sigframeProgram(a), Options{Batch: batch, Config: linux.Config{Stdout: &out}})
				if err != nil {
					t.Fatal(err)
				}
				rep.Seconds = 0
				return rep, out.Bytes()
			}
			rep, out := run(0)
			if !bytes.Equal(out, want) {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
			if !rep.OK() || rep.Counts[SignalGap.String()] != 0 {
				t.Fatalf("%s: stop %s, counts %v, problems %+v", rep.Verdict(), rep.Stop, rep.Counts, rep.Problems)
			}
			wantSigs := map[string]uint64{"SIGUSR1": 7, "SIGUSR2": 1, "SIGSEGV": 1}
			if rep.SignalsDelivered != 9 || !reflect.DeepEqual(rep.Signals, wantSigs) {
				t.Errorf("delivered %d: %v, want 9: %v", rep.SignalsDelivered, rep.Signals, wantSigs)
			}
			// Every handler runs recurse() (and returns through the
			// trampoline): several hundred instructions unwound through.
			if rep.SignalFrames < 200 {
				t.Errorf("%d frames unwound through signal frames", rep.SignalFrames)
			}
			exact, _ := run(1)
			if !reflect.DeepEqual(rep, exact) {
				t.Errorf("batched and exact reports differ:\n%+v\n%+v", rep, exact)
			}
		})
	}
}

// TestSignalFramesDepth checks, instruction by instruction, that while a
// handler runs the unwind goes through its signal frame and compares the
// interrupted frames beyond it with the truth: in the raise scenario
// (SIGUSR2 delivered inside SIGUSR1's handler) the walks go through one
// and two signal frames, down to main.
func TestSignalFramesDepth(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			tg, err := Open(sigframeProgram(a), linux.Config{Args: []string{"sigframe", "raise"}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			maxSigs := 0
			var deepest Result
			tg.Session.Observe(func(r shadow.Record) bool {
				res := tg.Checker.CheckStack(r, tg.Session.Shadow)
				if res.Kind.Failure() {
					t.Errorf("%#x: %v at depth %d: %v", r.PC, res.Kind, res.Depth, res.Err)
				}
				if res.Signals > maxSigs || res.Signals == maxSigs && res.Checked > deepest.Checked {
					maxSigs, deepest = res.Signals, res
				}
				return true
			})
			if x, _, err := tg.Session.RunUntil(nil, 0); err != nil || x == nil || x.Reason != linux.StopExited {
				t.Fatalf("run: %v %v", x, err)
			}
			// on_usr2 and recurse's frames, a signal frame, sys4,
			// kill_self, on_usr1, a signal frame, sys4, kill_self, level3,
			// level2, level1 (do_raise is inlined into main), main: the
			// walk ends in glibc's __libc_start_call_main, without SFrame
			// data.
			if maxSigs != 2 || deepest.Checked < 12 || !errors.Is(deepest.Frame.Err, unwind.ErrNoFDE) {
				t.Errorf("deepest walk: %d signal frames, %d frames checked (%+v)", maxSigs, deepest.Checked, deepest)
			}
		})
	}
}

// TestSignalFramesInjected mutates the row of sys4 (the interrupted
// function: the signal arrives right after its system call) in force at
// the instruction after the system call: the mutation is caught at depth 0
// there and, while each handler runs, at the interrupted frame beyond its
// signal frame, attributed to that row.
func TestSignalFramesInjected(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			path := sigframeProgram(a)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sym, ok := symbolAddr(t, path, "sys4")
			if !ok {
				t.Fatal("no sys4")
			}
			after := syscallEnd(t, path, a, sym)
			_ = sym
			fde, err := f.Section.FindFDE(after)
			if err != nil {
				t.Fatal(err)
			}
			fre, err := f.Section.FindFRE(&f.Section.FDEs[fde], after)
			if err != nil {
				t.Fatal(err)
			}
			row := [2]int{fde, fre}
			data, err := f.Section.Encode()
			if err != nil {
				t.Fatal(err)
			}
			sec, err := sframe.Decode(data, f.Section.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if err := sec.Apply(sframe.Mutation{FDE: fde, FRE: fre, Field: sframe.MutateCFA, Delta: 16}); err != nil {
				t.Fatal(err)
			}
			tg, err := OpenSection(path, sec, linux.Config{Args: []string{"sigframe", "raise"}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			top, beyond := 0, 0
			tg.Session.Observe(func(r shadow.Record) bool {
				res := tg.Checker.CheckStack(r, tg.Session.Shadow)
				if !res.Kind.Failure() {
					return true
				}
				if got := [2]int{res.Frame.Row.FDE, res.Frame.Row.FRE}; got != row || res.Kind != MismatchCFA {
					t.Errorf("%#x: %v at depth %d attributed to row %v, want %v", r.PC, res.Kind, res.Depth, got, row)
				}
				switch {
				case res.Depth == 0:
					top++
				case res.Depth >= 2 && res.Signals > 0:
					beyond++ // found through a signal frame
				}
				return true
			})
			if x, _, err := tg.Session.RunUntil(nil, 0); err != nil || x == nil {
				t.Fatalf("run: %v %v", x, err)
			}
			if top == 0 || beyond < 50 {
				t.Errorf("caught %d times at the top, %d times beyond a signal frame", top, beyond)
			}
		})
	}
}

// TestSignalGap: where the SFrame data does not mark the trampoline the
// chain ends there as a signal gap, neither a failure nor OK without
// saying so: glibc's __restore_rt and the vDSO's __kernel_rt_sigreturn
// have no SFrame data (the linux package's signals program, SFrame V1),
// and sigframe's own trampoline without its signal flag is no data either.
func TestSignalGap(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(filepath.Join("..", "linux", "testdata", "signals-"+a), Options{Args: []string{"nodefer"}})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Counts[SignalGap.String()] == 0 || rep.SignalFrames != 0 || rep.SignalsDelivered == 0 {
				t.Errorf("signals nodefer: %s, counts %v, %d delivered, %d frames through", rep.Verdict(), rep.Counts, rep.SignalsDelivered, rep.SignalFrames)
			}
			path := sigframeProgram(a)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data, err := f.Section.Encode()
			if err != nil {
				t.Fatal(err)
			}
			sec, err := sframe.Decode(data, f.Section.Addr)
			if err != nil {
				t.Fatal(err)
			}
			cleared := 0
			for i := range sec.FDEs {
				if sec.FDEs[i].Signal() {
					sec.FDEs[i].Info &^= 0x80
					cleared++
				}
			}
			if cleared != 1 {
				t.Fatalf("%d signal FDEs", cleared)
			}
			rep, err = runSection(path, sec, Options{Args: []string{"raise"}})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Counts[SignalGap.String()] == 0 || rep.SignalFrames != 0 {
				t.Errorf("without the signal flag: %s, counts %v, %d frames through", rep.Verdict(), rep.Counts, rep.SignalFrames)
			}
		})
	}
}

// symbolAddr returns the address of function name in the ELF file path.
func symbolAddr(t *testing.T, path, name string) (elf.Symbol, bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s, true
		}
	}
	return elf.Symbol{}, false
}

// syscallEnd returns the address right after the system call instruction
// of function sym (x86-64 syscall, AArch64 svc #0).
func syscallEnd(t *testing.T, path, arch string, sym elf.Symbol) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	code := make([]byte, sym.Size)
	if _, err := text.ReadAt(code, int64(sym.Value-text.Addr)); err != nil {
		t.Fatal(err)
	}
	insn, step := []byte{0x0f, 0x05}, 1
	if arch == "aarch64" {
		insn, step = []byte{0x01, 0x00, 0x00, 0xd4}, 4
	}
	for i := 0; i+len(insn) <= len(code); i += step {
		if bytes.Equal(code[i:i+len(insn)], insn) {
			return sym.Value + uint64(i+len(insn))
		}
	}
	t.Fatalf("no system call in %s", sym.Name)
	return 0
}

// TestJudgeSignalFrame: a frame the truth says is a signal frame ends the
// comparison as a signal gap when the unwind found no data there, or a
// V1/V2 row (no signal flag to mark it); a V3 row without the flag is
// compared (and differs: a wrong row), and a signal frame the unwinder
// recognised is compared.
func TestJudgeSignalFrame(t *testing.T) {
	truth := []shadow.Frame{
		{CFA: 0x8000, ReturnAddr: 0x1010},                                // the interrupted function
		{CFA: 0x7ff0, ReturnAddr: 0x1204, SignalFrame: true, Signal: 10}, // the delivery
		{CFA: 0x7008, ReturnAddr: 0x1500, Signal: 10},                    // the handler
	}
	v := func(version sframe.Version) *sframe.Section {
		return &sframe.Section{Header: sframe.Header{Version: version}}
	}
	for _, tc := range []struct {
		name string
		f    unwind.Frame
		kind Kind
		done bool
	}{
		{"no FDE", unwind.Frame{PC: 0x1500, Err: unwind.ErrNoFDE}, SignalGap, true},
		{"no row", unwind.Frame{PC: 0x1500, Err: unwind.ErrNoFRE}, SignalGap, true},
		{"V2 row", unwind.Frame{PC: 0x1500, HasRow: true, Section: v(sframe.Version2)}, SignalGap, true},
		{"V1 row, unwind error", unwind.Frame{PC: 0x1500, HasRow: true, Section: v(sframe.Version1), Err: unwind.ErrNoRA}, SignalGap, true},
		{"V3 row without the flag", unwind.Frame{PC: 0x1500, HasRow: true, Section: v(sframe.Version3)}, OK, false},
		{"signal frame", unwind.Frame{PC: 0x1500, Signal: true, Section: v(sframe.Version3)}, OK, false},
	} {
		if kind, done := judge(1, &tc.f, truth, nil); kind != tc.kind || done != tc.done {
			t.Errorf("%s: %v %v, want %v %v", tc.name, kind, done, tc.kind, tc.done)
		}
	}
	res := compare2(&unwind.Frame{CFA: 0x7008, RA: 0x1500}, []unwind.Frame{{PC: 0x1500, Err: unwind.ErrNoFDE}}, false, nil, truth, nil)
	if res.Kind != SignalGap || res.Depth != 1 || res.Err == nil || res.Kind.Failure() || res.Kind.Problem() {
		t.Errorf("compare: %+v", res)
	}
}
