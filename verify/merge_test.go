//go:build cgo

package verify

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
)

// TestMergeBounds: within a mergeable interval of Target.mergeBounds,
// everything a merged run's result rests on besides the registers and
// memory is the same at every PC: the unwinder's FDE and FRE row (or no
// FDE), the row's extent, the symbol and the object — checked at every PC
// of every interval (of a static program, and of a dynamic one with its
// libraries mapped); intervals of one class lie in one FDE, symbol and
// object and have rows of the same rules; and PCMASK FDEs (PLT rows) are
// never mergeable.
func TestMergeBounds(t *testing.T) {
	for _, rel := range []string{"v3/x86-64/many-O2-static", "v3/aarch64/cold-O2-dynamic", "v2/x86-64/recurse-O2-dynamic"} {
		t.Run(rel, func(t *testing.T) {
			e := testcorpus.Lookup(t, rel)
			path := filepath.Join(testcorpus.Dir(t), rel)
			tg, err := Open(path, linux.Config{Args: []string{path}, Sysroot: testcorpus.Sysroot(t, &e), Stdout: io.Discard, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if _, err := tg.Process.Run(); err != nil {
				t.Fatal(err)
			}
			bounds, class, _, _ := tg.mergeBounds()
			type classKey struct {
				sec   *sframe.Section
				fde   int
				rules sframe.Row
				sym   string
				obj   *linux.Object
			}
			classes := map[uint32]classKey{}
			shared := 0
			type key struct {
				fde, fre int
				err      bool
				lo, hi   uint64
				ok       bool
				sym      string
				obj      *linux.Object
			}
			at := func(pc uint64) key {
				var k key
				sec, row, err := tg.Unwinder.Lookup(pc)
				k.err = err != nil
				if err == nil {
					k.fde, k.fre = row.FDE, row.FRE
					k.lo, k.hi, k.ok = sec.RowExtent(pc)
				}
				k.sym, _, _ = tg.Symbols.Lookup(pc)
				k.obj = tg.Process.ObjectAt(pc)
				return k
			}
			pcs, masked := 0, 0
			for i := 0; i+1 < len(bounds); i++ {
				if class[i] == 0 {
					masked++
					continue
				}
				lo, hi := bounds[i], min(bounds[i+1], bounds[i]+1<<16)
				want := at(lo)
				sec, row, err := tg.Unwinder.Lookup(lo)
				ck := classKey{sec: sec, fde: row.FDE, rules: row, sym: want.sym, obj: want.obj}
				ck.rules.FDE, ck.rules.FRE = 0, 0
				if old, ok := classes[class[i]]; !ok {
					classes[class[i]] = ck
				} else if shared++; err != nil || old != ck {
					t.Fatalf("interval [%#x, %#x) of class %d: %+v (%v), another of the class: %+v", bounds[i], bounds[i+1], class[i], ck, err, old)
				}
				for pc := lo + 1; pc < hi; pc++ {
					if got := at(pc); got != want {
						t.Fatalf("interval [%#x, %#x): at %#x %+v, at %#x %+v", bounds[i], bounds[i+1], lo, want, pc, got)
					}
					pcs++
				}
			}
			plt := 0
			for _, sec := range tg.Unwinder.Sections() {
				for j := range sec.FDEs {
					f := &sec.FDEs[j]
					if f.PCType() != sframe.PCMask {
						continue
					}
					for pc := f.Start; pc < f.Start+uint64(f.Size); pc++ {
						k, _ := slices.BinarySearch(bounds, pc+1)
						if k--; k >= 0 && class[k] != 0 {
							t.Fatalf("%#x in the PCMASK FDE at %#x is in a mergeable interval [%#x, %#x)", pc, f.Start, bounds[k], bounds[k+1])
						}
						plt++
					}
				}
			}
			if e.Link == "dynamic" && e.Arch == "x86-64" && plt == 0 {
				t.Error("no PCMASK FDE checked")
			}
			if shared == 0 {
				t.Error("no two intervals share a class")
			}
			t.Logf("%d intervals, %d not mergeable, %d in a class with another, %d PCs checked", len(bounds)-1, masked, shared, pcs)
		})
	}
}

// runToExit verifies the program at path with its output discarded,
// batched (batch 0) or instruction by instruction (1), and fails the test
// unless the program exited.
func runToExit(t *testing.T, path string, batch int) *Report {
	t.Helper()
	rep, err := Run(path, Options{Batch: batch, Config: linux.Config{Stdout: io.Discard, Stderr: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Exited {
		t.Fatalf("stopped: %s", rep.Stop)
	}
	return rep
}

// TestStoresUnderTheUnwind: a run of instructions with the same registers
// in one row goes on past stores (emu.Engine.SetMerge), but where a store
// hits a word the unwind read — the return address, then the caller's FP
// overwritten and put back, then, from a callee, the return address one
// frame up (testdata/src/slotstore.S) — the instructions after it are
// checked one by one with the memory they saw: an RA is wrong at exactly
// 4 + 3 of them and the FP at 3, batched as instruction by instruction,
// and the reports are the same.
func TestStoresUnderTheUnwind(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			path := filepath.Join("testdata", "slotstore-"+a)
			exact, batched := runToExit(t, path, 1), runToExit(t, path, 0)
			if exact.Counts["ra"] != 7 || exact.Counts["fp"] != 3 {
				t.Errorf("exact: %v, want ra 7 and fp 3", exact.Counts)
			}
			depth1 := 0
			for _, p := range exact.Problems {
				if p.Depth == 1 && p.Kind == "ra" {
					depth1 += int(p.Hits)
				}
			}
			if depth1 != 3 {
				t.Errorf("exact: %d RA problems at depth 1 (the callee overwriting its caller's slot), want 3", depth1)
			}
			exact.Seconds, batched.Seconds = 0, 0
			if !reflect.DeepEqual(exact, batched) {
				t.Errorf("reports differ:\nexact   %v\nbatched %v", exact.Counts, batched.Counts)
			}
		})
	}
}

// TestStoreThenMove: a store into frame 0's return-address slot, then SP
// moved into other SFrame rows (a push, a sub) before the slot is put
// back (testdata/src/keystore.S): the runs the engine extends across the
// moves read the slot again (emu's frame key reuses a word it read only
// while no store hit it), and the RA is wrong at exactly the 4
// instructions of each of the 3 calls, batched as instruction by
// instruction.
func TestStoreThenMove(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			path := filepath.Join("testdata", "keystore-"+a)
			exact, batched := runToExit(t, path, 1), runToExit(t, path, 0)
			if exact.Counts["ra"] != 12 || len(exact.Counts) != 3 {
				t.Errorf("exact: %v, want ra 12 besides ok and no-fde", exact.Counts)
			}
			exact.Seconds, batched.Seconds = 0, 0
			if !reflect.DeepEqual(exact, batched) {
				t.Errorf("reports differ:\nexact   %v\nbatched %v", exact.Counts, batched.Counts)
			}
		})
	}
}

