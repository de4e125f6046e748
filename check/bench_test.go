package check

import (
	"debug/elf"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
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

// BenchmarkCorpus checks every binary of the committed corpus per
// iteration (files opened beforehand) and reports PCs checked per second
// of CPU time over the corpus as a whole (goal: at least 1 M on one core,
// -cpu 1), three ways (the default) and against the CFI only.
func BenchmarkCorpus(b *testing.B) {
	type bin struct {
		name string
		ef   *elf.File
		sec  *sframe.Section
	}
	var bins []bin
	for _, e := range testcorpus.Entries(b) {
		ef, sec := openSection(b, e.Path)
		bins = append(bins, bin{e.Path, ef, sec})
	}
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"three-way", Options{}}, {"cfi-only", Options{CFIOnly: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			var pcs uint64
			cpu0 := cpuTime(b)
			for b.Loop() {
				for _, x := range bins {
					rep, err := Section(x.name, x.ef, x.sec, mode.opt)
					if err != nil {
						b.Fatal(err)
					}
					pcs += rep.PCs
				}
			}
			b.ReportMetric(float64(pcs)/b.Elapsed().Seconds(), "PCs/s")
			b.ReportMetric(float64(pcs)/(cpuTime(b)-cpu0).Seconds(), "PCs/cpu-s")
		})
	}
}
