//go:build cgo

package verify

import (
	"bytes"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/linux"
)

// TestContextSwitches: coroutines on glibc's ucontext (testdata/src/
// context.c: new contexts, switches among them and back to main, stacks
// reused, contexts whose stacks lie in their caller's frame, longjmp
// within a context and out of it) verify OK on
// both architectures: the shadow stack parks the call stack a switch
// leaves, starts one for a new context and resumes the right one. Before,
// it kept one call stack, and the unwinds of the coroutines' frames were
// called wrong (CFA, RA) at thousands of instructions. The report counts
// the switches, and batched and exact reports are the same.
func TestContextSwitches(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			run := func(batch int) *Report {
				var out bytes.Buffer
				rep, err := Run(filepath.Join("testdata", "context-"+a), Options{Batch: batch, Config: linux.Config{Stdout: &out}})
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != "57441 111 242\n" {
					t.Errorf("output %q, want 57441 111 242", out.String())
				}
				rep.Seconds = 0
				return rep
			}
			rep := run(0)
			// (No instruction is unterminated: after the longjmp out of
			// a context, its caller's call stack is back under it.)
			if !rep.OK() || rep.ExitStatus != 0 || rep.Counts[Unterminated.String()] != 0 {
				t.Errorf("%s: %s, counts %v", rep.Verdict(), rep.Stop, rep.Counts)
				for i, p := range rep.Problems {
					if i == 5 {
						break
					}
					t.Errorf("  %s at %s (frame %d at %s): want %#x got %#x %s", p.Kind, p.Symbol, p.Depth, p.FrameSymbol, p.Want, p.Got, p.Error)
				}
			}
			kinds := anomalyCounts(rep)
			// 50 contexts 3 times, the one in run_in_frame, the two in
			// run_two_in_frame and the one in run_jumps; every switch
			// back to a context or to main is a resume.
			if kinds["new-context"] != 154 || kinds["context-switch"] < 600 || len(kinds) != 2 {
				t.Errorf("shadow stack anomalies %v, want 154 new contexts, switches, nothing else", kinds)
			}
			if exact := run(1); !reflect.DeepEqual(exact, rep) {
				t.Errorf("exact report differs from batched:\n%+v\n%+v", exact, rep)
			}
		})
	}
}

// TestHandWrittenSwitch: coroutines switched by hand-written assembly
// without CFI, as Ruby's and boost.context's (testdata/src/handswitch.c):
// a new context entered by ret with 0 as its return address (x86-64) or
// x30 at its own entry (AArch64), then resumes. OK on both architectures,
// one new context and 9 switches back; before, both runs were
// MISMATCHes (498 and 574 instructions). On AArch64 the unwind goes on past the
// context's entry function, whose row cannot mark the end of the stack:
// unterminated, as a program's entry point built with binutils 2.40.
func TestHandWrittenSwitch(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(filepath.Join("testdata", "handswitch-"+a), Options{})
			if err != nil {
				t.Fatal(err)
			}
			kinds := anomalyCounts(rep)
			if !rep.OK() || rep.ExitStatus != 104 || kinds["new-context"] != 1 || kinds["context-switch"] != 9 || len(kinds) != 2 {
				t.Errorf("%s, exit status %d, counts %v, shadow stack %v; want OK, 104, one new context, 9 switches", rep.Verdict(), rep.ExitStatus, rep.Counts, kinds)
			}
		})
	}
}

// anomalyCounts returns the report's shadow-stack anomalies by kind.
func anomalyCounts(rep *Report) map[string]uint64 {
	kinds := map[string]uint64{}
	for _, an := range rep.Anomalies {
		kinds[an.Kind] = an.Count
	}
	return kinds
}
