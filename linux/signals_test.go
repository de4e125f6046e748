//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/shadow"
)

// testdata/signals-x86_64 and signals-aarch64 are testdata/src/signals.c,
// built with
//
//	$ARCH-linux-gnu-gcc -O2 -static -pthread -Wa,--gsframe -o signals-$ARCH src/signals.c
//
// and testdata/vdso-{static,dynamic}-$ARCH are src/vdso.c, built with
//
//	$ARCH-linux-gnu-gcc -O2 [-static] -o vdso-{static,dynamic}-$ARCH src/vdso.c
//
// (gcc 12, glibc 2.36 of Debian bookworm, binutils 2.40).
//
// testdata/signals-want/ARCH/SCENARIO.txt is what the program prints: on
// x86-64 run natively (Linux 6.1 on the host), on AArch64 under
// qemu-aarch64 7.2 with QEMU_CPU=cortex-a72 (a CPU without SVE, as the
// guest's HWCAP says). Where the kernel and they differ, the files hold
// the kernel's answer, as the layer gives it:
//
//   - x86_64/frame.txt: the host has XSAVE, so its frame holds a larger
//     fpstate (uc_flags 0x7); the emulated CPU has FXSR only: uc_flags 0x6
//     (UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS), a 512-byte fpstate, the
//     siginfo, ucontext and fpstate 384 bytes higher on the alternate
//     stack (the four lines changed by hand). qemu-x86_64 7.2 crashes in
//     these handlers (its frames misalign the stack).
//   - aarch64/skip.txt: Linux reports an undefined instruction as
//     ILL_ILLOPC (1, do_undefinstr); qemu says ILL_ILLOPN (2).
//   - aarch64/frame.txt: after a fault Linux adds an esr_context record
//     (ESR_MAGIC 0x45535201, 16 bytes) after fpsimd_context; qemu writes
//     none.

// signalScenarios are signals.c's scenarios with the exit status each
// ends with and the signals delivered to handlers.
var signalScenarios = []struct {
	name      string
	status    int // 128+N: killed by signal N
	delivered map[int]uint64
	x86Only   bool
}{
	{name: "raise", delivered: map[int]uint64{10: 2}},
	{name: "thread", delivered: map[int]uint64{10: 1}},
	{name: "segv", delivered: map[int]uint64{11: 2}},
	{name: "fpe", delivered: map[int]uint64{8: 1}, x86Only: true},
	{name: "altstack", delivered: map[int]uint64{12: 2}},
	{name: "skip", delivered: map[int]uint64{4: 1}},
	{name: "trap", delivered: map[int]uint64{5: 1}},
	{name: "resethand", status: 128 + 10, delivered: map[int]uint64{10: 1}},
	{name: "nodefer", delivered: map[int]uint64{10: 6}},
	{name: "mask", delivered: map[int]uint64{10: 1}},
	{name: "frame", delivered: map[int]uint64{11: 1}},
}

func signalsProgram(a string) string { return filepath.Join("testdata", "signals-"+a) }

// runSignals runs one scenario to its end with argv pinned (the frame
// dump must not depend on where the checkout is).
func runSignals(t *testing.T, a, name string) (string, *Exit, *Process) {
	t.Helper()
	return runGuest(t, signalsProgram(a), Config{Args: []string{"signals", name}, MaxInsns: 20_000_000})
}

// runGuest runs the program at path to its end with cfg (its Stdout a
// buffer) and returns its output, the exit and the process (closed when
// the test ends).
func runGuest(t *testing.T, path string, cfg Config) (string, *Exit, *Process) {
	t.Helper()
	var out bytes.Buffer
	cfg.Stdout = &out
	p, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	x, err := p.Run()
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), x, p
}

func TestSignals(t *testing.T) {
	for _, a := range threadArches {
		for _, sc := range signalScenarios {
			if sc.x86Only && a != "x86_64" {
				continue
			}
			t.Run(a+"/"+sc.name, func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join("testdata", "signals-want", a, sc.name+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				out, x, p := runSignals(t, a, sc.name)
				if out != string(want) {
					t.Errorf("output:\n%s\nwant:\n%s", out, want)
				}
				switch {
				case sc.status == 0 && (x.Reason != StopExited || x.Status != 0):
					t.Errorf("exit %v (%s), want status 0", x.Reason, x)
				case sc.status > 128 && (x.Reason != StopSignaled || x.Status != sc.status || x.Signal != sc.status-128):
					t.Errorf("exit %v status %d signal %d (%s), want killed with %d", x.Reason, x.Status, x.Signal, x, sc.status)
				}
				if got := p.SignalsDelivered(); !mapsEqual(got, sc.delivered) {
					t.Errorf("delivered %v, want %v", got, sc.delivered)
				}
			})
		}
	}
}

