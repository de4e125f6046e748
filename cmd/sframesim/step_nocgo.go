//go:build !cgo

package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/emu"
)

// runStep reports that this build cannot emulate.
func runStep(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "sframesim step: %v\n", emu.ErrNoCgo)
	return exitFailed
}
