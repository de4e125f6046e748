package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/internal/atomicfile"
)

func runCheck(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("check", "Proves each FILE's SFrame data statically, without running it: at every\n"+
		"instruction of every SFrame function it compares the row (CFA, return\n"+
		"address, caller's FP, AArch64 RA signing) with the rules the machine code\n"+
		"gives (a stack-height analysis of each function, the ground truth where it\n"+
		"can tell) and with the file's own DWARF CFI (.eh_frame, .debug_frame) at\n"+
		"the same PC, and looks at the whole binary: a call ending its function\n"+
		"(its return address lies outside it), FDEs that overlap, cover padding,\n"+
		"or leave part of a function uncovered. Differences\n"+
		"SFrame makes by design (registers it does not track, x86-64's fixed RA, an\n"+
		"RA still in x30, functions GNU as leaves out) are not problems; functions\n"+
		"without SFrame data are listed as coverage notes. FILE is an executable or\n"+
		"a shared object, x86-64 or AArch64, SFrame V1, V2 or V3. Prints a summary\n"+
		"per FILE and each distinct problem once. With --json -, the JSON (an array,\n"+
		"one report per FILE) goes to stdout and the summaries to stderr.\n\n"+
		"A PC is proven right when SFrame agrees with the code where it can tell and\n"+
		"with the CFI elsewhere, each value having a rule; it is unknown, with the\n"+
		"reason, when neither can tell. The result is OK only when every PC was\n"+
		"proven right and nothing was found. Where SFrame's rule differs from the\n"+
		"CFI's but the code shows it still recovers the right value (a slot that\n"+
		"still holds the caller's FP after the CFI says it was restored), the PC is\n"+
		"proven and the report lists the difference apart (\"rule differs\"), not\n"+
		"as a problem.\n\n"+
		"A section that breaks rules of the SFrame format ('sframesim validate' lists\n"+
		"them) is refused: the Linux kernel refuses it too. With --check-malformed, one\n"+
		"that still decodes is checked anyway, its rows as read: the report lists the\n"+
		"rules broken, and the result is MALFORMED whatever the rows show.\n\n"+
		"Exit status: 0 OK; 1 problems found, or a malformed SFrame section (checked\n"+
		"anyway or not); 2 INCOMPLETE (unknown PCs), or could not check; 3 no .sframe\n"+
		"section (for several FILEs, the highest).\n\n")
	jsonPath := cl.String("json", "", "write the reports as JSON to `FILE` (atomically; - for stdout)")
	maxProblems := cl.Int("problems", 20, "print at most `N` distinct problems per FILE")
	malformed := cl.Bool("check-malformed", false, "check a section that breaks rules of the format (but decodes) anyway,\ninstead of refusing it; the result is then MALFORMED (exit status 1)")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	if cl.NArg() == 0 {
		return cl.usageError(stderr, "no FILE given")
	}
	if *maxProblems < 0 {
		return cl.usageError(stderr, "--problems %d: want 0 or more", *maxProblems)
	}
	if !checkReportPath(stderr, "check", "--json", *jsonPath) {
		return exitError
	}
	summary := stdout
	if *jsonPath == "-" {
		summary = stderr
	}
	status := exitOK
	worse := func(s int) {
		if s > status {
			status = s
		}
	}
	reports := []*check.Report{}
	for i, name := range cl.Args() {
		rep, err := check.File(name, check.Options{CheckMalformed: *malformed})
		if err != nil {
			worse(reportOpenError(stderr, "check", err))
			continue
		}
		if i > 0 {
			fmt.Fprintln(summary)
		}
		rep.WriteText(summary, *maxProblems)
		reports = append(reports, rep)
		switch {
		case !rep.Clean():
			worse(exitProblems)
		case !rep.Complete():
			worse(exitError) // INCOMPLETE: not every PC was proven
		}
	}
	if *jsonPath != "" {
		write := func(path string) error {
			data, err := json.MarshalIndent(reports, "", "  ")
			if err != nil {
				return err
			}
			return atomicfile.Write(path, append(data, '\n'))
		}
		if err := writeJSONReport(stdout, *jsonPath, reports, write); err != nil {
			printWriteError(stderr, "check", "--json", *jsonPath, err)
			return exitError
		}
	}
	return status
}
