//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// Hostile guests: host memory, descriptors, blocking reads and writes.

func init() {
	// writev(1, iov, 256) with all 256 iovecs on one 8 MiB mapping, then
	// exit_group(result >> 24): 127 for the MAX_RW_COUNT (0x7ffff000)
	// bytes Linux writes.
	testCode["writev"] = map[*arch.Arch]string{
		// xor edi,edi; mov esi,0x800000; mov edx,3; mov r10d,0x22; mov r8,-1;
		// xor r9d,r9d; mov eax,9; syscall; sub rsp,4096; xor ecx,ecx;
		// 1: mov rdx,rcx; shl rdx,4; mov [rsp+rdx],rax;
		// mov qword ptr [rsp+rdx+8],0x800000; inc ecx; cmp ecx,256; jb 1b;
		// mov edi,1; mov rsi,rsp; mov edx,256; mov eax,20; syscall;
		// mov rdi,rax; shr rdi,24; mov eax,231; syscall
		arch.AMD64: "31ffbe00008000ba0300000041ba2200000049c7c0ffffffff4531c9b8090000000f054881ec0010000031c94889ca48c1e2044889041448c744140800008000ffc181f90001000072e2bf010000004889e6ba00010000b8140000000f054889c748c1ef18b8e70000000f05",
		// mov x0,#0; mov x1,#0x800000; mov x2,#3; mov x3,#0x22; mov x4,#-1;
		// mov x5,#0; mov x8,#222; svc #0; sub sp,sp,#4096; mov x9,#0;
		// mov x10,#0x800000; 1: add x11,sp,x9,lsl #4; str x0,[x11];
		// str x10,[x11,#8]; add x9,x9,#1; cmp x9,#256; b.lo 1b; mov x0,#1;
		// mov x1,sp; mov x2,#256; mov x8,#66; svc #0; lsr x0,x0,#24;
		// mov x8,#94; svc #0
		arch.ARM64: "000080d20110a0d2620080d2430480d204008092050080d2c81b80d2010000d4ff0740d1090080d20a10a0d2eb73298b600100f96a0500f9290500913f0104f163ffff54200080d2e1030091022080d2480880d2010000d400fc58d3c80b80d2010000d4",
	}
	// exit_group(read(0, buf, 16))
	testCode["readstdin"] = map[*arch.Arch]string{
		// sub rsp,64; xor edi,edi; mov rsi,rsp; mov edx,16; xor eax,eax;
		// syscall; mov edi,eax; mov eax,231; syscall
		arch.AMD64: "4883ec4031ff4889e6ba1000000031c00f0589c7b8e70000000f05",
		// sub sp,sp,#64; mov x0,#0; mov x1,sp; mov x2,#16; mov x8,#63;
		// svc #0; mov x8,#94; svc #0
		arch.ARM64: "ff0301d1000080d2e1030091020280d2e80780d2010000d4c80b80d2010000d4",
	}
}

// countingWriter counts what is written to it and keeps nothing.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) { w.n += int64(len(b)); return len(b), nil }

// allocated returns the bytes the Go heap allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWritevStreamed runs the writev of 256 iovecs over one 8 MiB buffer:
// the 2 GiB are passed on in pieces (Linux writes MAX_RW_COUNT of them),
// never gathered in host memory.
func TestWritevStreamed(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			path, _ := testELF(t, a, elf.ET_EXEC, "writev")
			var out countingWriter
			var x *Exit
			got := allocated(func() { _, x = runTest(t, path, Config{Stdout: &out}) })
			if x.Reason != StopExited || x.Status != 0x7f || out.n != maxRW {
				t.Errorf("%v, %d bytes written; want exit status 127 and %d bytes", x, out.n, maxRW)
			}
			if got > 32<<20 {
				t.Errorf("the Go heap allocated %d MiB for a %d MiB mapping", got>>20, 8)
			}
		})
	}
}

