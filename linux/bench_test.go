//go:build cgo

package linux

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/shadow"
)

// benchPrograms are corpus programs of both architectures, run whole.
var benchPrograms = []string{"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static", "v3/x86-64/many-O2-static"}

// BenchmarkEmulation runs corpus programs to completion with increasing
// observation: no hook at all (Unicorn's own speed), only the C counting
// hook ("plain", what `sframesim run` does), the shadow
// stack fed from C-filled record batches, a session in batches with every
// store logged and memory replayed per instruction (what `verify` does,
// without the checking), and a per-instruction Go observer (one cgo
// crossing per instruction, as `verify --exact`). It reports emulated instructions per second; compare the
// modes of one program for the observer overhead.
func BenchmarkEmulation(b *testing.B) {
	dir := testcorpus.Dir(b)
	insnsOf := map[string]uint64{} // no-hook runs cannot count: take a counted run's figure
	for _, prog := range benchPrograms {
		for _, mode := range []string{"plain", "no-hook", "shadow-batched", "history-batched", "observer-exact"} {
			b.Run(prog+"/"+mode, func(b *testing.B) {
				var insns uint64
				for b.Loop() {
					b.StopTimer()
					p, err := Load(filepath.Join(dir, prog), Config{Args: []string{filepath.Base(prog)}})
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
