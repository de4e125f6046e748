package corpus

import (
	"encoding/xml"
	"fmt"
	"path"
	"strings"

	"github.com/sframesim/sframesim/symbols"
)

// JUnit XML, as CI systems (Jenkins, GitLab, GitHub actions that read test
// reports) read it: one testsuite per directory of binaries, one testcase
// per binary.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit renders the results as JUnit XML. A failure's message is the first
// unexpected outcome (naming the binary and, for a problem, its PC, symbol
// and FRE row); its text lists them all with each problem as `sframesim
// verify` prints it.
func JUnit(s Summary, results []Result) ([]byte, error) {
	doc := junitSuites{Name: "sframesim corpus " + s.Input, Time: seconds(s.Seconds)}
	index := map[string]int{}
	suiteTime := map[string]float64{}
	for i := range results {
		r := &results[i]
		dir, base := path.Split(r.Key)
		dir = strings.TrimSuffix(dir, "/")
		if dir == "" {
			dir = "."
		}
		j, ok := index[dir]
		if !ok {
			j = len(doc.Suites)
			index[dir] = j
			doc.Suites = append(doc.Suites, junitSuite{Name: dir})
		}
		st := &doc.Suites[j]
		c := junitCase{Name: base, Classname: dir, Time: seconds(r.Seconds)}
		switch r.Status {
		case StatusFail:
			c.Failure = findingsProblem(r)
			st.Failures++
		case StatusError:
			c.Error = findingsProblem(r)
			st.Errors++
		case StatusUnsupported:
			c.Skipped = &junitSkipped{"unsupported, as expected: " + r.Error}
			st.Skipped++
		case StatusInterrupted:
			c.Skipped = &junitSkipped{r.Incomplete}
			st.Skipped++
		}
		if out := caseOutput(r); out != "" {
			c.SystemOut = &junitText{out}
		}
		st.Tests++
		st.Cases = append(st.Cases, c)
		suiteTime[dir] += r.Seconds
	}
	for i := range doc.Suites {
		st := &doc.Suites[i]
		st.Time = seconds(suiteTime[st.Name])
		doc.Tests += st.Tests
		doc.Failures += st.Failures
		doc.Errors += st.Errors
		doc.Skipped += st.Skipped
	}
	data, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(data, '\n')...), nil
}

func findingsProblem(r *Result) *junitProblem {
	p := &junitProblem{}
	if len(r.Findings) > 0 {
		p.Message, p.Type = r.Findings[0].Message, r.Findings[0].What
	}
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%s\n", f.Message)
		if f.Detail != "" {
			fmt.Fprintf(&b, "%s\n", f.Detail)
		}
	}
	p.Text = b.String()
	return p
}

// caseOutput summarises a verified binary: its run and the problems seen.
func caseOutput(r *Result) string {
	rep := r.Report
	if rep == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, SFrame V%d: %s, %d instructions checked, %s covered, %d failures\n",
		rep.Arch, rep.SFrameVersion, symbols.Demangle(rep.Stop), rep.Instructions, percent(rep.Covered, rep.Instructions), rep.Failures)
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "incomplete: %s\n", r.Incomplete)
	}
	for _, g := range r.Groups {
		state := "unexpected"
		if g.Expected {
			state = "known: " + orNone(g.Reason)
		}
		fmt.Fprintf(&b, "%s in %s, row %q: %d instructions (%s)\n", g.Kind, symbols.Demangle(g.Function), g.Row, g.Hits, state)
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
