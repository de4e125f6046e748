package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/sframesim/sframesim/internal/atomicfile"
)

// cpuProfileEnv names the file sframesim writes a profile of its own CPU
// time to, when set: what `make pgo` turns into default.pgo (Go builds
// sframesim with it: profile-guided optimization), and what to attach to
// a report of a slow run.
const cpuProfileEnv = "SFRAMESIM_CPUPROFILE"

// cpuProfile starts Go's CPU profiler if cpuProfileEnv names a file, and
// returns what stops it and writes the profile there (as reports are
// written: atomically, never through a link). Problems are said on
// stderr; the command runs either way.
func cpuProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		fmt.Fprintf(stderr, "sframesim: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := atomicfile.Write(path, buf.Bytes()); err != nil {
			fmt.Fprintf(stderr, "sframesim: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
