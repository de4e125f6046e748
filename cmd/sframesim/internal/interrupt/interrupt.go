// Package interrupt catches Ctrl-C (SIGINT), and SIGTERM and SIGHUP (a CI
// job's timeout, a closed terminal), for the commands that report what
// was done when interrupted (verify, corpus) from the start of the
// process, before their own handlers exist.
//
// A Go program dies of SIGINT until it calls signal.Notify, and package
// initialisation can take long before main runs: go-runewidth (pulled in
// by the terminal UI) builds its tables for 20 to 400 ms. A Ctrl-C then
// ended verify without a report. This package has an init function and
// imports only the standard library's os/signal and syscall, so it is
// initialised early (Go initialises a package as soon as its imports are,
// choosing by import path among those ready; go-runewidth becomes ready
// only after regexp): from then on such a signal is kept here, and
// [Notify] hands it to the command's handler.
package interrupt

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that interrupt verify and corpus: SIGINT,
// SIGTERM and SIGHUP, but for one this process was started with ignored
// (nohup; a background job of a shell without job control), which stays
// ignored, as Go leaves it.
var Signals = NotIgnored(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)

// NotIgnored returns the signals of sigs this process does not ignore.
// Go keeps SIGHUP and SIGINT ignored when the process started so.
func NotIgnored(sigs ...os.Signal) []os.Signal {
	var out []os.Signal
	for _, s := range sigs {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// Reset gives Signals their default effect again (signal.Reset with none
// would reset every signal).
func Reset() {
	if len(Signals) > 0 {
		signal.Reset(Signals...)
	}
}

// commands catch Signals from the start; the others keep Go's default
// (dying of it) until they say otherwise.
var commands = map[string]bool{"verify": true, "corpus": true}

var (
	early    = make(chan os.Signal, 1)
	catching bool
)

func init() {
	if len(os.Args) > 1 && commands[os.Args[1]] && len(Signals) > 0 {
		signal.Notify(early, Signals...)
		catching = true
	}
}

// Notify relays Signals to c from now on, as signal.Notify(c, Signals...)
// does, and returns the one that came earlier, since the process started
// (nil: none).
func Notify(c chan<- os.Signal) (came os.Signal) {
	if len(Signals) == 0 {
		return nil // signal.Notify with none would relay every signal
	}
	signal.Notify(c, Signals...)
	if !catching {
		return nil
	}
	catching = false
	signal.Stop(early)
	select {
	case s := <-early:
		return s
	default:
		return nil
	}
}

// Name is how a message names s: SIGINT (Ctrl-C), SIGTERM, SIGHUP.
func Name(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}
