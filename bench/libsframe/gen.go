//go:build ignore

// gen writes the inputs of lookup.c: a corpus binary's raw .sframe section
// and the random PCs BenchmarkLookup uses (section-relative, as libsframe's
// sframe_find_fre takes them). Usage: go run gen.go BINARY OUTDIR
package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/sframesim/sframesim/sframe"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run gen.go BINARY OUTDIR")
		os.Exit(2)
	}
	f, err := sframe.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := f.Section
	rng := rand.New(rand.NewPCG(1, 2)) // as in BenchmarkLookup
	pcs := make([]byte, 0, 8<<16)
	for range 1 << 16 {
		fd := &s.FDEs[rng.IntN(len(s.FDEs))]
		pc := fd.Start + rng.Uint64N(uint64(max(fd.Size, 1)))
		pcs = binary.LittleEndian.AppendUint64(pcs, pc-s.Addr)
	}
	out := os.Args[2]
	must(os.WriteFile(filepath.Join(out, "section.bin"), f.Raw.Data, 0o644))
	must(os.WriteFile(filepath.Join(out, "pcs.bin"), pcs, 0o644))
	fmt.Printf("%s: %d FDEs, %d FREs, %d PCs\n", os.Args[1], len(s.FDEs), s.Header.NumFREs, 1<<16)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
