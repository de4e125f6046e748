//go:build cgo

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sframesim/sframesim/cmd/sframesim/internal/interrupt"
	"github.com/sframesim/sframesim/linux"
)

// runProgram is "sframesim run": a qemu-user-like front end to the linux
// package's user-mode kernel.
func runProgram(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("run", "Runs the Linux program BINARY (x86-64 or AArch64: static, static PIE, or\n"+
		"dynamically linked with its ld.so and shared libraries from the sysroot)\n"+
		"under emulation, like qemu-user: its stdout and stderr pass through, ARGS are\n"+
		"its arguments (argv[0] is BINARY), fd 0 is this command's stdin. It cannot\n"+
		"exec or fork; what it writes below /tmp and the directory it starts in goes to a\n"+
		"private in-memory overlay (never to the host). It reads only itself, --allow-read\n"+
		"files and directories (all below them) and the files of the sysroot (regular\n"+
		"files only, and directories listed); time, pid and random bytes are fixed or\n"+
		"derived from the instruction count, so runs are reproducible.\n"+
		"Network calls (socket, connect...) fail with EACCES, as in a sandbox; the calls\n"+
		"denied are counted on stderr at the end.\n"+
		"SIGINT (Ctrl-C), SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to this\n"+
		"command are passed on to the program, as qemu-user does: it takes them as it\n"+
		"would natively (a program that handles or ignores them goes on); a program\n"+
		"still running 5s after a SIGTERM or SIGHUP is stopped (exit status 2).\n\n"+
		sysrootHelp+
		"Exit status: the program's own; 128+N if it killed itself with signal N\n"+
		"(abort: 134); 2 if it could not be loaded or was stopped for another reason\n"+
		"(instruction budget, timeout, memory cap, unsupported system call, CPU fault),\n"+
		"which is then printed on stderr, or on a usage error.\n\n")
	maxInsns := cl.Uint64("max-insns", 0, "stop after `N` instructions (0: no limit)")
	timeout := cl.Duration("timeout", 0, "stop after `D` of wall-clock time, e.g. 10s (0: no limit)")
	quantum := quantumFlag(cl.FlagSet)
	sysroot := sysrootFlag(cl.FlagSet)
	guest := addGuestFlags(cl.FlagSet)
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	if cl.NArg() == 0 {
		return cl.usageError(stderr, "no BINARY given")
	}
	if !checkSysroot(stderr, "run", "--sysroot", *sysroot) {
		return exitError
	}
	binary, guestArgs := programArgs(cl.FlagSet)
	keepOnBrokenPipe()
	cfg := linux.Config{
		Args:     append([]string{binary}, guestArgs...),
		Stdin:    os.Stdin,
		Stdout:   rawWriter(stdout),
		Stderr:   rawWriter(stderr),
		Sysroot:  *sysroot,
		MaxInsns: *maxInsns,
		Timeout:  *timeout,
		Quantum:  *quantum,
	}
	if err := guest.apply(&cfg); err != nil {
		return cl.usageError(stderr, "%v", err)
	}
	limitHeap(&cfg)
	cfg.Signals = new(linux.HostSignals)
	defer forwardSignals(cfg.Signals)()
	// No observer: count per block, as fast as Unicorn runs (RunFast
	// runs again, exactly, a program that faults inside a block).
	p, x, err := linux.RunFast(binary, cfg)
	if p == nil {
		fmt.Fprintf(stderr, "sframesim run: %v\n", err)
		return exitError
	}
	defer p.Close()
	if err != nil {
		fmt.Fprintf(stderr, "sframesim run: %s: %v\n", binary, err)
		return exitError
	}
	// The calls the sandbox denied, last.
	if d := linux.DeniedSummary(p.Denied()); d != "" {
		defer fmt.Fprintf(stderr, "sframesim run: %s: denied: %s\n", binary, d)
	}
	switch x.Reason {
	case linux.StopExited:
		return x.Status
	case linux.StopSignaled:
		// As a shell has it, a death by SIGPIPE (the reader went away:
		// head in a pipeline) goes unsaid; the status tells.
		if x.Signal != sigPIPE {
			fmt.Fprintf(stderr, "sframesim run: %s: %s\n", binary, x.Detail)
		}
		return x.Status
	}
	fmt.Fprintf(stderr, "sframesim run: %s: %s (after %d instructions)\n", binary, x.Detail, x.Insns)
	return exitError
}