func mapsEqual(a, b map[int]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSignalEntry checks the state a handler starts in and where it
// returns: the stack pointer is 8 mod 16 on x86-64 (as after a call) and
// 16-byte aligned on AArch64, the frame pointer is the interrupted one on
// x86-64 and the frame record on AArch64 (holding the interrupted x29 and
// x30), the handler returns to glibc's __restore_rt (SA_RESTORER) on x86-64
// and to the vDSO's __kernel_rt_sigreturn on AArch64, and rt_sigreturn
// goes back to the interrupted PC and SP.
func TestSignalEntry(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			p, err := Load(signalsProgram(a), Config{Args: []string{"signals", "raise"}, MaxInsns: 20_000_000})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var evs []SignalEvent
			var records [][16]byte // at each rt_sigreturn: the last frame record
			p.OnSignal(func(ev SignalEvent) {
				if ev.Sigreturn && len(evs) > 0 {
					var rec [16]byte
					p.Engine.ReadMem(evs[len(evs)-1].HandlerFP, rec[:])
					records = append(records, rec)
				}
				evs = append(evs, ev)
			})
			if _, err := p.Run(); err != nil {
				t.Fatal(err)
			}
			if len(evs) != 4 {
				t.Fatalf("%d events, want 2 deliveries and 2 returns: %+v", len(evs), evs)
			}
			for i := 0; i < 4; i += 2 {
				d, r := evs[i], evs[i+1]
				if d.Sigreturn || !r.Sigreturn || d.Signal != 10 {
					t.Fatalf("events %+v %+v", d, r)
				}
				if r.PC != d.PC || r.SP != d.SP || r.FP != d.FP {
					t.Errorf("rt_sigreturn to pc %#x sp %#x fp %#x, delivery interrupted pc %#x sp %#x fp %#x", r.PC, r.SP, r.FP, d.PC, d.SP, d.FP)
				}
				sym := p.Symbols().Format(d.Return)
				switch a {
				case "x86_64":
					if d.HandlerSP%16 != 8 || d.HandlerFP != d.FP || d.Frame != d.HandlerSP || sym != "__restore_rt" {
						t.Errorf("x86-64 entry: sp %#x fp %#x (interrupted fp %#x) frame %#x returns to %s", d.HandlerSP, d.HandlerFP, d.FP, d.Frame, sym)
					}
					if d.HandlerSP > d.SP-128-512-440 {
						t.Errorf("frame at %#x overlaps the red zone and fpstate below sp %#x", d.HandlerSP, d.SP)
					}
				case "aarch64":
					if d.HandlerSP%16 != 0 || d.HandlerFP != d.HandlerSP+arm64FrameSize || d.Return != p.vdsoSym("__kernel_rt_sigreturn") || sym != "__kernel_rt_sigreturn" {
						t.Errorf("AArch64 entry: sp %#x fp %#x returns to %#x (%s)", d.HandlerSP, d.HandlerFP, d.Return, sym)
					}
					rec := records[i/2]
					if fp := leUint64(rec[:]); fp != d.FP {
						t.Errorf("frame record holds fp %#x, want %#x", fp, d.FP)
					}
				}
			}
		})
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestSignalShadow steps every scenario in a Session: at the first
// instruction of each handler the shadow stack's top frame is the
// handler's (marked with the signal, its CFA where the kernel's "call"
// left it, returning to the trampoline), and no return ever surprises the
// shadow stack (the handlers return to the trampolines, rt_sigreturn and
// siglongjmp go back).
func TestSignalShadow(t *testing.T) {
	for _, a := range threadArches {
		for _, sc := range signalScenarios {
			if sc.x86Only && a != "x86_64" {
				continue
			}
			t.Run(a+"/"+sc.name, func(t *testing.T) {
				p, err := Load(signalsProgram(a), Config{Args: []string{"signals", sc.name}, MaxInsns: 20_000_000})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				s := NewSession(p)
				handlers := map[uint64]bool{}
				entered := 0
				p.OnSignal(func(ev SignalEvent) {
					s.signal(ev)
					if !ev.Sigreturn {
						handlers[ev.Handler] = true
					}
				})
				s.Observe(func(r shadow.Record) bool {
					if !handlers[r.PC] {
						return true
					}
					fs := s.Shadow.Frames()
					top := fs[len(fs)-1]
					cfa := r.SP
					if p.Arch == arch.AMD64 {
						cfa += 8
					}
					if top.Signal == 0 || top.Entry != r.PC || top.CFA != cfa || top.CallerFP != r.FP {
						t.Errorf("at handler %#x (sp %#x fp %#x): top frame %+v", r.PC, r.SP, r.FP, top)
					}
					entered++
					return true
				})
				x, _, err := s.RunUntil(nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				if x == nil {
					t.Fatal("the run did not end")
				}
				var want uint64
				for _, n := range sc.delivered {
					want += n
				}
				if uint64(entered) != want {
					t.Errorf("entered handlers %d times, want %d", entered, want)
				}
				for tid := range s.stacks {
					if an := s.ShadowOf(tid).Anomalies(); len(an) > 0 {
						t.Errorf("thread %d: shadow stack anomalies %+v", tid, an)
					}
				}
			})
		}
	}
}

// TestVDSOImage reads the vDSO back: a shared object whose dynamic
// symbols carry the kernel's version, and on AArch64 the signal
// trampoline's code and its "S" CIE.
func TestVDSOImage(t *testing.T) {
	for _, tc := range []struct {
		a       *arch.Arch
		version string
		syms    []string
	}{
		{arch.AMD64, "LINUX_2.6", []string{"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_getcpu", "__vdso_clock_getres"}},
		{arch.ARM64, "LINUX_2.6.39", []string{"__kernel_rt_sigreturn", "__kernel_gettimeofday", "__kernel_clock_gettime", "__kernel_clock_getres"}},
	} {
		t.Run(tc.a.Name, func(t *testing.T) {
			v := vdsoFor(tc.a)
			f, err := elf.NewFile(bytes.NewReader(v.data))
			if err != nil {
				t.Fatal(err)
			}
			if f.Type != elf.ET_DYN {
				t.Errorf("type %v", f.Type)
			}
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range syms {
				names = append(names, s.Name)
				if s.Version != tc.version || elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value != v.syms[s.Name] {
					t.Errorf("%s: version %q type %v value %#x", s.Name, s.Version, elf.ST_TYPE(s.Info), s.Value)
				}
			}
			if strings.Join(names, " ") != strings.Join(tc.syms, " ") {
				t.Errorf("symbols %v, want %v", names, tc.syms)
			}
			var hdr, eh []byte
			for _, ph := range f.Progs {
				if ph.Type == elf.PT_GNU_EH_FRAME {
					hdr = v.data[ph.Off : ph.Off+ph.Filesz]
				}
			}
			if s := f.Section(".eh_frame"); s != nil {
				eh, _ = s.Data()
			}
			if len(hdr) != 12+8*len(tc.syms) || hdr[0] != 1 || len(eh) == 0 {
				t.Fatalf(".eh_frame_hdr %x, .eh_frame %d bytes", hdr, len(eh))
			}
			if tc.a == arch.ARM64 {
				at := v.syms["__kernel_rt_sigreturn"]
				code := v.data[at-4 : at+8]
				want := []byte{0x1f, 0x20, 0x03, 0xd5, 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4} // nop; mov x8, #139; svc #0
				if !bytes.Equal(code, want) {
					t.Errorf("trampoline %x, want %x", code, want)
				}
				if !bytes.Contains(eh, []byte("zRS\x00")) || !bytes.Contains(eh, []byte{0x0c, 29, 0, 0x80 | 29, 0, 0x11, 30, 0x7f}) {
					t.Errorf(".eh_frame lacks the signal frame CIE or its rules:\n%x", eh)
				}
			}
		})
	}
}

// TestVDSOUsed runs vdso.c, static and dynamic (with the default
// sysroot), and checks that glibc called into the vDSO and printed what it
// prints natively.
func TestVDSOUsed(t *testing.T) {
	const want = "clock_gettime: 1, monotonic: 1\ngettimeofday: 1\ntime: 1\nclock_getres: 0 1\nsched_getcpu: 1\n"
	for _, a := range threadArches {
		for _, link := range []string{"static", "dynamic"} {
			t.Run(a+"/"+link, func(t *testing.T) {
				path := filepath.Join("testdata", "vdso-"+link+"-"+a)
				var out bytes.Buffer
				p, err := Load(path, Config{Args: []string{"vdso"}, Stdout: &out, MaxInsns: 20_000_000})
				if err != nil {
					if link == "dynamic" {
						t.Skipf("no sysroot: %v", err)
					}
					t.Fatal(err)
				}
				defer p.Close()
				s := NewSession(p)
				lo, size := p.VDSO()
				in := 0
				s.Observe(func(r shadow.Record) bool {
					if r.PC >= lo && r.PC < lo+size {
						in++
					}
					return true
				})
				x, _, err := s.RunUntil(nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				if x == nil || x.Reason != StopExited || x.Status != 0 {
					t.Fatalf("exit %v", x)
				}
				if out.String() != want {
					t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
				}
				if in == 0 {
					t.Errorf("no instruction ran in the vDSO at %#x", lo)
				}
			})
		}
	}
}

// TestVDSOSymbolsConcurrent: processes loaded at once each name the shared
// vDSO image's functions (the image is built once per architecture; its
// ELF symbols must not be read through one shared elf.File, whose version
// tables fill on first use: a data race under go test -race).
func TestVDSOSymbolsConcurrent(t *testing.T) {
	for _, a := range threadArches {
		path := filepath.Join("testdata", "vdso-static-"+a)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := Load(path, Config{Args: []string{"vdso"}})
				if err != nil {
					errs <- err
					return
				}
				defer p.Close()
				fn := "__vdso_clock_gettime"
				if a == "aarch64" {
					fn = "__kernel_clock_gettime"
				}
				lo, _ := p.VDSO()
				if name, _, ok := p.Symbols().Lookup(p.vdsoSym(fn)); !ok || name != fn || lo == 0 {
					errs <- fmt.Errorf("%s: vDSO at %#x, clock_gettime named %q", a, lo, name)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}