// idleProcess loads a program without running it, to call system call
// handlers directly.
func idleProcess(t *testing.T, a *arch.Arch, cfg Config) *Process {
	t.Helper()
	path, _ := testELF(t, a, elf.ET_EXEC, "hello")
	p, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// call runs the handler of system call name.
func call(p *Process, name string, args ...uint64) int64 {
	var a [6]uint64
	copy(a[:], args)
	return int64(handlers[name](p, &a))
}

// scratch is guest memory for arguments: the stack's lowest pages.
func scratch(p *Process) uint64 { return p.abi.stackTop - stackSize + emu.PageSize }

func putString(t *testing.T, p *Process, addr uint64, s string) uint64 {
	t.Helper()
	if err := p.Engine.WriteMem(addr, append([]byte(s), 0)); err != nil {
		t.Fatal(err)
	}
	return addr
}

func readGuestBytes(t *testing.T, p *Process, addr, n uint64) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := p.Engine.ReadMem(addr, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func expect(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// TestFDLimit checks the descriptor limit of 1024 in every call that
// makes a descriptor, and RLIMIT_NOFILE.
func TestFDLimit(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("data"), 0o644)
	p := idleProcess(t, arch.AMD64, Config{ReadAllow: []string{file}})
	path := putString(t, p, scratch(p), file)
	const fDupfd = 0
	expect(t, "openat", call(p, "openat", atFDCWD64, path, 0), 3)
	for want := int64(4); want < fdLimit; want++ {
		if got := call(p, "dup", 3); got != want {
			t.Fatalf("dup = %d, want %d", got, want)
		}
	}
	expect(t, "dup with 1024 open", call(p, "dup", 0), -eMFILE)
	expect(t, "openat with 1024 open", call(p, "openat", atFDCWD64, path, 0), -eMFILE)
	expect(t, "F_DUPFD with 1024 open", call(p, "fcntl", 0, fDupfd, 0), -eMFILE)
	expect(t, "F_DUPFD from 1024", call(p, "fcntl", 0, fDupfd, fdLimit), -eINVAL)
	expect(t, "F_DUPFD from -1", call(p, "fcntl", 0, fDupfd, ^uint64(0)), -eINVAL)
	expect(t, "dup2 to 1024", call(p, "dup2", 0, fdLimit), -eBADF)
	expect(t, "dup2 to -1", call(p, "dup2", 0, ^uint64(0)), -eBADF)
	expect(t, "dup3 to 1024", call(p, "dup3", 0, fdLimit, 0), -eBADF)
	expect(t, "dup2 to 1023", call(p, "dup2", 0, 1023), 1023)
	expect(t, "close 500", call(p, "close", 500), 0)
	expect(t, "close 500 again", call(p, "close", 500), -eBADF)
	expect(t, "F_DUPFD from 400", call(p, "fcntl", 0, fDupfd, 400), 500)
	expect(t, "close 700", call(p, "close", 700), 0)
	expect(t, "F_DUPFD from 701", call(p, "fcntl", 0, fDupfd, 701), -eMFILE)
	expect(t, "F_DUPFD from 600", call(p, "fcntl", 0, fDupfd, 600), 700)
	expect(t, "close 3", call(p, "close", 3), 0)
	expect(t, "openat", call(p, "openat", atFDCWD64, path, 0), 3)
	for fd := uint64(3); fd < fdLimit; fd++ {
		call(p, "close", fd)
	}
	expect(t, "dup with 3 open", call(p, "dup", 1), 3)
	for _, name := range []string{"prlimit64", "getrlimit"} {
		buf := scratch(p) + 4096
		args := []uint64{0, 7, 0, buf} // RLIMIT_NOFILE
		if name == "getrlimit" {
			args = []uint64{7, buf}
		}
		expect(t, name, call(p, name, args...), 0)
		lim := readGuestBytes(t, p, buf, 16)
		expect(t, name+" soft", int64(binary.LittleEndian.Uint64(lim)), fdLimit)
		expect(t, name+" hard", int64(binary.LittleEndian.Uint64(lim[8:])), fdLimit)
	}
}

const atFDCWD64 = uint64(0xffffffffffffff9c) // AT_FDCWD as a register holds it

// TestOpenShared opens the same 1 MiB file a thousand times: it is open
// once on the host and never copied whole; reads see its contents.
func TestOpenShared(t *testing.T) {
	content := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(content)
	file := filepath.Join(t.TempDir(), "lib.so")
	os.WriteFile(file, content, 0o644)
	p := idleProcess(t, arch.AMD64, Config{ReadAllow: []string{file}})
	path := putString(t, p, scratch(p), file)
	got := allocated(func() {
		for i := 0; i < 1000; i++ {
			if fd := call(p, "openat", atFDCWD64, path, 0); fd != int64(3+i) {
				t.Fatalf("open %d: %d", i, fd)
			}
		}
	})
	if got > 8<<20 {
		t.Errorf("1000 opens of a 1 MiB file allocated %d MiB", got>>20)
	}
	if len(p.shared) != 1 {
		t.Errorf("%d host files open, want 1", len(p.shared))
	}
	buf := scratch(p) + 4096
	expect(t, "pread64", call(p, "pread64", 500, buf, 4096, 12345), 4096)
	if !bytes.Equal(readGuestBytes(t, p, buf, 4096), content[12345:12345+4096]) {
		t.Error("pread64 read other bytes than the file's")
	}
	expect(t, "lseek", call(p, "lseek", 600, 1<<20-10, 0), 1<<20-10)
	expect(t, "read at the end", call(p, "read", 600, buf, 4096), 10)
	if !bytes.Equal(readGuestBytes(t, p, buf, 10), content[1<<20-10:]) {
		t.Error("read read other bytes than the file's")
	}
	expect(t, "read past the end", call(p, "read", 600, buf, 4096), 0)
	expect(t, "SEEK_END", call(p, "lseek", 700, 0, 2), 1<<20)
	for fd := uint64(3); fd < 1003; fd++ {
		expect(t, "close", call(p, "close", fd), 0)
	}
	for _, sf := range p.shared {
		if sf.f != nil {
			t.Error("the host file is still open after the last close")
		}
	}
}

// TestReadLazy reads the end of a 1 GiB file: only what is read passes
// through host memory.
func TestReadLazy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("the end"), 1<<30-7)
	f.Close()
	p := idleProcess(t, arch.AMD64, Config{ReadAllow: []string{file}})
	path := putString(t, p, scratch(p), file)
	buf := scratch(p) + 4096
	got := allocated(func() {
		expect(t, "openat", call(p, "openat", atFDCWD64, path, 0), 3)
		expect(t, "pread64", call(p, "pread64", 3, buf, 64<<10, 1<<30-100), 100)
	})
	if b := readGuestBytes(t, p, buf+93, 7); string(b) != "the end" {
		t.Errorf("read %q", b)
	}
	if got > 8<<20 {
		t.Errorf("reading 100 bytes of a 1 GiB file allocated %d MiB", got>>20)
	}
}

