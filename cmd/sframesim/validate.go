package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/sframesim/sframesim/sframe"
)

func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.Bool("quiet", false, "print errors only, not warnings")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sframesim validate [--quiet] [FILE...]\n\n"+
			"Checks each FILE's .sframe section: header, layout, every FDE and FRE,\n"+
			"ordering and totals. Prints one line per problem with its section offset.\n"+
			"Without FILE, checks the sample binary embedded in sframesim.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFailed
	}
	names := fs.Args()
	if len(names) == 0 {
		names = []string{""} // the embedded sample
	}
	status := exitOK
	worse := func(s int) {
		if s > status {
			status = s
		}
	}
	for _, name := range names {
		var f *sframe.File
		var err error
		if name == "" {
			name = sampleName
			f, err = openSample(stderr, "validate")
		} else {
			f, err = sframe.Open(name)
		}
		if f == nil {
			worse(reportOpenError(stderr, "validate", err))
			continue
		}
		problems := f.Section.Validate(f.ValidateOptions())
		f.Close()
		nerr, nwarn := 0, 0
		for _, p := range problems {
			if p.Warn {
				nwarn++
				if *quiet {
					continue
				}
			} else {
				nerr++
			}
			fmt.Fprintf(stdout, "%s: %v\n", name, p)
		}
		h := &f.Section.Header
		fmt.Fprintf(stdout, "%s: %s %s, %d FDEs, %d FREs: %d errors, %d warnings\n",
			name, h.Version, h.ABI, h.NumFDEs, h.NumFREs, nerr, nwarn)
		if nerr > 0 {
			worse(exitMalformed)
		}
	}
	return status
}
