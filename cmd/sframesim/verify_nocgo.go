//go:build !cgo

package main

import "io"

// runVerify reports that this build cannot emulate.
func runVerify(args []string, stdout, stderr io.Writer) int {
	return withoutEmulator("verify", args, stdout, stderr)
}
