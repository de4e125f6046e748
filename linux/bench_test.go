//go:build cgo

package linux

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/shadow"
)

// benchPrograms are corpus programs of both architectures, run whole.
var benchPrograms = []string{"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static", "v3/x86-64/many-O2-static"}

// BenchmarkEmulation runs corpus programs to completion with increasing
// observation: counting per translated block ("blocks", what `sframesim
// run` does), our C code hook removed ("no-hook": Unicorn still counts
// with its own code hook, for the count Start is given), only the C
// counting hook ("plain"), the shadow
// stack fed from C-filled record batches, a session in batches with every
// store logged and memory replayed per instruction (what `verify` does,
// without the checking), and a per-instruction Go observer (one cgo
// crossing per instruction, as `verify --exact`). It reports emulated instructions per second; compare the
// modes of one program for the observer overhead.
func BenchmarkEmulation(b *testing.B) {
	dir := testcorpus.Dir(b)
	insnsOf := map[string]uint64{} // no-hook runs cannot count: take a counted run's figure
	for _, prog := range benchPrograms {
		for _, mode := range []string{"blocks", "plain", "no-hook", "shadow-batched", "history-batched", "observer-exact"} {
			b.Run(prog+"/"+mode, func(b *testing.B) {
				var insns uint64
				for b.Loop() {
					b.StopTimer()
					p, err := Load(filepath.Join(dir, prog), Config{Args: []string{filepath.Base(prog)}, CountBlocks: mode == "blocks"})
					if err != nil {
						b.Fatal(err)
					}
					var depth int
					switch mode {
					case "no-hook":
						if err := p.Engine.RemoveCodeHook(); err != nil {
							b.Fatal(err)
						}
					case "shadow-batched":
						sh := shadow.New(p.Arch, p.Engine.ReadMem)
						p.Engine.ObserveRecords(4096, func(rs []emu.Record) {
							for _, r := range rs {
								sh.Observe(shadowRecord(r))
							}
							depth += sh.Depth()
						})
					case "history-batched":
						s := NewSession(p)
						if err := s.Batch(4096); err != nil {
							b.Fatal(err)
						}
						s.Observe(func(shadow.Record) bool { depth += s.Shadow.Depth(); return true })
					case "observer-exact":
						s := NewSession(p)
						s.Observe(func(shadow.Record) bool { depth += s.Shadow.Depth(); return true })
					}
					b.StartTimer()
					exit, err := p.Run()
					p.Engine.FlushRecords()
					b.StopTimer()
					if err != nil || exit == nil || exit.Reason != StopExited {
						b.Fatalf("run: %v %v", exit, err)
					}
					if mode == "no-hook" {
						insns += insnsOf[prog]
					} else {
						insnsOf[prog] = p.Engine.Executed()
						insns += insnsOf[prog]
					}
					p.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(insns)/b.Elapsed().Seconds()/1e6, "Minsns/s")
				b.ReportMetric(float64(insns)/float64(b.N), "insns/run")
			})
		}
	}
}

// BenchmarkObserverOverhead runs one corpus program per architecture both
// without any hook and with the exact per-instruction observer (shadow
// stack updated before every instruction), and reports both speeds and
// their ratio: the cost of watching every instruction.
func BenchmarkObserverOverhead(b *testing.B) {
	dir := testcorpus.Dir(b)
	for _, prog := range []string{"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static"} {
		b.Run(prog, func(b *testing.B) {
			var plainTime, obsTime time.Duration
			var insns uint64
			for b.Loop() {
				for _, observe := range []bool{false, true} {
					p, err := Load(filepath.Join(dir, prog), Config{Args: []string{filepath.Base(prog)}})
					if err != nil {
						b.Fatal(err)
					}
					if observe {
						s := NewSession(p)
						s.Observe(func(shadow.Record) bool { return true })
					} else if err := p.Engine.RemoveCodeHook(); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					exit, err := p.Run()
					d := time.Since(start)
					if err != nil || exit.Reason != StopExited {
						b.Fatalf("run: %v %v", exit, err)
					}
					if observe {
						obsTime += d
						insns += p.Engine.Executed()
					} else {
						plainTime += d
					}
					p.Close()
				}
			}
			b.ReportMetric(float64(insns)/plainTime.Seconds()/1e6, "Minsns/s-nohook")
			b.ReportMetric(float64(insns)/obsTime.Seconds()/1e6, "Minsns/s-observed")
			b.ReportMetric(obsTime.Seconds()/plainTime.Seconds(), "x-overhead")
		})
	}
}

