package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/sframetest"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// emptyDuplicateFDE writes a copy of src into a new temporary directory:
// with FDE i (if i >= 0) emptied and moved to FDE i+1's start
// (sframetest.EmptyDuplicateFDE) and, if mutate >= 0, FDE mutate's first
// row's CFA offset 8 too large.
func emptyDuplicateFDE(t *testing.T, src string, i, mutate int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(src)+"-malformed")
	err := sframetest.Rewrite(src, out, func(sec *sframe.Section) error {
		if i >= 0 {
			if err := sframetest.EmptyDuplicateFDE(sec, i); err != nil {
				return err
			}
		}
		if mutate >= 0 {
			return sec.Apply(sframe.Mutation{FDE: mutate, Field: "cfa", Delta: 8})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckMalformed: check refuses a section that breaks a rule of the
// format, and with --check-malformed checks its rows as read: never OK,
// the rules broken listed, the rows' problems beside them.
func TestCheckMalformed(t *testing.T) {
	src := filepath.Join(testcorpus.Dir(t), "v2/x86-64/recurse-O2-static")
	clean := emptyDuplicateFDE(t, src, 1, -1)
	wrong := emptyDuplicateFDE(t, src, 1, 3)
	const rule = "FDE 1 is empty (size 0), a function with no code at the other's address"
	out, e, status := runCmd(t, "", "check", clean)
	if status != exitProblems || !strings.Contains(e, "--check-malformed checks it anyway") || !strings.Contains(e, rule) || strings.Contains(out, "result:") {
		t.Errorf("without --check-malformed: status %d\n%s%s", status, out, e)
	}
	out, _, status = runCmd(t, "", "check", "--check-malformed", clean)
	if status != exitProblems || !strings.Contains(out, "malformed:    the SFrame section breaks 1 rule(s) of the format") || !strings.Contains(out, rule) ||
		!strings.Contains(out, "result:       MALFORMED section, checked anyway: no problem\n") {
		t.Errorf("--check-malformed: status %d\n%s", status, out)
	}
	out, _, status = runCmd(t, "", "check", "--check-malformed", "--json", "-", wrong)
	var reps []struct {
		Malformed []string `json:"malformed"`
		Problems  []struct {
			Kind string `json:"kind"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil || status != exitProblems || len(reps) != 1 ||
		len(reps[0].Malformed) != 1 || len(reps[0].Problems) == 0 || reps[0].Problems[0].Kind != "cfa" {
		t.Errorf("--check-malformed --json - of a malformed section with a wrong row: status %d, %v, %+v\n%s", status, err, reps, out)
	}
	// A section that does not decode stays refused.
	_, e, status = runCmd(t, "", "check", "--check-malformed", corruptSFrame(t, src, 8, 0xff, 0xff, 0xff, 0x7f))
	if status != exitProblems || !strings.Contains(e, "num_fdes") {
		t.Errorf("undecodable section with --check-malformed: status %d\n%s", status, e)
	}
}

// corruptSFrame writes a copy of the ELF file src with bytes at offset off
// of its .sframe section replaced by b.
func corruptSFrame(t *testing.T, src string, off int, b ...byte) string {
	t.Helper()
	sf, err := sframe.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	at := int(sf.Raw.Offset) + off
	sf.Close()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[at:], b)
	out := filepath.Join(t.TempDir(), filepath.Base(src)+"-corrupt")
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}
