package corpus

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/sframesim/sframesim/internal/hostfile"
	"github.com/sframesim/sframesim/sframe"
)

// Job is one binary to verify.
type Job struct {
	// Key names the binary in expectations and output: its path relative
	// to the input directory or manifest, with forward slashes, or the
	// manifest entry's "name".
	Key  string
	Path string   // the file to run
	Args []string // argv[1:]
	// Stdin is what the program reads from fd 0 (then end of file).
	Stdin string
	// ExitStatus and Stdout, when set (from a manifest), are what a correct
	// run returns and prints; a run that differs is a failure.
	ExitStatus *int
	Stdout     *string
	// Arch ("x86-64", "aarch64") and SFrameVersion, when known before the
	// run (from a manifest or the file itself), group the summary even for
	// binaries that cannot run.
	Arch          string
	SFrameVersion int
	// Toolchain is the manifest's label of the toolchain that built the
	// binary, for [ApplySysroots].
	Toolchain string
	// Sysroot is where a dynamically linked binary's ld.so and libraries
	// come from ("": Options.Sysroot, else emu's default for the arch).
	Sysroot string
	// Cost is what running the binary is expected to cost (see
	// [SetCosts]): [Partition] balances shards by it and [Run] starts the
	// costliest binaries first. 0 for all: key order.
	Cost uint64
}

// Skipped is a file of an input directory that is not verified.
type Skipped struct {
	Key    string `json:"path"`
	Reason string `json:"reason"`
}

// Input is what a corpus run works on.
type Input struct {
	Source  string // the directory or manifest as given
	Jobs    []Job  // sorted by Key
	Skipped []Skipped
	// Expect holds the expectations a manifest states inline ("expect"),
	// nil when it states none.
	Expect *Expectations
	// SHA256 is the hex SHA-256 of a manifest's bytes ("" for a
	// directory): shard reports must come from the same manifest to merge.
	SHA256 string
}

// Load reads a corpus: a directory (see [Discover]) or a manifest file (see
// [ReadManifest]).
func Load(path string) (*Input, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return Discover(path)
	}
	return ReadManifest(path)
}

// Reasons a directory's file is skipped.
const (
	SkipNotELF   = "not an ELF file"
	SkipNoSFrame = "no .sframe section"
	SkipObject   = "relocatable object (.o): nothing to run"
	SkipShared   = "shared library: nothing to run"
	SkipCore     = "core dump: nothing to run"
)

// Discover lists every regular file under dir, recursively in lexical
// order: ELF executables with SFrame data become jobs (and so do files that
// start like ELF but do not parse: verify reports them); anything else is
// skipped with the reason. Files that cannot be read are errors.
func Discover(dir string) (*Input, error) {
	in := &Input{Source: dir}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			// A symbolic link to a regular file counts; anything else
			// (devices, sockets, links to directories) does not.
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				in.Skipped = append(in.Skipped, Skipped{key, "not a regular file"})
				return nil
			}
		}
		job, reason, err := probe(path)
		if err != nil {
			return err
		}
		if reason != "" {
			in.Skipped = append(in.Skipped, Skipped{key, reason})
			return nil
		}
		job.Key = key
		in.Jobs = append(in.Jobs, job)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortJobs(in.Jobs)
	return in, nil
}

