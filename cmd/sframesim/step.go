//go:build cgo

package main

import (
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/tui"
)

func runStep(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("step", "Steps the program BINARY instruction by instruction in a terminal UI:\n"+
		"disassembly, registers, the active SFrame FDE and FRE row with the CFA, RA and\n"+
		"FP they give, and the unwound stack beside the true one. Keys are listed under ?\n"+
		"(s step, n next, f finish, c continue, m next mismatch, b breakpoint, g go to,\n"+
		"S step back, - go back N, r restart, q quit). Without BINARY, steps the sample\n"+
		"embedded in sframesim. NO_COLOR turns colours off.\n\n")
	quantum := cl.Uint64("quantum", 0, "switch threads after `N` instructions of one (0: the default of 100000);\nthe interleaving is the same on every run")
	sysroot := sysrootFlag(cl.FlagSet)
	guest := addGuestFlags(cl.FlagSet)
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	if !checkSysroot(stderr, "step", "--sysroot", *sysroot) {
		return exitError
	}
	binary, progArgs := programArgs(cl.FlagSet)
	if binary == "" {
		path, cleanup, err := writeSample()
		if err != nil {
			fmt.Fprintf(stderr, "sframesim step: %v\n", err)
			return exitError
		}
		defer cleanup()
		binary = path
	}
	cfg := linux.Config{Sysroot: *sysroot, Quantum: *quantum}
	if err := guest.apply(&cfg); err != nil {
		return cl.usageError(stderr, "%v", err)
	}
	d, err := tui.OpenConfig(binary, progArgs, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitError
	}
	defer d.Close()
	if _, err := tea.NewProgram(tui.New(d)).Run(); err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitError
	}
	return exitOK
}
