package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// writeSample writes the embedded sample to a fresh temporary directory,
// for commands that run it; cleanup removes it.
func writeSample() (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "sframesim-sample-")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, filepath.Base(sampleName))
	if err := os.WriteFile(path, sampleELF, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// programArgs splits the arguments left after the flags into the program
// to run (empty if none) and its own arguments, after an optional "--".
func programArgs(fs *flag.FlagSet) (binary string, args []string) {
	if fs.NArg() == 0 {
		return "", nil
	}
	args = fs.Args()[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	return fs.Arg(0), args
}
