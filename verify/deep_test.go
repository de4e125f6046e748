//go:build cgo

package verify

import (
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// deepGuest writes a guest that recurses depth frames deep (rec calls
// itself depth-1 times) with a frame pointer in every frame, and right
// SFrame data.
func deepGuest(t *testing.T, a *arch.Arch, depth int) string {
	t.Helper()
	if a == arch.AMD64 {
		code := guestCode(t, fmt.Sprintf(`
bf%08x     // _start: mov edi, depth (little-endian below)
e809000000 // call rec
31ff       // xor edi, edi
b8e7000000 // mov eax, 231
0f05       // syscall (exit_group)
55         // rec: push rbp
4889e5     // mov rbp, rsp
ffcf       // dec edi
7405       // jz 1f
e8f3ffffff // call rec
5d         // 1: pop rbp
c3         // ret
`, le32(uint32(depth))))
		return guestELF(t, a, code, []guestFunc{
			{"_start", 0, 0x13, []sframe.FRE{outermostRow()}},
			{"rec", 0x13, 0xf, []sframe.FRE{spRow(0, 8), spRow(1, 16, -16), fpRow(4, 16, -16), spRow(0xe, 8)}},
		}, false)
	}
	code := guestCode(t, fmt.Sprintf(`
%08x // _start: mov w0, #depth
04000094 // bl rec
000080d2 // mov x0, #0
c80b80d2 // mov x8, #94
010000d4 // svc #0 (exit_group)
fd7bbfa9 // rec: stp x29, x30, [sp, #-16]!
fd030091 // mov x29, sp
00040071 // subs w0, w0, #1
40000054 // b.eq 1f
fcffff97 // bl rec
fd7bc1a8 // 1: ldp x29, x30, [sp], #16
c0035fd6 // ret
`, le32(0x52800000|uint32(depth)<<5)))
	return guestELF(t, a, code, []guestFunc{
		{"_start", 0, 0x14, []sframe.FRE{outermostRow()}},
		{"rec", 0x14, 0x1c, []sframe.FRE{spRow(0, 0), spRow(4, 16, -8, -16), fpRow(8, 16, -8, -16), spRow(0x18, 0)}},
	}, false)
}

// le32 returns v with its bytes swapped, so that %08x prints it in
// little-endian order.
func le32(v uint32) uint32 { return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24 }

// TestDeepRecursion: a stack 5000 frames deep is unwound to its end and
// verifies clean: no frame limit unless asked for.
func TestDeepRecursion(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(deepGuest(t, a, 5000), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Counts["ok"] != rep.Instructions || rep.Instructions < 5*5000 {
				t.Errorf("%s: %d instructions, %v, verdict %s: %s", rep.Stop, rep.Instructions, rep.Counts, rep.Verdict(), rep.Incomplete)
			}
			t.Logf("%d instructions, %v", rep.Instructions, rep.Counts)
		})
	}
}

// TestMaxFrames: a frame limit cuts the deep walks, which count as cut,
// not as failures, and make the run incomplete (exit status 2); a limit
// the stack stays within changes nothing.
func TestMaxFrames(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			t.Parallel()
			path := deepGuest(t, a, 300)
			for _, batch := range []int{1, DefaultBatch} {
				rep, err := Run(path, Options{MaxFrames: 100, Batch: batch})
				if err != nil {
					t.Fatal(err)
				}
				cut := rep.Counts["cut"]
				// The walks with more than 100 frames are cut: those of
				// rec's 7 instructions 100 to 299 calls deep, and its 6
				// at the deepest.
				if want := uint64(7*200 + 6); cut != want || rep.Failures != 0 || rep.Counts["ok"]+cut != rep.Instructions {
					t.Errorf("batch %d: %d cut (want %d), %v, %d failures", batch, cut, want, rep.Counts, rep.Failures)
				}
				if rep.Complete || rep.OK() || rep.Verdict() != "INCOMPLETE" || !strings.Contains(rep.Incomplete, "cut at the frame limit of 100") {
					t.Errorf("batch %d: complete %v, verdict %s, incomplete %q", batch, rep.Complete, rep.Verdict(), rep.Incomplete)
				}
				var text strings.Builder
				rep.WriteText(&text, 5)
				if !strings.Contains(text.String(), "INCOMPLETE") || !strings.Contains(text.String(), "not every frame was checked") {
					t.Errorf("text report:\n%s", text.String())
				}
			}
			rep, err := Run(path, Options{MaxFrames: 301})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Counts["ok"] != rep.Instructions {
				t.Errorf("limit above the depth: %v, verdict %s: %s", rep.Counts, rep.Verdict(), rep.Incomplete)
			}
		})
	}
}

