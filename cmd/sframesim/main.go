// Command sframesim checks SFrame stack-trace data (.sframe) of Linux ELF
// binaries.
//
// Usage:
//
//	sframesim dump [--base ADDR] [--style S] [FILE]
//	sframesim validate [--quiet] [FILE...]
//	sframesim step [BINARY [-- ARGS]]
//
// Run "sframesim help" for the commands and their exit statuses.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit statuses shared by the commands.
const (
	exitOK        = 0 // done; the data is valid
	exitMalformed = 1 // done, but the SFrame data is malformed (details on stderr)
	exitFailed    = 2 // could not run: bad usage, unreadable file, not ELF
	exitNoSFrame  = 3 // the file has no .sframe section
)

type command struct {
	name  string
	usage string
	help  string
	run   func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"dump", "dump [--base ADDR] [--style auto|2.40|2.44|latest] [FILE]",
			"print the .sframe section exactly as GNU objdump --sframe does", runDump},
		{"validate", "validate [--quiet] [FILE...]",
			"check .sframe sections against every rule of the SFrame format", runValidate},
		{"verify", "verify [--json FILE] [--max-insns N] [--timeout D] [BINARY [-- ARGS]]",
			"check the SFrame unwind at every executed instruction against the true stack", runVerify},
		{"corpus", "corpus [-j N] [--shard i/n] [--expect F] DIR|MANIFEST",
			"verify many binaries in parallel against expected outcomes, for CI (see corpus -h)", runCorpus},
		{"mutate", "mutate (--pc ADDR | --fde N [--fre J]) [--field F] [--delta D] -o OUT BINARY",
			"write a copy of BINARY with one SFrame row changed (fault injection)", runMutate},
		{"step", "step [BINARY [-- ARGS]]",
			"step through a program in a terminal UI: FRE row, CFA/RA/FP, unwound and true stacks", runStep},
		{"run", "run [FLAGS] BINARY [-- ARGS]", "run a static Linux program under emulation; exits with its status (2: stopped; see run -h)", runProgram},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: sframesim COMMAND [ARGS]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-60s %s\n", c.usage, c.help)
	}
	fmt.Fprintf(w, `
exit status:
  0  success (the SFrame data is valid)
  1  the SFrame data is malformed: what could be read was printed, problems on stderr
  2  could not run: bad usage, unreadable file, not an ELF file
  3  the file has no .sframe section
`)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitFailed
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "sframesim: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitFailed
}
