//go:build cgo

package linux

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Network calls are denied as a sandbox denies them: the guest gets
// EACCES, as under a seccomp or Landlock policy that refuses networking,
// and glibc's fallbacks run (getpwuid's nscd probe, for one, then reads
// /etc/passwd). Nothing is connected, bound or sent. Each denial is
// counted by call name (Process.Denied), and reports list them.

// deniedCalls are the system calls denied with EACCES.
var deniedCalls = []string{
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"getsockopt", "setsockopt", "getsockname", "getpeername", "shutdown",
}

// deniedErrno is the errno a denied call returns.
const deniedErrno = eACCES

// DeniedErrno names the errno denied calls return, for reports.
const DeniedErrno = "EACCES"

// deny is the handler of a denied call: it counts the call and fails it.
func deny(name string) handler {
	return func(p *Process, _ *[6]uint64) uint64 {
		if p.denied == nil {
			p.denied = map[string]uint64{}
		}
		p.denied[name]++
		return sysErr(deniedErrno)
	}
}

// Denied returns how many times each system call was denied by the
// sandbox (EACCES), by name; nil if none was.
func (p *Process) Denied() map[string]uint64 {
	if len(p.denied) == 0 {
		return nil
	}
	return maps.Clone(p.denied)
}

// DeniedSummary formats denied calls as reports print them, most frequent
// first (then by name): "socket 2, connect 1 (sandbox: EACCES)"; "" for
// none.
func DeniedSummary(denied map[string]uint64) string {
	if len(denied) == 0 {
		return ""
	}
	names := slices.Collect(maps.Keys(denied))
	slices.SortFunc(names, func(a, b string) int {
		if denied[a] != denied[b] {
			if denied[a] > denied[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, denied[name])
	}
	return strings.Join(parts, ", ") + " (sandbox: " + DeniedErrno + ")"
}
