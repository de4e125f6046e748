//go:build !linux

package atomicfile

import (
	"os"
	"syscall"
)

// Without O_TMPFILE (a Linux feature) the data goes through a named
// temporary file.

func openUnnamed(dfd int) (int, error) { return -1, syscall.ENOSYS }

func link(f *os.File, dfd int, name string) error { return errNoLink }

func renameNoReplace(dfd int, from, to string) error { return syscall.ENOSYS }

func raise(sig syscall.Signal) { syscall.Kill(os.Getpid(), sig) }
