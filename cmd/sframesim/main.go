// Command sframesim checks SFrame stack-trace data (.sframe) of Linux ELF
// binaries.
//
// Usage:
//
//	sframesim COMMAND [ARGS]
//
// Run "sframesim help" for the commands and their exit statuses, and
// "sframesim help COMMAND" for one command's flags and arguments.
package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/sframesim/sframesim/cmd/sframesim/internal/stdfds"
)

// Exit statuses shared by the commands ("run" exits with the program's own
// status instead, or exitError).
const (
	exitOK       = 0 // done, and nothing wrong was found
	exitProblems = 1 // done, and problems were found: malformed SFrame data (dump, validate), unwind mismatches (verify), unexpected outcomes (corpus); details are printed
	exitError    = 2 // could not do the job: unreadable file, not ELF, a program that could not be run
	exitUsage    = 2 // bad command line (the status Go's flag package and the go command use)
	exitNoSFrame = 3 // the file has no .sframe section (dump, validate, mutate)
)

type command struct {
	name     string
	synopsis string // the arguments, after "sframesim NAME"
	short    string // one line for the command list
	run      func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"dump", "[--base ADDR] [--style auto|2.40|2.44|latest] [FILE]",
			"print the .sframe section exactly as GNU objdump --sframe does", runDump},
		{"validate", "[--quiet] [FILE...]",
			"check .sframe sections against every rule of the SFrame format", runValidate},
		{"verify", "[--sysroot DIR] [--json FILE|-] [--max-insns N] [--timeout D] [--quantum N] [--max-frames N] [--problems N] [--exact] [--static] [--check-malformed] [--max-mem SIZE] [--allow-read PATH]... [--env NAME=VALUE]... [BINARY [-- ARGS]]",
			"check the SFrame unwind at every executed instruction against the true stack", runVerify},
		{"check", "[--json FILE|-] [--problems N] [--check-malformed] FILE...",
			"prove the SFrame rows of every instruction statically, against the file's CFI", runCheck},
		{"run", "[--sysroot DIR] [--max-insns N] [--timeout D] [--quantum N] [--max-mem SIZE] [--allow-read PATH]... [--env NAME=VALUE]... BINARY [-- ARGS]",
			"run a Linux program under emulation, like qemu-user; exits with its status", runProgram},
		{"mutate", "(--pc ADDR|SECTION+OFFSET | --fde N [--fre J]) [--field cfa|ra|fp|base|start] [--delta D] -o OUT BINARY",
			"write a copy of BINARY with one SFrame row changed (fault injection)", runMutate},
		{"step", "[--sysroot DIR] [--quantum N] [--check-malformed] [--max-mem SIZE] [--allow-read PATH]... [--env NAME=VALUE]... [BINARY [-- ARGS]]",
			"step through a program in a terminal UI: FRE row, CFA/RA/FP, unwound and true stacks", runStep},
		{"corpus", "[-j N] [--shard i/n] [--costs REPORT.json] [--expect FILE [--update]] [--json FILE|-] [--junit FILE|-] [--timeout D] [--max-insns N] [--exact] [--check-malformed] [--run REGEXP] [--sysroot DIR] [--sysroot-for TOOLCHAIN/ARCH=DIR]... [--progress auto|bar|lines|none] DIR|MANIFEST\n" +
			"       sframesim corpus merge " + corpusMergeSynopsis,
			"verify many binaries in parallel against expected outcomes, for CI; merge shard reports", runCorpus},
		{"help", "[COMMAND]",
			"print the usage of sframesim or of one command", runHelp},
		{"version", "",
			"print the versions of sframesim, Go and the linked libunicorn", runVersion},
	}
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// usage prints the top-level usage: every command, one line each, and the
// exit statuses.
func usage(w io.Writer) {
	fmt.Fprintf(w, "sframesim checks the SFrame stack-trace data (.sframe) of Linux ELF binaries.\n\n"+
		"usage: sframesim COMMAND [ARGS]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, `
Run 'sframesim help COMMAND' (or 'sframesim COMMAND -h') for a command's
flags and arguments.

exit status:
  0  success: the SFrame data is valid, the unwind matched, the corpus is as expected
  1  problems found: the SFrame data is malformed (dump, validate: what could be
     read was printed, problems on stderr), unwind mismatches (verify),
     wrong rows (check), unexpected outcomes (corpus)
  2  could not run: bad usage, unreadable file, not an ELF file, a program
     that could not be run, output that could not be written; or INCOMPLETE (verify): the run stopped before the
     program's end, so not everything was checked; or INCOMPLETE (check):
     some instructions could not be proven
  3  the file has no .sframe section
  run exits with the program's own status (2 if it could not run to its end).
`)
}

func main() {
	// A standard descriptor closed at the start (>&-) holds the Go
	// runtime's /dev/null, where every write succeeds: write as if it
	// were still closed, so the lost verdict is an error.
	var stdout, stderr io.Writer = os.Stdout, os.Stderr
	if stdfds.Closed(1) {
		stdout = closedFile(os.Stdout.Name())
	}
	if stdfds.Closed(2) {
		stderr = closedFile(os.Stderr.Name())
	}
	stop := cpuProfile(stderr)
	status := run(os.Args[1:], stdout, stderr)
	stop()
	os.Exit(status)
}

// closedFile is a standard descriptor that was closed when sframesim
// started: every write fails with EBADF, as it would natively.
type closedFile string

func (name closedFile) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: string(name), Err: syscall.EBADF}
}

// run runs the command args name. A failed write of what sframesim
// itself prints (not a guest's output) makes the status 2 (see
// checkedWriter), except under "run", whose status is the program's.
func run(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout, name: "standard output"}
	errOut := &checkedWriter{w: stderr, name: "standard error"}
	name, status := dispatch(args, out, errOut)
	if name == "run" {
		return status
	}
	return finishOutput(name, status, out, errOut)
}

// dispatch runs the command args names and returns its name ("" if none)
// and status.
func dispatch(args []string, stdout, stderr io.Writer) (string, int) {
	if len(args) == 0 {
		usage(stderr)
		return "", exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return "", exitOK
	case "-version", "--version":
		return "version", runVersion(args[1:], stdout, stderr)
	}
	if c := lookup(args[0]); c != nil {
		name := c.name
		if name == "corpus" && len(args) > 1 && args[1] == "merge" {
			name = "corpus merge"
		}
		return name, c.run(args[1:], stdout, stderr)
	}
	return "", usageError(stderr, "", "unknown command %q", args[0])
}

// runHelp is "sframesim help [COMMAND]".
func runHelp(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("help", "Without COMMAND, lists the commands and the exit statuses; with one, prints\n"+
		"its usage, as 'sframesim COMMAND -h' does.\n\n")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	switch cl.NArg() {
	case 0:
		usage(stdout)
		return exitOK
	case 1:
	case 2:
		if cl.Arg(0) == "corpus" && cl.Arg(1) == "merge" {
			return runCorpusMerge([]string{"-h"}, stdout, stderr)
		}
		return cl.usageError(stderr, "too many arguments: want one COMMAND (or corpus merge)")
	default:
		return cl.usageError(stderr, "too many arguments: want one COMMAND")
	}
	c := lookup(cl.Arg(0))
	if c == nil {
		return usageError(stderr, "", "unknown command %q", cl.Arg(0))
	}
	return c.run([]string{"-h"}, stdout, stderr)
}
