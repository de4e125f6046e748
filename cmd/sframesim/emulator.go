//go:build cgo

package main

import "github.com/sframesim/sframesim/emu"

// emulatorVersion names the emulator linked into this build.
func emulatorVersion() string {
	return "libunicorn " + emu.Version()
}
