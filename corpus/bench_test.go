//go:build cgo

package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// BenchmarkLongestFirst runs the same binaries on 2 workers in key order
// (every cost 0) and longest first (costs: the instructions each checked
// in a first run, as --costs records them), alternating in each iteration
// so that outside load hits both alike, and reports the wall-clock time of
// each, their ratio, and for each order the bound no schedule can beat:
// the larger of half the verification time and the longest binary's, from
// that run's own times (s-bound-*). In key order the x86-64 stdthread
// programs, among the longest, start near the end.
func BenchmarkLongestFirst(b *testing.B) {
	jobs, exp := benchJobs(b)
	sortJobs(jobs)
	costs := &Costs{Insns: map[string]uint64{}}
	for _, r := range Run(jobs, exp, Options{Workers: 2}) {
		if !r.Status.OK() || r.Report == nil {
			b.Fatalf("%s: %s: %+v", r.Key, r.Status, r.Findings)
		}
		costs.Insns[r.Key] = r.Report.Instructions
	}
	plain := append([]Job(nil), jobs...)
	SetCosts(jobs, costs)
	var keyOrder, longFirst time.Duration
	var bound [2]float64
	for i := 0; i < b.N; i++ {
		for k, set := range [][]Job{plain, jobs} {
			start := time.Now()
			results := Run(set, exp, Options{Workers: 2})
			wall := time.Since(start)
			var sum, longest float64
			for _, r := range results {
				if !r.Status.OK() {
					b.Fatalf("%s: %s", r.Key, r.Status)
				}
				sum += r.Seconds
				longest = max(longest, r.Seconds)
			}
			bound[k] += max(sum/2, longest)
			if k == 0 {
				keyOrder += wall
			} else {
				longFirst += wall
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(keyOrder.Seconds()/n, "s-keyorder")
	b.ReportMetric(longFirst.Seconds()/n, "s-longest")
	b.ReportMetric(keyOrder.Seconds()/longFirst.Seconds(), "ratio")
	b.ReportMetric(keyOrder.Seconds()/bound[0], "keyorder/bound")
	b.ReportMetric(longFirst.Seconds()/bound[1], "longest/bound")
}

// BenchmarkShardBalance reports how evenly shards split the work: for n
// shards, the costliest shard's instructions over the ideal (all over n),
// for the split by recorded instruction counts (what --costs gives),
// round-robin in key order (without --costs), and by file size (not used:
// it does worse than round-robin on the committed corpus).
// secs-* are the same for the verification times, and workers-* the time
// n workers of one run take in key order and longest first (each taking
// the next binary when free) over the bound (all over n, or the longest
// binary). The figures are computed from the instructions and times of
// one run: of the bench set's binaries, or, when SFRAMESIM_BENCH_COSTS
// names a corpus JSON report, of that report's (e.g. bin/corpus.json of
// make corpus-verify); the instruction figures are deterministic.
func BenchmarkShardBalance(b *testing.B) {
	var jobs []Job
	costs := &Costs{Insns: map[string]uint64{}}
	secs := map[string]float64{} // each binary's verification time
	if path := os.Getenv("SFRAMESIM_BENCH_COSTS"); path != "" {
		var err error
		if costs, err = ReadCosts(path); err != nil {
			b.Fatal(err)
		}
		report, err := ReadReport(path)
		if err != nil {
			b.Fatal(err)
		}
		root, err := testcorpus.Root()
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range report.Doc.Results {
			if _, ok := costs.Insns[r.Key]; !ok {
				continue
			}
			secs[r.Key] = r.Seconds
			path := r.Path // as the run named it: relative to the checkout, or absolute
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, path)
			}
			jobs = append(jobs, Job{Key: r.Key, Path: path})
		}
	} else {
		var exp *Expectations
		jobs, exp = benchJobs(b)
		for _, r := range Run(jobs, exp, Options{Workers: 2}) {
			costs.Insns[r.Key] = r.Report.Instructions
			secs[r.Key] = r.Seconds
		}
	}
	sortJobs(jobs)
	var total uint64
	for _, j := range jobs {
		total += costs.Insns[j.Key]
	}
	worst := func(shards [][]Job) float64 {
		var most uint64
		for _, s := range shards {
			var sum uint64
			for _, j := range s {
				sum += costs.Insns[j.Key]
			}
			most = max(most, sum)
		}
		return float64(most) * float64(len(shards)) / float64(total)
	}
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			byInsns := append([]Job(nil), jobs...)
			SetCosts(byInsns, costs)
			bySize := append([]Job(nil), jobs...)
			for i := range bySize {
				if fi, err := os.Stat(bySize[i].Path); err == nil {
					bySize[i].Cost = uint64(fi.Size())
				}
			}
			equal := append([]Job(nil), jobs...)
			SetCosts(equal, nil) // what a run without --costs does
			roundRobin := make([][]Job, n)
			for i, j := range equal {
				roundRobin[i%n] = append(roundRobin[i%n], j)
			}
			if !reflect.DeepEqual(Partition(equal, n), roundRobin) {
				b.Fatal("without costs the split is not round-robin")
			}
			var a, s float64
			for i := 0; i < b.N; i++ {
				a, s = worst(Partition(byInsns, n)), worst(Partition(bySize, n))
			}
			// n workers of one run, each taking the next binary when free,
			// in key order and longest first: the time the recorded
			// verification times give, over the bound (all over n, or the
			// longest binary).
			var total, longest float64
			for _, j := range jobs {
				total += secs[j.Key]
				longest = max(longest, secs[j.Key])
			}
			bound := max(total/float64(n), longest)
			b.ReportMetric(listSchedule(jobs, secs, n)/bound, "workers-keyorder/bound")
			b.ReportMetric(listSchedule(sortedByCost(byInsns), secs, n)/bound, "workers-longest/bound")
			// The same for the shards' verification times: do balanced
			// instructions balance the time?
			worstSecs := func(shards [][]Job) float64 {
				var most float64
				for _, s := range shards {
					var sum float64
					for _, j := range s {
						sum += secs[j.Key]
					}
					most = max(most, sum)
				}
				return most * float64(n) / total
			}
			b.ReportMetric(worstSecs(Partition(byInsns, n)), "secs-max/ideal-costs")
			b.ReportMetric(worstSecs(roundRobin), "secs-max/ideal-roundrobin")
			b.ReportMetric(a, "max/ideal-costs")
			b.ReportMetric(s, "max/ideal-size")
			b.ReportMetric(worst(roundRobin), "max/ideal-roundrobin")
			b.ReportMetric(float64(len(jobs)), "binaries")
		})
	}
}

// listSchedule returns when n workers, each taking the next job of jobs
// when it is free, are done, the jobs taking secs.
func listSchedule(jobs []Job, secs map[string]float64, n int) float64 {
	free := make([]float64, n)
	for _, j := range jobs {
		w := 0
		for k := range free {
			if free[k] < free[w] {
				w = k
			}
		}
		free[w] += secs[j.Key]
	}
	var end float64
	for _, t := range free {
		end = max(end, t)
	}
	return end
}

// sortedByCost returns jobs in the order Run starts them.
func sortedByCost(jobs []Job) []Job {
	var out []Job
	for _, i := range byCost(jobs) {
		out = append(out, jobs[i])
	}
	return out
}
