//go:build cgo

package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/sframesim/sframesim/linux"
)

// guestFlags are what a guest may see beyond itself and its sysroot, shared
// by run, verify and step: files it may read, its environment and its
// memory cap.
type guestFlags struct {
	allow, env []string
	maxMem     *string
}

// addGuestFlags defines --allow-read, --env and --max-mem on fs.
func addGuestFlags(fs *flag.FlagSet) *guestFlags {
	g := &guestFlags{}
	g.maxMem = fs.String("max-mem", "1G", "cap the guest's mapped memory at `SIZE` bytes (suffixes K, M, G)")
	fs.Func("allow-read", "let the program open `PATH` read-only (repeatable); other files do not exist for it", func(s string) error {
		g.allow = append(g.allow, s)
		return nil
	})
	fs.Func("env", "add `NAME=VALUE` to the program's environment, which is otherwise empty (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("%q: want NAME=VALUE", s)
		}
		g.env = append(g.env, s)
		return nil
	})
	return g
}

// apply sets the guest's files, environment and memory cap in cfg; the
// error names the flag.
func (g *guestFlags) apply(cfg *linux.Config) error {
	mem, err := parseSize(*g.maxMem)
	if err != nil {
		return fmt.Errorf("--max-mem %q: %v", *g.maxMem, err)
	}
	cfg.MaxMem, cfg.Env, cfg.ReadAllow = mem, g.env, g.allow
	return nil
}