// runVsQemuWork are long runs of real-world programs (Debian sources,
// testdata/realworld) with their input, for BenchmarkRunVsQemu.
var runVsQemuWork = []struct {
	name, prog, input string
	args              []string
	// floor: also run uncounted (Config.uncounted), Unicorn's own speed;
	// a program of one thread that neither faults nor reads the clock.
	floor bool
}{
	{"lua-fib-sort", "lua-static", "testdata/bench/fib-sort.lua", []string{"-"}, true},
	{"sqlite-cte", "sqlite3-static", "testdata/bench/cte.sql", nil, true},
	// Threads: pigz compressing (4 threads, no name or time in the
	// header) the x86-64 SQLite binary, 1.5 MB.
	{"pigz-4-threads", "pigz-static", realworldInput + "x86-64/sqlite3-static", []string{"-p", "4", "-n", "-c"}, false},
}

// realworldInput starts an input path of runVsQemuWork that lies in the
// real-world corpus (testdata/realworld/v3) rather than below linux.
const realworldInput = "realworld:"

// BenchmarkRunVsQemu runs the same static binaries with the same input,
// in the same benchmark, as `sframesim run` does (Process with
// CountBlocks, through RunFast) and under qemu-user (/usr/bin/qemu-x86_64,
// /usr/bin/qemu-aarch64), and reports, as medians over the iterations,
// emulated instructions per CPU-second of each (the instruction count is
// sframesim's: the same program and input) and the ratio of their CPU
// times. CPU time is user+system: this process's for run (GC included),
// the child's for qemu. Use -benchtime=5x or more for medians. For the
// programs of one thread it also runs them with no counting hook at all
// (x-qemu-uncounted: Unicorn's own speed against qemu-user's, the floor
// under run's ratio, which only a libunicorn able to count without a
// call per block could lower).
func BenchmarkRunVsQemu(b *testing.B) {
	realworld := filepath.Join(testcorpus.Dir(b), "..", "realworld", "v3")
	for _, a := range []struct{ dir, qemu string }{{"x86-64", "/usr/bin/qemu-x86_64"}, {"aarch64", "/usr/bin/qemu-aarch64"}} {
		for _, w := range runVsQemuWork {
			b.Run(a.dir+"/"+w.name, func(b *testing.B) {
				if _, err := os.Stat(a.qemu); err != nil {
					b.Skipf("no qemu-user to compare with: %v", err)
				}
				prog := filepath.Join(realworld, a.dir, w.prog)
				input := w.input
				if rest, ok := strings.CutPrefix(input, realworldInput); ok {
					input = filepath.Join(realworld, rest)
				}
				in, err := os.ReadFile(input)
				if err != nil {
					b.Fatal(err)
				}
				var runCPU, qemuCPU, floorCPU []float64
				var insns uint64
				var runOut, qemuOut bytes.Buffer
				for b.Loop() {
					if w.floor {
						// Unicorn with no counting hook: what no binding
						// that counts can beat.
						runOut.Reset()
						c0 := selfCPU()
						p, err := Load(prog, Config{Args: append([]string{w.prog}, w.args...), Stdin: bytes.NewReader(in), Stdout: &runOut, Stderr: io.Discard, CountBlocks: true, uncounted: true})
						if err != nil {
							b.Fatal(err)
						}
						x, err := p.Run()
						floorCPU = append(floorCPU, (selfCPU() - c0).Seconds())
						if err != nil || x.Reason != StopExited {
							b.Fatalf("uncounted run: %v %v", x, err)
						}
						p.Close()
					}
					runOut.Reset()
					qemuOut.Reset()
					c0 := selfCPU()
					p, x, err := RunFast(prog, Config{Args: append([]string{w.prog}, w.args...), Stdin: bytes.NewReader(in), Stdout: &runOut, Stderr: io.Discard})
					runCPU = append(runCPU, (selfCPU() - c0).Seconds())
					if err != nil || x.Reason != StopExited {
						b.Fatalf("run: %v %v", x, err)
					}
					insns = x.Insns
					p.Close()
					qemuCPU = append(qemuCPU, runQemu(b, a.qemu, prog, w.args, bytes.NewReader(in), &qemuOut))
					if runOut.String() != qemuOut.String() {
						b.Fatalf("outputs differ:\n%s\nrun, and\n%s\nqemu", runOut.String(), qemuOut.String())
					}
				}
				r, q := median(runCPU), median(qemuCPU)
				b.ReportMetric(float64(insns)/r/1e6, "Minsns/cpu-s-run")
				b.ReportMetric(float64(insns)/q/1e6, "Minsns/cpu-s-qemu")
				b.ReportMetric(r/q, "x-qemu-cpu")
				b.ReportMetric(float64(insns), "insns/run")
				b.Logf("%s %s: %d instructions; CPU s run %s, qemu %s (median %.3f / %.3f = %.2fx)", a.dir, w.name, insns, fmtSecs(runCPU), fmtSecs(qemuCPU), r, q, r/q)
				if w.floor {
					f := median(floorCPU)
					b.ReportMetric(f/q, "x-qemu-uncounted")
					b.Logf("%s %s: Unicorn without counting %s (median %.3f = %.2fx qemu; counting costs %.0f%% of run)", a.dir, w.name, fmtSecs(floorCPU), f, f/q, 100*(r-f)/r)
				}
			})
		}
	}
}

