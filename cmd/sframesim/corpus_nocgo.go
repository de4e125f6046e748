//go:build !cgo

package main

import (
	"fmt"
	"io"

	"github.com/sframesim/sframesim/emu"
)

// runCorpus reports that this build cannot emulate.
func runCorpus(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "sframesim corpus: %v\n", emu.ErrNoCgo)
	return exitFailed
}
