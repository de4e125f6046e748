//go:build cgo

package verify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/check"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// TestStatic runs corpus programs with Options.Static: every row the run
// did not execute is proven right; then a fault injected into such a row
// is invisible to the run but found by check, with its evidence, and makes
// the verdict MISMATCH. A static binary and a PIE (load base not 0, whose
// noreturn calls ending functions check finds too).
func TestStatic(t *testing.T) {
	for _, prog := range []string{"v3/x86-64/many-O2-static", "v3/aarch64/cold-O2-dynamic"} {
		t.Run(prog, func(t *testing.T) {
			path := filepath.Join(testcorpus.Dir(t), prog)
			f, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			opt := Options{Static: true, Args: []string{}}
			rep, err := runSection(path, mustDecode(t, f.Section.Data, f.Section.Addr), opt)
			if err != nil {
				t.Fatal(err)
			}
			st := rep.Static
			if st == nil || st.Error != "" {
				t.Fatalf("static: %+v", st)
			}
			calls := 0 // noreturn calls ending functions
			for _, p := range st.Problems {
				if p.Kind != "call-at-end" {
					t.Errorf("baseline: %s at %#x", p.Kind, p.PC)
				}
				calls++
			}
			if st.RowsNotRun == 0 || st.Proven+st.Empty != st.RowsNotRun || rep.Failures != 0 || (calls == 0) != (rep.Verdict() == "OK") {
				t.Fatalf("baseline: %+v, verdict %s", st, rep.Verdict())
			}
			var text bytes.Buffer
			rep.WriteText(&text, 20)
			if !strings.Contains(text.String(), "  static:       ") {
				t.Errorf("text report:\n%s", text.String())
			}
			// A row the run does not execute.
			ran := map[[2]int]bool{}
			for _, s := range trace(t, path, mustDecode(t, f.Section.Data, f.Section.Addr)) {
				ran[s.row] = true
			}
			row := [2]int{-1, -1}
		rows:
			for i, fde := range f.Section.FDEs {
				for j := range fde.FREs {
					if !ran[[2]int{i, j}] && fde.PCType() == sframe.PCInc && !fde.FREs[j].RAUndefined() {
						row = [2]int{i, j}
						break rows
					}
				}
			}
			if row[0] < 0 {
				t.Fatal("every row ran")
			}
			m := sframe.Mutation{FDE: row[0], FRE: row[1], Field: sframe.MutateCFA, Delta: 8}
			sec := mustDecode(t, f.Section.Data, f.Section.Addr)
			if err := sec.Apply(m); err != nil {
				t.Fatal(err)
			}
			enc, err := sec.Encode()
			if err != nil {
				t.Fatal(err)
			}
			mut, err := runSection(path, mustDecode(t, enc, f.Section.Addr), opt)
			if err != nil {
				t.Fatal(err)
			}
			if mut.Failures != 0 || mut.Instructions != rep.Instructions {
				t.Fatalf("the run saw the fault: %d failures", mut.Failures)
			}
			ms := mut.Static
			if ms.Wrong != st.Wrong+1 || len(ms.Problems) != len(st.Problems)+1 || mut.Verdict() != "MISMATCH" || mut.OK() {
				t.Fatalf("fault %v: static %+v, verdict %s", m, ms, mut.Verdict())
			}
			var p check.Problem
			for _, q := range ms.Problems {
				if q.Kind != "call-at-end" {
					p = q
				}
			}
			fde := &sec.FDEs[m.FDE]
			if p.Kind != "cfa" || p.FDE != m.FDE || p.FRE != m.FRE || p.PC != fde.Start+uint64(fde.FREs[m.FRE].Start) || p.CFI == "" || p.SFrame == p.CFI {
				t.Errorf("fault %v: problem %+v", m, p)
			}
			text.Reset()
			mut.WriteText(&text, 20)
			if !strings.Contains(text.String(), "Found by check, not by the run") || !strings.Contains(text.String(), "CFI says:") {
				t.Errorf("text report:\n%s", text.String())
			}
			data, err := json.Marshal(mut)
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Static struct {
					Wrong    int `json:"wrong"`
					Problems []struct {
						Kind string `json:"kind"`
						FRE  int    `json:"fre"`
					} `json:"problems"`
				} `json:"static"`
			}
			if err := json.Unmarshal(data, &back); err != nil || back.Static.Wrong != ms.Wrong || len(back.Static.Problems) != len(ms.Problems) {
				t.Errorf("JSON: %+v %v", back, err)
			}
		})
	}
}

func mustDecode(t *testing.T, data []byte, addr uint64) *sframe.Section {
	t.Helper()
	sec, err := sframe.Decode(data, addr)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}
