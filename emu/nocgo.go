//go:build !cgo

package emu

import "errors"

// ErrNoCgo is returned when sframesim was built without cgo, which the
// emulator needs (libunicorn is a C library).
var ErrNoCgo = errors.New("emu: built without cgo: the emulator needs libunicorn (build with CGO_ENABLED=1 after ./setup.sh)")
