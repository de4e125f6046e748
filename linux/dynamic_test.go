//go:build cgo

package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// TestSysrootPath: guest paths resolve inside the sysroot as in a chroot:
// absolute symlinks restart at the sysroot, ".." stops there, and nothing
// outside it is reachable.
func TestSysrootPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mk("usr/lib/x86_64-linux-gnu/libc.so.6", "libc")
	mk("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "ld.so")
	if err := os.MkdirAll(filepath.Join(root, "usr/lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln("usr/lib", "lib")
	ln("usr/lib64", "lib64")
	ln("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "usr/lib64/ld-linux-x86-64.so.2") // absolute: inside root
	ln("../lib/x86_64-linux-gnu/libc.so.6", "usr/lib64/libc-rel")
	ln(filepath.Join(outside, "secret"), "escape")   // absolute host path: taken inside root
	ln("../../../../../../../../"+outside, "dotdot") // .. stops at root
	ln("loop2", "loop1")
	ln("loop1", "loop2")
	libc := filepath.Join(root, "usr/lib/x86_64-linux-gnu/libc.so.6")
	ldso := filepath.Join(root, "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
	for _, c := range []struct {
		guest      string
		followLast bool
		want       string
		errno      int
	}{
		{"/lib/x86_64-linux-gnu/libc.so.6", true, libc, 0},
		{"/lib64/ld-linux-x86-64.so.2", true, ldso, 0},
		{"/lib64/ld-linux-x86-64.so.2", false, filepath.Join(root, "usr/lib64/ld-linux-x86-64.so.2"), 0},
		{"/usr/lib64/libc-rel", true, libc, 0},
		{"/usr/lib/../lib/./x86_64-linux-gnu//libc.so.6", true, libc, 0},
		{"/../../lib/x86_64-linux-gnu/libc.so.6", true, libc, 0},
		{"/", true, root, 0},
		{"/escape", true, "", eNOENT},
		{"/dotdot/secret", true, "", eNOENT},
		{"/etc/ld.so.cache", true, "", eNOENT},
		{"/lib/x86_64-linux-gnu/libc.so.6/x", true, "", eNOTDIR},
		{"/loop1", true, "", eLOOP},
		{"relative/path", true, "", eNOENT},
	} {
		got, _, e := sysrootPath(root, c.guest, c.followLast, nil)
		if got != c.want || e != c.errno {
			t.Errorf("%s (follow %v): %q, errno %d; want %q, %d", c.guest, c.followLast, got, e, c.want, c.errno)
		}
	}
}

// TestDynamicObjects: a dynamic program's objects (program, ld.so, the
// libraries ld.so maps) are registered at their load bases, their symbols
// name library addresses, and PLT stubs are named after what they call.
func TestDynamicObjects(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, c := range []struct {
		rel     string
		objects []string
		plt     map[string]bool // names of PLT stubs that must exist
	}{
		{"v3/x86-64/except-O2-dynamic", []string{"except-O2-dynamic", "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6"},
			map[string]bool{"_Unwind_Resume@plt": true, "__cxa_finalize@plt": true, ".plt": true}},
		{"v2/aarch64/recurse-O2-dynamic", []string{"recurse-O2-dynamic", "ld-linux-aarch64.so.1", "libc.so.6"},
			map[string]bool{"qsort@plt": true, ".plt": true}},
	} {
		t.Run(c.rel, func(t *testing.T) {
			e := testcorpus.Lookup(t, c.rel)
			p, err := Load(filepath.Join(dir, c.rel), Config{Sysroot: testcorpus.Sysroot(t, &e)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			syms := p.Symbols() // before the libraries are mapped: they join it
			var mapped []string
			p.OnObject(func(o *Object) { mapped = append(mapped, filepath.Base(o.Name)) })
			x, err := p.Run()
			if err != nil || x.Reason != StopExited || x.Status != e.ExitStatus {
				t.Fatalf("run: %v %v", x, err)
			}
			var names []string
			for _, o := range p.Objects() {
				names = append(names, filepath.Base(o.Name))
				if o.Start > o.End || o.Start%emu.PageSize != 0 || p.ObjectAt(o.Start) != o {
					t.Errorf("%s: range %#x-%#x", o.Name, o.Start, o.End)
				}
			}
			if strings.Join(names, " ") != strings.Join(c.objects, " ") {
				t.Errorf("objects %v, want %v", names, c.objects)
			}
			if strings.Join(mapped, " ") != strings.Join(c.objects[2:], " ") {
				t.Errorf("OnObject saw %v, want %v", mapped, c.objects[2:])
			}
			var libc *Object
			for _, o := range p.Objects() {
				if filepath.Base(o.Name) == "libc.so.6" {
					libc = o
				}
			}
			// An exported libc function is named; an address in libc no
			// symbol covers is libc.so.6+offset, never another object's
			// symbol.
			a, ok := syms.Addr("qsort")
			if !ok || p.ObjectAt(a) != libc || syms.Format(a+4) != "qsort+0x4" {
				t.Errorf("qsort at %#x (%v): %s", a, ok, syms.Format(a+4))
			}
			if got := syms.Format(libc.Start); !strings.HasPrefix(got, "libc.so.6+0x") {
				t.Errorf("start of libc: %s", got)
			}
			found := map[string]bool{}
			for name := range c.plt {
				if a, ok := syms.Addr(name); ok && p.ObjectAt(a) == p.Objects()[0] {
					found[name] = true
				}
			}
			if len(found) != len(c.plt) {
				t.Errorf("PLT symbols %v, want %v", found, c.plt)
			}
		})
	}
}
