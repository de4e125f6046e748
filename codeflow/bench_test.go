package codeflow

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/symbols"
)

// BenchmarkAnalyze analyses every function of a corpus binary per
// iteration and reports instructions analysed per second (goal: ≥ 1M on
// one core).
func BenchmarkAnalyze(b *testing.B) {
	for _, bin := range []string{"v3/x86-64/many-O2-static", "v3/aarch64/many-O2-static", "v3/x86-64/bigfunc-O2-static", "v3/aarch64/bigfunc-O2-static"} {
		b.Run(bin, func(b *testing.B) {
			dir := testcorpus.Dir(b)
			f, err := sframe.Open(filepath.Join(dir, bin))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			cb := &corpusBinary{f: f, a: arch.ForMachine(f.ELF.Machine), syms: symbols.New(f.ELF, 0)}
			fns, _ := cb.funcs()
			insns := 0
			for _, fn := range fns {
				insns += len(Analyze(cb.a, fn).Insns)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, fn := range fns {
					Analyze(cb.a, fn)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(insns)*float64(b.N)/b.Elapsed().Seconds(), "insns/s")
			// On a shared machine wall time overstates the cost: also per
			// second of this process's CPU time (GC included).
			b.ReportMetric(float64(insns)*float64(b.N)/(cpuTime()-cpu0), "insns/cpu-s")
		})
	}
}

// cpuTime returns the process's user and system CPU time in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkAnalyzeKinds analyses, per iteration, every function of every
// SFrame V3 corpus binary of one kind (all optimisation levels and links,
// with their landing pads) and reports instructions per second.
func BenchmarkAnalyzeKinds(b *testing.B) {
	kinds := []string{"many", "bigfunc", "bigframe", "cold", "except", "realign", "asm", "setjmp", "tailcall", "vla", "recurse", "nolibc"}
	for _, a := range []string{"x86-64", "aarch64"} {
		for _, kind := range kinds {
			b.Run(a+"/"+kind, func(b *testing.B) {
				dir := testcorpus.Dir(b)
				var all []Func
				var ar *arch.Arch
				for _, e := range testcorpus.Entries(b) {
					if e.SFrameVersion != 3 || e.Arch != a || !strings.HasPrefix(filepath.Base(e.Path), kind+"-") {
						continue
					}
					f, err := sframe.Open(filepath.Join(dir, e.Path))
					if err != nil {
						b.Fatal(err)
					}
					cb := newCorpusBinary(b, e, f)
					fns, _ := cb.funcs()
					for i := range fns {
						fns[i].Code = append([]byte(nil), fns[i].Code...)
					}
					all, ar = append(all, fns...), cb.a
					f.Close()
				}
				if len(all) == 0 {
					b.Fatalf("no %s binaries of kind %s", a, kind)
				}
				insns := 0
				for _, fn := range all {
					insns += len(Analyze(ar, fn).Insns)
				}
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, fn := range all {
						Analyze(ar, fn)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(insns)*float64(b.N)/b.Elapsed().Seconds(), "insns/s")
				b.ReportMetric(float64(insns)*float64(b.N)/(cpuTime()-cpu0), "insns/cpu-s")
			})
		}
	}
}
