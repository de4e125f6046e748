//go:build !cgo

package main

import "io"

// runCorpus reports that this build cannot emulate.
func runCorpus(args []string, stdout, stderr io.Writer) int {
	return withoutEmulator("corpus", args, stdout, stderr)
}
