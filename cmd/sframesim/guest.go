//go:build cgo

package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/sframesim/sframesim/linux"
)

// keepOnBrokenPipe makes a write to a pipe without a reader on this
// process's stdout or stderr fail with EPIPE instead of killing it with
// SIGPIPE (what Go does for fds 1 and 2): the guest, whose writes to fd 1
// and 2 are this process's, then gets the EPIPE and SIGPIPE of its own
// (linux.Process), and verify still writes its report.
func keepOnBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// guestFlags are what a guest may see beyond itself and its sysroot, shared
// by run, verify and step: files it may read, its environment and its
// memory cap.
type guestFlags struct {
	allow, env []string
	maxMem     *string
}

// addGuestFlags defines --allow-read, --env and --max-mem on fs.
func addGuestFlags(fs *flag.FlagSet) *guestFlags {
	g := &guestFlags{}
	g.maxMem = fs.String("max-mem", "1G", "cap the guest's accessible memory (mappings not PROT_NONE, and file contents held for it) at `SIZE` bytes (suffixes K, M, G)")
	fs.Func("allow-read", "let the program open `PATH` read-only (repeatable), a directory with everything below it;\nother files do not exist for it", func(s string) error {
		g.allow = append(g.allow, s)
		return nil
	})
	fs.Func("env", "add `NAME=VALUE` to the program's environment, which is otherwise empty (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("%q: want NAME=VALUE", s)
		}
		g.env = append(g.env, s)
		return nil
	})
	return g
}

// apply sets the guest's files, environment and memory cap in cfg; the
// error names the flag.
func (g *guestFlags) apply(cfg *linux.Config) error {
	mem, err := parseSize(*g.maxMem)
	if err != nil {
		return fmt.Errorf("--max-mem %q: %v", *g.maxMem, err)
	}
	cfg.MaxMem, cfg.Env, cfg.ReadAllow = mem, g.env, g.allow
	return nil
}

// limitHeap gives the Go runtime a soft memory limit of the guest's memory
// cap plus room for sframesim's own data (unless GOMEMLIMIT sets one), for
// run and verify: what the guest writes to its in-memory overlay lives on
// the Go heap, counted against the cap, and a file it grows to the cap
// would otherwise leave the copies of its growth to the garbage collector's
// own pace (4 GB of host memory for a 1 GB file; about 2 GB with the
// limit, the last copy while it grows).
func limitHeap(cfg *linux.Config) {
	if os.Getenv("GOMEMLIMIT") != "" || cfg.MaxMem == 0 {
		return
	}
	debug.SetMemoryLimit(int64(min(cfg.MaxMem, 1<<46)) + 256<<20)
}
