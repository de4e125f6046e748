package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/sframesim/sframesim/sframe"
)

func runValidate(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("validate", "Checks each FILE's .sframe section: header, layout, every FDE and FRE,\n"+
		"ordering and totals. Prints one line per problem with its section offset on\n"+
		"stderr (the first 100 of a FILE, then how many more there are), and a\n"+
		"summary line per FILE on stdout.\n"+
		"Without FILE, checks the sample binary embedded in sframesim.\n\n"+
		"In a relocatable object, where functions have no addresses yet, order\n"+
		"and overlaps are checked per section, from each start field's\n"+
		"relocation. A section without SFrame data (ld --discard-sframe) is a\n"+
		"warning.\n\n"+
		"Exit status: 0 valid, 1 malformed, 2 could not run, 3 no .sframe section\n"+
		"(for several FILEs, the highest).\n\n")
	quiet := cl.Bool("quiet", false, "print errors only, not warnings")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	names := cl.Args()
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
		if f.Section == nil && errors.Is(err, sframe.ErrNoData) {
			// ld --discard-sframe's intended output.
			f.Close()
			var nd *sframe.NoDataError
			if errors.As(err, &nd) && !*quiet {
				fmt.Fprintf(stderr, "%s: sframe: warning: %s: %v\n", name, sframe.SectionName, nd)
			}
			fmt.Fprintf(stdout, "%s: no SFrame data: 0 errors, 1 warnings\n", name)
			continue
		}
		problems := f.Section.Validate(f.ValidateOptions())
		f.Close()
		nerr, nwarn, printed := 0, 0, 0
		for _, p := range problems {
			if p.Warn {
				nwarn++
				if *quiet {
					continue
				}
			} else {
				nerr++
			}
			if printed < maxProblems {
				fmt.Fprintf(stderr, "%s: %v\n", name, p)
			}
			printed++
		}
		if printed > maxProblems {
			fmt.Fprintf(stderr, "%s: %d more problems suppressed\n", name, printed-maxProblems)
		}
		h := &f.Section.Header
		fmt.Fprintf(stdout, "%s: %s %s, %d FDEs, %d FREs: %d errors, %d warnings\n",
			name, h.Version, h.ABI, h.NumFDEs, h.NumFREs, nerr, nwarn)
		if nerr > 0 {
			worse(exitProblems)
		}
	}
	return status
}
