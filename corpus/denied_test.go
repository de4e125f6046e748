package corpus

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/verify"
)

// TestSummaryDenied: the summary adds up the calls the sandbox denied
// over all binaries, in the text and the JSON; without any, neither
// mentions them.
func TestSummaryDenied(t *testing.T) {
	results := []Result{
		{Key: "a", Status: StatusClean, Report: &verify.Report{Denied: map[string]uint64{"socket": 1, "connect": 1}}},
		{Key: "b", Status: StatusClean, Report: &verify.Report{Denied: map[string]uint64{"socket": 2}}},
		{Key: "c", Status: StatusClean, Report: &verify.Report{}},
		{Key: "d", Status: StatusError},
	}
	s := Summarize(Summary{}, results)
	if want := map[string]uint64{"socket": 3, "connect": 1}; !maps.Equal(s.Denied, want) {
		t.Errorf("denied %v, want %v", s.Denied, want)
	}
	var text bytes.Buffer
	s.WriteText(&text, results)
	if line := "\ndenied calls: socket 3, connect 1 (sandbox: EACCES)\n"; !strings.Contains(text.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, text.String())
	}
	s = Summarize(Summary{}, results[2:])
	text.Reset()
	s.WriteText(&text, results[2:])
	data, _ := json.Marshal(s)
	if s.Denied != nil || strings.Contains(text.String(), "denied") || bytes.Contains(data, []byte("denied")) {
		t.Errorf("no denials, yet %v:\n%s\n%s", s.Denied, text.String(), data)
	}
}
