//go:build cgo

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/sframesim/sframesim/cmd/sframesim/internal/interrupt"
	"github.com/sframesim/sframesim/corpus"
	"github.com/sframesim/sframesim/internal/atomicfile"
)

func runCorpus(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("corpus", "Verifies many binaries in parallel, each as `sframesim verify` does, and judges\n"+
		"each outcome against the expectations: known problems (by kind, function and\n"+
		"FRE row, with a reason) and unsupported binaries pass; a new problem, an\n"+
		"expected problem that no longer occurs, or (with a manifest) a wrong exit\n"+
		"status or output fails.\n\n"+
		"DIR: every ELF executable with a .sframe section under it. MANIFEST: a JSON\n"+
		"array of {\"path\", \"args\", \"stdin\", \"exit_status\", \"stdout\", \"sysroot\",\n"+
		"\"expect\"}, such as testdata/corpus/manifest.json; an entry's optional \"name\"\n"+
		"is its key instead of the path (one binary may be listed several times, each\n"+
		"with a name of its own); \"stdin_file\" and \"stdout_file\" name files\n"+
		"holding the stdin and stdout bytes; \"expect\" is an entry of the --expect\n"+
		"file, which overrides it. Dynamically linked binaries read ld.so and their\n"+
		"libraries from their \"sysroot\", else --sysroot-for by the manifest's\n"+
		"\"toolchain\" and \"arch\", else --sysroot.\n\n"+
		"Prints a summary table on stdout, or on stderr when --json - or --junit -\n"+
		"writes to stdout. Ctrl-C stops and still writes what was done.\n\n"+
		"Exit status: 0 every binary as expected, 1 unexpected outcomes (or stale\n"+
		"expectations), 2 could not run (usage, input, a binary that could not be\n"+
		"verified, or interrupted).\n\n")
	workers := cl.Int("j", 0, "verify `N` binaries at once (0: one per CPU)")
	shard := cl.String("shard", "", "verify only shard `i/n` (1 <= i <= n): binaries sorted by path, dealt round-robin")
	expectPath := cl.String("expect", "", "expected outcomes `FILE` (binaries not listed must verify clean)")
	update := cl.Bool("update", false, "write the observed outcomes to the --expect file as the new baseline (reasons are kept)")
	jsonPath := cl.String("json", "", "write the summary and every report as JSON to `FILE` (- for stdout)")
	junitPath := cl.String("junit", "", "write JUnit XML (one testcase per binary) to `FILE` (- for stdout)")
	timeout := cl.Duration("timeout", 10*time.Minute, "per-binary wall-clock limit `D` (0: none); a binary that hits it fails")
	maxInsns := cl.Uint64("max-insns", 0, "stop each binary after `N` instructions (0: no limit); such runs are judged only for new problems")
	runPattern := cl.String("run", "", "verify only binaries whose path matches `REGEXP`")
	sysroot := sysrootFlag(cl.FlagSet)
	sysrootFor := map[string]string{}
	cl.Func("sysroot-for", "read the ld.so and libraries of the dynamically linked binaries a manifest says `TOOLCHAIN/ARCH` built from DIR, as in sid/x86-64=DIR (repeatable; overrides --sysroot)", func(s string) error {
		label, dir, err := corpus.ParseSysrootFor(s)
		if err == nil {
			sysrootFor[label], err = filepath.Abs(dir)
		}
		return err
	})
	progress := cl.String("progress", "auto", "progress on stderr: `P` is bar, lines, none, or auto (a bar on a terminal, lines otherwise)")
	// Flags may follow the input too (corpus DIR -j 2).
	var inputs []string
	for rest := args; ; {
		if status, done := cl.parse(rest, stdout, stderr); done {
			return status
		}
		if cl.NArg() == 0 {
			break
		}
		inputs = append(inputs, cl.Arg(0))
		rest = cl.Args()[1:]
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sframesim corpus: "+format+"\n", a...)
		return exitError
	}
	switch {
	case len(inputs) == 0:
		return cl.usageError(stderr, "no DIR or MANIFEST given")
	case len(inputs) > 1:
		return cl.usageError(stderr, "too many arguments: want one DIR or MANIFEST, got %d", len(inputs))
	case *update && *expectPath == "":
		return cl.usageError(stderr, "--update needs --expect FILE: the file to write")
	case *update && *maxInsns > 0:
		return cl.usageError(stderr, "--update needs complete runs: drop --max-insns")
	case *workers < 0:
		return cl.usageError(stderr, "-j %d: want 0 (one per CPU) or more", *workers)
	case *jsonPath == "-" && *junitPath == "-":
		return cl.usageError(stderr, "--json and --junit cannot both write to stdout")
	}
	for _, r := range []struct{ flag, path string }{{"--json", *jsonPath}, {"--junit", *junitPath}} {
		if !checkReportPath(stderr, "corpus", r.flag, r.path) {
			return exitError
		}
	}
	if *update && !checkReportPath(stderr, "corpus", "--expect", *expectPath) {
		return exitError
	}
	input := inputs[0]
	showBar, showLines := false, false
	switch *progress {
	case "auto":
		showBar = isTerminal(stderr)
		showLines = !showBar
	case "bar":
		showBar = true
	case "lines":
		showLines = true
	case "none":
	default:
		return cl.usageError(stderr, "--progress %q: want auto, bar, lines or none", *progress)
	}
	var shardI, shardN int
	if *shard != "" {
		var err error
		if shardI, shardN, err = corpus.ParseShard(*shard); err != nil {
			return cl.usageError(stderr, "%v", err)
		}
	}
	var runRE *regexp.Regexp
	if *runPattern != "" {
		var err error
		if runRE, err = regexp.Compile(*runPattern); err != nil {
			return cl.usageError(stderr, "--run: %v", err)
		}
	}
	// The human summary goes where the machine-readable output does not.
	summary := stdout
	if *jsonPath == "-" || *junitPath == "-" {
		summary = stderr
	}

	in, err := corpus.Load(input)
	if err != nil {
		return fail("%v", err)
	}
	jobs := in.Jobs
	sum := corpus.Summary{Input: input, Skipped: in.Skipped}
	if *shard != "" {
		jobs = corpus.Shard(jobs, shardI, shardN)
		sum.Shard = *shard
	}
	if runRE != nil {
		jobs = corpus.Filter(jobs, runRE)
	}
	corpus.ApplySysroots(jobs, sysrootFor)
	if len(jobs) == 0 {
		return fail("%s: no binary to verify (%d in the input, %d files skipped)", input, len(in.Jobs), len(in.Skipped))
	}
	exp := corpus.NewExpectations()
	if *expectPath != "" {
		if *update {
			exp, err = corpus.ReadOrNew(*expectPath)
		} else {
			exp, err = corpus.ReadExpectations(*expectPath)
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	// A manifest's inline expectations apply where the file says nothing.
	exp.Merge(in.Expect)
	if *expectPath != "" || in.Expect != nil {
		sum.Stale = exp.Stale(in.Jobs)
	}

	var interrupted atomic.Bool
	sig := make(chan os.Signal, 1)
	if interrupt.Notify(sig) {
		// Ctrl-C before the run started (see package interrupt): handled
		// as one during the run.
		select {
		case sig <- os.Interrupt:
		default:
		}
	}
	stopSignals := func() {
		signal.Stop(sig)
		close(sig)
	}
	go func() {
		if _, ok := <-sig; ok {
			interrupted.Store(true)
			fmt.Fprintf(stderr, "\nsframesim corpus: interrupted: stopping the running binaries (Ctrl-C again to quit at once)\n")
			signal.Reset(os.Interrupt)
		}
	}()

	opt := corpus.Options{Workers: *workers, MaxInsns: *maxInsns, Timeout: *timeout, Interrupt: &interrupted, Sysroot: *sysroot}
	if opt.Workers == 0 {
		opt.Workers = runtime.NumCPU()
	}
	sum.Workers = opt.Workers
	var prog *corpus.Progress
	if showBar || showLines {
		prog = corpus.NewProgress(stderr, len(jobs), showBar)
		opt.Progress = prog.Update
	}
	start := time.Now()
	results := corpus.Run(jobs, exp, opt)
	stopSignals()
	if prog != nil {
		prog.Finish()
	}
	sum.Seconds = time.Since(start).Seconds()
	sum.Interrupted = interrupted.Load()
	sum = corpus.Summarize(sum, results)

	// Every requested report is written, whatever happened to the others;
	// each failure is reported and makes the status 2.
	writeFailed := false
	failWrite := func(flag, path string, err error) {
		printWriteError(stderr, "corpus", flag, path, err)
		writeFailed = true
	}
	status := exitOK
	if *update {
		changes, refused := exp.Update(results, in.Jobs)
		if err := exp.Write(*expectPath); err != nil {
			failWrite("--expect", *expectPath, err)
		} else {
			fmt.Fprintf(summary, "%s: %d binaries changed\n", *expectPath, len(changes))
			for _, c := range changes {
				fmt.Fprintf(summary, "  %s\n", c)
			}
			for _, r := range refused {
				fmt.Fprintf(summary, "  not recorded: %s\n", r)
			}
			if n := exp.Unexplained(); n > 0 {
				fmt.Fprintf(summary, "%d expected problems have no reason: add one to each in %s\n", n, *expectPath)
			}
		}
		if len(refused) > 0 {
			status = exitError
		}
	} else {
		sum.WriteText(summary, results)
		switch {
		case sum.Interrupted || sum.Statuses[corpus.StatusError] > 0:
			status = exitError
		case !sum.OK():
			status = exitProblems
		}
	}
	if *jsonPath != "" {
		doc := corpus.Document{Summary: sum, Results: results}
		writeFile := func(path string) error { return corpus.WriteJSON(path, sum, results) }
		if err := writeJSONReport(stdout, *jsonPath, doc, writeFile); err != nil {
			failWrite("--json", *jsonPath, err)
		}
	}
	if *junitPath != "" {
		data, err := corpus.JUnit(sum, results)
		switch {
		case err != nil:
		case *junitPath == "-":
			_, err = stdout.Write(data)
		default:
			err = atomicfile.Write(*junitPath, data)
		}
		if err != nil {
			failWrite("--junit", *junitPath, err)
		}
	}
	if writeFailed {
		return exitError
	}
	return status
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