// TestMappedELFCounted: an ELF file mapped at offset 0 is held (for its
// object) once, and counts against the memory cap.
func TestMappedELFCounted(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.so"), filepath.Join(dir, "big.so")
	os.WriteFile(small, append([]byte(elf.ELFMAG), make([]byte, 1<<20-4)...), 0o644)
	os.WriteFile(big, append([]byte(elf.ELFMAG), make([]byte, 3<<20-4)...), 0o644)
	p := idleProcess(t, arch.AMD64, Config{ReadAllow: []string{small, big}})
	p.vm.max = p.vm.total + 2<<20
	mmap := func(fd uint64) int64 {
		return call(p, "mmap", 0, 4096, 1, mapPrivate, fd, 0)
	}
	expect(t, "open small", call(p, "openat", atFDCWD64, putString(t, p, scratch(p), small), 0), 3)
	expect(t, "open small again", call(p, "openat", atFDCWD64, scratch(p), 0), 4)
	if r := mmap(3); r < 0 {
		t.Fatalf("mmap: %d", r)
	}
	if r := mmap(4); r < 0 {
		t.Fatalf("mmap: %d", r)
	}
	if p.vm.held != 1<<20 {
		t.Errorf("held %d bytes for a 1 MiB file mapped twice", p.vm.held)
	}
	expect(t, "open big", call(p, "openat", atFDCWD64, putString(t, p, scratch(p), big), 0), 5)
	mmap(5)
	if x := p.Exited(); x == nil || x.Reason != StopMemory {
		t.Errorf("mapping a 3 MiB ELF file with 2 MiB left: %v, want the memory cap", x)
	}
}

