//go:build cgo

package verify

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
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
