//go:build cgo

package corpus

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// benchJobs are the SFrame V3 -O2 corpus binaries of both arches, static,
// nolibc and dynamic (50 programs, ~19 M instructions), judged against the
// committed expectations.
func benchJobs(b *testing.B) ([]Job, *Expectations) {
	dir, exp := committed(b)
	in, err := ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		b.Fatal(err)
	}
	var jobs []Job
	for _, j := range in.Jobs {
		if strings.HasPrefix(j.Key, "v3/") && strings.Contains(j.Key, "-O2") {
			jobs = append(jobs, j)
		}
	}
	root, err := testcorpus.Root()
	if err != nil {
		b.Fatal(err)
	}
	ApplySysroots(jobs, map[string]string{
		"sid/x86-64":  filepath.Join(root, ".deps/sysroots/sid-amd64"),
		"sid/aarch64": filepath.Join(root, ".deps/sysroots/sid-arm64"),
	})
	return jobs, exp
}

// measure runs jobs on workers and returns the wall-clock and CPU time and
// the instructions checked.
func measure(b *testing.B, jobs []Job, exp *Expectations, workers int) (wall, cpu time.Duration, insns uint64) {
	cpu0 := cpuTime()
	start := time.Now()
	results := Run(jobs, exp, Options{Workers: workers})
	wall = time.Since(start)
	cpu = cpuTime() - cpu0
	for i := range results {
		r := &results[i]
		if !r.Status.OK() {
			b.Fatalf("%s: %s: %+v", r.Key, r.Status, r.Findings)
		}
		insns += r.Report.Instructions
	}
	return wall, cpu, insns
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWorkers verifies the same binaries with 1 and 2 workers and
// reports the throughput (verified instructions and binaries per second of
// wall-clock time) and the instructions per CPU-second, which shows
// whether parallel workers do extra work (it should not drop with 2).
func BenchmarkWorkers(b *testing.B) {
	jobs, exp := benchJobs(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var wall, cpu time.Duration
			var insns uint64
			for i := 0; i < b.N; i++ {
				w, c, n := measure(b, jobs, exp, workers)
				wall, cpu, insns = wall+w, cpu+c, insns+n
			}
			b.ReportMetric(float64(insns)/wall.Seconds(), "insns/s")
			b.ReportMetric(float64(len(jobs)*b.N)/wall.Seconds(), "binaries/s")
			b.ReportMetric(float64(insns)/cpu.Seconds(), "insns/cpu-s")
		})
	}
}

// BenchmarkSpeedup alternates runs with 1 and 2 workers in each iteration,
// so that load from other processes hits both alike, and reports the
// throughput ratio (target: >= 1.8 on an otherwise idle 2-core machine).
// cpus-1w and cpus-2w are the CPUs the process kept busy on average (CPU
// time / wall-clock time): a ratio well under 1.8 with cpus-2w well under
// 2 means other processes had the cores, not that the workers contend.
func BenchmarkSpeedup(b *testing.B) {
	jobs, exp := benchJobs(b)
	var wall1, wall2, cpu1, cpu2 time.Duration
	for i := 0; i < b.N; i++ {
		w1, c1, _ := measure(b, jobs, exp, 1)
		w2, c2, _ := measure(b, jobs, exp, 2)
		wall1, wall2, cpu1, cpu2 = wall1+w1, wall2+w2, cpu1+c1, cpu2+c2
	}
	b.ReportMetric(wall1.Seconds()/wall2.Seconds(), "speedup")
	b.ReportMetric(wall1.Seconds()/float64(b.N), "s-1worker")
	b.ReportMetric(wall2.Seconds()/float64(b.N), "s-2workers")
	b.ReportMetric(cpu1.Seconds()/wall1.Seconds(), "cpus-1w")
	b.ReportMetric(cpu2.Seconds()/wall2.Seconds(), "cpus-2w")
}
