//go:build cgo

package linux

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testdata/privileged-$ARCH are testdata/src/privileged.c, built with
//
//	$ARCH-linux-gnu-gcc -O2 -static -Wa,--gsframe -o privileged-$ARCH src/privileged.c
//
// (gcc 12, glibc 2.36, binutils 2.40). testdata/privileged-want/ARCH.txt is
// what its "priv" scenario prints: on x86-64 natively (Linux 6.1), on
// AArch64 under qemu-aarch64 7.2 with ILL_ILLOPN changed to ILL_ILLOPC, the
// kernel's si_code for an undefined instruction (as signals-want says).

func runPrivileged(t *testing.T, a string, args ...string) (string, *Exit) {
	t.Helper()
	out, x, _ := runGuest(t, filepath.Join("testdata", "privileged-"+a), Config{Args: append([]string{"privileged"}, args...), MaxInsns: 20_000_000})
	if x.Reason != StopExited || x.Status != 0 {
		t.Fatalf("%s: %v, want exit status 0", a, x)
	}
	return out, x
}

// TestPrivilegedInstructions: each instruction only a kernel may run gives
// the signal Linux gives (SIGSEGV from #GP, SIGILL from an undefined
// instruction), however many times (a second #GP or #DE used to become a
// double fault, "CPU exception 8").
func TestPrivilegedInstructions(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "privileged-want", a+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if out, _ := runPrivileged(t, a, "priv"); out != string(want) {
				t.Errorf("output:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

// TestCounters: rdtsc and CNTVCT_EL0 read the guest's monotonic clock (1
// GHz, a nanosecond per instruction), the same on every run, and
// CNTFRQ_EL0 says 1 GHz.
func TestCounters(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			out, _ := runPrivileged(t, a, "counter")
			if again, _ := runPrivileged(t, a, "counter"); again != out {
				t.Errorf("two runs differ:\n%s\n%s", out, again)
			}
			var v []uint64
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Fields(line)
				n, err := strconv.ParseUint(f[len(f)-1], 10, 64)
				if err != nil {
					t.Fatalf("output %q: %v", out, err)
				}
				v = append(v, n)
			}
			c1, mono, c2 := v[0], v[1], v[2]
			if !(1000e9 < c1 && c1 < mono && mono < c2 && c2-c1 < 1000) {
				t.Errorf("counter %d, monotonic %d, counter %d: want increasing readings of one clock, close together", c1, mono, c2)
			}
			if a == "aarch64" && (len(v) < 4 || v[3] != 1e9) {
				t.Errorf("output %q: want frequency 1000000000", out)
			}
		})
	}
}
