//go:build cgo

package stdfds

/*
#include <fcntl.h>

static int sfs_closed_fds;

// Runs before the Go runtime's own check of the standard descriptors,
// which puts /dev/null on each closed one.
__attribute__((constructor)) static void sfs_look_at_fds(void) {
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0)
			sfs_closed_fds |= 1 << fd;
}

static int sfs_closed(void) { return sfs_closed_fds; }
*/
import "C"

// Closed reports whether descriptor fd (0, 1 or 2) was closed when the
// process started.
func Closed(fd int) bool {
	return fd >= 0 && fd < 3 && C.sfs_closed()&(1<<fd) != 0
}
