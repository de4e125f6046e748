//go:build cgo

package verify

import (
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
)

// BenchmarkVerify verifies whole corpus programs (every instruction checked)
// and runs them plainly, reporting verified instructions per second of
// wall-clock time and of the process's CPU time (steadier on a shared
// machine), and the ratio of the verify and plain run times. The verify
// time includes loading the binary and reading its DWARF line table.
func BenchmarkVerify(b *testing.B) {
	dir := testcorpus.Dir(b)
	for _, prog := range []string{"v3/x86-64/nolibc-O2", "v3/aarch64/nolibc-O2", "v3/x86-64/recurse-O2-static"} {
		b.Run(prog, func(b *testing.B) {
			path := filepath.Join(dir, prog)
			var verifyTime, plainTime, verifyCPU time.Duration
			var insns uint64
			for b.Loop() {
				start, cpu := time.Now(), cpuTime()
				rep, err := Run(path, Options{})
				if err != nil || !rep.Exited {
					b.Fatalf("verify: %v %+v", err, rep)
				}
				verifyTime += time.Since(start)
				verifyCPU += cpuTime() - cpu
				insns += rep.Instructions
				p, err := linux.Load(path, linux.Config{Args: []string{path}})
				if err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				if _, err := p.Run(); err != nil {
					b.Fatal(err)
				}
				plainTime += time.Since(start)
				p.Close()
			}
			b.ReportMetric(float64(insns)/verifyTime.Seconds()/1e6, "Mverified/s")
			b.ReportMetric(float64(insns)/verifyCPU.Seconds()/1e6, "Mverified/cpu-s")
			b.ReportMetric(verifyTime.Seconds()/plainTime.Seconds(), "x-plain")
		})
	}
}

// cpuTime returns the CPU time (user and system) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStatic runs static glibc programs with and without
// Options.Static, alternating, and reports the CPU time of each and the
// share --static adds (the static check's own CPU time, measured around
// it, is steadier than the difference of two runs on a loaded machine).
func BenchmarkStatic(b *testing.B) {
	dir := testcorpus.Dir(b)
	for _, prog := range []string{"v3/x86-64/many-O2-static", "v3/x86-64/except-O2-static", "v1/aarch64/cold-O2-static"} {
		b.Run(prog, func(b *testing.B) {
			path := filepath.Join(dir, prog)
			var plain, static, check time.Duration
			for b.Loop() {
				for _, st := range []bool{false, true} {
					cpu := cpuTime()
					rep, err := Run(path, Options{Static: st})
					if err != nil || !rep.Exited {
						b.Fatalf("verify: %v %+v", err, rep)
					}
					d := cpuTime() - cpu
					if st {
						static += d
						check += rep.Static.cpu
					} else {
						plain += d
					}
				}
			}
			n := float64(b.N)
			b.ReportMetric(plain.Seconds()/n*1e3, "verify-cpu-ms")
			b.ReportMetric(static.Seconds()/n*1e3, "static-cpu-ms")
			b.ReportMetric(check.Seconds()/n*1e3, "check-cpu-ms")
			b.ReportMetric(100*check.Seconds()/plain.Seconds(), "check-%")
		})
	}
}

// BenchmarkVerifyThreads verifies the same work done by one thread and
// split over four (linux/testdata/src/threadwork.c: trees of calls, so
// the shadow stacks and the unwinder work all the time, with the default
// quantum), side by side in each iteration (1, 4, 4, 1: a trend in a
// shared machine's load hits both alike). It reports both throughputs in
// verified instructions per CPU second and their ratio (threads/1: the
// cost of threads is what it lacks from 1).
func BenchmarkVerifyThreads(b *testing.B) {
	for _, a := range []string{"x86_64", "aarch64"} {
		b.Run(a, func(b *testing.B) {
			path := filepath.Join("..", "linux", "testdata", "threadwork-"+a)
			var cpu [2]time.Duration
			var insns [2]uint64
			for b.Loop() {
				for _, k := range [...]int{0, 1, 1, 0} {
					start := cpuTime()
					rep, err := Run(path, Options{Args: []string{[2]string{"1", "4"}[k]}})
					if err != nil || !rep.OK() || rep.Threads != [2]int{1, 5}[k] {
						b.Fatalf("verify: %v %+v", err, rep)
					}
					cpu[k] += cpuTime() - start
					insns[k] += rep.Instructions
				}
			}
			one := float64(insns[0]) / cpu[0].Seconds() / 1e6
			four := float64(insns[1]) / cpu[1].Seconds() / 1e6
			b.ReportMetric(one, "Mverified/cpu-s-1thread")
			b.ReportMetric(four, "Mverified/cpu-s-4threads")
			b.ReportMetric(four/one, "x-threads/1")
		})
	}
}

// BenchmarkMutated verifies the real-world corpus's static lua (fib(20)
// and a sort) as built and with the CFA offset of the widest row of
// luaV_execute, the interpreter's loop, 8 too low (fault injection: a
// sixth of the instructions then have a wrong frame 0 or a wrong caller),
// alternating, and reports verified instructions per CPU second of each
// and their ratio (x-clean: what the problems cost).
func BenchmarkMutated(b *testing.B) {
	root, err := testcorpus.Root()
	if err != nil {
		b.Fatal(err)
	}
	script := "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n" +
		"local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 10007 end table.sort(t)\n" +
		"print(fib(20), t[1], t[#t])\n"
	for _, a := range []string{"x86-64", "aarch64"} {
		b.Run(a, func(b *testing.B) {
			path := filepath.Join(root, "testdata", "realworld", "v3", a, "lua-static")
			var cpu [2]time.Duration
			var insns [2]uint64
			for b.Loop() {
				for _, k := range [...]int{0, 1, 1, 0} {
					f, err := sframe.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					if k == 1 {
						mutateWidestRow(b, path, f.Section, "luaV_execute", -8)
					}
					start := cpuTime()
					rep, err := runSection(path, f.Section, Options{Args: []string{"-e", script}, Config: linux.Config{Stdout: io.Discard, Stderr: io.Discard}})
					cpu[k] += cpuTime() - start
					f.Close()
					if err != nil || !rep.Exited || (rep.Failures == 0) != (k == 0) {
						b.Fatalf("verify: %v %s, %d failures", err, rep.Stop, rep.Failures)
					}
					insns[k] += rep.Instructions
				}
			}
			clean := float64(insns[0]) / cpu[0].Seconds() / 1e6
			mutated := float64(insns[1]) / cpu[1].Seconds() / 1e6
			b.ReportMetric(clean, "Mverified/cpu-s-clean")
			b.ReportMetric(mutated, "Mverified/cpu-s-mutated")
			b.ReportMetric(clean/mutated, "x-clean")
		})
	}
}

// mutateWidestRow adds delta to the CFA offset of the row of the named
// function that covers the most bytes.
func mutateWidestRow(tb testing.TB, path string, sec *sframe.Section, name string, delta int32) {
	tb.Helper()
	i := functionFDE(tb, path, sec, name)
	fde := &sec.FDEs[i]
	best, width := 0, uint32(0)
	for j := range fde.FREs {
		end := fde.Size
		if j+1 < len(fde.FREs) {
			end = fde.FREs[j+1].Start
		}
		if w := end - fde.FREs[j].Start; w > width {
			best, width = j, w
		}
	}
	if err := sec.Apply(sframe.Mutation{FDE: i, FRE: best, Field: sframe.MutateCFA, Delta: delta}); err != nil {
		tb.Fatal(err)
	}
}
