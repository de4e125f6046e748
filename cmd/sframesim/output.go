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