// TestMadviseDontneed: MADV_DONTNEED makes a private file mapping read
// the file again, at the right offsets after mprotect splits it and
// mremap moves it; anonymous memory reads as zeros.
func TestMadviseDontneed(t *testing.T) {
	const page = emu.PageSize
	content := make([]byte, 4*page)
	for i := range content {
		content[i] = byte('A' + i/page)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, content, 0o644)
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			p := idleProcess(t, a, Config{ReadAllow: []string{file}})
			expect(t, "openat", call(p, "openat", atFDCWD64, putString(t, p, scratch(p), file), 0), 3)
			addr := uint64(call(p, "mmap", 0, 3*page, 3, mapPrivate, 3, page))
			dirty := bytes.Repeat([]byte("x"), 3*page)
			p.Engine.WriteMem(addr, dirty)
			expect(t, "close", call(p, "close", 3), 0) // the mapping keeps the file
			expect(t, "madvise", call(p, "madvise", addr+page, page, 4), 0)
			got := readGuestBytes(t, p, addr, 3*page)
			want := append(append(dirty[:page:page], content[2*page:3*page]...), dirty[:page]...)
			if !bytes.Equal(got, want) {
				t.Errorf("after MADV_DONTNEED of the second page: %q...", got[page:page+8])
			}
			expect(t, "mprotect", call(p, "mprotect", addr+2*page, page, 1), 0)
			expect(t, "madvise", call(p, "madvise", addr, 3*page, 4), 0)
			if got := readGuestBytes(t, p, addr, 3*page); !bytes.Equal(got, content[page:]) {
				t.Errorf("after MADV_DONTNEED of all: %q %q %q", got[0], got[page], got[2*page])
			}
			p.Engine.WriteMem(addr, dirty)
			moved := uint64(call(p, "mremap", addr, 2*page, 2*page, 1|2, 0x7000_0000))
			expect(t, "mremap", int64(moved), 0x7000_0000)
			expect(t, "madvise", call(p, "madvise", moved+page, page, 4), 0)
			if got := readGuestBytes(t, p, moved, 2*page); !bytes.Equal(got, append(dirty[:page:page], content[2*page:3*page]...)) {
				t.Errorf("after mremap and MADV_DONTNEED: %q", got[page:page+8])
			}
			anon := uint64(call(p, "mmap", 0, page, 3, mapPrivate|mapAnonymous, ^uint64(0), 0))
			p.Engine.WriteMem(anon, dirty[:page])
			expect(t, "madvise", call(p, "madvise", anon, page, 4), 0)
			if got := readGuestBytes(t, p, anon, page); !bytes.Equal(got, make([]byte, page)) {
				t.Errorf("anonymous memory after MADV_DONTNEED: %q", got[:8])
			}
		})
	}
}

// TestSyscallNumbers: Linux looks at a number's low 32 bits, and answers
// ENOSYS to a number it does not know (x86-64's x32 calls included);
// known calls it does not emulate still stop the run.
func TestSyscallNumbers(t *testing.T) {
	for _, c := range []struct {
		a    *arch.Arch
		nr   uint64
		want int64
	}{
		{arch.AMD64, 39, guestPID},                    // getpid
		{arch.AMD64, 1<<32 | 39, guestPID},            // high bits ignored
		{arch.AMD64, 0x4000_0000_0000_0027, guestPID}, // (as Linux ≥ 5.17)
		{arch.AMD64, 0x4000_0000 | 39, -eNOSYS},       // x32
		{arch.AMD64, 0x4000_0000 | 1, -eNOSYS},
		{arch.AMD64, 1000, -eNOSYS},
		{arch.AMD64, 0xffff_ffff, -eNOSYS}, // -1
		{arch.AMD64, ^uint64(0), -eNOSYS},
		{arch.ARM64, 172, guestPID},
		{arch.ARM64, 1<<32 | 172, guestPID},
		{arch.ARM64, 244, -eNOSYS},
		{arch.ARM64, 1000, -eNOSYS},
		{arch.ARM64, ^uint64(0), -eNOSYS},
	} {
		p := idleProcess(t, c.a, Config{})
		if err := p.Engine.SetReg(p.abi.sysRegs[0], c.nr); err != nil {
			t.Fatal(err)
		}
		p.syscall()
		ret, _ := p.Engine.Reg(p.abi.ret)
		if p.exit != nil || int64(ret) != c.want {
			t.Errorf("%s: system call %#x: %d (%v), want %d", c.a.Name, c.nr, int64(ret), p.exit, c.want)
		}
	}
	p := idleProcess(t, arch.AMD64, Config{})
	p.Engine.SetReg(p.abi.sysRegs[0], 1<<32|101) // ptrace
	p.syscall()
	if p.exit == nil || p.exit.Reason != StopUnsupported || !strings.Contains(p.exit.Detail, "(ptrace)") {
		t.Errorf("ptrace: %v, want unsupported", p.exit)
	}
	// fork and vfork (x86-64 only) stop, naming the call.
	for _, nr := range []uint64{57, 58} {
		p := idleProcess(t, arch.AMD64, Config{})
		p.Engine.SetReg(p.abi.sysRegs[0], nr)
		p.syscall()
		if name := SyscallName(arch.AMD64, nr); p.exit == nil || p.exit.Reason != StopUnsupported || !strings.Contains(p.exit.Detail, "("+name+"): only threads") {
			t.Errorf("%s: %v, want unsupported", name, p.exit)
		}
	}
}

// blockedReader never returns from Read.
type blockedReader struct{ block chan struct{} }

