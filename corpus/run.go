//go:build cgo

package corpus

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/verify"
)

// Options configure Run.
type Options struct {
	Workers  int           // binaries verified at once; 0: one per CPU
	MaxInsns uint64        // per binary; 0: no limit
	Timeout  time.Duration // per binary, wall-clock; 0: no limit
	// Sysroot is where dynamically linked binaries without a Job.Sysroot
	// find ld.so and their libraries ("": emu's default for the arch).
	Sysroot string
	// Interrupt, when it becomes true, stops the running binaries (their
	// results are StatusInterrupted) and starts no more.
	Interrupt *atomic.Bool
	// Progress, when set, is called after each binary with the number of
	// binaries done, from one goroutine at a time.
	Progress func(done int, r *Result)
	// Exact hands each instruction to the checker before it runs
	// (verify --exact) instead of in batches: slower, the same results.
	Exact bool
	// CheckMalformed checks binaries whose SFrame section breaks rules of
	// the format (but decodes) anyway (verify --check-malformed): such a
	// section is then a finding unless its expectation lists it
	// (Expect.Malformed).
	CheckMalformed bool
}

// maxStdout bounds the program output kept for the comparison with the
// manifest.
const maxStdout = 1 << 20

// Run verifies jobs on a pool of workers, each with its own emulator, and
// judges each outcome against exp. Workers take the costliest jobs first
// (by Job.Cost; ties in the order of jobs), so that a long binary does not
// start last and keep one worker busy after the others are done. The
// results are in the order of jobs, whatever the schedule.
func Run(jobs []Job, exp *Expectations, opt Options) []Result {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	interrupt := opt.Interrupt
	if interrupt == nil {
		interrupt = new(atomic.Bool)
	}
	results := make([]Result, len(jobs))
	next := make(chan int)
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runOne(jobs[i], exp.Lookup(jobs[i].Key), opt, interrupt)
				mu.Lock()
				done++
				if opt.Progress != nil {
					opt.Progress(done, &results[i])
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range byCost(jobs) {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// runOne verifies one binary and judges the outcome.
func runOne(job Job, exp *Expect, opt Options, interrupt *atomic.Bool) Result {
	if interrupt.Load() {
		return Result{Key: job.Key, Path: job.Path, Arch: job.Arch, SFrameVersion: job.SFrameVersion,
			Status: StatusInterrupted, Incomplete: "not run: interrupted"}
	}
	out := &limitedBuffer{max: maxStdout}
	sysroot := job.Sysroot
	if sysroot == "" {
		sysroot = opt.Sysroot
	}
	cfg := linux.Config{Stdout: out, Sysroot: sysroot}
	if job.Stdin != "" {
		cfg.Stdin = strings.NewReader(job.Stdin)
	}
	start := time.Now()
	batch := 0
	if opt.Exact {
		batch = 1
	}
	rep, err := verify.Run(job.Path, verify.Options{
		Batch:     batch,
		Args:      job.Args,
		Config:    cfg,
		MaxInsns:  opt.MaxInsns,
		Timeout:   opt.Timeout,
		Interrupt: interrupt,

		CheckMalformed: opt.CheckMalformed,
	})
	o := Outcome{Report: rep, Err: err, Timeout: opt.Timeout}
	if rep == nil {
		r := Judge(job, o, exp)
		r.Seconds = time.Since(start).Seconds()
		return r
	}
	o.Stdout = string(out.buf)
	if out.over {
		o.Stdout += "\n[more than 1 MiB of output: cut]"
	}
	// How the run ended, from the options and the report's numbers (not
	// from its Stop text, which is for people).
	stopped := !rep.Exited && rep.ExitStatus <= 128
	o.Interrupted = stopped && interrupt.Load()
	o.Budget = stopped && !o.Interrupted && opt.MaxInsns > 0 && rep.Instructions >= opt.MaxInsns
	o.TimedOut = stopped && !o.Budget && opt.Timeout > 0 && rep.Seconds >= opt.Timeout.Seconds()
	return Judge(job, o, exp)
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf  []byte
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if len(p) > room {
		b.over = true
		b.buf = append(b.buf, p[:room]...)
	} else {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}
