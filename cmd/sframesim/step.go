//go:build cgo

package main

import (
	"flag"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/sframesim/sframesim/tui"
)

func runStep(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("step", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sysroot := sysrootFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sframesim step [--sysroot DIR] [BINARY [-- ARGS]]\n\n"+
			"Steps the program BINARY instruction by instruction in a terminal UI:\n"+
			"disassembly, registers, the active SFrame FDE and FRE row with the CFA, RA and\n"+
			"FP they give, and the unwound stack beside the true one. Keys are listed under ?\n"+
			"(s step, n next, f finish, c continue, m next mismatch, b breakpoint, g go to,\n"+
			"S step back, - go back N, r restart, q quit). Without BINARY, steps the sample\n"+
			"embedded in sframesim. NO_COLOR turns colours off.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFailed
	}
	binary, progArgs := programArgs(fs)
	if binary == "" {
		path, cleanup, err := writeSample()
		if err != nil {
			fmt.Fprintf(stderr, "sframesim step: %v\n", err)
			return exitFailed
		}
		defer cleanup()
		binary = path
	}
	d, err := tui.Open(binary, progArgs, *sysroot)
	if err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitFailed
	}
	defer d.Close()
	if _, err := tea.NewProgram(tui.New(d)).Run(); err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitFailed
	}
	return exitOK
}