func (r blockedReader) Read([]byte) (int, error)  { <-r.block; return 0, io.EOF }
func (r blockedReader) Write([]byte) (int, error) { <-r.block; return 0, io.EOF }

// TestBlockedIO: a guest waiting for stdin, or whose output nobody reads,
// is ended by the timeout or Interrupt within a second.
func TestBlockedIO(t *testing.T) {
	for _, c := range []struct {
		name, prog string
		timeout    bool // else Interrupt
		stdin      bool // else stdout blocks
	}{
		{"stdin/timeout", "readstdin", true, true},
		{"stdin/interrupt", "readstdin", false, true},
		{"stdout/timeout", "hello", true, false},
		{"stdout/interrupt", "hello", false, false},
	} {
		for _, a := range testArches {
			t.Run(c.name+"/"+a.Name, func(t *testing.T) {
				path, _ := testELF(t, a, elf.ET_EXEC, c.prog)
				block := blockedReader{make(chan struct{})}
				cfg := Config{}
				if c.stdin {
					cfg.Stdin = block
				} else {
					cfg.Stdout = block
				}
				if c.timeout {
					cfg.Timeout = 200 * time.Millisecond
				}
				p, err := Load(path, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				done := make(chan *Exit, 1)
				start := time.Now()
				go func() {
					x, _ := p.Run()
					done <- x
				}()
				if !c.timeout {
					time.Sleep(200 * time.Millisecond)
					p.Interrupt()
				}
				select {
				case x := <-done:
					want := StopTimeout
					if !c.timeout {
						want = StopInterrupted
					}
					if x.Reason != want {
						t.Errorf("%v, want %v", x, want)
					}
					if d := time.Since(start); d > 1200*time.Millisecond {
						t.Errorf("the run ended after %v", d)
					}
				case <-time.After(5 * time.Second):
					close(block.block)
					<-done
					t.Fatal("the run did not end until its input or output came")
				}
				close(block.block)
			})
		}
	}
}

// TestPrivileged: hlt, in and out are privileged in user mode, where
// Linux delivers SIGSEGV; an instruction that merely ends in hlt's byte is
// not one.
func TestPrivileged(t *testing.T) {
	const exit7 = "bf07000000b8e70000000f05" // mov edi,7; mov eax,231; syscall
	for _, c := range []struct {
		name, code string
		fault      bool
	}{
		{"hlt", "f4", true},
		{"hlt with a prefix", "66f4", true},
		{"in al,dx", "ec", true},
		{"out dx,al", "ee", true},
		{"in eax,0x60", "e560", true},
		{"out 0x80,al", "e680", true},
		{"mov al,0xf4", "b0f4", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			testCode["privileged"] = map[*arch.Arch]string{arch.AMD64: c.code + exit7}
			path, entry := testELF(t, arch.AMD64, elf.ET_EXEC, "privileged")
			for _, session := range []bool{false, true} {
				p, err := Load(path, Config{})
				if err != nil {
					t.Fatal(err)
				}
				var x *Exit
				if session {
					x, _, err = NewSession(p).RunUntil(nil, 0)
				} else {
					x, err = p.Run()
				}
				p.Close()
				switch {
				case err != nil:
					t.Fatal(err)
				case c.fault && (x.Reason != StopFault || x.Signal != 11 || x.PC != entry):
					t.Errorf("session %v: %v (signal %d, pc %#x), want SIGSEGV at %#x", session, x, x.Signal, x.PC, entry)
				case !c.fault && (x.Reason != StopExited || x.Status != 7):
					t.Errorf("session %v: %v, want exit status 7", session, x)
				}
			}
		})
	}
}

// TestObjectsPerFile: one ELF file mapped at many addresses becomes at
// most maxObjectsPerFile objects (each has its ELF structures and symbols).
func TestObjectsPerFile(t *testing.T) {
	lib, _ := testELF(t, arch.AMD64, elf.ET_DYN, "hello")
	p := idleProcess(t, arch.AMD64, Config{ReadAllow: []string{lib}})
	expect(t, "openat", call(p, "openat", atFDCWD64, putString(t, p, scratch(p), lib), 0), 3)
	before := len(p.Objects())
	for i := 0; i < 3*maxObjectsPerFile; i++ {
		if r := call(p, "mmap", 0, 4096, 5, mapPrivate, 3, 0); r < 0 {
			t.Fatalf("mmap: %d", r)
		}
	}
	if got := len(p.Objects()) - before; got != maxObjectsPerFile {
		t.Errorf("%d objects made of one file mapped %d times, want %d", got, 3*maxObjectsPerFile, maxObjectsPerFile)
	}
}
