package main

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestHelp: "help CMD", "CMD -h" and "CMD --help" print the same usage of
// every command on stdout and exit 0; its flag list has exactly the flags
// its synopsis names.
func TestHelp(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	synopsisFlag := regexp.MustCompile(`(?:^|[\s\[(|])--?([a-z][a-z-]*)`)
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			var first string
			for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "--help"}, {c.name, "-help"}} {
				out, errOut, status := runCmd(t, "", args...)
				if status != exitOK || errOut != "" || !strings.HasPrefix(out, "usage: sframesim "+c.name) {
					t.Fatalf("%q: status %d, stderr %q, stdout %q", args, status, errOut, trim(out))
				}
				if first == "" {
					first = out
				} else if out != first {
					t.Errorf("%q prints another usage than %q:\n%s", args, []string{"help", c.name}, out)
				}
			}
			if strings.Contains(first, "built without cgo") {
				return // the emulator's commands define no flags then
			}
			var listed, named []string
			for _, m := range flagLine.FindAllStringSubmatch(first, -1) {
				listed = append(listed, m[1])
			}
			for _, m := range synopsisFlag.FindAllStringSubmatch(c.synopsis, -1) {
				if !slices.Contains(named, m[1]) {
					named = append(named, m[1])
				}
			}
			slices.Sort(listed)
			slices.Sort(named)
			if !slices.Equal(listed, named) {
				t.Errorf("flags listed %q, named in the synopsis %q", listed, named)
			}
		})
	}
}

// TestTopLevelUsage: help, -h and --help list every command, one line each,
// on stdout; no arguments prints the same on stderr and exits 2.
func TestTopLevelUsage(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, nil} {
		out, errOut, status := runCmd(t, "", args...)
		want, usage := exitOK, out
		if args == nil {
			want, usage = exitUsage, errOut
		}
		if status != want || out+errOut != usage {
			t.Errorf("%q: status %d (want %d), stdout %q, stderr %q", args, status, want, trim(out), trim(errOut))
		}
		for _, c := range commands {
			if !strings.Contains(usage, "\n  "+c.name+strings.Repeat(" ", 10-len(c.name))+c.short+"\n") {
				t.Errorf("%q: the usage does not list %s:\n%s", args, c.name, usage)
			}
		}
	}
}

// A usageErrorCase is a command line that must fail with exitUsage and a short
// message: what is wrong, and which help to read.
type usageErrorCase struct {
	args   []string
	stderr string // the first line contains it
	help   string // the help to read: "sframesim help CMD"
}

func checkUsageErrors(t *testing.T, cases []usageErrorCase) {
	t.Helper()
	for _, c := range cases {
		out, errOut, status := runCmd(t, "", c.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if status != exitUsage || out != "" || len(lines) > 3 || !strings.Contains(lines[0], c.stderr) ||
			!strings.Contains(errOut, "run '"+c.help+"'\n") {
			t.Errorf("%q: status %d (want %d), stdout %q\nstderr %q\nwant at most 3 lines, %q in the first, and run '%s'",
				c.args, status, exitUsage, trim(out), trim(errOut), c.stderr, c.help)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageErrorCase{
		{[]string{"frobnicate"}, `sframesim: unknown command "frobnicate"`, "sframesim help"},
		{[]string{"--frobnicate"}, `unknown command "--frobnicate"`, "sframesim help"},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`, "sframesim help"},
		{[]string{"help", "dump", "validate"}, "sframesim help: too many arguments", "sframesim help help"},
		{[]string{"help", "--all"}, "flag provided but not defined: -all", "sframesim help help"},
		{[]string{"dump", "--frob"}, "sframesim dump: flag provided but not defined: -frob", "sframesim help dump"},
		{[]string{"dump", "a", "b"}, "sframesim dump: too many arguments", "sframesim help dump"},
		{[]string{"dump", "--base", "0x1000"}, "--base needs FILE", "sframesim help dump"},
		{[]string{"dump", "--base"}, "flag needs an argument: -base", "sframesim help dump"},
		{[]string{"dump", "--style", "2.39", "x"}, "unknown dump style", "sframesim help dump"},
		{[]string{"dump", "--base", "zz", "x"}, `--base "zz": not an address`, "sframesim help dump"},
		{[]string{"validate", "--quiet=maybe"}, `invalid boolean value "maybe" for -quiet`, "sframesim help validate"},
		{[]string{"mutate", "--fde", "1", "-o", "out"}, "sframesim mutate: no BINARY given", "sframesim help mutate"},
		{[]string{"mutate", "--fde", "1", "-o", "out", "a", "b"}, "too many arguments", "sframesim help mutate"},
		{[]string{"mutate", "--fde", "1", "x"}, "-o OUT is required", "sframesim help mutate"},
		{[]string{"mutate", "-o", "out", "x"}, "give --pc ADDR or --fde N", "sframesim help mutate"},
		{[]string{"mutate", "--pc", "0x10", "--fde", "1", "-o", "out", "x"}, "not both", "sframesim help mutate"},
		{[]string{"mutate", "--pc", "zz", "-o", "out", "x"}, `--pc "zz": not an address`, "sframesim help mutate"},
		{[]string{"mutate", "--fde", "one", "-o", "out", "x"}, `invalid value "one" for flag -fde`, "sframesim help mutate"},
		{[]string{"version", "now"}, "sframesim version: takes no arguments", "sframesim help version"},
		{[]string{"version", "--short"}, "flag provided but not defined: -short", "sframesim help version"},
	})
}

func TestVersion(t *testing.T) {
	out, errOut, status := runCmd(t, "", "version")
	if status != exitOK || errOut != "" || !strings.HasPrefix(out, "sframesim ") ||
		!strings.Contains(out, "\n"+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n") ||
		!strings.Contains(out, "\nlibunicorn") {
		t.Errorf("status %d, stderr %q, stdout:\n%s", status, errOut, out)
	}
	if o, e, s := runCmd(t, "", "--version"); o != out || e != "" || s != exitOK {
		t.Errorf("--version: status %d, stderr %q, stdout %q; want the output of version", s, e, o)
	}
}

// TestBuildVersion: what the go command stamps into a build becomes the
// first line of "sframesim version".
func TestBuildVersion(t *testing.T) {
	vcs := func(version string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/sframesim/sframesim", Version: version}}
		for i := 0; i < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	const rev = "0658e78cc1a2f3b4c5d6e7f8091a2b3c4d5e6f70"
	for _, tt := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "(devel), no version control information in this build"},
		{vcs("(devel)", "-buildmode", "exe"), "(devel), no version control information in this build"},
		{vcs("", "vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-22T16:08:14Z", "vcs.modified", "false"),
			"(devel), revision 0658e78cc1a2 of 2026-11-22T16:08:14Z"},
		{vcs("v0.0.0-20261122160814-0658e78cc1a2+dirty", "vcs.revision", rev, "vcs.time", "2026-11-22T16:08:14Z", "vcs.modified", "true"),
			"v0.0.0-20261122160814-0658e78cc1a2+dirty, revision 0658e78cc1a2+dirty of 2026-11-22T16:08:14Z"},
		{vcs("v1.2.0", "vcs.revision", "abc", "vcs.modified", "true"), "v1.2.0, revision abc+dirty"},
	} {
		if got := buildVersion(tt.info); got != tt.want {
			t.Errorf("buildVersion(%+v) = %q, want %q", tt.info, got, tt.want)
		}
	}
}
