package testcorpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Sysroot returns the directory a dynamic corpus binary's interpreter and
// shared libraries come from, derived from its toolchain and arch: the
// host's own libraries for bookworm x86-64 ("/"), Debian 12's arm64 cross
// libraries for bookworm AArch64 ("/usr/aarch64-linux-gnu", setup.sh
// installs them), and .deps/sysroots/<suite>-<arch> for trixie and sid
// (scripts/fetch-sysroots.sh, which setup.sh runs), and for clang23, which
// linked against sid's glibc, sid's. It returns "" for
// static and nolibc binaries, and fails the test, saying how to fix it,
// when the sysroot has no program interpreter.
func Sysroot(tb testing.TB, e *Entry) string {
	tb.Helper()
	if e.Link != "dynamic" {
		return ""
	}
	arch, interp := "amd64", "lib64/ld-linux-x86-64.so.2"
	if e.Arch == "aarch64" {
		arch, interp = "arm64", "lib/ld-linux-aarch64.so.1"
	}
	var dir, fix string
	switch {
	case e.Toolchain == "bookworm" && e.Arch == "x86-64":
		dir, fix = "/", "the host's libc6 and libstdc++6"
	case e.Toolchain == "bookworm":
		dir, fix = "/usr/aarch64-linux-gnu", "apt-get install libc6-arm64-cross libgcc-s1-arm64-cross libstdc++6-arm64-cross (./setup.sh does)"
	default:
		root, err := Root()
		if err != nil {
			tb.Fatalf("corpus: %v", err)
		}
		dir = filepath.Join(root, ".deps", "sysroots", Suite(e.Toolchain)+"-"+arch)
		fix = "run scripts/fetch-sysroots.sh (./setup.sh does)"
	}
	if _, err := os.Stat(filepath.Join(dir, interp)); err != nil {
		tb.Fatalf("corpus: %s needs the %s sysroot %s: %v: %s", e.Path, e.Toolchain, dir, err, fix)
	}
	return dir
}

// Suite returns the Debian suite whose libraries the binaries of toolchain
// run with: the toolchain itself ("bookworm", "trixie", "sid"), but "sid"
// for "clang23" (clang 23 and lld 23 in the sid chroot).
func Suite(toolchain string) string {
	if toolchain == "clang23" {
		return "sid"
	}
	return toolchain
}
