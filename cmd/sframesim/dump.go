package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sframesim/sframesim/sframe"
)

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "", "treat FILE as a raw .sframe section (as written by objcopy --dump-section) loaded at virtual address `ADDR`")
	styleName := fs.String("style", "auto", "whose objdump output to reproduce: auto (by SFrame version), 2.40, 2.44 or latest")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sframesim dump [--base ADDR] [--style S] [FILE]\n\n"+
			"Prints FILE's .sframe section byte for byte as the objdump --sframe of the\n"+
			"binutils that made it: 2.40 for V1, 2.44 for V2, 2.47 for V3.\n"+
			"Without FILE, dumps the sample binary embedded in sframesim.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFailed
	}
	if fs.NArg() > 1 || (fs.NArg() == 0 && *base != "") {
		fs.Usage()
		return exitFailed
	}
	style, err := sframe.ParseDumpStyle(*styleName)
	if err != nil {
		fmt.Fprintf(stderr, "sframesim dump: %v\n", err)
		return exitFailed
	}
	name := fs.Arg(0)
	if name == "" {
		name = sampleName
	}

	var sec *sframe.Section
	var decodeErr error
	var file *sframe.File
	if *base != "" {
		addr, err := strconv.ParseUint(*base, 0, 64)
		if err != nil {
			fmt.Fprintf(stderr, "sframesim dump: --base %q: not an address (use 0x... or decimal)\n", *base)
			return exitFailed
		}
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "sframesim dump: %v\n", err)
			return exitFailed
		}
		sec, decodeErr = sframe.Decode(data, addr)
		if decodeErr != nil {
			decodeErr = fmt.Errorf("%s: %w", name, decodeErr)
		}
	} else {
		var f *sframe.File
		if fs.NArg() == 0 {
			f, err = openSample(stderr, "dump")
		} else {
			f, err = sframe.Open(name)
		}
		if f == nil {
			return reportOpenError(stderr, "dump", err)
		}
		defer f.Close()
		file, sec, decodeErr = f, f.Section, err
	}
	if sec == nil {
		fmt.Fprintf(stderr, "sframesim dump: %v\n", decodeErr)
		return exitMalformed
	}
	if file != nil {
		err = sframe.DumpFile(stdout, name, file, style)
	} else {
		err = sec.Dump(stdout, sframe.SectionName, style)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sframesim dump: %v\n", err)
		return exitFailed
	}
	if decodeErr != nil {
		printProblems(stderr, "dump", sec.DecodeErrors())
		return exitMalformed
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
		return exitFailed
	}
	var fe *sframe.FormatError
	if errors.As(err, &fe) {
		return exitMalformed
	}
	return exitFailed
}

// printProblems lists format errors one per line.
func printProblems(w io.Writer, cmd string, errs sframe.Errors) {
	for _, e := range errs {
		fmt.Fprintf(w, "sframesim %s: %v\n", cmd, e)
	}
}