// sigPIPE is Linux's SIGPIPE, the same number on both architectures.
const sigPIPE = 13

// forwarded are the signals run passes on to the program; not SIGHUP or
// SIGINT if this process was started with it ignored (nohup: it stays
// ignored, as Go leaves it).
var forwarded = interrupt.NotIgnored(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)

// endGrace is how long run lets a program go on after a SIGTERM or
// SIGHUP (which ask this command to end: a CI job's timeout, a closed
// terminal) before it ends the run itself: a program that ignores or
// handles them cannot keep it running.
const endGrace = 5 * time.Second

// forwardSignals passes the forwarded signals this process receives on to
// the program, from now until the function it returns is called (then
// they have their default effect again).
func forwardSignals(to *linux.HostSignals) (stop func()) {
	c := make(chan os.Signal, len(forwarded))
	signal.Notify(c, forwarded...)
	done := make(chan struct{})
	var grace *time.Timer
	go func() {
		defer close(done)
		for s := range c {
			sig := s.(syscall.Signal)
			to.Send(int(sig))
			if (sig == syscall.SIGTERM || sig == syscall.SIGHUP) && grace == nil {
				why := fmt.Sprintf("stopped: the program did not end within %v of %s", endGrace, linux.SignalName(int(sig)))
				grace = time.AfterFunc(endGrace, func() { to.End(why) })
			}
		}
	}()
	return func() {
		signal.Stop(c)
		close(c)
		<-done
		if grace != nil {
			grace.Stop()
		}
	}
}

// parseSize reads a byte count with an optional K, M or G (binary) suffix.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n > (1<<48)/mult {
		return 0, fmt.Errorf("not a size (a positive number of bytes, optionally with K, M or G)")
	}
	return n * mult, nil
}

// sysrootHelp explains --sysroot in the run and verify usages.
const sysrootHelp = "A dynamically linked program's interpreter (PT_INTERP) and shared libraries\n" +
	"are read from --sysroot DIR, where every path the program opens is resolved\n" +
	"read-only as in a chroot; of /, only ld.so's files are visible (the\n" +
	"interpreter, the library directories, /etc/ld.so.cache). Default: / for\n" +
	"x86-64, /usr/aarch64-linux-gnu for AArch64 (Debian's libc6-arm64-cross).\n" +
	"A static program needs none; one given is its view of / all the same, and\n" +
	"a --sysroot that does not exist is refused before anything runs.\n" +
	"Programs built against a newer glibc need its sysroot, e.g.\n" +
	".deps/sysroots/sid-amd64 (scripts/fetch-sysroots.sh).\n\n"

// checkSysroot refuses, before anything runs, a sysroot given on the
// command line that is not a directory (static programs too: it is their
// file system view), naming the flag; it returns false then.
func checkSysroot(stderr io.Writer, cmd, flag, dir string) bool {
	if dir == "" {
		return true
	}
	if err := linux.SysrootDir(dir); err != nil {
		fmt.Fprintf(stderr, "sframesim %s: %s: %v\n", cmd, flag, err)
		return false
	}
	return true
}

// quantumFlag defines --quantum on fs (run, verify, step), its default
// linux.DefaultQuantum.
func quantumFlag(fs *flag.FlagSet) *uint64 {
	return fs.Uint64("quantum", 0, fmt.Sprintf("switch threads after `N` instructions of one (0: the default of %d);\nthe interleaving is the same on every run", linux.DefaultQuantum))
}

// sysrootFlag defines --sysroot on fs.
func sysrootFlag(fs *flag.FlagSet) *string {
	return fs.String("sysroot", "", "read the program interpreter and shared libraries of a dynamically linked program from `DIR` (default: / for x86-64, /usr/aarch64-linux-gnu for AArch64)")
}
