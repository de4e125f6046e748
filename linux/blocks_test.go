//go:build cgo

package linux

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// countedRun is what a run shows: the instruction count, the last
// instruction, the frame registers and the arguments at every system
// call, the output and the exit.
type countedRun struct {
	calls       []string
	out, errOut string
	exit        Exit
	reruns      int // NeedExact runs
}

// runCounted runs path to its end counting per instruction or (blocks) per
// block, running again with ExactAfter after NeedExact as RunFast does.
func runCounted(t *testing.T, path string, cfg Config, blocks bool, stdin []byte) countedRun {
	t.Helper()
	var r countedRun
	for {
		var out, errOut bytes.Buffer
		cfg.Stdout, cfg.Stderr, cfg.CountBlocks = &out, &errOut, blocks
		if stdin != nil {
			cfg.Stdin = bytes.NewReader(stdin)
		}
		p, err := Load(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.calls = r.calls[:0]
		p.traceSyscall = func(nr uint64, args [6]uint64) {
			pc, size := p.Engine.LastInsn()
			fs, _ := p.Engine.FrameState()
			r.calls = append(r.calls, fmt.Sprintf("tid %d insns %d last %#x/%d sp %#x fp %#x ra %#x nr %d args %x",
				p.thr.cur.tid, p.Engine.Executed(), pc, size, fs.SP, fs.FP, fs.RA, nr, args))
		}
		x, err := p.Run()
		p.Close()
		var ne *NeedExact
		if errors.As(err, &ne) && blocks {
			r.reruns++
			if r.reruns > 1 {
				t.Fatalf("%s: NeedExact twice: %v", path, err)
			}
			cfg.ExactAfter = ne.At
			blocks = ne.At > 0
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r.out, r.errOut, r.exit = out.String(), errOut.String(), *x
		return r
	}
}

// equalRuns fails unless the two runs are the same.
func equalRuns(t *testing.T, what string, exact, fast countedRun) {
	t.Helper()
	if exact.exit != fast.exit {
		t.Errorf("%s: exit\n%+v per instruction\n%+v per block", what, exact.exit, fast.exit)
	}
	if exact.out != fast.out || exact.errOut != fast.errOut {
		t.Errorf("%s: output differs:\n%q\n%q per instruction\n%q\n%q per block", what, exact.out, exact.errOut, fast.out, fast.errOut)
	}
	if !slices.Equal(exact.calls, fast.calls) {
		for i := range min(len(exact.calls), len(fast.calls)) {
			if exact.calls[i] != fast.calls[i] {
				t.Errorf("%s: system call %d:\n%s per instruction\n%s per block", what, i, exact.calls[i], fast.calls[i])
				return
			}
		}
		t.Errorf("%s: %d system calls per instruction, %d per block", what, len(exact.calls), len(fast.calls))
	}
}

// blockCase is one program run both ways.
type blockCase struct {
	name  string
	path  string
	cfg   Config
	stdin []byte
}

// blockCases are the programs the equivalence test runs: signals, timers
// and threads (with odd quanta), corpus programs of both architectures
// (with odd budgets), and the real-world Lua.
func blockCases(t *testing.T) []blockCase {
	var cs []blockCase
	for _, a := range threadArches {
		for _, sc := range signalScenarios {
			if sc.x86Only && a != "x86_64" {
				continue
			}
			for _, q := range []uint64{0, 3_001} {
				cs = append(cs, blockCase{fmt.Sprintf("signals-%s/%s/q%d", a, sc.name, q), signalsProgram(a), Config{Args: []string{"signals", sc.name}, MaxInsns: 20_000_000, Quantum: q}, nil})
			}
		}
		for _, sc := range timerScenarios {
			for _, q := range []uint64{0, 7_777} {
				cs = append(cs, blockCase{fmt.Sprintf("timers-%s/%s/q%d", a, sc.name, q), filepath.Join("testdata", "timers-"+a), Config{Args: []string{"timers", sc.name}, MaxInsns: 200_000_000, Quantum: q}, nil})
			}
		}
		for _, q := range []uint64{0, 997, 12_345} {
			cs = append(cs, blockCase{fmt.Sprintf("threads-%s/q%d", a, q), threadsProgram(a), Config{Quantum: q, MaxInsns: 50_000_000}, nil})
		}
		for _, q := range []uint64{0, 4_093} {
			for _, budget := range []uint64{100_000_000, 1_234_567} {
				cs = append(cs, blockCase{fmt.Sprintf("threadwork-%s/q%d/budget%d", a, q, budget), filepath.Join("testdata", "threadwork-"+a), Config{Args: []string{"threadwork", "3"}, Quantum: q, MaxInsns: budget}, nil})
			}
		}
	}
	dir := testcorpus.Dir(t)
	for _, a := range []string{"x86-64", "aarch64"} {
		for _, prog := range []string{"except-O2-static", "setjmp-O0-static", "pthreads-O2-static", "signals-O2-static", "many-O2-static", "stdthread-O2-dynamic", "vla-O2-dynamic"} {
			for _, budget := range []uint64{0, 1, 7, 1_000_003, 3_333_331} {
				cs = append(cs, blockCase{fmt.Sprintf("%s/%s/budget%d", a, prog, budget), filepath.Join(dir, "v3", a, prog), Config{Args: []string{prog}, MaxInsns: budget}, nil})
			}
		}
		lua := filepath.Join(dir, "..", "realworld", "v3", a, "lua-static")
		for _, input := range []string{"strings", "recursion", "coroutines"} {
			in, err := os.ReadFile(filepath.Join(dir, "..", "realworld", "inputs", input+".lua"))
			if err != nil {
				t.Fatal(err)
			}
			for _, budget := range []uint64{40_000_000, 2_345_677} {
				cs = append(cs, blockCase{fmt.Sprintf("%s/lua-static/%s/budget%d", a, input, budget), lua, Config{Args: []string{"lua", "-"}, MaxInsns: budget}, in})
			}
		}
	}
	return cs
}

// TestCountBlocksSame runs signal, timer, thread, corpus and real-world
// programs counting per instruction and per block: the instruction count,
// last instruction and registers at every system call, the output and the
// exit must be the same (and a fault inside a block must be found exact
// by running again).
func TestCountBlocksSame(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about 200 programs twice")
	}
	reruns := 0
	for _, c := range blockCases(t) {
		t.Run(c.name, func(t *testing.T) {
			exact := runCounted(t, c.path, c.cfg, false, c.stdin)
			fast := runCounted(t, c.path, c.cfg, true, c.stdin)
			reruns += fast.reruns
			equalRuns(t, c.name, exact, fast)
			t.Logf("%d system calls, %d reruns, %s after %d instructions", len(fast.calls), fast.reruns, fast.exit.String(), fast.exit.Insns)
		})
	}
	t.Logf("%d runs needed counting per instruction from a fault on", reruns)
}

// TestRunFastOutputOnce: RunFast's second run (after a fault inside a
// block) gives the guest the same input and passes on its output once.
func TestRunFastOutputOnce(t *testing.T) {
	for _, a := range threadArches {
		var out bytes.Buffer
		cfg := Config{Args: []string{"signals", "segv"}, MaxInsns: 20_000_000, Stdout: &out}
		exact := runCounted(t, signalsProgram(a), cfg, false, nil)
		p, x, err := RunFast(signalsProgram(a), cfg)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		if out.String() != exact.out || *x != exact.exit {
			t.Errorf("%s: RunFast gave\n%q %+v\nwant\n%q %+v", a, out.String(), *x, exact.out, exact.exit)
		}
	}
	// The reader replays call by call, the writers skip what they passed.
	rr := &replayReader{r: strings.NewReader("abcdef")}
	b := make([]byte, 4)
	n1, _ := rr.Read(b)
	rr.rewind()
	n2, _ := rr.Read(b)
	n3, _ := rr.Read(b)
	if n1 != 4 || n2 != 4 || n3 != 2 || string(b[:n3]) != "ef" {
		t.Errorf("replayReader: %d %d %d %q", n1, n2, n3, b[:n3])
	}
	var sink bytes.Buffer
	ow := &onceWriter{w: &sink}
	ow.Write([]byte("hello "))
	ow.rewind()
	ow.Write([]byte("hel"))
	ow.Write([]byte("lo world"))
	if sink.String() != "hello world" {
		t.Errorf("onceWriter passed on %q", sink.String())
	}
}
