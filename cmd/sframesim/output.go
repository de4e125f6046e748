package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sframesim/sframesim/internal/atomicfile"
)

// writeJSONReport writes v as indented JSON to stdout if path is "-", as Go
// tools read "-" for standard output; otherwise writeFile writes it to
// path, in the same form.
func writeJSONReport(stdout io.Writer, path string, v any, writeFile func(path string) error) error {
	if path != "-" {
		return writeFile(path)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printWriteError says on stderr why the report for flag could not be
// written to path, and how to write it to stdout when path is not a
// regular file (/dev/stdout, a FIFO) and the flag takes -.
func printWriteError(stderr io.Writer, cmd, flag, path string, err error) {
	hint := ""
	if errors.Is(err, atomicfile.ErrNotRegular) && flag != "--expect" {
		hint = fmt.Sprintf("; %s - writes to standard output", flag)
	}
	markTold(err)
	msg := err.Error()
	if !strings.Contains(msg, path) {
		msg = "writing " + path + ": " + msg
	}
	fmt.Fprintf(stderr, "sframesim %s: %s: %s%s\n", cmd, flag, msg, hint)
}

// checkReportPath refuses, before a run, a report path that is not a
// regular file or a new name (- is standard output); it prints why and
// returns false.
func checkReportPath(stderr io.Writer, cmd, flag, path string) bool {
	if path == "" || path == "-" {
		return true
	}
	if err := atomicfile.Check(path); err != nil {
		printWriteError(stderr, cmd, flag, path, err)
		return false
	}
	return true
}

// checkedWriter passes a command's own output (its verdict, summary,
// problems, reports) on to w and keeps the first error a write returned:
// a verdict that could not be written (stdout on a full disk, a closed
// descriptor) must not leave exit status 0 behind. A guest's own output
// (run, verify) bypasses it: see rawWriter.
type checkedWriter struct {
	w    io.Writer
	name string // "standard output", "standard error"
	err  error  // the first write error
	told bool   // a message on stderr already named err (printWriteError)
}

// checkedWriteError is an error of a write through a checkedWriter, so a
// command that reports it itself can mark it told.
type checkedWriteError struct {
	w   *checkedWriter
	err error
}

func (e *checkedWriteError) Error() string { return e.err.Error() }
func (e *checkedWriteError) Unwrap() error { return e.err }

// markTold notes that err, if it is a write error of a checkedWriter, was
// said on stderr, so finishOutput does not say it again.
func markTold(err error) {
	var cw *checkedWriteError
	if errors.As(err, &cw) {
		cw.w.told = true
	}
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return n, &checkedWriteError{c, err}
	}
	return n, nil
}

// rawWriter is w without the checking of a checkedWriter: where a guest's
// stdout and stderr go (a failed write there is the guest's to handle: it
// gets EIO, or EPIPE and SIGPIPE; not a failure of sframesim), and what
// isTerminal looks at.
func rawWriter(w io.Writer) io.Writer {
	if c, ok := w.(*checkedWriter); ok {
		return c.w
	}
	return w
}

// finishOutput turns a failed write of the command's own output into
// exit status 2 (when status was lower), saying so on stderr (if stderr
// itself still takes writes, and the command did not already say it).
func finishOutput(cmd string, status int, stdout, stderr *checkedWriter) int {
	if cmd != "" {
		cmd = " " + cmd
	}
	failed := false
	for _, c := range []*checkedWriter{stdout, stderr} {
		if c.err == nil {
			continue
		}
		failed = true
		if !c.told && c != stderr && stderr.err == nil {
			fmt.Fprintf(stderr.w, "sframesim%s: writing to %s: %v\n", cmd, c.name, c.err)
		}
	}
	if failed && status < exitError {
		return exitError
	}
	return status
}
