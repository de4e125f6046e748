//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// checkpointsEqual compares two checkpoints field by field, pages by
// content.
func checkpointsEqual(a, b *Checkpoint) error {
	if err := a.engine.Diff(b.engine); err != nil {
		return err
	}
	switch {
	case !reflect.DeepEqual(a.shadows, b.shadows):
		return fmt.Errorf("shadow stacks differ:\n%+v\n%+v", a.shadows, b.shadows)
	case a.cur != b.cur:
		return fmt.Errorf("state %+v, %+v", a.cur, b.cur)
	case !reflect.DeepEqual(a.vmas, b.vmas) || a.brk != b.brk || a.total != b.total:
		return fmt.Errorf("memory maps differ")
	case !bytes.Equal(a.rng, b.rng) || a.sleep != b.sleep || !reflect.DeepEqual(a.sig, b.sig):
		return fmt.Errorf("Linux layer state differs")
	case !reflect.DeepEqual(a.fds, b.fds):
		return fmt.Errorf("descriptor tables differ")
	case !reflect.DeepEqual(a.threads, b.threads) || a.running != b.running || a.thrNext != b.thrNext || a.thrSeq != b.thrSeq || a.switches != b.switches:
		return fmt.Errorf("threads differ:\n%+v\n%+v", a.threads, b.threads)
	}
	return nil
}

// TestCheckpointRestore runs static glibc programs (system calls, brk and
// mmap, RELRO mprotect, C++ exceptions) to two points, checkpointing at
// each, then restores the first checkpoint, replays to the second and to
// the end: every byte of the state, the output and the exit must be the
// same as in the straight run. Restoring a finished program brings it back
// to life. The threads programs have threads, switched and blocked, at
// both points; the timers programs have a timer armed for a thread
// (threadid), and a pipe with a thread blocked on it (restart); the epoll
// programs an epoll instance watching an eventfd and a pipe.
func TestCheckpointRestore(t *testing.T) {
	dir := testcorpus.Dir(t)
	var paths []string
	for _, name := range []string{"v3/x86-64/except-O2-static", "v3/aarch64/except-O2-static", "v2/x86-64/setjmp-O0-static"} {
		paths = append(paths, filepath.Join(dir, name))
	}
	args := map[string][]string{}
	for _, a := range threadArches {
		paths = append(paths, threadsProgram(a), filepath.Join("testdata", "epoll-"+a))
		for _, sc := range []string{"threadid", "restart"} {
			path := filepath.Join("testdata", "timers-"+a)
			args[path+" "+sc] = []string{"timers", sc}
			paths = append(paths, path+" "+sc)
		}
	}
	for _, path := range paths {
		name, err := filepath.Rel(dir, path)
		if err != nil || strings.HasPrefix(name, "..") {
			name = filepath.Base(path)
		}
		_, timers := args[path]
		timers = timers || strings.Contains(path, "epoll-") // short: the second third changes as much
		t.Run(strings.ReplaceAll(name, " ", "/"), func(t *testing.T) {
			var out bytes.Buffer
			cfg := Config{Stdout: &out, Stderr: &out}
			if a, ok := args[path]; ok {
				cfg.Args, path = a, strings.Fields(path)[0]
			}
			p, err := Load(path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			runTo := func(n uint64) {
				t.Helper()
				if now := s.Executed(); n > now {
					if exit, _, err := s.RunUntil(nil, n-now); err != nil || exit != nil {
						t.Fatalf("run to %d: exit %v, err %v", n, exit, err)
					}
				}
				if s.Executed() != n {
					t.Fatalf("at %d, want %d", s.Executed(), n)
				}
			}
			// Run once to the end to learn the length.
			c0, err := s.Checkpoint(nil)
			if err != nil {
				t.Fatal(err)
			}
			exit, _, err := s.RunUntil(nil, 0)
			if err != nil || exit == nil {
				t.Fatalf("run: exit %v, err %v", exit, err)
			}
			total, wantOut, wantExit := s.Executed(), out.String(), *exit
			a, b := total/3, total*2/3
			if err := s.Restore(c0); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			runTo(a)
			ca, err := s.Checkpoint(c0)
			if err != nil {
				t.Fatal(err)
			}
			outA := out.Len()
			runTo(b)
			cb, err := s.Checkpoint(ca)
			if err != nil {
				t.Fatal(err)
			}
			// The second checkpoint shares the pages that did not change
			// (the timers and epoll programs change as much in the second
			// third).
			if ca.OwnBytes() <= emu.PageSize || cb.OwnBytes() <= 0 || cb.OwnBytes() >= ca.OwnBytes() && !timers {
				t.Errorf("own bytes %d, %d", ca.OwnBytes(), cb.OwnBytes())
			}
			exit, _, err = s.RunUntil(nil, 0)
			if err != nil || exit == nil || *exit != wantExit || out.String() != wantOut {
				t.Fatalf("second run: exit %v (want %v), err %v, output %q", exit, wantExit, err, out.String())
			}
			// Back from the end to a, replay to b: the same state.
			if err := s.Restore(ca); err != nil {
				t.Fatal(err)
			}
			out.Truncate(outA)
			if p.Exited() != nil || s.State() != ca.cur {
				t.Fatalf("after restore: exited %v, state %+v", p.Exited(), s.State())
			}
			runTo(b)
			cb2, err := s.Checkpoint(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkpointsEqual(cb, cb2); err != nil {
				t.Fatalf("replayed state at %d: %v", b, err)
			}
			exit, _, err = s.RunUntil(nil, 0)
			if err != nil || exit == nil || *exit != wantExit || out.String() != wantOut || s.Executed() != total {
				t.Fatalf("replay: exit %v (want %v) after %d (want %d), err %v, output %q", exit, wantExit, s.Executed(), total, err, out.String())
			}
		})
	}
}

// TestCheckpointDenied: a checkpoint keeps the denied-call counts, and
// restoring it puts them back.
func TestCheckpointDenied(t *testing.T) {
	for _, a := range testArches {
		path, _ := testELF(t, a, elf.ET_EXEC, "socket")
		p, err := Load(path, Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		s := NewSession(p)
		c0, err := s.Checkpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		// Up to and including the first socket call: 5 instructions.
		for range 6 {
			if _, err := s.Step(); err != nil {
				t.Fatal(err)
			}
		}
		c1, err := s.Checkpoint(c0)
		if err != nil {
			t.Fatal(err)
		}
		if d := p.Denied(); !maps.Equal(d, map[string]uint64{"socket": 1}) {
			t.Fatalf("%s: after the first socket: %v", a.Name, d)
		}
		if x, _, err := s.RunUntil(nil, 0); err != nil || x == nil || x.Status != 13 {
			t.Fatalf("%s: %v, %v", a.Name, x, err)
		}
		for _, c := range []struct {
			c    *Checkpoint
			want map[string]uint64
		}{{c1, map[string]uint64{"socket": 1}}, {c0, nil}} {
			if err := s.Restore(c.c); err != nil {
				t.Fatal(err)
			}
			if d := p.Denied(); !maps.Equal(d, c.want) {
				t.Errorf("%s: restored at %d instructions: %v, want %v", a.Name, c.c.Insns(), d, c.want)
			}
		}
		// Running on from the start counts each call once.
		if x, _, err := s.RunUntil(nil, 0); err != nil || x == nil || x.Status != 13 {
			t.Fatalf("%s: %v, %v", a.Name, x, err)
		}
		if d := p.Denied(); !maps.Equal(d, map[string]uint64{"socket": 2, "connect": 1}) {
			t.Errorf("%s: rerun: %v", a.Name, d)
		}
	}
}
