//go:build cgo

package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sframesim/sframesim/cmd/sframesim/internal/interrupt"
	"github.com/sframesim/sframesim/corpus"
)

func runCorpus(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runCorpusMerge(args[1:], stdout, stderr)
	}
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
		"writes to stdout. Ctrl-C (SIGINT), SIGTERM (a CI job's timeout) or SIGHUP\n"+
		"stops and still writes what was done.\n\n"+
		"Exit status: 0 every binary as expected, 1 unexpected outcomes (or stale\n"+
		"expectations), 2 could not run (usage, input, a binary that could not be\n"+
		"verified, or interrupted).\n\n"+
		"Sharding (for a CI matrix or a Kubernetes Indexed Job): --shard i/n, or when\n"+
		"it is not given the environment: SFRAMESIM_SHARD=i/n, or a 0-based index in\n"+
		"SFRAMESIM_SHARD_INDEX (GitHub Actions: strategy.job-index) or\n"+
		"JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job) with\n"+
		"SFRAMESIM_SHARD_COUNT=n. A variable set but empty, another SFRAMESIM_SHARD*\n"+
		"variable (misspelt), an index without a count or the reverse, or two forms at\n"+
		"once is a usage error. With --costs, the selected binaries are split by cost,\n"+
		"longest first, into n shards of nearly equal total (the same split on every\n"+
		"machine given the same report); the cost is the instructions each checked in\n"+
		"that report (binaries it lacks: estimated from the file size), and workers\n"+
		"also start the costliest first. Without it the binaries sorted by key are\n"+
		"dealt round-robin. 'sframesim corpus merge' combines the shards' --json\n"+
		"reports into the whole run's.\n\n")
	workers := cl.Int("j", 0, "verify `N` binaries at once (0: one per CPU)")
	shard := cl.String("shard", "", "verify only shard `i/n` (1 <= i <= n) of the binaries split by cost (default: from the environment, see above)")
	costsPath := cl.String("costs", "", "split shards and schedule binaries longest first by the instructions each checked in `REPORT.json`, the --json output of an earlier run (default: round-robin, key order)")
	expectPath := cl.String("expect", "", "expected outcomes `FILE` (binaries not listed must verify clean)")
	update := cl.Bool("update", false, "write the observed outcomes to the --expect file as the new baseline (reasons are kept)")
	jsonPath := cl.String("json", "", "write the summary and every report as JSON to `FILE` (- for stdout)")
	junitPath := cl.String("junit", "", "write JUnit XML (one testcase per binary) to `FILE` (- for stdout)")
	timeout := cl.Duration("timeout", 10*time.Minute, "per-binary wall-clock limit `D` (0: none); a binary that hits it fails")
	malformed := cl.Bool("check-malformed", false, "check binaries whose SFrame section breaks rules of the format (but decodes)\nanyway, as verify --check-malformed: such a section is then a finding unless its\nexpectation says \"malformed\"")
	exact := cl.Bool("exact", false, "hand each instruction to the checker before it runs, as verify --exact (several\ntimes slower, the same results: make corpus-equivalence compares the reports)")
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
	inputs, status, done := cl.parseMixed(args, stdout, stderr)
	if done {
		return status
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
	if !checkSysroot(stderr, "corpus", "--sysroot", *sysroot) {
		return exitError
	}
	for _, label := range slices.Sorted(maps.Keys(sysrootFor)) {
		if !checkSysroot(stderr, "corpus", "--sysroot-for "+label, sysrootFor[label]) {
			return exitError
		}
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
	var spec *corpus.ShardSpec
	if *shard != "" {
		i, n, err := corpus.ParseShard(*shard)
		if err != nil {
			return cl.usageError(stderr, "%v", err)
		}
		spec = &corpus.ShardSpec{I: i, N: n, Source: "--shard"}
	} else {
		if unknown := corpus.UnknownShardVars(os.Environ()); len(unknown) > 0 {
			return cl.usageError(stderr, "shard from the environment: %s: not a variable sframesim reads (misspelt? it reads %s, or %s or %s with %s)",
				strings.Join(unknown, ", "), corpus.EnvShard, corpus.EnvShardIndex, corpus.EnvK8sIndex, corpus.EnvShardCount)
		}
		var err error
		if spec, err = corpus.ShardFromEnv(os.LookupEnv); err != nil {
			return cl.usageError(stderr, "shard from the environment: %v (--shard i/n overrides it)", err)
		}
	}
	if spec != nil && *update {
		return cl.usageError(stderr, "--update needs the whole corpus, not shard %s (from %s)", spec, spec.Source)
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
	if runRE != nil {
		jobs = corpus.Filter(jobs, runRE)
	}
	if len(jobs) == 0 {
		return fail("%s: no binary to verify (%d in the input, %d files skipped)", input, len(in.Jobs), len(in.Skipped))
	}
	info, _ := debug.ReadBuildInfo()
	sum := corpus.Summary{Input: input, Skipped: in.Skipped, Setup: corpus.Setup{
		Version: buildVersion(info), InputSHA256: in.SHA256, Run: *runPattern, MaxInsns: *maxInsns,
		Selected: len(jobs), SelectedSHA256: corpus.SelectionDigest(jobs),
	}}
	if *timeout > 0 {
		sum.Setup.Timeout = timeout.String()
	}
	var costs *corpus.Costs
	if *costsPath != "" {
		if costs, err = corpus.ReadCosts(*costsPath); err != nil {
			return fail("--costs: %v", err)
		}
	}
	corpus.SetCosts(jobs, costs)
	selected := len(jobs)
	if spec != nil {
		jobs = corpus.Shard(jobs, spec.I, spec.N)
		sum.Shard, sum.ShardSource = spec.String(), spec.Source
		if costs != nil {
			sum.CostsSHA256 = costs.SHA256
		}
	}
	corpus.ApplySysroots(jobs, sysrootFor)
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
		sum.Setup.ExpectSHA256 = exp.SHA256
	}
	// A manifest's inline expectations apply where the file says nothing.
	exp.Merge(in.Expect)
	if *expectPath != "" || in.Expect != nil {
		sum.Stale = exp.Stale(in.Jobs)
	}

	var interrupted atomic.Bool
	sig := make(chan os.Signal, 1)
	if s := interrupt.Notify(sig); s != nil {
		// A signal before the run started (see package interrupt):
		// handled as one during the run.
		select {
		case sig <- s:
		default:
		}
	}
	stopSignals := func() {
		signal.Stop(sig)
		close(sig)
	}
	go func() {
		if s, ok := <-sig; ok {
			interrupted.Store(true)
			fmt.Fprintf(stderr, "\nsframesim corpus: %s: stopping the running binaries (a second signal quits at once)\n", interrupt.Name(s))
			interrupt.Reset()
		}
	}()

	opt := corpus.Options{Workers: *workers, MaxInsns: *maxInsns, Timeout: *timeout, Interrupt: &interrupted, Sysroot: *sysroot, Exact: *exact, CheckMalformed: *malformed}
	if opt.Workers == 0 {
		opt.Workers = runtime.NumCPU()
	}
	sum.Workers = opt.Workers
	if len(jobs) == 0 {
		fmt.Fprintf(stderr, "sframesim corpus: shard %s (from %s) has no binaries: the %s selected fill fewer shards\n", spec, spec.Source, plural(selected, "binary", "binaries"))
	}
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

	if *update {
		status := exitOK
		changes, refused := exp.Update(results, in.Jobs)
		if err := exp.Write(*expectPath); err != nil {
			printWriteError(stderr, "corpus", "--expect", *expectPath, err)
			status = exitError
		} else {
			fmt.Fprintf(summary, "%s: %d binaries changed\n", *expectPath, len(changes))
			for _, c := range changes {
				fmt.Fprintf(summary, "  %s\n", c)
			}
			for _, r := range refused {
				fmt.Fprintf(summary, "  not recorded: %s\n", r)
			}
			if n := exp.Unexplained(); n > 0 {
				fmt.Fprintf(summary, "%d expected problems or malformed sections have no reason: add one to each in %s\n", n, *expectPath)
			}
		}
		if len(refused) > 0 {
			status = exitError
		}
		if st := writeCorpusReports("corpus", stdout, stderr, sum, results, *jsonPath, *junitPath); st != exitOK {
			status = st
		}
		return status
	}
	return corpusOutcome("corpus", stdout, stderr, summary, sum, results, *jsonPath, *junitPath)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := rawWriter(w).(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
