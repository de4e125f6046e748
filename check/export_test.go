package check

import "testing"

// RunPCs, when set (run_test.go: with cgo, as it imports verify), runs
// the corpus program rel under verify and returns the PCs of its own code
// the run executed, at file addresses.
var RunPCs func(t *testing.T, rel string) map[uint64]bool
