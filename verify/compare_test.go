//go:build cgo

package verify

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/linux"
	"github.com/sframesim/sframesim/sframe"
	"github.com/sframesim/sframesim/shadow"
)

// TestNolibcCorpus checks the SFrame unwind at every executed instruction
// of every nolibc corpus binary (fully covered by SFrame): no mismatch in
// any version; V3 (which marks _start outermost) verifies every
// instruction; V1 and V2 end "unterminated" at _start.
func TestNolibcCorpus(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, e := range testcorpus.Entries(t) {
		if e.Link != "nolibc" {
			continue
		}
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, e.Path)
			sf, err := sframe.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer sf.Close()
			tg, err := OpenSection(path, sf.Section, linux.Config{Args: []string{"nolibc"}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			p, s, checker := tg.Process, tg.Session, tg.Checker
			counts := map[Kind]int{}
			first := map[Kind]string{}
			s.Observe(func(r shadow.Record) bool {
				res := checker.Check(r, s.Shadow.Frames())
				counts[res.Kind]++
				if _, seen := first[res.Kind]; !seen && res.Kind != OK {
					first[res.Kind] = fmt.Sprintf("at %s depth %d: want %#x got %#x %v", s.Syms.Format(r.PC), res.Depth, res.Want, res.Got, res.Err)
				}
				return true
			})
			exit, err := p.Run()
			if err != nil || exit.Reason != linux.StopExited {
				t.Fatalf("run: %v %v", exit, err)
			}
			var kinds []string
			for k, n := range counts {
				kinds = append(kinds, fmt.Sprintf("%v=%d", k, n))
			}
			sort.Strings(kinds)
			t.Logf("%d instructions: %s", s.Executed(), strings.Join(kinds, " "))
			for k, msg := range first {
				t.Logf("first %v %s", k, msg)
			}
			if e.SFrameVersion == 3 && counts[OK] != int(s.Executed()) {
				t.Errorf("V3: not every instruction verified")
			}
			for _, k := range []Kind{MismatchCFA, MismatchRA, MismatchFP, UnwindError, TooShort} {
				if counts[k] > 0 {
					t.Errorf("%d %v results", counts[k], k)
				}
			}
		})
	}
}
