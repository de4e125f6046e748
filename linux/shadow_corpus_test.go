//go:build cgo

package linux

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/shadow"
)

// exitPath lists the glibc functions that may legitimately still be on the
// stack when a static program calls exit_group: main has returned to
// __libc_start_call_main, which calls exit.
var exitPath = map[string]bool{
	"__libc_start_main": true, "__libc_start_main_impl": true, "__libc_start_call_main": true,
	"exit": true, "__run_exit_handlers": true, "_exit": true, "_Exit": true,
}

// TestShadowStackAtExit runs every corpus binary with the shadow stack and
// checks it at exit: a nolibc program (whose _start calls cmain, then
// sys_exit_group) is back at _start's frame, inside sys_exit_group; a
// static glibc program has only glibc's exit path left, nothing of main's;
// a dynamic one only frames of functions outside the program (libc's exit
// path, entered directly or through a PLT stub). Returns to
// unexpected addresses are only allowed where C++ exception handling
// installs a landing pad.
func TestShadowStackAtExit(t *testing.T) {
	dir := testcorpus.Dir(t)
	entries := runnable(t)
	for _, e := range entries {
		if strings.HasPrefix(filepath.Base(e.Path), "signals-") {
			// This shadow stack sees calls and returns only: a signal
			// delivery enters a handler without a call and sigreturn
			// leaves it without a return. Session's shadow stack follows
			// deliveries; the corpus runner verifies these binaries.
			continue
		}
		t.Run(e.Path, func(t *testing.T) {
			t.Parallel()
			p, err := Load(filepath.Join(dir, e.Path), Config{Args: []string{filepath.Base(e.Path)}, Sysroot: testcorpus.Sysroot(t, &e)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			// A shadow stack per thread (pthreads, stdthread): the
			// records before a switch are the outgoing thread's.
			stacks := map[int]*shadow.Stack{}
			stackOf := func(tid int) *shadow.Stack {
				if stacks[tid] == nil {
					stacks[tid] = shadow.New(p.Arch, p.Engine.ReadMem)
					stacks[tid].SameFunction = p.Symbols().SameFunction
				}
				return stacks[tid]
			}
			sh := stackOf(p.CurrentThread())
			p.OnSwitch(func(from, to int, _ bool) {
				p.Engine.FlushRecords()
				if r, err := p.Engine.FrameState(); err == nil {
					sh.Sync(shadowRecord(r))
				}
				sh = stackOf(to)
			})
			maxDepth := 0
			p.Engine.ObserveRecords(4096, func(rs []emu.Record) {
				for _, r := range rs {
					sh.Observe(shadowRecord(r))
					maxDepth = max(maxDepth, sh.Depth())
				}
			})
			exit, err := p.Run()
			p.Engine.FlushRecords()
			if err != nil || exit.Reason != StopExited {
				t.Fatalf("run: %v, %v", exit, err)
			}
			r, _ := p.Engine.FrameState()
			sh.Sync(shadowRecord(r))
			syms := p.Symbols()
			var names []string
			for _, f := range sh.Frames() {
				names = append(names, syms.Format(f.Entry))
			}
			switch e.Link {
			case "nolibc":
				// _start has called sys_exit_group after cmain returned.
				if sh.Depth() != 1 || names[0] != "sys_exit_group" {
					t.Errorf("at exit: %v, want [sys_exit_group]", names)
				}
			case "dynamic":
				prog := p.Objects()[0]
				for i, f := range sh.Frames() {
					if prog.Start <= f.Entry && f.Entry < prog.End && !inPLT(p, f.Entry) {
						t.Errorf("frame of %s still on the stack at exit: %v", names[i], names)
					}
				}
				if lib := p.ObjectAt(r.PC); lib == nil || lib == prog {
					t.Errorf("exit_group called at %s, not in a shared library", syms.Format(r.PC))
				}
			default:
				for _, name := range names {
					if !exitPath[name] {
						t.Errorf("frame of %s still on the stack at exit: %v", name, names)
					}
				}
			}
			if maxDepth < 3 {
				t.Errorf("the stack never got deeper than %d", maxDepth)
			}
			base := filepath.Base(e.Path)
			cxx := strings.HasPrefix(base, "except") || strings.HasPrefix(base, "cold") || strings.HasPrefix(base, "stdthread")
			for tid, st := range stacks {
				for _, a := range st.Anomalies() {
					if !cxx {
						t.Errorf("thread %d: anomaly: %s at %s: %s", tid, a.Kind, syms.Format(a.PC), a.Detail)
					}
				}
			}
		})
	}
	if n := len(entries); n != 430 {
		t.Errorf("%d corpus binaries, want 430", n)
	}
}

// inPLT reports whether addr is in one of the program's PLT sections.
func inPLT(p *Process, addr uint64) bool {
	for _, s := range p.ELF.Sections {
		if strings.HasPrefix(s.Name, ".plt") && p.Base+s.Addr <= addr && addr < p.Base+s.Addr+s.Size {
			return true
		}
	}
	return false
}
