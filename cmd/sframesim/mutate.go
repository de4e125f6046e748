package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sframesim/sframesim/sframe"
)

func runMutate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pcFlag := fs.String("pc", "", "change the FRE that covers address `ADDR` (instead of --fde/--fre)")
	fde := fs.Int("fde", -1, "index `N` of the function descriptor (as objdump's func idx)")
	fre := fs.Int("fre", 0, "index `J` of the row within the function")
	field := fs.String("field", "cfa", "what to change: cfa, ra, fp (offsets), base (SP<->FP) or start")
	delta := fs.Int("delta", 8, "amount `D` added to the offset or start")
	out := fs.String("o", "", "write the mutated copy to `FILE` (required)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sframesim mutate (--pc ADDR | --fde N [--fre J]) [--field F] [--delta D] -o OUT BINARY\n\n"+
			"Writes a copy of BINARY whose .sframe section has one row changed, for fault\n"+
			"injection: `sframesim verify OUT` must then report mismatches at the PCs of\n"+
			"that row that run. The section is re-encoded in place; the rest of the file\n"+
			"is unchanged.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFailed
	}
	if fs.NArg() != 1 || *out == "" || (*pcFlag == "") == (*fde < 0) {
		fs.Usage()
		return exitFailed
	}
	path := fs.Arg(0)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sframesim mutate: "+format+"\n", a...)
		return exitFailed
	}
	f, err := sframe.Open(path)
	if err != nil {
		return reportOpenError(stderr, "mutate", err)
	}
	defer f.Close()
	sec := f.Section
	m := sframe.Mutation{FDE: *fde, FRE: *fre, Field: sframe.MutationField(*field), Delta: int32(*delta)}
	if *pcFlag != "" {
		pc, err := strconv.ParseUint(*pcFlag, 0, 64)
		if err != nil {
			return fail("--pc %q: not an address", *pcFlag)
		}
		if m.FDE, err = sec.FindFDE(pc); err != nil {
			return fail("%#x: %v", pc, err)
		}
		if m.FRE, err = sec.FindFRE(&sec.FDEs[m.FDE], pc); err != nil {
			return fail("%#x: %v", pc, err)
		}
	}
	if m.FDE >= len(sec.FDEs) || m.FRE < 0 || m.FRE >= len(sec.FDEs[m.FDE].FREs) {
		return fail("no FDE %d FRE %d", m.FDE, m.FRE)
	}
	before := sec.FormatRow(m.FDE, m.FRE)
	if err := sec.Apply(m); err != nil {
		return fail("%v", err)
	}
	data, err := sec.Encode()
	if err != nil {
		return fail("re-encoding: %v", err)
	}
	if len(data) > len(f.Raw.Data) {
		return fail("the mutated section needs %d bytes, the file has room for %d", len(data), len(f.Raw.Data))
	}
	after, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		return fail("re-encoded section does not decode: %v", err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return fail("%v", err)
	}
	off := f.Raw.Offset
	copy(file[off:], data)
	clear(file[off+int64(len(data)) : off+int64(len(f.Raw.Data))])
	if err := os.WriteFile(*out, file, 0o755); err != nil {
		return fail("%v", err)
	}
	fd := &after.FDEs[m.FDE]
	fmt.Fprintf(stdout, "%s: %v (function at %#x)\n  before: %s\n  after:  %s\n", *out, m, fd.Start, before, after.FormatRow(m.FDE, m.FRE))
	return exitOK
}