// probe looks at one file: an ELF executable with an SFrame section gives
// a job; otherwise reason says why it is skipped.
func probe(path string) (job Job, reason string, err error) {
	f, err := hostfile.Open(path) // a FIFO or device must not block the walk
	if err != nil {
		return job, "", err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != elf.ELFMAG {
		return job, SkipNotELF, nil
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		// A broken ELF file is verify's to report, as that binary's error.
		return Job{Path: path}, "", nil
	}
	defer ef.Close()
	switch ef.Type {
	case elf.ET_REL:
		return job, SkipObject, nil
	case elf.ET_CORE:
		return job, SkipCore, nil
	case elf.ET_DYN:
		if !isPIE(ef) {
			return job, SkipShared, nil
		}
	}
	raw, err := sframe.FindELF(ef)
	if errors.Is(err, sframe.ErrNoSection) {
		return job, SkipNoSFrame, nil
	}
	// Other errors (a malformed section) are for verify to report.
	job.Path = path
	switch ef.Machine {
	case elf.EM_X86_64:
		job.Arch = "x86-64"
	case elf.EM_AARCH64:
		job.Arch = "aarch64"
	default:
		job.Arch = strings.ToLower(strings.TrimPrefix(ef.Machine.String(), "EM_"))
	}
	if raw != nil && len(raw.Data) > 2 {
		job.SFrameVersion = int(raw.Data[2]) // sfp_version [SFrame §2.2]
	}
	return job, "", nil
}

// isPIE tells a position-independent executable (static or dynamic) from a
// shared library: ld marks executables with DF_1_PIE, or gives them an
// interpreter.
func isPIE(f *elf.File) bool {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	flags, err := f.DynValue(elf.DT_FLAGS_1)
	if err != nil {
		return false
	}
	for _, v := range flags {
		if v&uint64(elf.DF_1_PIE) != 0 {
			return true
		}
	}
	return false
}

// manifestEntry is the part of a manifest entry a corpus run uses.
type manifestEntry struct {
	Name          *string  `json:"name"`
	Path          string   `json:"path"`
	Stdin         *string  `json:"stdin"`
	StdinFile     string   `json:"stdin_file"`
	Args          []string `json:"args"`
	ExitStatus    *int     `json:"exit_status"`
	Stdout        *string  `json:"stdout"`
	StdoutFile    string   `json:"stdout_file"`
	Arch          string   `json:"arch"`
	SFrameVersion int      `json:"sframe_version"`
	Toolchain     string   `json:"toolchain"`
	Sysroot       string   `json:"sysroot"`
	Expect        *Expect  `json:"expect"`
}

// ReadManifest reads a manifest: a JSON array of objects, each with the
// binary's "path" (relative to the manifest's directory, or absolute) and
// optionally "name", "args", "stdin", "exit_status", "stdout", "arch",
// "sframe_version", "toolchain", "sysroot" (for a dynamically linked
// binary; relative to the manifest's directory, or absolute),
// "stdin_file" and "stdout_file" (files, relative to the manifest's
// directory or absolute, whose bytes are the entry's "stdin" or "stdout":
// for input or output that is long, shared by many entries, or not text,
// which a JSON string cannot hold) and "expect":
// the binary's expected outcome, as in an expectations file (see
// [Expectations]). Other keys are ignored, so testdata/corpus/manifest.json
// serves as is.
//
// An entry's key, which names it in expectations, reports, JUnit and the
// summary, is its "name", or else its path: one binary may be listed
// several times, with different "args" and "stdin" (an interpreter with
// several scripts), as long as each entry has a key of its own. "stdin"
// is what the program reads (then end of file; none: end of file at once).
func ReadManifest(path string) (*Input, error) {
	data, err := hostfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []manifestEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, jsonError(data, err))
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: the manifest lists no binaries", path)
	}
	in := &Input{Source: path, SHA256: sha256Hex(data)}
	dir := filepath.Dir(path)
	seen := map[string]int{}
	for i, e := range entries {
		if e.Path == "" {
			return nil, fmt.Errorf("%s: entry %d: no \"path\"", path, i)
		}
		key := filepath.ToSlash(filepath.Clean(e.Path))
		if e.Name != nil {
			if err := checkName(*e.Name); err != nil {
				return nil, fmt.Errorf("%s: entry %d (%s): name %q: %w", path, i, e.Path, *e.Name, err)
			}
			key = *e.Name
		}
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s: %s", path, collision(entries, j, i, key))
		}
		seen[key] = i
		file := e.Path
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		if e.Expect != nil {
			if err := e.Expect.check(); err != nil {
				return nil, fmt.Errorf("%s: entry %d (%s): expect: %w", path, i, key, err)
			}
			if in.Expect == nil {
				in.Expect = NewExpectations()
			}
			in.Expect.Binaries[key] = e.Expect
		}
		stdin, err := fileOr(dir, e.Stdin, e.StdinFile, "stdin")
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d (%s): %w", path, i, key, err)
		}
		stdout, err := fileOr(dir, e.Stdout, e.StdoutFile, "stdout")
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d (%s): %w", path, i, key, err)
		}
		sysroot := e.Sysroot
		if sysroot != "" && !filepath.IsAbs(sysroot) {
			sysroot = filepath.Join(dir, sysroot)
		}
		in.Jobs = append(in.Jobs, Job{
			Key: key, Path: file, Args: e.Args, Stdin: deref(stdin), ExitStatus: e.ExitStatus, Stdout: stdout,
			Arch: e.Arch, SFrameVersion: e.SFrameVersion, Toolchain: e.Toolchain, Sysroot: sysroot,
		})
	}
	sortJobs(in.Jobs)
	return in, nil
}

