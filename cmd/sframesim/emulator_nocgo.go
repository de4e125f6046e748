//go:build !cgo

package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/emu"
)

// emulatorVersion says that this build has no emulator.
func emulatorVersion() string {
	return "libunicorn: not built in (built without cgo: verify, run, step and corpus are unavailable)"
}

// withoutEmulator stands in for a command that needs the emulator: it
// prints the command's synopsis for -h or --help, and otherwise reports
// [emu.ErrNoCgo].
func withoutEmulator(name string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		c := lookup(name)
		fmt.Fprintf(stdout, "usage: sframesim %s %s\n\n%s.\n\nThis sframesim was built without cgo: %v\n", name, c.synopsis, c.short, emu.ErrNoCgo)
		return exitOK
	}
	fmt.Fprintf(stderr, "sframesim %s: %v\n", name, emu.ErrNoCgo)
	return exitError
}
