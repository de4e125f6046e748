//go:build cgo

package verify

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/linux"
)

// TestReturnAddressesByHand runs testdata/src/retaddr.c — PCRE2-JIT-style
// fast calls that pop the return address and return with push and ret,
// returns by pop and jmp and by add and jmp, ret as a jump, calls to the
// next instruction, a retpoline, in code with and without SFrame data and
// in JIT code — on both architectures, with and without symbols: the
// shadow stack keeps the true stack, so the report is OK with no problem
// (before, it lost a frame at each such return and flagged the right
// unwinds of the callers: unterminated, CFA); the returns no frame
// expected are in the report (Anomalies). retaddr-lost-x86_64 adds JIT
// code that pops its return address and jumps to a function with SFrame
// data: whether its frame still stands there nothing tells, so the
// report says where the shadow stack lost track and is INCOMPLETE, with
// no problem. Batched and exact reports are the same.
func TestReturnAddressesByHand(t *testing.T) {
	for _, tc := range []struct {
		bin, out string
		lost     bool
	}{
		// What each prints natively (x86-64) and under qemu-aarch64.
		{"retaddr-x86_64", "retaddr 125664\n", false},
		{"retaddr-x86_64-stripped", "retaddr 125664\n", false},
		{"retaddr-aarch64", "retaddr 111636\n", false},
		{"retaddr-aarch64-stripped", "retaddr 111636\n", false},
		{"retaddr-lost-x86_64", "retaddr 111764\n", true},
	} {
		t.Run(tc.bin, func(t *testing.T) {
			t.Parallel()
			run := func(batch int) *Report {
				var out bytes.Buffer
				rep, err := Run(filepath.Join("testdata", tc.bin), Options{Batch: batch, Config: linux.Config{Stdout: &out}})
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != tc.out {
					t.Errorf("output %q, want %q", out.String(), tc.out)
				}
				rep.Seconds = 0
				return rep
			}
			rep := run(0)
			if len(rep.Problems) > 0 || !rep.Exited || rep.ExitStatus != 0 {
				t.Errorf("%s: %s, counts %v, problems:", rep.Verdict(), rep.Stop, rep.Counts)
				for _, p := range rep.Problems {
					t.Errorf("  %s at %s (frame %d at %s): want %#x got %#x %s", p.Kind, p.Symbol, p.Depth, p.FrameSymbol, p.Want, p.Got, p.Error)
				}
			}
			if len(rep.Anomalies) == 0 || rep.Anomalies[0].Kind != "unexpected-return" {
				t.Errorf("shadow anomalies %+v, want the returns no frame expected", rep.Anomalies)
			}
			if !tc.lost {
				if !rep.OK() || rep.Counts[Untracked.String()] != 0 || len(rep.LostTrack) != 0 {
					t.Errorf("%s (%s), counts %v, lost track %+v; want OK", rep.Verdict(), rep.Incomplete, rep.Counts, rep.LostTrack)
				}
			} else {
				n := rep.Counts[Untracked.String()]
				if rep.Verdict() != "INCOMPLETE" || n == 0 || !strings.Contains(rep.Incomplete, "lost track") {
					t.Errorf("%s (%s), counts %v; want INCOMPLETE, the shadow stack lost track", rep.Verdict(), rep.Incomplete, rep.Counts)
				}
				if len(rep.LostTrack) != 1 || rep.LostTrack[0].Symbol != "rtail" || rep.LostTrack[0].Hits != n {
					t.Errorf("lost track %+v, want one frame, first lost in rtail, at the %d untracked instructions", rep.LostTrack, n)
				}
				var text bytes.Buffer
				rep.WriteText(&text, 10)
				if !strings.Contains(text.String(), "lost track:") || !strings.Contains(text.String(), "result:       INCOMPLETE") {
					t.Errorf("text report:\n%s", text.String())
				}
			}
			if exact := run(1); !reflect.DeepEqual(rep, exact) {
				t.Errorf("batched and exact reports differ:\n%+v\n%+v", rep, exact)
			}
		})
	}
}
