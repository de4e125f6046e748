//go:build cgo

package verify

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

var longFib = flag.Int("long.fib", 25, "BenchmarkLong: the Fibonacci number the lua script computes recursively (25: ~117 M instructions, 31: ~1.1 G)")

// BenchmarkLong runs one long program — the real-world corpus's static lua
// interpreter computing fib(N) recursively and sorting a table — three
// ways in each iteration, as separate processes, side by side: `sframesim
// verify` (every instruction checked), `sframesim run` and qemu-user
// (qemu-x86_64 or qemu-aarch64, which must be installed). It reports
// verified instructions per CPU second, verify's CPU time over run's and
// over qemu's, and the peak RSS of each (verify's must stay flat in the
// run length: compare -long.fib 25 with 31). The processes' own rusage
// is measured, so a loaded machine inflates all three alike; quote medians
// of -count 5.
func BenchmarkLong(b *testing.B) {
	root, err := testcorpus.Root()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "sframesim")
	// go test puts its own go command first on the PATH.
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "sframesim")).CombinedOutput(); err != nil {
		b.Fatalf("building sframesim: %v\n%s", err, out)
	}
	script := fmt.Sprintf("local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"+
		"local t = {} for i = 1, 20000 do t[i] = (i * 7919) %% 10007 end table.sort(t)\n"+
		"print(fib(%d), t[1], t[#t])\n", *longFib)
	for _, a := range []struct{ arch, qemu string }{{"x86-64", "qemu-x86_64"}, {"aarch64", "qemu-aarch64"}} {
		b.Run(a.arch, func(b *testing.B) {
			qemu, err := exec.LookPath(a.qemu)
			if err != nil {
				b.Fatalf("%s is needed to compare with qemu-user (Debian: apt-get install qemu-user): %v", a.qemu, err)
			}
			lua := filepath.Join(root, "testdata", "realworld", "v3", a.arch, "lua-static")
			if _, err := os.Stat(lua); err != nil {
				b.Fatalf("%v (make testdata unpacks the real-world corpus)", err)
			}
			var cpu [3]time.Duration
			var rss [3]int64
			var insns uint64
			for b.Loop() {
				for k, cmd := range [3][]string{
					{bin, "verify", "--json", "-", lua, "--", "-e", script},
					{bin, "run", lua, "-e", script},
					{qemu, lua, "-e", script},
				} {
					c := exec.Command(cmd[0], cmd[1:]...)
					var out, errOut bytes.Buffer
					c.Stdout, c.Stderr = &out, &errOut
					if err := c.Run(); err != nil {
						b.Fatalf("%s: %v\n%s", strings.Join(cmd[:2], " "), err, errOut.String())
					}
					ru := c.ProcessState.SysUsage().(*syscall.Rusage)
					cpu[k] += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
					rss[k] = max(rss[k], ru.Maxrss*1024)
					if k == 0 {
						var n uint64
						i := strings.Index(out.String(), `"instructions": `)
						if i < 0 {
							b.Fatalf("no instruction count in verify's report:\n%.500s", out.String())
						}
						// Exit status 0 (checked above): OK.
						fmt.Sscan(out.String()[i+len(`"instructions": `):], &n)
						insns += n
					}
				}
			}
			b.ReportMetric(float64(insns)/float64(b.N)/1e6, "Minsns")
			b.ReportMetric(float64(insns)/cpu[0].Seconds()/1e6, "Mverified/cpu-s")
			b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "x-run")
			b.ReportMetric(cpu[0].Seconds()/cpu[2].Seconds(), "x-qemu")
			b.ReportMetric(cpu[1].Seconds()/cpu[2].Seconds(), "run-x-qemu")
			b.ReportMetric(float64(rss[0])/(1<<20), "verify-MB")
			b.ReportMetric(float64(rss[1])/(1<<20), "run-MB")
			b.ReportMetric(float64(rss[2])/(1<<20), "qemu-MB")
		})
	}
}
