package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sframesim/sframesim/sframe"
)

func runMutate(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("mutate", "Writes a copy of BINARY whose .sframe section has one row changed, for fault\n"+
		"injection: `sframesim verify OUT` must then report mismatches at the PCs of\n"+
		"that row that run. The section is re-encoded in place; the rest of the file\n"+
		"is unchanged; OUT must not be BINARY itself (by any path or link).\n\n")
	pcFlag := cl.String("pc", "", "change the FRE that covers address `ADDR` (instead of --fde/--fre); in a relocatable object, whose functions have no addresses yet, SECTION+OFFSET (.text+0x10)")
	fde := cl.Int("fde", -1, "index `N` of the function descriptor (as objdump's func idx)")
	fre := cl.Int("fre", 0, "index `J` of the row within the function")
	field := cl.String("field", "cfa", "what to change: cfa, ra, fp (offsets), base (SP<->FP) or start")
	delta := cl.Int("delta", 8, "amount `D` added to the offset or start")
	out := cl.String("o", "", "write the mutated copy to `FILE` (required)")
	if status, done := cl.parse(args, stdout, stderr); done {
		return status
	}
	switch {
	case cl.NArg() == 0:
		return cl.usageError(stderr, "no BINARY given")
	case cl.NArg() > 1:
		return cl.usageError(stderr, "too many arguments: want one BINARY")
	case *out == "":
		return cl.usageError(stderr, "no output file: -o OUT is required")
	case *pcFlag == "" && *fde < 0:
		return cl.usageError(stderr, "which row? give --pc ADDR or --fde N")
	case *pcFlag != "" && *fde >= 0:
		return cl.usageError(stderr, "give --pc or --fde, not both")
	}
	if sameFile(*out, cl.Arg(0)) {
		return cl.usageError(stderr, "-o %s is BINARY %s itself (the same file): mutate writes a copy, never over its input", *out, cl.Arg(0))
	}
	var pc uint64
	var pcSection string // SECTION of --pc SECTION+OFFSET
	if *pcFlag != "" {
		var err error
		text := *pcFlag
		if i := strings.LastIndex(text, "+"); i > 0 {
			pcSection, text = text[:i], text[i+1:]
		}
		if pc, err = strconv.ParseUint(text, 0, 64); err != nil {
			return cl.usageError(stderr, "--pc %q: not an address (ADDR, or SECTION+OFFSET in a relocatable object)", *pcFlag)
		}
	}
	path := cl.Arg(0)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "sframesim mutate: "+format+"\n", a...)
		return exitError
	}
	f, err := sframe.Open(path)
	if err != nil {
		return reportOpenError(stderr, "mutate", err)
	}
	defer f.Close()
	sec := f.Section
	m := sframe.Mutation{FDE: *fde, FRE: *fre, Field: sframe.MutationField(*field), Delta: int32(*delta)}
	rel := sec.Locations != nil
	switch {
	case *pcFlag == "":
	case rel && pcSection == "":
		return fail("%s is a relocatable object, whose functions have no addresses yet: give --pc SECTION+OFFSET (.text+0x10)", path)
	case !rel && pcSection != "":
		return fail("--pc %s: SECTION+OFFSET is for relocatable objects; give the address", *pcFlag)
	case rel:
		var row sframe.Row
		err = sframe.ErrNoFDE
		for i, es := range f.ELF.Sections {
			if es.Name == pcSection {
				if row, err = sec.LookupIn(i, pc); err == nil {
					break
				}
			}
		}
		if err != nil {
			return fail("%s+%#x: %v", pcSection, pc, err)
		}
		m.FDE, m.FRE = row.FDE, row.FRE
	default:
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
	// A relocatable object's start fields stay as stored: their relocations
	// (applied to decode field-relative starts) are the linker's to apply.
	stored := make(map[int64][]byte)
	for _, r := range f.Raw.Relocs {
		if !r.None {
			stored[r.Off] = append([]byte(nil), file[off+r.Off:off+r.Off+int64(r.Size)]...)
		}
	}
	copy(file[off:], data)
	clear(file[off+int64(len(data)) : off+int64(len(f.Raw.Data))])
	for o, b := range stored {
		copy(file[off+o:], b)
	}
	if err := os.WriteFile(*out, file, 0o755); err != nil {
		return fail("%v", err)
	}
	where := fmt.Sprintf("%#x", after.FDEs[m.FDE].Start)
	if rel {
		where = sec.Locations[m.FDE].String() // section+offset
	}
	fmt.Fprintf(stdout, "%s: %v (function at %s)\n  before: %s\n  after:  %s\n", *out, m, where, before, after.FormatRow(m.FDE, m.FRE))
	return exitOK
}

// sameFile reports whether paths a and b name one existing file (the same
// path, another path to it, a symbolic or hard link).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