// TestCheckerEqualsCheckDeep: on a deep stack, with and without a frame
// limit, the memoizing Checker gives exactly the result of a full unwind
// at every instruction.
func TestCheckerEqualsCheckDeep(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		path := deepGuest(t, a, 400)
		for _, limit := range []int{0, 150, 401, 402} {
			for _, batch := range []int{1, DefaultBatch} {
				t.Run(fmt.Sprintf("%s/limit-%d/batch-%d", a.Name, limit, batch), func(t *testing.T) {
					t.Parallel()
					tg, err := Open(path, linux.Config{})
					if err != nil {
						t.Fatal(err)
					}
					defer tg.Close()
					if err := tg.Batch(batch); err != nil {
						t.Fatal(err)
					}
					p, s, u, c := tg.Process, tg.Session, tg.Unwinder, tg.Checker
					u.SetMaxFrames(limit)
					mem, regs := Memory{p.Engine}, EngineRegs(p.Engine)
					n := 0
					kinds := map[Kind]int{}
					s.Observe(func(r shadow.Record) bool {
						want := Check(u, r, mem, s.Shadow.Frames(), regs)
						got := c.CheckStack(r, s.Shadow)
						kinds[got.Kind]++
						if !reflect.DeepEqual(got, want) && n < 5 {
							n++
							t.Errorf("at %s (depth %d): Checker %+v, Check %+v", s.Syms.Format(r.PC), s.Shadow.Depth(), got, want)
						}
						return true
					})
					if _, err := p.Run(); err != nil {
						t.Fatal(err)
					}
					if c.Reused == 0 || c.TailReused == 0 {
						t.Errorf("the memo was never used (%d results and %d tails reused, %d walks)", c.Reused, c.TailReused, c.Walked)
					}
					if (kinds[Cut] > 0) != (limit > 0 && limit <= 400) || kinds[OK]+kinds[Cut] != sum(kinds) {
						t.Errorf("outcomes %v", kinds)
					}
					t.Logf("%v; %d results and %d tails reused, %d tails unwound in %d steps", kinds, c.Reused, c.TailReused, c.Walked, c.Steps)
				})
			}
		}
	}
}

func sum(m map[Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestDeepRecursionRereads: a recursion 20 000 frames deep that stores, at
// every level, into a local of its outermost caller and into its immediate
// caller's (testdata/src/deeprec.c). verify is OK, and after a store among
// the callers' words it reads again only those the store may have hit:
// fewer than one word per instruction in all, where reading every frame's
// words again cost some 40 000 per record (3.8 s for the program, now
// 0.1 s; 100 000 frames took 95 s). The same one instruction at a time
// (--exact), whose watch goes by the span each instruction stored to.
func TestDeepRecursionRereads(t *testing.T) {
	for _, tc := range []struct {
		arch  string
		batch int
	}{{"x86_64", DefaultBatch}, {"aarch64", DefaultBatch}, {"x86_64", 1}, {"aarch64", 1}} {
		t.Run(fmt.Sprintf("%s/batch%d", tc.arch, tc.batch), func(t *testing.T) {
			t.Parallel()
			tg, err := Open(filepath.Join("testdata", "deeprec-"+tc.arch), linux.Config{Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			rep, err := tg.run(Options{Batch: tc.batch, Timeout: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.ExitStatus != 83 {
				t.Fatalf("%s, exit status %d, want OK and 83", rep.Verdict(), rep.ExitStatus)
			}
			c := tg.Checker
			if c.Reread >= rep.Instructions {
				t.Errorf("%d words read again for %d instructions", c.Reread, rep.Instructions)
			}
			t.Logf("%d instructions, %d words read again, %d tails unwound in %d steps", rep.Instructions, c.Reread, c.Walked, c.Steps)
		})
	}
}
