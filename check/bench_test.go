package check

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCheck checks a whole binary per iteration (CFI, symbols and
// all) and reports PCs checked per second of wall-clock time and per
// second of CPU time (what one core does on a shared, loaded machine);
// the goal is at least 1 M/s on one core (-cpu 1).
func BenchmarkCheck(b *testing.B) {
	for _, bin := range []string{"v3/x86-64/many-O2-static", "v3/aarch64/many-O2-static", "v2/x86-64/bigfunc-O0-static"} {
		b.Run(bin, func(b *testing.B) {
			ef, sec := openSection(b, bin)
			var pcs uint64
			cpu0 := cpuTime(b)
			for b.Loop() {
				rep, err := Section(bin, ef, sec, Options{})
				if err != nil {
					b.Fatal(err)
				}
				pcs += rep.PCs
			}
			b.ReportMetric(float64(pcs)/b.Elapsed().Seconds(), "PCs/s")
			b.ReportMetric(float64(pcs)/(cpuTime(b)-cpu0).Seconds(), "PCs/cpu-s")
		})
	}
}
