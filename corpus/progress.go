package corpus

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress reports binaries as they finish: on a terminal a bar redrawn in
// place (with unexpected outcomes printed above it), elsewhere (CI logs)
// one plain line per binary.
type Progress struct {
	w          io.Writer
	total      int
	bar        bool
	start      time.Time
	unexpected int
	now        func() time.Time
}

// NewProgress returns a Progress for total binaries; bar selects the
// terminal form.
func NewProgress(w io.Writer, total int, bar bool) *Progress {
	return &Progress{w: w, total: total, bar: bar, start: time.Now(), now: time.Now}
}

// Update reports that r finished, the done-th of the total.
func (p *Progress) Update(done int, r *Result) {
	if !r.Status.OK() && r.Status != StatusInterrupted {
		p.unexpected++
	}
	if !p.bar {
		if r.Status == StatusInterrupted && r.Report == nil {
			return // not started: the summary counts these
		}
		fmt.Fprintf(p.w, "[%*d/%d] %-11s %6.2fs  %s%s\n", digits(p.total), done, p.total, r.Status, r.Seconds, r.Key, lineNote(r))
		for _, f := range r.Findings {
			fmt.Fprintf(p.w, "    %s\n", f.Message)
		}
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	if len(r.Findings) > 0 {
		fmt.Fprintf(p.w, "%s %s\n", strings.ToUpper(string(r.Status)), r.Key)
		for _, f := range r.Findings {
			fmt.Fprintf(p.w, "    %s\n", f.Message)
		}
	}
	const width = 30
	fill := width * done / max(p.total, 1)
	elapsed := p.now().Sub(p.start).Round(time.Second)
	line := fmt.Sprintf("[%s%s] %d/%d %v", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, p.total, elapsed)
	if p.unexpected > 0 {
		line += fmt.Sprintf(" %d UNEXPECTED", p.unexpected)
	}
	line += "  " + r.Key
	fmt.Fprint(p.w, line)
}

// Finish clears the bar.
func (p *Progress) Finish() {
	if p.bar {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// lineNote adds what a plain progress line says after the binary.
func lineNote(r *Result) string {
	switch {
	case r.Status == StatusUnsupported:
		return " (" + r.Error + ")"
	case r.Report != nil && r.Status != StatusInterrupted:
		s := fmt.Sprintf(" (%d instructions", r.Report.Instructions)
		switch n := len(r.Groups); n {
		case 0:
		case 1:
			s += ", 1 problem"
		default:
			s += fmt.Sprintf(", %d problems", n)
		}
		return s + ")"
	case r.Incomplete != "":
		return " (" + r.Incomplete + ")"
	}
	return ""
}

func digits(n int) int { return len(fmt.Sprint(n)) }
