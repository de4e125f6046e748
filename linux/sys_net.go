package linux

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// This file builds without cgo, for reports (DeniedSummary); the calls'
// handler is deny (syscalls.go).

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

// deniedErrno is the errno a denied call returns: EACCES.
const deniedErrno = 13

// DeniedErrno names the errno denied calls return, for reports.
const DeniedErrno = "EACCES"

// DeniedSummary formats denied calls as reports print them, most frequent
// first (then by name): "socket 2, connect 1 (sandbox: EACCES)"; "" for
// none.
func DeniedSummary(denied map[string]uint64) string {
	if len(denied) == 0 {
		return ""
	}
	names := slices.Collect(maps.Keys(denied))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(denied[b], denied[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, denied[name])
	}
	return strings.Join(parts, ", ") + " (sandbox: " + DeniedErrno + ")"
}
