//go:build cgo

package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

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
		"embedded in sframesim. NO_COLOR turns colours off.\n\n"+
		"A program whose SFrame section breaks rules of the format is refused, as by\n"+
		"verify; with --check-malformed it is stepped with the section as read, and the\n"+
		"header says MALFORMED.\n\n")
	quantum := quantumFlag(cl.FlagSet)
	malformed := cl.Bool("check-malformed", false, "step a program whose SFrame section breaks rules of the format (but decodes)\nanyway, instead of refusing it")
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
	open := tui.OpenConfig
	if *malformed {
		open = tui.OpenMalformed
	}
	d, err := open(binary, progArgs, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitError
	}
	defer d.Close()
	// SIGTERM, SIGHUP (the terminal went away) and a SIGINT that is not
	// a key press (input not a terminal) quit the UI, which restores the
	// terminal, and the status says which came (Bubble Tea's own handler
	// would quit with status 0 on SIGTERM).
	prog := tea.NewProgram(tui.New(d), tea.WithoutSignalHandler())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	var got os.Signal // read once done is closed
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s, ok := <-sigs; ok {
			got = s
			prog.Quit()
		}
	}()
	_, err = prog.Run()
	signal.Stop(sigs)
	close(sigs)
	<-done
	if s, ok := got.(syscall.Signal); ok {
		fmt.Fprintf(stderr, "sframesim step: %s: quit\n", linux.SignalName(int(s)))
		return 128 + int(s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sframesim step: %v\n", err)
		return exitError
	}
	return exitOK
}
