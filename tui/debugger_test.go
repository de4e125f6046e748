//go:build cgo

package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/sframetest"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
	"github.com/sframesim/sframesim/verify"
)

// sample copies a corpus binary into a fresh directory, made the working
// directory, under a fixed relative name: argv[0], and so the stack
// addresses on screen, do not depend on where the repository is.
func sample(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("prog", data, 0o755); err != nil {
		t.Fatal(err)
	}
	return "prog"
}

// mutated writes a copy of path with one FRE row's field changed by delta.
func mutated(t testing.TB, path string, m sframe.Mutation) string {
	t.Helper()
	out := path + "-bad"
	if err := sframetest.Rewrite(path, out, func(sec *sframe.Section) error { return sec.Apply(m) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func open(t testing.TB, path string) *Debugger {
	t.Helper()
	d, err := Open(path, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// comparable drops what legitimately differs between two ways of reaching
// the same instruction: the register highlights and the checkpoint count.
func comparable(s State) State {
	s.Checkpoints = 0
	s.Regs = append([]Reg(nil), s.Regs...)
	for i := range s.Regs {
		s.Regs[i].Changed = false
	}
	return s
}

// TestStepBack goes forward to the end of a program, then back to points
// before, and compares the whole screen state with a second debugger that
// only ever went forward: going back through checkpoints and replay is
// exact (registers, memory as the unwind reads it, shadow stack, output).
func TestStepBack(t *testing.T) {
	// (The context programs switch call stacks: the shadow stack's parked
	// ones are part of a checkpoint.)
	for _, name := range []string{"v3/x86-64/nolibc-O2", "v3/aarch64/except-O2-static", "v1/x86-64/except-O2-dynamic", "v1/aarch64/recurse-O2-dynamic",
		"../verify/testdata/context-x86_64", "../verify/testdata/context-aarch64"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "verify", "testdata", filepath.Base(name))
			if !strings.HasPrefix(name, "../") {
				path = sample(t, name)
			}
			d, fwd := open(t, path), open(t, path)
			why, err := d.Continue()
			if err != nil || d.exit == nil {
				t.Fatalf("continue: %q, %v", why, err)
			}
			total := d.Insns()
			if len(d.hist.cps) < 3 {
				t.Fatalf("%d checkpoints over %d instructions", len(d.hist.cps), total)
			}
			for _, at := range []uint64{total / 5, total / 3, total/3 + 1, total / 2, total - 1, 7} {
				if _, err := fwd.Seek(at); err != nil {
					t.Fatal(err)
				}
				if at < fwd.Insns() {
					t.Fatalf("at %d after seeking %d", fwd.Insns(), at)
				}
				if _, err := d.Seek(at); err != nil {
					t.Fatal(err)
				}
				if d.Insns() != at || fwd.Insns() != at {
					t.Fatalf("at %d and %d, want %d", d.Insns(), fwd.Insns(), at)
				}
				a, b := comparable(d.State(20)), comparable(fwd.State(20))
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("state at %d after going back differs:\n%+v\n%+v", at, a, b)
				}
				if d.Output() != fwd.Output() {
					t.Fatalf("output at %d: %q, want %q", at, d.Output(), fwd.Output())
				}
				if at == 7 {
					// The forward debugger must go back too from here on.
					fwd = open(t, path)
				}
			}
			// One step back is one step.
			d.Seek(total / 2)
			d.Step()
			d.Step()
			want := comparable(d.State(20))
			d.Step()
			d.Back(1)
			if got := comparable(d.State(20)); !reflect.DeepEqual(got, want) {
				t.Fatalf("step, back: %+v, want %+v", got, want)
			}
		})
	}
}

// TestCommands checks next, finish, breakpoints, advance and restart on
// the sample program.
func TestCommands(t *testing.T) {
	path := sample(t, "v3/x86-64/nolibc-O2")
	d := open(t, path)
	fib, err := d.Resolve("fib")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := d.Resolve("fib+0x4"); err != nil || a != fib+4 {
		t.Fatalf("fib+0x4: %#x, %v", a, err)
	}
	for _, bad := range []string{"", "nosuch", "0xzz", "fib+zz"} {
		if _, err := d.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
	if !d.ToggleBreakpoint(fib) {
		t.Fatal("breakpoint not set")
	}
	why, err := d.Continue()
	if err != nil || d.s.State().PC != fib || !strings.Contains(why, "breakpoint at fib") {
		t.Fatalf("continue: %q, %v at %#x", why, err, d.s.State().PC)
	}
	depth := d.s.Shadow.Depth()
	// Finish stops at breakpoints (fib is recursive): clear it first.
	d.ToggleBreakpoint(fib)
	// Finish: back in the caller, one frame less.
	if _, err := d.Finish(); err != nil || d.s.Shadow.Depth() != depth-1 {
		t.Fatalf("finish: %v, depth %d, want %d", err, d.s.Shadow.Depth(), depth-1)
	}
	// Next over a call: find one by stepping until a call is next.
	for i := 0; i < 100000; i++ {
		st := d.State(1)
		if strings.Contains(st.Disasm[0].Text, "call") {
			break
		}
		d.Step()
	}
	st := d.State(2)
	if !strings.Contains(st.Disasm[0].Text, "call") {
		t.Fatal("no call found")
	}
	next, depth := st.Disasm[1].PC, d.s.Shadow.Depth()
	before := d.Insns()
	if _, err := d.StepOver(); err != nil || d.s.State().PC != next || d.s.Shadow.Depth() != depth {
		t.Fatalf("next: %v at %#x depth %d, want %#x depth %d", err, d.s.State().PC, d.s.Shadow.Depth(), next, depth)
	}
	if d.Insns() <= before+1 {
		t.Fatalf("next ran %d instructions", d.Insns()-before)
	}
	// Advance to an address, restart.
	if _, err := d.Advance(fib + 4); err != nil || d.s.State().PC != fib+4 {
		t.Fatalf("advance: %v at %#x", err, d.s.State().PC)
	}
	if _, err := d.Restart(); err != nil || d.Insns() != 0 || d.Output() != "" {
		t.Fatalf("restart: %v, at %d, output %q", err, d.Insns(), d.Output())
	}
	// The end: the state says how it ended, and stepping is refused.
	d.Continue()
	if st := d.State(4); !strings.Contains(st.Exit, "exited with status") {
		t.Fatalf("exit: %q", st.Exit)
	}
	if _, err := d.Step(); err == nil {
		t.Fatal("step after the end succeeded")
	}
}

// TestNextMismatch injects a CFA fault into fib's second row and checks
// that m stops at its first use, with the state naming the row, the CFA
// arithmetic and the mismatching frame.
func TestNextMismatch(t *testing.T) {
	path := mutated(t, sample(t, "v3/x86-64/nolibc-O2"), sframe.Mutation{FDE: 5, FRE: 1, Field: sframe.MutateCFA, Delta: 8})
	d := open(t, path)
	why, err := d.NextMismatch()
	if err != nil || !strings.Contains(why, "mismatch") {
		t.Fatalf("%q, %v", why, err)
	}
	st := d.State(10)
	if st.Kind != verify.MismatchCFA || st.Symbol != "fib+0x4" || !strings.Contains(st.Row, "0000000000401064  sp+40") ||
		!strings.HasPrefix(st.Calc[0], "CFA = rsp+40 = 0x7fff") || !st.Frames[0].BadCFA {
		t.Fatalf("state: %+v", st)
	}
	// The next one is at the same row, later.
	at := d.Insns()
	if _, err := d.NextMismatch(); err != nil || d.Insns() <= at || d.State(1).Kind != verify.MismatchCFA {
		t.Fatalf("second mismatch: %v at %d", err, d.Insns())
	}
}

// TestHistoryBounded runs with a small checkpoint budget: the interval
// doubles to stay within it, and going back is still exact.
func TestHistoryBounded(t *testing.T) {
	path := sample(t, "v3/x86-64/nolibc-O2")
	d, fwd := open(t, path), open(t, path)
	d.hist.every, d.hist.maxCount = 1000, 6
	d.Continue()
	total := d.Insns()
	if n := len(d.hist.cps); n > 6 || d.hist.every < total/6 {
		t.Fatalf("%d checkpoints every %d over %d instructions", n, d.hist.every, total)
	}
	for i, c := range d.hist.cps {
		if c.cp.Insns()%d.hist.every != 0 || i > 0 && c.cp.Insns() <= d.hist.cps[i-1].cp.Insns() {
			t.Fatalf("checkpoint %d at %d (every %d)", i, c.cp.Insns(), d.hist.every)
		}
	}
	at := total / 3
	d.Seek(at)
	fwd.Seek(at)
	if a, b := comparable(d.State(8)), comparable(fwd.State(8)); !reflect.DeepEqual(a, b) {
		t.Fatalf("state at %d differs:\n%+v\n%+v", at, a, b)
	}
}

// TestInterrupt stops a long check from another goroutine, as Esc does,
// and then goes on from there.
func TestInterrupt(t *testing.T) {
	d := open(t, sample(t, "v3/x86-64/except-O2-static"))
	go func() {
		for d.Progress() < 1000 {
			time.Sleep(time.Millisecond)
		}
		d.Interrupt()
	}()
	why, err := d.NextMismatch()
	if err != nil || why != "interrupted" || d.Insns() == 0 || d.exit != nil {
		t.Fatalf("%q, %v after %d instructions", why, err, d.Insns())
	}
	at := d.Insns()
	if _, err := d.Step(); err != nil || d.Insns() != at+1 {
		t.Fatalf("step after the interrupt: %v, at %d", err, d.Insns())
	}
}

// BenchmarkStepBack measures going back 100 000 instructions (restore the
// checkpoint before, replay the rest) in a C++ program with exceptions,
// and reports the checkpoint memory.
func BenchmarkStepBack(b *testing.B) {
	for _, name := range []string{"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static"} {
		b.Run(name, func(b *testing.B) {
			d := open(b, sample(b, name))
			d.Continue()
			total := d.Insns()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				d.Seek(total - 1)
				b.StartTimer()
				if _, err := d.Back(100_000); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(total), "insns")
			b.ReportMetric(float64(len(d.hist.cps)), "checkpoints")
			b.ReportMetric(float64(d.hist.bytes)/(1<<20), "checkpoint-MiB")
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		})
	}
}

// TestStepBackFigure prints how long going back 100 000 instructions
// takes at the end of a long run, and the checkpoint memory (a figure, not
// an assertion on time).
func TestStepBackFigure(t *testing.T) {
	d := open(t, sample(t, "v3/x86-64/except-O2-static"))
	start := time.Now()
	d.Continue()
	run := time.Since(start)
	total := d.Insns()
	start = time.Now()
	if _, err := d.Back(100_000); err != nil || d.Insns() != total-100_000 {
		t.Fatalf("back: %v at %d", err, d.Insns())
	}
	back := time.Since(start)
	t.Logf("%d instructions in %v; back 100000 in %v; %d checkpoints, %.1f MiB own pages",
		total, run, back, len(d.hist.cps), float64(d.hist.bytes)/(1<<20))
}

// TestBatchedStopsExact: open-ended runs go in batches and then back to the
// instruction that stopped them; they stop exactly where a run handing
// over one instruction at a time stops (mismatches, a breakpoint hit many
// times, advance), with the same state, on both architectures.
func TestBatchedStopsExact(t *testing.T) {
	const forever = 1 << 62 // a bounded run: one instruction at a time
	cases := []struct {
		name string
		m    *sframe.Mutation
		opts func(d *Debugger) runOpts
		n    int // how many stops in a row
	}{
		{"v3/x86-64/nolibc-O2", &sframe.Mutation{FDE: 5, FRE: 1, Field: sframe.MutateCFA, Delta: 8},
			func(*Debugger) runOpts { return runOpts{bps: true, mismatch: true} }, 3},
		// sys_exit_group's row wrong: the program ends within the batch
		// that finds the mismatch.
		{"v3/x86-64/nolibc-O0", &sframe.Mutation{FDE: 2, FRE: 0, Field: sframe.MutateCFA, Delta: 8},
			func(*Debugger) runOpts { return runOpts{bps: true, mismatch: true} }, 2},
		{"v3/aarch64/nolibc-O2", nil, func(d *Debugger) runOpts {
			fib, err := d.Resolve("fib")
			if err != nil {
				t.Fatal(err)
			}
			d.ToggleBreakpoint(fib)
			return runOpts{bps: true}
		}, 5},
		{"v3/x86-64/except-O2-static", nil, func(d *Debugger) runOpts {
			a, err := d.Resolve("main")
			if err != nil {
				t.Fatal(err)
			}
			return runOpts{bps: true, until: func(r shadow.Record) bool { return r.PC == a }}
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := sample(t, c.name)
			if c.m != nil {
				path = mutated(t, path, *c.m)
			}
			d, ref := open(t, path), open(t, path)
			o, ro := c.opts(d), c.opts(ref)
			ro.max = forever
			for i := 0; i < c.n; i++ {
				why, err := d.run(o)
				if err != nil {
					t.Fatal(err)
				}
				rwhy, err := ref.run(ro)
				if err != nil {
					t.Fatal(err)
				}
				if d.Insns() != ref.Insns() || why != rwhy {
					t.Fatalf("stop %d: batched at %d (%q), one at a time at %d (%q)", i, d.Insns(), why, ref.Insns(), rwhy)
				}
				if a, b := comparable(d.State(20)), comparable(ref.State(20)); !reflect.DeepEqual(a, b) {
					t.Fatalf("stop %d at %d: states differ:\n%+v\n%+v", i, d.Insns(), a, b)
				}
				if d.exit != nil {
					break
				}
			}
		})
	}
}

// TestOpenMalformed: a program whose section breaks a rule of the format
// is refused by OpenConfig, and OpenMalformed steps it with the section as
// read, the header saying so.
func TestOpenMalformed(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	path := sample(t, "v2/x86-64/recurse-O2-static")
	bad := path + "-malformed"
	if err := sframetest.Rewrite(path, bad, func(sec *sframe.Section) error { return sframetest.EmptyDuplicateFDE(sec, 1) }); err != nil {
		t.Fatal(err)
	}
	if d, err := OpenConfig(bad, nil, linux.Config{}); err == nil || !strings.Contains(err.Error(), "--check-malformed") {
		if d != nil {
			d.Close()
		}
		t.Fatalf("OpenConfig of a malformed section: %v", err)
	}
	d, err := OpenMalformed(bad, nil, linux.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Step(); err != nil {
		t.Fatal(err)
	}
	m := New(d)
	if st := d.State(disasmLines); st.Malformed != 1 || st.Insns != 1 {
		t.Errorf("state: %d rules broken, insn %d", st.Malformed, st.Insns)
	}
	if head, _, _ := strings.Cut(m.Screen(), "\n"); !strings.Contains(head, "(x86-64, MALFORMED SFrame)") {
		t.Errorf("header %q", head)
	}
	// A well-formed one says nothing of it.
	if head, _, _ := strings.Cut(New(open(t, path)).Screen(), "\n"); strings.Contains(head, "MALFORMED") || !strings.Contains(head, "(x86-64)") {
		t.Errorf("header %q", head)
	}
}
