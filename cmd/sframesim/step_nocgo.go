//go:build !cgo

package main

import "io"

// runStep reports that this build cannot emulate.
func runStep(args []string, stdout, stderr io.Writer) int {
	return withoutEmulator("step", args, stdout, stderr)
}
