//go:build cgo

package linux

import (
	"bytes"
	"os"
	"testing"
	"syscall"
	"time"
)

func TestZZNoHook(t *testing.T) {
	in, _ := os.ReadFile("/tmp/bench.lua")
	for _, a := range []string{"x86-64", "aarch64"} {
		for _, mode := range []string{"nohook", "blocks"} {
			p, err := Load("../testdata/realworld/v3/"+a+"/lua-static", Config{Args: []string{"lua", "-"}, Stdin: bytes.NewReader(in), Stdout: &bytes.Buffer{}, CountBlocks: mode == "blocks"})
			if err != nil {
				t.Fatal(err)
			}
			if mode == "nohook" {
				p.Engine.RemoveCodeHook()
			}
			start := time.Now()
			c0 := cpu()
			x, err := p.Run()
			t.Logf("%s %s: %v cpu %v %v %v", a, mode, time.Since(start), cpu()-c0, x, err)
			p.Close()
		}
	}
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
