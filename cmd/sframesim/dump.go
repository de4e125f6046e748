package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sframesim/sframesim/internal/hostfile"
	"github.com/sframesim/sframesim/sframe"
)

func runDump(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("dump", "Prints FILE's .sframe section byte for byte as the objdump --sframe of the\n"+
		"binutils that made it: 2.40 for V1, 2.44 for V2, 2.47 for V3.\n"+
		"Without FILE, dumps the sample binary embedded in sframesim.\n\n"+
		"A section objdump cannot decode (no SFrame data, as ld --discard-sframe\n"+
		"leaves it; V1 in the latest style) gets objdump's banner and its decode\n"+
		"failure on stderr, and exit status 0, as objdump does. In a relocatable\n"+
		"object the latest style shows the start fields relocated, as objdump 2.45\n"+
		"and later do.\n\n"+
		"Exit status: 0 valid, 1 malformed (what could be read is printed, the\n"+
		"problems go to stderr: the first 100, then how many more there are), 2\n"+
		"could not run, 3 no .sframe section.\n\n")
	base := cl.String("base", "", "treat FILE as a raw .sframe section (as written by objcopy --dump-section) loaded at virtual address `ADDR`")
	styleName := cl.String("style", "auto", "whose objdump output to reproduce: auto (by SFrame version), 2.40, 2.44 or latest")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	switch {
	case cl.NArg() > 1:
		return cl.usageError(stderr, "too many arguments: want one FILE")
	case cl.NArg() == 0 && *base != "":
		return cl.usageError(stderr, "--base needs FILE: the raw section")
	}
	style, err := sframe.ParseDumpStyle(*styleName)
	if err != nil {
		return cl.usageError(stderr, "%v", err)
	}
	var addr uint64
	if *base != "" {
		if addr, err = strconv.ParseUint(*base, 0, 64); err != nil {
			return cl.usageError(stderr, "--base %q: not an address (use 0x... or decimal)", *base)
		}
	}
	name := cl.Arg(0)
	if name == "" {
		name = sampleName
	}

	var sec *sframe.Section
	var decodeErr error
	var file *sframe.File
	if *base != "" {
		data, err := hostfile.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "sframesim dump: %v\n", err)
			return exitError
		}
		sec, decodeErr = sframe.Decode(data, addr)
		if decodeErr != nil {
			decodeErr = fmt.Errorf("%s: %w", name, decodeErr)
		}
	} else {
		var f *sframe.File
		if cl.NArg() == 0 {
			f, err = openSample(stderr, "dump")
		} else {
			f, err = sframe.Open(name)
		}
		if f == nil {
			return reportOpenError(stderr, "dump", err)
		}
		defer f.Close()
		file, sec, decodeErr = f, f.Section, err
		if errors.Is(err, sframe.ErrNoData) {
			decodeErr = nil
		}
	}
	if sec == nil && file == nil {
		fmt.Fprintf(stderr, "sframesim dump: %v\n", decodeErr)
		return exitProblems
	}
	if file != nil {
		err = sframe.DumpFile(stdout, name, file, style)
	} else {
		err = sec.Dump(stdout, sframe.SectionName, style)
	}
	var failure *sframe.DumpFailure
	if errors.As(err, &failure) {
		fmt.Fprintf(stderr, "sframesim dump: %s: %v\n", name, failure)
		return exitOK
	}
	if err != nil {
		markTold(err)
		fmt.Fprintf(stderr, "sframesim dump: %v\n", err)
		return exitError
	}
	if decodeErr != nil {
		printProblems(stderr, "dump: "+name, sec.DecodeErrors())
		return exitProblems
	}
	return exitOK
}

// reportOpenError prints why a file could not be opened for its SFrame data
// and returns the matching exit status.
func reportOpenError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "sframesim %s: %v\n", cmd, err)
	switch {
	case errors.Is(err, sframe.ErrNoSection):
		return exitNoSFrame
	case errors.Is(err, sframe.ErrNotELF):
		return exitError
	}
	var fe *sframe.FormatError
	if errors.As(err, &fe) {
		return exitProblems
	}
	return exitError
}

// maxProblems bounds the problems printed per file: a few flipped bytes
// can make a section break a rule at every one of thousands of FREs.
const maxProblems = 100

// printProblems lists format errors one per line, each after "sframesim
// " and prefix (the command and the file), the first maxProblems of them,
// then how many more there are.
func printProblems(w io.Writer, prefix string, errs sframe.Errors) {
	for i, e := range errs {
		if i == maxProblems {
			fmt.Fprintf(w, "sframesim %s: %d more problems suppressed\n", prefix, len(errs)-i)
			break
		}
		fmt.Fprintf(w, "sframesim %s: %v\n", prefix, e)
	}
}
