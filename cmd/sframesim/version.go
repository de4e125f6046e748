package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion is "sframesim version" (and "sframesim --version").
func runVersion(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("version", "Prints the version of sframesim from the build's version control information\n"+
		"(module version, revision, +dirty for uncommitted changes, commit time), the\n"+
		"Go version and platform it was built with, and the version of the libunicorn\n"+
		"linked into it.\n\n")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	if cl.NArg() > 0 {
		return cl.usageError(stderr, "takes no arguments")
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintf(stdout, "sframesim %s\n%s %s/%s\n%s\n", buildVersion(info), runtime.Version(), runtime.GOOS, runtime.GOARCH, emulatorVersion())
	return exitOK
}

// buildVersion describes the build as the go command stamped it: the main
// module's version, then the VCS revision (12 hex digits, +dirty if the
// tree had uncommitted changes) and commit time when the build recorded
// them (go build does in a checkout, unless -buildvcs=false).
func buildVersion(info *debug.BuildInfo) string {
	version := "(devel)"
	if info != nil && info.Main.Version != "" {
		version = info.Main.Version
	}
	var revision, modified, commitTime string
	if info != nil {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+dirty"
				}
			case "vcs.time":
				commitTime = s.Value
			}
		}
	}
	if revision == "" {
		return version + ", no version control information in this build"
	}
	version += ", revision " + revision[:min(len(revision), 12)] + modified
	if commitTime != "" {
		version += " of " + commitTime
	}
	return version
}
