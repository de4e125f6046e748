package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/corpus"
	"github.com/sframesim/sframesim/internal/atomicfile"
)

// corpusMergeSynopsis is the arguments of "sframesim corpus merge".
const corpusMergeSynopsis = "[--expect FILE] [--json FILE|-] [--junit FILE|-] REPORT.json..."

// runCorpusMerge is "sframesim corpus merge": it needs no emulator.
func runCorpusMerge(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("corpus merge", "Combines the --json reports of the shards of one corpus run (--shard i/n, or\n"+
		"the shard taken from the environment) into the report of the whole run: the\n"+
		"same summary, JSON and JUnit an unsharded run writes (the shards' wall-clock\n"+
		"time is the slowest shard's, their workers are added up, and the JSON lists\n"+
		"the shards), and the same exit status. The verdicts are the shards': each\n"+
		"binary was judged against the expectations in its shard.\n\n"+
		"Refused, with the reason: reports of different sframesim versions,\n"+
		"manifests, expectations files or options (--run, --max-insns, --timeout,\n"+
		"--costs), of different splits, a missing shard or one given twice, a binary\n"+
		"in two reports, shards that do not cover exactly the binaries the run\n"+
		"selected, and a report that is itself a merge.\n\n"+
		"Exit status: 0 every binary as expected, 1 unexpected outcomes (or stale\n"+
		"expectations), 2 the reports cannot be merged (or a binary could not be\n"+
		"verified, or a shard was interrupted).\n\n")
	cl.synopsis = corpusMergeSynopsis
	expectPath := cl.String("expect", "", "check that the shards were judged against the expectations `FILE` (the same bytes)")
	jsonPath := cl.String("json", "", "write the merged summary and every report as JSON to `FILE` (- for stdout)")
	junitPath := cl.String("junit", "", "write the merged JUnit XML to `FILE` (- for stdout)")
	inputs, status, done := cl.parseMixed(args, stdout, stderr)
	if done {
		return status
	}
	switch {
	case len(inputs) == 0:
		return cl.usageError(stderr, "no REPORT.json given: give the --json reports of every shard")
	case *jsonPath == "-" && *junitPath == "-":
		return cl.usageError(stderr, "--json and --junit cannot both write to stdout")
	}
	for _, r := range []struct{ flag, path string }{{"--json", *jsonPath}, {"--junit", *junitPath}} {
		if !checkReportPath(stderr, "corpus merge", r.flag, r.path) {
			return exitError
		}
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sframesim corpus merge: "+format+"\n", a...)
		return exitError
	}
	var reports []*corpus.ShardReport
	for _, path := range inputs {
		r, err := corpus.ReadReport(path)
		if err != nil {
			return fail("%v", err)
		}
		reports = append(reports, r)
	}
	sum, results, err := corpus.Merge(reports)
	if err != nil {
		return fail("%v", err)
	}
	if *expectPath != "" {
		exp, err := corpus.ReadExpectations(*expectPath)
		switch {
		case err != nil:
			return fail("%v", err)
		case sum.Setup.ExpectSHA256 == "":
			return fail("--expect %s: the shards were run without --expect", *expectPath)
		case exp.SHA256 != sum.Setup.ExpectSHA256:
			return fail("--expect %s: not the expectations the shards were judged against (its SHA-256 is %s, theirs %s): run the shards with this file", *expectPath, exp.SHA256, sum.Setup.ExpectSHA256)
		}
	}
	summary := stdout
	if *jsonPath == "-" || *junitPath == "-" {
		summary = stderr
	}
	return corpusOutcome("corpus merge", stdout, stderr, summary, sum, results, *jsonPath, *junitPath)
}

// corpusOutcome prints the summary of a corpus run (or merge) on summary,
// writes the requested reports, and returns the exit status.
func corpusOutcome(cmd string, stdout, stderr, summary io.Writer, sum corpus.Summary, results []corpus.Result, jsonPath, junitPath string) int {
	sum.WriteText(summary, results)
	status := exitOK
	switch {
	case sum.Interrupted || sum.Statuses[corpus.StatusError] > 0:
		status = exitError
	case !sum.OK():
		status = exitProblems
	}
	if st := writeCorpusReports(cmd, stdout, stderr, sum, results, jsonPath, junitPath); st != exitOK {
		status = st
	}
	return status
}

// writeCorpusReports writes the JSON and JUnit reports asked for (a path
// of "" is not asked for; - is stdout). Every one is written, whatever
// happened to the others; each failure is reported and makes the status
// exitError.
func writeCorpusReports(cmd string, stdout, stderr io.Writer, sum corpus.Summary, results []corpus.Result, jsonPath, junitPath string) int {
	status := exitOK
	failWrite := func(flag, path string, err error) {
		printWriteError(stderr, cmd, flag, path, err)
		status = exitError
	}
	if jsonPath != "" {
		doc := corpus.Document{Summary: sum, Results: results}
		writeFile := func(path string) error { return corpus.WriteJSON(path, sum, results) }
		if err := writeJSONReport(stdout, jsonPath, doc, writeFile); err != nil {
			failWrite("--json", jsonPath, err)
		}
	}
	if junitPath != "" {
		data, err := corpus.JUnit(sum, results)
		switch {
		case err != nil:
		case junitPath == "-":
			_, err = stdout.Write(data)
		default:
			err = atomicfile.Write(junitPath, data)
		}
		if err != nil {
			failWrite("--junit", junitPath, err)
		}
	}
	return status
}

// plural is "1 binary" or "n binaries".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
