package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// A commandLine parses one command's arguments as Go tools do: -h or
// --help prints the command's usage on stdout and exits 0; a bad flag or
// argument prints one line naming the problem and where to read the usage
// on stderr, and exits 2 — never the whole usage.
type commandLine struct {
	*flag.FlagSet
	doc string // what the command does: printed between the synopsis and the flags
	// synopsis, when set, is the arguments for a subcommand (corpus
	// merge), which the command list does not have.
	synopsis string
}

// newCommandLine returns an empty command line for the command name
// (see [commands]); doc ends with a blank line.
func newCommandLine(name, doc string) *commandLine {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors itself
	fs.Usage = func() {}
	return &commandLine{FlagSet: fs, doc: doc}
}

// parse parses the flags in args. done reports that the command must
// return status at once: its usage was asked for and printed, or a flag is
// wrong.
func (c *commandLine) parse(args []string, stdout, stderr io.Writer) (status int, done bool) {
	err := c.Parse(args)
	if err == nil {
		err = c.negative()
	}
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		c.printUsage(stdout)
		return exitOK, true
	}
	return c.usageError(stderr, "%v", err), true
}

// negative refuses a negative duration (--timeout) given on the command
// line: none means anything below 0, and taking one silently hides the
// user's mistake. (Counts have checks of their own in each command, with
// messages that say what they take.)
func (c *commandLine) negative() error {
	var err error
	c.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(time.Duration); ok && v < 0 {
			err = fmt.Errorf("invalid value %q for flag -%s: negative", f.Value, f.Name)
		}
	})
	return err
}

// parseMixed is parse for commands whose operands and flags may come in
// any order (corpus DIR -j 2): it returns the operands.
func (c *commandLine) parseMixed(args []string, stdout, stderr io.Writer) (operands []string, status int, done bool) {
	for rest := args; ; {
		if status, done := c.parse(rest, stdout, stderr); done {
			return nil, status, true
		}
		if c.NArg() == 0 {
			return operands, exitOK, false
		}
		operands = append(operands, c.Arg(0))
		rest = c.Args()[1:]
	}
}

// printUsage prints the synopsis, the description and the flags.
func (c *commandLine) printUsage(w io.Writer) {
	synopsis := c.synopsis
	if synopsis == "" {
		synopsis = lookup(c.Name()).synopsis
	}
	fmt.Fprintf(w, "%s\n\n%s", strings.TrimSuffix("usage: sframesim "+c.Name()+" "+synopsis, " "), c.doc)
	defer c.SetOutput(io.Discard)
	c.SetOutput(w)
	c.PrintDefaults()
}

// usageError reports a bad command line of this command; it returns
// exitUsage.
func (c *commandLine) usageError(stderr io.Writer, format string, a ...any) int {
	return usageError(stderr, c.Name(), format, a...)
}

// usageError prints one line naming what is wrong with the command line
// of cmd ("" for sframesim itself) and one saying where to read its usage;
// it returns exitUsage.
func usageError(stderr io.Writer, cmd, format string, a ...any) int {
	if cmd != "" {
		cmd = " " + cmd
	}
	fmt.Fprintf(stderr, "sframesim%s: %s\nrun 'sframesim help%s'\n", cmd, fmt.Sprintf(format, a...), cmd)
	return exitUsage
}