// runQemu runs prog with args under qemu-user, its stdin in (nil: none)
// and its stdout into out, and returns the CPU seconds it took,
// user+system.
func runQemu(b *testing.B, qemu, prog string, args []string, in io.Reader, out io.Writer) float64 {
	b.Helper()
	cmd := exec.Command(qemu, append([]string{prog}, args...)...)
	cmd.Stdin, cmd.Stdout = in, out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", qemu, err)
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtSecs(v []float64) string {
	var b bytes.Buffer
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.3f", x)
	}
	return b.String()
}

// BenchmarkTLBGrowth runs testdata/memwalk (random reads and writes over
// 64 MiB; testdata/src/memwalk.c) as `sframesim run` does, with the engine
// flushing Unicorn's TLB so that it grows with the working set (the
// default, emu.Engine.SetTLBGrowth) and without, and under qemu-user, in
// the same iterations. It reports the medians' CPU-time ratios: without
// growth ÷ with it, and run ÷ qemu-user for both (when qemu-user is
// installed; the first ratio needs none). Use -benchtime=5x or
// more for medians. memwalk-x86_64 and memwalk-aarch64 were built with
// gcc and aarch64-linux-gnu-gcc 12.2 (bookworm) as
// `-O2 -static -Wa,--gsframe -o testdata/memwalk-$arch testdata/src/memwalk.c`.
func BenchmarkTLBGrowth(b *testing.B) {
	for _, a := range []struct{ arch, qemu string }{{"x86_64", "/usr/bin/qemu-x86_64"}, {"aarch64", "/usr/bin/qemu-aarch64"}} {
		b.Run(a.arch, func(b *testing.B) {
			_, err := os.Stat(a.qemu)
			withQemu := err == nil
			if !withQemu {
				b.Logf("no qemu-user to compare with (Debian: apt-get install qemu-user): %v", err)
			}
			prog := filepath.Join("testdata", "memwalk-"+a.arch)
			args := []string{"memwalk", "20"}
			var cpu [3][]float64 // growth, none, qemu
			var outs [3]bytes.Buffer
			for b.Loop() {
				for k, grow := range []bool{true, false} {
					outs[k].Reset()
					c0 := selfCPU()
					p, err := Load(prog, Config{Args: args, Stdout: &outs[k], Stderr: io.Discard, CountBlocks: true})
					if err != nil {
						b.Fatal(err)
					}
					p.Engine.SetTLBGrowth(grow)
					x, err := p.Run()
					cpu[k] = append(cpu[k], (selfCPU() - c0).Seconds())
					if err != nil || x.Reason != StopExited || x.Status != 0 {
						b.Fatalf("run (TLB growth %v): %v %v", grow, x, err)
					}
					p.Close()
				}
				if outs[0].String() != outs[1].String() {
					b.Fatalf("outputs differ: %q with growth, %q without", outs[0].String(), outs[1].String())
				}
				if !withQemu {
					continue
				}
				outs[2].Reset()
				cpu[2] = append(cpu[2], runQemu(b, a.qemu, prog, args[1:], nil, &outs[2]))
				if outs[0].String() != outs[2].String() {
					b.Fatalf("outputs differ: %q here, %q under qemu", outs[0].String(), outs[2].String())
				}
			}
			g, n := median(cpu[0]), median(cpu[1])
			b.ReportMetric(n/g, "x-faster-with-growth")
			b.Logf("%s memwalk: CPU s with growth %s, without %s (medians %.3f / %.3f)", a.arch, fmtSecs(cpu[0]), fmtSecs(cpu[1]), g, n)
			if withQemu {
				q := median(cpu[2])
				b.ReportMetric(g/q, "x-qemu-cpu")
				b.ReportMetric(n/q, "x-qemu-cpu-no-growth")
				b.Logf("%s memwalk: qemu-user %s (median %.3f)", a.arch, fmtSecs(cpu[2]), q)
			}
		})
	}
}
