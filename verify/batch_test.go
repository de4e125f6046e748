//go:build cgo

package verify

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
)

// TestBatchEqualsExact: verifying in batches (memory replayed from the
// store log, results and tails reused) reports exactly what handing each
// instruction to Go before it runs reports, on both architectures, with
// C++ exceptions, longjmp, realigned (DRAP) frames, FLEX rules on other
// registers (asm: handed over live), threads, signals, dynamically linked
// programs and a fault-injected binary. Batched, runs of instructions
// arrive merged (Target.merge): this is also their equivalence test.
func TestBatchEqualsExact(t *testing.T) {
	dir := testcorpus.Dir(t)
	progs := []string{
		"v3/x86-64/nolibc-O2", "v3/aarch64/nolibc-O0-pac-standard", "v2/aarch64/nolibc-O2",
		"v3/x86-64/asm-O2-static", "v3/aarch64/asm-O2-static", "v1/x86-64/asm-O0-static",
		"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static", "v2/x86-64/setjmp-O2-static",
		"v3/x86-64/realign-O2-static", "v3/aarch64/vla-O0-static",
		// Threads, signals (handlers, nested, SIGSEGV left by
		// siglongjmp, an alternate stack, ITIMER_VIRTUAL), C++ threads
		// with exceptions, files, dynamically linked programs with
		// their sysroot's libraries (no SFrame: long NoFDE runs).
		"v3/x86-64/pthreads-O2-static", "v3/aarch64/pthreads-O0-dynamic",
		"v3/x86-64/signals-O2-dynamic", "v3/aarch64/signals-O2-static",
		"v2/x86-64/stdthread-O2-dynamic", "v1/aarch64/files-O2-static",
		"clang23/x86-64/except-O2-dynamic",
	}
	// And v3/x86-64/nolibc-O0 with the CFA offset of every exercised row
	// of fib off by 8 (fault injection).
	progs = append(progs, "v3/x86-64/nolibc-O0 (fib mutated)")
	for _, prog := range progs {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			name, mutated := strings.CutSuffix(prog, " (fib mutated)")
			path := filepath.Join(dir, name)
			run := func(batch int) *Report {
				f, err := sframe.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if mutated {
					fib := mutateFunction(t, path, f.Section, "fib", 8)
					t.Logf("mutated %d rows of fib", fib)
				}
				e := testcorpus.Lookup(t, name)
				rep, err := runSection(path, f.Section, Options{Batch: batch, Config: linux.Config{Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard}})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			exact, batched := run(1), run(0)
			if mutated && exact.Failures == 0 {
				t.Fatal("the mutation was not caught")
			}
			exact.Seconds, batched.Seconds = 0, 0
			if !reflect.DeepEqual(exact, batched) {
				t.Errorf("reports differ:\nexact   %+v\nbatched %+v", exact, batched)
			}
			t.Logf("%d instructions, %v", exact.Instructions, exact.Counts)
		})
	}
}

// mutateFunction adds delta to the CFA offset of every row of the named
// function and returns how many rows changed.
func mutateFunction(t *testing.T, path string, sec *sframe.Section, name string, delta int32) int {
	t.Helper()
	i := functionFDE(t, path, sec, name)
	for j := range sec.FDEs[i].FREs {
		if err := sec.Apply(sframe.Mutation{FDE: i, FRE: j, Field: sframe.MutateCFA, Delta: delta}); err != nil {
			t.Fatal(err)
		}
	}
	return len(sec.FDEs[i].FREs)
}

// TestKeptRegisters: the C hook reads SP, FP and LR before an instruction
// only when the instruction before it may have changed them
// (arch.Arch.KeepsFrame) in a way it does not compute (StackEffect,
// FrameMove, which some of the programs must have used); checking every
// kept value against a read, on
// programs of both architectures with calls, returns, frame pointers,
// exceptions, longjmp, realigned stacks, VLAs, pointer authentication,
// threads, signals and dynamic linking, none is wrong. (On the real-world
// corpus's lua, 85% of the reads are saved.) Also on those programs, runs
// go on where the frame registers change (emu.Engine.SetExtend), and the
// frame-0 key the engine computes for a run's first instruction from its
// recipe is the unwinder's at every run (Checker.KeyMisses).
func TestKeptRegisters(t *testing.T) {
	dir := testcorpus.Dir(t)
	var extensions, moved atomic.Uint64
	t.Cleanup(func() {
		if extensions.Load() == 0 {
			t.Error("no run went on with other registers")
		}
		if moved.Load() == 0 {
			t.Error("no registers were computed after a move (arch.Arch.FrameMove)")
		}
	})
	for _, prog := range []string{
		"v3/x86-64/nolibc-O0", "v3/aarch64/nolibc-O0-pac-standard", "v1/x86-64/asm-O0-static",
		"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static", "v2/x86-64/setjmp-O2-static",
		"v3/x86-64/realign-O2-static", "v3/aarch64/vla-O0-static",
		"v3/x86-64/pthreads-O2-static", "v3/aarch64/pthreads-O0-dynamic",
		"v3/x86-64/signals-O2-dynamic", "v3/aarch64/signals-O2-static",
	} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, prog)
			e := testcorpus.Lookup(t, prog)
			tg, err := Open(path, linux.Config{Args: []string{path}, Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			tg.Process.Engine.CheckKeptRegisters(true)
			rep, err := tg.run(Options{})
			if err != nil || !rep.Exited {
				t.Fatalf("%v %+v", err, rep)
			}
			kept, wrong := tg.Process.Engine.KeptRegisters()
			if wrong != 0 {
				t.Errorf("%d of %d kept register values were wrong", wrong, kept)
			}
			if kept == 0 {
				t.Errorf("registers kept at none of %d instructions", rep.Instructions)
			}
			// Runs that went on with other registers: the engine's key
			// (its recipes) agreed with the unwinder's at every run's
			// start, and there were some (not in every program: an instruction's
			// flow is known from its second run on).
			ext := tg.Process.Engine.Extended()
			if tg.Checker.KeyMisses != 0 {
				t.Errorf("the engine's frame-0 key differed from the unwinder's at %d runs", tg.Checker.KeyMisses)
			}
			extensions.Add(ext)
			moved.Add(tg.Process.Engine.MovedRegisters())
			t.Logf("kept at %d of %d instructions (%d after moves); %d extensions", kept, rep.Instructions, tg.Process.Engine.MovedRegisters(), ext)
		})
	}
}
