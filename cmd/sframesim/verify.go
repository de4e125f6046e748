//go:build cgo

package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/sframesim/sframesim/cmd/sframesim/internal/interrupt"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/verify"
)

func runVerify(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("verify", "Runs the program BINARY under emulation and, before every instruction,\n"+
		"unwinds the stack with its SFrame data and compares each frame (CFA, return\n"+
		"address, caller's FP) with the true call stack. Prints a summary and each\n"+
		"distinct problem once, on stderr. Without BINARY, verifies the sample embedded\n"+
		"in sframesim. Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the run; the report\n"+
		"covers what was checked.\n\n"+
		"The program runs as under 'sframesim run': ARGS are its arguments, fd 0 is\n"+
		"this command's stdin, its stdout is this command's stdout (with --json -,\n"+
		"which writes the JSON report there, it goes to stderr), its stderr goes to\n"+
		"stderr; it reads only itself, --allow-read files and directories and its sysroot, and writes\n"+
		"only to a private in-memory overlay.\n\n"+
		"The unwind uses the program's .sframe and that of every shared library that\n"+
		"has one; a frame in code without SFrame data (ld.so, libc) ends the chain:\n"+
		"a coverage gap, not an error.\n"+
		sysrootHelp+
		"The result is OK only when the program ran to its end (exit, or a signal it\n"+
		"sent itself) and every instruction was right; a run stopped early (a limit,\n"+
		"Ctrl-C, an unsupported system call, a CPU fault) is INCOMPLETE.\n\n"+
		"With --static, the rows of the program's SFrame section that no instruction\n"+
		"of the run used also go through 'sframesim check' (compared with the file's\n"+
		"CFI at every instruction, without running them), and so does the whole\n"+
		"binary (calls ending functions, FDEs that overlap or cover padding): a\n"+
		"problem found there makes the result MISMATCH, a row that could not be\n"+
		"proven INCOMPLETE.\n\n"+
		"A section that breaks rules of the SFrame format ('sframesim validate' lists\n"+
		"them) is refused: the Linux kernel refuses it too. With --check-malformed, one\n"+
		"that still decodes is checked anyway, as an unwinder that looks rows up\n"+
		"without validating the section reads it: the report lists the rules broken,\n"+
		"and the result is MALFORMED whatever the run found.\n\n"+
		"Exit status: 0 OK; 1 mismatches or unwinder failures (also in an incomplete\n"+
		"run), or a malformed SFrame section (checked anyway or not); 2 INCOMPLETE, or\n"+
		"could not run; 3 no .sframe section.\n\n")
	jsonPath := cl.String("json", "", "write the full report as JSON to `FILE` (atomically; - for stdout)")
	maxInsns := cl.Uint64("max-insns", 0, "stop after `N` instructions (0: no limit)")
	timeout := cl.Duration("timeout", 0, "stop after `D` of wall-clock time, e.g. 30s (0: no limit)")
	quantum := quantumFlag(cl.FlagSet)
	maxProblems := cl.Int("problems", 20, "print at most `N` distinct problems")
	maxFrames := cl.Int("max-frames", 0, "cut each unwind after `N` frames (0: no limit, however deep the stack);\na run with cut unwinds is INCOMPLETE: the frames beyond were not compared")
	exact := cl.Bool("exact", false, "hand each instruction to the checker before it runs, instead of replaying\nbatches of recorded instructions and stores (several times slower; the\nresults are the same: use it to cross-check)")
	static := cl.Bool("static", false, "also check the rows the run did not execute against the file's CFI,\nas 'sframesim check' does")
	malformed := cl.Bool("check-malformed", false, "check a section that breaks rules of the format (but decodes) anyway,\ninstead of refusing it; the result is then MALFORMED (exit status 1)")
	sysroot := sysrootFlag(cl.FlagSet)
	guest := addGuestFlags(cl.FlagSet)
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	if *maxFrames < 0 {
		return cl.usageError(stderr, "--max-frames %d: want 0 (no limit) or more", *maxFrames)
	}
	if *maxProblems < 0 {
		return cl.usageError(stderr, "--problems %d: want 0 or more", *maxProblems)
	}
	if !checkReportPath(stderr, "verify", "--json", *jsonPath) {
		return exitError
	}
	if !checkSysroot(stderr, "verify", "--sysroot", *sysroot) {
		return exitError
	}
	keepOnBrokenPipe()
	// Ctrl-C, SIGTERM or SIGHUP at any point from here (or since the
	// process started: see package interrupt) stops the run and still
	// writes the report.
	var interrupted atomic.Bool
	sig := make(chan os.Signal, 1)
	stopping := func(s os.Signal) {
		interrupted.Store(true)
		fmt.Fprintf(stderr, "sframesim verify: %s: stopping the run; the report covers what was checked\n", interrupt.Name(s))
	}
	if s := interrupt.Notify(sig); s != nil {
		stopping(s)
	}
	// The signals stay caught up to the process's exit: one after the
	// report is written is dropped, not the default death, so the status
	// stays the report's. (Not signal.Ignore: Go cannot undo it for
	// SIGINT and SIGHUP, and the programs a process starts inherit it.)
	var reported atomic.Bool
	defer reported.Store(true)
	go func() {
		for s := range sig {
			if !reported.Load() && !interrupted.Load() {
				stopping(s)
			}
		}
	}()
	binary, progArgs := programArgs(cl.FlagSet)
	if binary == "" {
		path, cleanup, err := writeSample()
		if err != nil {
			fmt.Fprintf(stderr, "sframesim verify: %v\n", err)
			return exitError
		}
		defer cleanup()
		binary = path
		fmt.Fprintf(stderr, "sframesim verify: no BINARY given: verifying the embedded sample %s (testdata/corpus/%s)\n", sampleName, sampleCorpus)
	}
	// The program's stdout is this command's, as under run (a program
	// that writes data there keeps it intact): the summary goes to
	// stderr; with --json -, stdout is the JSON report alone and the
	// program's stdout goes to stderr.
	// A failed write of the program's output is the program's to handle
	// (rawWriter); one of the report makes the status 2.
	guestOut := rawWriter(stdout)
	if *jsonPath == "-" {
		guestOut = rawWriter(stderr)
	}
	cfg := linux.Config{Sysroot: *sysroot, Quantum: *quantum, Stdin: os.Stdin, Stdout: guestOut, Stderr: rawWriter(stderr)}
	if err := guest.apply(&cfg); err != nil {
		return cl.usageError(stderr, "%v", err)
	}
	limitHeap(&cfg)
	opt := verify.Options{Args: progArgs, Config: cfg,
		MaxInsns: *maxInsns, Timeout: *timeout, Interrupt: &interrupted, MaxFrames: *maxFrames, Static: *static, CheckMalformed: *malformed}
	if *exact {
		opt.Batch = 1
	}
	rep, err := verify.Run(binary, opt)
	if err != nil {
		// Malformed SFrame data: 1; no section: 3; anything else: 2.
		return reportOpenError(stderr, "verify", err)
	}
	if cl.Arg(0) == "" {
		rep.Binary = sampleName
	}
	rep.WriteText(stderr, *maxProblems)
	if *jsonPath != "" {
		if err := writeJSONReport(stdout, *jsonPath, rep, rep.WriteJSONFile); err != nil {
			printWriteError(stderr, "verify", "--json", *jsonPath, err)
			return exitError
		}
	}
	switch {
	case !rep.Clean():
		return exitProblems
	case !rep.OK():
		return exitError // INCOMPLETE: not everything was checked
	}
	return exitOK
}
