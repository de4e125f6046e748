//go:build !cgo

package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/emu"
)

// runProgram reports that this build cannot emulate.
func runProgram(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "sframesim run: %v\n", emu.ErrNoCgo)
	return exitFailed
}
