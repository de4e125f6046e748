//go:build !cgo

package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/emu"
)

// runVerify reports that this build cannot emulate.
func runVerify(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "sframesim verify: %v\n", emu.ErrNoCgo)
	return exitFailed
}
