// Package interrupt catches Ctrl-C (SIGINT), and SIGTERM and SIGHUP (a CI
// job's timeout, a closed terminal), for the commands that report what
// was done when interrupted (verify, corpus) from the start of the
// process, before their own handlers exist.
//
// A Go program dies of SIGINT until it calls signal.Notify, and package
// initialisation can take long before main runs: go-runewidth (pulled in
// by the terminal UI) builds its tables for 20 to 400 ms. A Ctrl-C then
// ended verify without a report. This package has an init function and
// imports only the standard library's os/signal, so it is initialised
// early (Go initialises a package as soon as its imports are, choosing by
// import path among those ready; go-runewidth becomes ready only after
// regexp): from then on such a signal is kept here, and [Notify] hands it
// to the command's handler.
package interrupt

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that interrupt verify and corpus.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// commands catch Signals from the start; the others keep Go's default
// (dying of it) until they say otherwise.
var commands = map[string]bool{"verify": true, "corpus": true}

var (
	early    = make(chan os.Signal, 1)
	catching bool
)

func init() {
	if len(os.Args) > 1 && commands[os.Args[1]] {
		signal.Notify(early, Signals...)
		catching = true
	}
}

// Notify relays Signals to c from now on, as signal.Notify(c, Signals...)
// does, and returns the one that came earlier, since the process started
// (nil: none).
func Notify(c chan<- os.Signal) (came os.Signal) {
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