// fileOr is an entry's "stdin" or "stdout": the string given inline, or
// the contents of the file named by its "_file" key (relative to dir), nil
// if neither is given. Both at once is an error.
func fileOr(dir string, inline *string, file, key string) (*string, error) {
	switch {
	case file == "":
		return inline, nil
	case inline != nil:
		return nil, fmt.Errorf("both %q and %q: give one", key, key+"_file")
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	data, err := hostfile.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s_file: %w", key, err)
	}
	s := string(data)
	return &s, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkName checks a manifest entry's name: a key for reports and
// expectations, on one line.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty (leave \"name\" out to name the entry by its path)")
	case strings.TrimSpace(name) != name:
		return errors.New("leading or trailing white space")
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New("a control character")
	}
	return nil
}

// collision describes entries j and i (j < i) of a manifest having the
// same key.
func collision(entries []manifestEntry, j, i int, key string) string {
	describe := func(k int) string {
		if entries[k].Name != nil {
			return fmt.Sprintf("entry %d (name %q, path %s)", k, *entries[k].Name, entries[k].Path)
		}
		return fmt.Sprintf("entry %d (path %s)", k, entries[k].Path)
	}
	msg := fmt.Sprintf("%s and %s have the same key %q", describe(j), describe(i), key)
	if entries[j].Name == nil && entries[i].Name == nil {
		msg += ": give them distinct \"name\"s to list one binary twice"
	} else {
		msg += ": names must be unique, and differ from the other entries' paths"
	}
	return msg
}

// jsonError adds the line and column of a decoding error's offset.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("offset %d (line %d, column %d): %w", off, line, col, err)
}

func sortJobs(jobs []Job) {
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].Key < jobs[j].Key })
}

// ParseSysrootFor parses "TOOLCHAIN/ARCH=DIR": the sysroot of the binaries
// a manifest says were built by TOOLCHAIN for ARCH.
func ParseSysrootFor(s string) (label, dir string, err error) {
	label, dir, ok := strings.Cut(s, "=")
	tc, arch, ok2 := strings.Cut(label, "/")
	if !ok || !ok2 || tc == "" || arch == "" || dir == "" {
		return "", "", fmt.Errorf("sysroot %q: want TOOLCHAIN/ARCH=DIR, e.g. sid/x86-64=.deps/sysroots/sid-amd64", s)
	}
	return label, dir, nil
}

// ApplySysroots gives each job without a sysroot of its own the one that
// sysroots names for its toolchain and arch ("sid/x86-64"), if any.
func ApplySysroots(jobs []Job, sysroots map[string]string) {
	for i := range jobs {
		j := &jobs[i]
		if dir, ok := sysroots[j.Toolchain+"/"+j.Arch]; ok && j.Sysroot == "" {
			j.Sysroot = dir
		}
	}
}

// Filter returns the jobs whose key re matches.
func Filter(jobs []Job, re *regexp.Regexp) []Job {
	var out []Job
	for _, j := range jobs {
		if re.MatchString(j.Key) {
			out = append(out, j)
		}
	}
	return out
}
