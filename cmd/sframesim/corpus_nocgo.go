//go:build !cgo

package main

import "io"

// runCorpus reports that this build cannot emulate; corpus merge needs
// no emulator.
func runCorpus(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runCorpusMerge(args[1:], stdout, stderr)
	}
	return withoutEmulator("corpus", args, stdout, stderr)
}