// TestTimeoutClock: with a timeout, the run looks at the clock at least
// every timeCheckInsns instructions, also when the instructions arrive
// in long merged records (testdata/src/storeloop.S: a loop storing to the
// stack, 64 K instructions a record): once every 4096 records would be
// never there.
func TestTimeoutClock(t *testing.T) {
	defer func(c func() time.Time) { clock = c }(clock)
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			reads := uint64(0)
			clock = func() time.Time { reads++; return time.Now() }
			rep, err := Run(filepath.Join("testdata", "storeloop-"+a), Options{Timeout: time.Hour, Config: linux.Config{Stdout: io.Discard, Stderr: io.Discard}})
			if err != nil || !rep.OK() {
				t.Fatalf("%v %+v", err, rep)
			}
			if want := rep.Instructions / timeCheckInsns; reads < want || reads == 0 {
				t.Errorf("the clock was read %d times in %d instructions, want at least %d", reads, rep.Instructions, max(want, 1))
			}
		})
	}
}

// TestProblemRunsMerge: where every instruction's unwind goes wrong in a
// caller's frame — below a call that ended its function, as busybox's
// applets and Tcl run (testdata/src/callend.c: the return address in
// padding, or on the next function's first byte) — batched runs still
// count whole: the problem lies in the callers' frames, the same at each
// instruction of a run, and is counted PC by PC as instruction by
// instruction. So do runs in a function whose own rows are wrong (mid's
// CFA 8 too low or too high: frame 0 wrong, a problem of its own at each
// PC and row).
// The reports are identical, and batched checks are a small part of the
// instructions (before, each instruction was checked on its own).
func TestProblemRunsMerge(t *testing.T) {
	for _, tc := range []struct {
		arch   string
		next   bool  // through dispatch_next: the next function's first row
		mutate int32 // added to mid's CFA offsets
		kind   string
	}{
		{"x86_64", false, 0, "ended-early"},
		{"x86_64", true, 0, "cfa"},
		{"aarch64", false, 0, "ended-early"},
		{"aarch64", true, 0, "unwind-error"},
		{"x86_64", true, -8, "cfa"},
		{"aarch64", true, -8, "cfa"},
		{"x86_64", true, 8, "cfa"},
		{"aarch64", true, 8, "cfa"},
	} {
		name := fmt.Sprintf("%s/%s", tc.arch, tc.kind)
		if tc.mutate != 0 {
			name += fmt.Sprintf("/mid%+d", tc.mutate)
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "callend-"+tc.arch)
			args, status := []string{path}, 77
			if tc.next {
				args, status = append(args, "next"), 1
			}
			run := func(batch int) (*Report, uint64) {
				f, err := sframe.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if tc.mutate != 0 {
					mutateFunction(t, path, f.Section, "mid", tc.mutate)
				}
				tg, err := OpenSection(path, f.Section, linux.Config{Args: args, Stdout: io.Discard, Stderr: io.Discard})
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				rep, err := tg.run(Options{Batch: batch})
				if err != nil || !rep.Exited || rep.ExitStatus != status {
					t.Fatalf("%v: %s, status %d", err, rep.Stop, rep.ExitStatus)
				}
				return rep, tg.Checker.Checks
			}
			exact, exactChecks := run(1)
			batched, checks := run(0)
			if exact.Failures < exact.Instructions*9/10 || exact.Counts[tc.kind] < exact.Instructions/2 {
				t.Errorf("exact: %v, want failures at nearly all of %d instructions, most %s", exact.Counts, exact.Instructions, tc.kind)
			}
			var depth0 uint64
			for _, p := range exact.Problems {
				if p.Depth == 0 {
					depth0 += p.Hits
				}
			}
			if tc.mutate != 0 && depth0 < exact.Instructions/2 || tc.mutate == 0 && depth0 > 0 {
				t.Errorf("exact: %d instructions with frame 0 wrong, of %d", depth0, exact.Instructions)
			}
			if exactChecks != exact.Instructions {
				t.Errorf("exact: %d checks of %d instructions", exactChecks, exact.Instructions)
			}
			if checks > batched.Instructions/4 {
				t.Errorf("batched: %d checks of %d instructions: the runs were checked instruction by instruction", checks, batched.Instructions)
			}
			exact.Seconds, batched.Seconds = 0, 0
			if !reflect.DeepEqual(exact, batched) {
				t.Errorf("reports differ:\nexact   %+v\nbatched %+v", exact, batched)
			}
			t.Logf("%d instructions, %d checks batched; %v", exact.Instructions, checks, exact.Counts)
		})
	}
}

