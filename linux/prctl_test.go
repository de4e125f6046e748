//go:build cgo

package linux

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// TestPrctl: the options programs use on themselves answer as Linux does
// for an unprivileged process (a thread's name starts as the program's
// file name, cut to 15 bytes), and an option that cannot be emulated
// stops the run, named.
func TestPrctl(t *testing.T) {
	for _, a := range []*arch.Arch{arch.AMD64, arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			name := func() string {
				t.Helper()
				expect(t, "PR_GET_NAME", g.call("prctl", prGetName, g.buf), 0)
				b := readGuestBytes(t, g.p, g.buf, commLen)
				s, _, _ := strings.Cut(string(b), "\x00")
				return s
			}
			base := filepath.Base(g.p.Path)
			if got := name(); got != base[:min(len(base), 15)] {
				t.Errorf("initial name %q, want the program's %q", got, base)
			}
			expect(t, "PR_SET_NAME", g.call("prctl", prSetName, g.path(0, "a-much-longer-thread-name")), 0)
			if got := name(); got != "a-much-longer-t" {
				t.Errorf("name %q, want it cut to 15 bytes", got)
			}
			expect(t, "PR_SET_NAME empty", g.call("prctl", prSetName, g.path(0, "")), 0)
			if got := name(); got != "" {
				t.Errorf("name %q, want empty", got)
			}
			expect(t, "PR_SET_NAME unmapped", g.call("prctl", prSetName, 8), -eFAULT)
			expect(t, "PR_GET_NAME unmapped", g.call("prctl", prGetName, 8), -eFAULT)

			expect(t, "PR_GET_DUMPABLE", g.call("prctl", prGetDumpable), 1)
			expect(t, "PR_SET_DUMPABLE 0", g.call("prctl", prSetDumpable, 0), 0)
			expect(t, "PR_GET_DUMPABLE after", g.call("prctl", prGetDumpable), 0)
			expect(t, "PR_SET_DUMPABLE 2", g.call("prctl", prSetDumpable, 2), -eINVAL)

			expect(t, "PR_SET_PDEATHSIG", g.call("prctl", prSetPdeathsig, 9), 0)
			expect(t, "PR_GET_PDEATHSIG", g.call("prctl", prGetPdeathsig, g.buf), 0)
			if v := binary.LittleEndian.Uint32(readGuestBytes(t, g.p, g.buf, 4)); v != 9 {
				t.Errorf("parent death signal %d, want 9", v)
			}
			expect(t, "PR_SET_PDEATHSIG 65", g.call("prctl", prSetPdeathsig, 65), -eINVAL)

			expect(t, "PR_GET_NO_NEW_PRIVS", g.call("prctl", prGetNoNewPrivs, 0, 0, 0, 0), 0)
			expect(t, "PR_SET_NO_NEW_PRIVS 2", g.call("prctl", prSetNoNewPrivs, 2, 0, 0, 0), -eINVAL)
			expect(t, "PR_SET_NO_NEW_PRIVS", g.call("prctl", prSetNoNewPrivs, 1, 0, 0, 0), 0)
			expect(t, "PR_GET_NO_NEW_PRIVS after", g.call("prctl", prGetNoNewPrivs, 0, 0, 0, 0), 1)

			expect(t, "PR_CAPBSET_READ", g.call("prctl", prCapbsetRead, 0), 1)
			expect(t, "PR_CAPBSET_READ beyond the last", g.call("prctl", prCapbsetRead, 41), -eINVAL)
			expect(t, "PR_GET_TIMERSLACK", g.call("prctl", prGetTimerslack), defaultTimerslack)
			expect(t, "PR_SET_TIMERSLACK", g.call("prctl", prSetTimerslack, 1000), 0)
			expect(t, "PR_GET_TIMERSLACK after", g.call("prctl", prGetTimerslack), 1000)
			expect(t, "PR_GET_SECCOMP", g.call("prctl", prGetSeccomp), 0)
			expect(t, "PR_SVE_GET_VL", g.call("prctl", prSVEGetVL), -eINVAL)
			expect(t, "PR_GET_KEEPCAPS", g.call("prctl", prGetKeepcaps), 0)
			expect(t, "PR_SET_THP_DISABLE", g.call("prctl", prSetTHPDisable, 1, 0, 0, 0), 0)
			expect(t, "PR_GET_THP_DISABLE", g.call("prctl", prGetTHPDisable, 0, 0, 0, 0), 1)
			expect(t, "PR_SET_VMA", g.call("prctl", prSetVMA, 0, g.buf&^4095, 4096, g.path(1, "heap")), 0)

			if g.p.exit != nil {
				t.Fatalf("stopped: %+v", g.p.exit)
			}
			g.call("prctl", 22, 2, 0) // PR_SET_SECCOMP, SECCOMP_MODE_FILTER
			if x := g.p.exit; x == nil || x.Reason != StopUnsupported || !strings.Contains(x.Detail, "unsupported system call prctl with option 22") {
				t.Errorf("PR_SET_SECCOMP: exit %+v, want a stop naming the option", x)
			}
		})
	}
}
