//go:build !cgo

package main

import "io"

// runProgram reports that this build cannot emulate.
func runProgram(args []string, stdout, stderr io.Writer) int {
	return withoutEmulator("run", args, stdout, stderr)
}
