//go:build cgo

package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/golden"
	"github.com/sframesim/sframesim/verify"
)

// sigframeProgram copies verify's sigframe test program (handlers that
// return through its own trampoline, whose SFrame V3 FDE has the signal
// flag) into a fresh working directory as "prog", so that argv[0] does not
// depend on the checkout's path.
func sigframeProgram(t *testing.T, arch string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pkgDir, "..", "verify", "testdata", "sigframe-"+arch))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("prog", data, 0o755); err != nil {
		t.Fatal(err)
	}
	return "prog"
}

// frameFuncs lists both stacks of a State, innermost first, functions
// without offsets nor GCC's clone suffixes (level3.constprop.0).
func frameFuncs(s State) (unwound, truth []string) {
	strip := func(name string) string {
		name, _, _ = strings.Cut(name, "+")
		name, _, _ = strings.Cut(name, ".")
		return name
	}
	for _, f := range s.Frames {
		if f.HasUnwound {
			unwound = append(unwound, strip(f.Func))
		}
	}
	for _, name := range trueFuncs(s) {
		truth = append(truth, strip(name))
	}
	return unwound, truth
}

// TestSignalSteps steps into a handler (the status says which signal was
// delivered to which thread, and the signal frame is marked in both
// stacks, between the handler and the interrupted frame), finishes it to
// the trampoline, steps out through rt_sigreturn, and steps back across
// the rt_sigreturn and the delivery to exactly the states seen going
// forward.
func TestSignalSteps(t *testing.T) {
	for _, a := range []string{"x86_64", "aarch64"} {
		t.Run(a, func(t *testing.T) {
			d := open(t, sigframeProgram(t, a))
			handler, err := d.Resolve("on_usr1")
			if err != nil {
				t.Fatal(err)
			}
			kill, err := d.Resolve("kill_self")
			if err != nil {
				t.Fatal(err)
			}
			d.ToggleBreakpoint(kill)
			if why, err := d.Continue(); err != nil || !strings.HasPrefix(why, "breakpoint at kill_self") {
				t.Fatalf("continue: %q %v", why, err)
			}
			d.ToggleBreakpoint(kill)
			// Step until the handler's first instruction.
			var before, entry State
			for i := 0; ; i++ {
				if i == 200 {
					t.Fatal("no delivery in 200 steps")
				}
				before = d.State(10)
				if _, err := d.Step(); err != nil {
					t.Fatal(err)
				}
				if d.State(10).PC == handler {
					break
				}
				if s := d.State(10).Signal; s != "" {
					t.Fatalf("signal %q before the handler", s)
				}
			}
			entryAt := d.Insns()
			entry = d.State(10)
			if !strings.HasPrefix(entry.Signal, "SIGUSR1 delivered to tid 4242: handler at on_usr1") {
				t.Errorf("status %q", entry.Signal)
			}
			uw, tr := frameFuncs(entry)
			// kill_self tail-calls sys4.
			want := []string{"on_usr1", "[signal SIGUSR1] sf_restorer", "sys4", "level3", "level2", "level1"}
			if len(uw) < 6 || !reflect.DeepEqual(uw[:6], want) || len(tr) < 6 || !reflect.DeepEqual(tr[:6], want) {
				t.Errorf("stacks at the handler:\nunwound %q\ntrue    %q", uw, tr)
			}
			if entry.Kind != verify.OK || !strings.Contains(entry.Verdict, "through 1 signal frame") {
				t.Errorf("verdict %v: %s", entry.Kind, entry.Verdict)
			}
			// The next step is no news.
			if _, err := d.Step(); err != nil || d.State(10).Signal != "" {
				t.Fatalf("step in the handler: %q %v", d.State(10).Signal, err)
			}
			// Finish: back in the trampoline, whose frame is the signal
			// frame; SIGUSR2's handler ran nested on the way.
			if _, err := d.Finish(); err != nil {
				t.Fatal(err)
			}
			tramp := d.State(10)
			uw, tr = frameFuncs(tramp)
			if !strings.HasPrefix(tramp.Symbol, "sf_restorer") || len(uw) < 2 || uw[0] != "[signal SIGUSR1] sf_restorer" || tr[0] != uw[0] || uw[1] != "sys4" {
				t.Errorf("after finish at %s:\nunwound %q\ntrue    %q", tramp.Symbol, uw, tr)
			}
			if !strings.HasPrefix(tramp.Signal, "rt_sigreturn in tid 4242: back to ") {
				t.Errorf("after finish (SIGUSR2 returned inside): %q", tramp.Signal)
			}
			// Out through rt_sigreturn: two instructions.
			d.Step()
			atSyscall, atSyscallN := comparable(d.State(10)), d.Insns()
			d.Step()
			out := d.State(10)
			if !strings.HasPrefix(out.Signal, "rt_sigreturn in tid 4242: back to sys4") || !strings.HasPrefix(out.Symbol, "sys4") {
				t.Errorf("after rt_sigreturn at %s: %q", out.Symbol, out.Signal)
			}
			if uw, _ := frameFuncs(out); len(uw) < 2 || uw[0] != "sys4" || uw[1] != "level3" {
				t.Errorf("after rt_sigreturn: %q", uw)
			}
			// Back across rt_sigreturn, then across the delivery.
			if _, err := d.Back(1); err != nil {
				t.Fatal(err)
			}
			if got := comparable(d.State(10)); d.Insns() != atSyscallN || !reflect.DeepEqual(got, atSyscall) {
				t.Errorf("back across rt_sigreturn:\n%+v\nwant\n%+v", got, atSyscall)
			}
			if _, err := d.Seek(entryAt - 1); err != nil {
				t.Fatal(err)
			}
			if got := d.State(10); !reflect.DeepEqual(comparable(got), comparable(before)) || got.Signal != "" {
				t.Errorf("back before the delivery:\n%+v\nwant\n%+v", comparable(got), comparable(before))
			}
			if _, err := d.Step(); err != nil {
				t.Fatal(err)
			}
			if got := d.State(10); !reflect.DeepEqual(comparable(got), comparable(entry)) {
				t.Errorf("stepping into the handler again:\n%+v\nwant\n%+v", comparable(got), comparable(entry))
			}
		})
	}
}

// TestScreenSignal is the screen at the first instruction of the SIGUSR1
// handler (x86-64; instruction counts replaced: static glibc reads the
// program's absolute path).
func TestScreenSignal(t *testing.T) {
	m := screenRun(t, sigframeProgram(t, "x86_64"), 100, 40, "key:B", "type:on_usr1", "enter", "wait", "key:c", "wait")
	scr := m.Screen()
	golden.Check(t, filepath.Join(pkgDir, "testdata", t.Name()+".golden"),
		[]byte(regexp.MustCompile(`insn \d+`).ReplaceAllString(scr, "insn N")+"\n"))
	if !strings.Contains(scr, "SIGUSR1 delivered to tid 4242: handler at on_usr1") || strings.Count(scr, "[signal SIGUSR1]") != 2 {
		t.Errorf("screen:\n%s", scr)
	}
}
