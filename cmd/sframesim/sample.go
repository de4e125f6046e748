package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"

	"github.com/sframesim/sframesim/sframe"
)

// The sample binary used when no FILE is given: testdata/corpus's
// v3/x86-64/nolibc-O2, a -nostdlib program built by gcc 16 / binutils
// 2.47.50 (SFrame V3) whose every function has SFrame data
// (TestSampleIsCorpusBinary keeps the two identical).
//
//go:embed sample/nolibc-v3-x86-64
var sampleELF []byte

const (
	sampleName   = "sample/nolibc-v3-x86-64"
	sampleCorpus = "v3/x86-64/nolibc-O2"
)

// openSample opens the embedded sample and says on w that it does.
func openSample(w io.Writer, cmd string) (*sframe.File, error) {
	fmt.Fprintf(w, "sframesim %s: no FILE given: using the embedded sample %s (testdata/corpus/%s)\n", cmd, sampleName, sampleCorpus)
	return sframe.NewFile(bytes.NewReader(sampleELF))
}