// TestMutationsBatchEqualsExact: with random rows made wrong (CFA, RA or
// FP offsets by ±8 or ±16, the CFA's base register swapped; one to three
// rows at a time, a fixed seed) in callend (problems below a noreturn
// call already) and retaddr (return addresses moved by hand, JIT code),
// and with every row's CFA or FP offset off by ±8 in those and in the
// real-world corpus's static lua (runs across rows, wrong in frame 0 at
// each of their PCs), the batched and the instruction-by-instruction
// reports are identical, whichever frames the problems land in and
// whichever runs the engine merged or extended.
func TestMutationsBatchEqualsExact(t *testing.T) {
	root, err := testcorpus.Root()
	if err != nil {
		t.Fatal(err)
	}
	lua := func(arch string) string {
		path := filepath.Join(root, "testdata", "realworld", "v3", arch, "lua-static")
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%v (make testdata unpacks the real-world corpus)", err)
		}
		return path
	}
	script := []string{"-e", "local s = 0 for i = 1, 300 do s = s + i end local t = {} for i = 1, 200 do t[i] = (i * 37) % 101 end table.sort(t) print(s, t[1])"}
	fields := []sframe.MutationField{sframe.MutateCFA, sframe.MutateRA, sframe.MutateFP, sframe.MutateBase}
	deltas := []int32{-16, -8, 8, 16}
	for _, tc := range []struct {
		name, path string
		args       [2][]string // for even and odd iterations
		random     int         // iterations with random rows
	}{
		{"callend-x86_64", filepath.Join("testdata", "callend-x86_64"), [2][]string{nil, {"next"}}, 16},
		{"callend-aarch64", filepath.Join("testdata", "callend-aarch64"), [2][]string{nil, {"next"}}, 16},
		{"retaddr-x86_64", filepath.Join("testdata", "retaddr-x86_64"), [2][]string{}, 16},
		{"retaddr-aarch64", filepath.Join("testdata", "retaddr-aarch64"), [2][]string{}, 16},
		{"lua-x86-64", lua("x86-64"), [2][]string{script, script}, 0},
		{"lua-aarch64", lua("aarch64"), [2][]string{script, script}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(16, uint64(len(tc.name))))
			run := func(batch int, muts []sframe.Mutation, args []string) *Report {
				f, err := sframe.Open(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				for _, m := range muts {
					if err := f.Section.Apply(m); err != nil {
						t.Fatal(err)
					}
				}
				rep, err := runSection(tc.path, f.Section, Options{Batch: batch, Args: args, Config: linux.Config{Stdout: io.Discard, Stderr: io.Discard}})
				if err != nil {
					t.Fatalf("%v: %v", muts, err)
				}
				rep.Seconds = 0
				return rep
			}
			f, err := sframe.Open(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			sec := f.Section // collects the mutations tried: only whether one applies matters
			f.Close()
			changed := 0
			iters := tc.random + 4
			for iter := 0; iter < iters; iter++ {
				args := tc.args[iter%2]
				var muts []sframe.Mutation
				if k := iter - tc.random; k >= 0 {
					// Every row: CFA -8, CFA +8, FP -8, FP +8.
					m := sframe.Mutation{Field: [2]sframe.MutationField{sframe.MutateCFA, sframe.MutateFP}[k/2], Delta: [2]int32{-8, 8}[k%2]}
					for m.FDE = range sec.FDEs {
						for m.FRE = range sec.FDEs[m.FDE].FREs {
							if sec.Apply(m) == nil {
								muts = append(muts, m)
							}
						}
					}
				}
				for want := 1 + rng.IntN(3); iter < tc.random && len(muts) < want; {
					m := sframe.Mutation{FDE: rng.IntN(len(sec.FDEs)), Field: fields[rng.IntN(len(fields))], Delta: deltas[rng.IntN(len(deltas))]}
					m.FRE = rng.IntN(len(sec.FDEs[m.FDE].FREs))
					if sec.Apply(m) == nil {
						muts = append(muts, m)
					}
				}
				base, exact, batched := run(0, nil, args), run(1, muts, args), run(0, muts, args)
				if !reflect.DeepEqual(exact.Counts, base.Counts) {
					changed++
				}
				if !reflect.DeepEqual(exact, batched) {
					t.Errorf("%d mutations (%v ...), args %q: reports differ:\nexact   %v %+v\nbatched %v %+v", len(muts), muts[0], args, exact.Counts, exact.Problems, batched.Counts, batched.Problems)
				}
			}
			if changed < iters/4 {
				t.Errorf("only %d of %d mutated sections changed the outcomes", changed, iters)
			}
			t.Logf("%d mutated sections, %d changed the outcomes", iters, changed)
		})
	}
}
