//go:build cgo

package linux

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
	"github.com/sframesim/sframesim/internal/testcorpus"
)

// Test programs: the machine code of tiny assembly programs (source in the
// comments), wrapped by testELF into static executables. All are position
// independent, so they also run as static PIEs.
var testCode = map[string]map[*arch.Arch]string{
	// write(1, "hi\n", 3); exit_group(3)
	"hello": {
		// mov edi,1; lea rsi,[rip+msg]; mov edx,3; mov eax,1; syscall;
		// mov edi,3; mov eax,231; syscall; msg: .ascii "hi\n"
		arch.AMD64: "bf01000000488d3518000000ba03000000b8010000000f05bf03000000b8e70000000f0568690a",
		// mov x0,#1; adr x1,msg; mov x2,#3; mov x8,#64; svc #0;
		// mov x0,#3; mov x8,#94; svc #0; msg: .ascii "hi\n"
		arch.ARM64: "200080d2e1000010620080d2080880d2010000d4600080d2c80b80d2010000d468690a",
	},
	// 1: jmp 1b
	"loop": {arch.AMD64: "ebfe", arch.ARM64: "00000014"},
	// r = socket(2, 1, 0) twice, connect(3, 0, 0), exit_group(-r): the
	// sandbox denies them, the status is EACCES (13)
	"socket": {
		// mov edi,2; mov esi,1; xor edx,edx; mov eax,41; syscall (twice);
		// mov r12,rax; mov edi,3; xor esi,esi; xor edx,edx; mov eax,42;
		// syscall; mov rdi,r12; neg rdi; mov eax,231; syscall
		arch.AMD64: "bf02000000be0100000031d2b8290000000f05bf02000000be0100000031d2b8290000000f05" +
			"4989c4bf0300000031f631d2b82a0000000f054c89e748f7dfb8e70000000f05",
		// mov x0,#2; mov x1,#1; mov x2,#0; mov x8,#198; svc #0 (twice);
		// mov x19,x0; mov x0,#3; mov x1,#0; mov x2,#0; mov x8,#203; svc #0;
		// neg x0,x19; mov x8,#94; svc #0
		arch.ARM64: "400080d2210080d2020080d2c81880d2010000d4400080d2210080d2020080d2c81880d2010000d4" +
			"f30300aa600080d2010080d2020080d2681980d2010000d4e00313cbc80b80d2010000d4",
	},
	// ptrace(0, 0, 0) (unsupported: a stop); exit_group
	"ptrace": {
		// xor edi,edi; xor esi,esi; xor edx,edx; mov eax,101; syscall (at +0xb);
		// mov eax,231; syscall
		arch.AMD64: "31ff31f631d2b8650000000f05b8e70000000f05",
		// mov x0,#0; mov x1,#0; mov x2,#0; mov x8,#117; svc #0 (at +0x10);
		// mov x8,#94; svc #0
		arch.ARM64: "000080d2010080d2020080d2a80e80d2010000d4c80b80d2010000d4",
	},
	// tgkill(getpid(), getpid(), SIGABRT); exit_group(0)
	"abort": {
		// mov eax,39; syscall; mov edi,eax; mov esi,eax; mov edx,6; mov eax,234;
		// syscall; xor edi,edi; mov eax,231; syscall
		arch.AMD64: "b8270000000f0589c789c6ba06000000b8ea0000000f0531ffb8e70000000f05",
		// mov x8,#172; svc #0; mov x1,x0; mov x2,#6; mov x8,#131; svc #0;
		// mov x0,#0; mov x8,#94; svc #0
		arch.ARM64: "881580d2010000d4e10300aac20080d2681080d2010000d4000080d2c80b80d2010000d4",
	},
	// p = mmap(0, 64 MiB, RW, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); *p = 1; exit_group(0)
	"mmap": {
		// xor edi,edi; mov esi,0x4000000; mov edx,3; mov r10d,0x22; mov r8,-1;
		// xor r9d,r9d; mov eax,9; syscall; mov byte ptr [rax],1; xor edi,edi;
		// mov eax,231; syscall
		arch.AMD64: "31ffbe00000004ba0300000041ba2200000049c7c0ffffffff4531c9b8090000000f05c6000131ffb8e70000000f05",
		// mov x0,#0; mov x1,#0x4000000; mov x2,#3; mov x3,#0x22; mov x4,#-1;
		// mov x5,#0; mov x8,#222; svc #0; mov w1,#1; strb w1,[x0]; mov x0,#0;
		// mov x8,#94; svc #0
		arch.ARM64: "000080d20180a0d2620080d2430480d204008092050080d2c81b80d2010000d42100805201000039000080d2c80b80d2010000d4",
	},
	// fd = openat(AT_FDCWD, argv[1], O_RDONLY); if fd < 0: exit_group(errno);
	// n = read(fd, buf, 256); write(1, buf, n); exit_group(0)
	"cat": {
		// mov rsi,[rsp+16]; mov edi,-100; xor edx,edx; mov eax,257; syscall;
		// test rax,rax; js 1f; mov edi,eax; sub rsp,256; mov rsi,rsp;
		// mov edx,256; xor eax,eax; syscall; mov edx,eax; mov edi,1;
		// mov rsi,rsp; mov eax,1; syscall; xor edi,edi; mov eax,231; syscall;
		// 1: neg eax; mov edi,eax; mov eax,231; syscall
		arch.AMD64: "488b742410bf9cffffff31d2b8010100000f054885c0782f89c74881ec000100004889e6ba0001000031c00f0589c2bf010000004889e6b8010000000f0531ffb8e70000000f05f7d889c7b8e70000000f05",
		// ldr x1,[sp,#16]; mov x0,#-100; mov x2,#0; mov x8,#56; svc #0;
		// tbnz x0,#63,1f; sub sp,sp,#256; mov x1,sp; mov x2,#256; mov x8,#63;
		// svc #0; mov x2,x0; mov x0,#1; mov x1,sp; mov x8,#64; svc #0;
		// mov x0,#0; mov x8,#94; svc #0; 1: neg x0,x0; mov x8,#94; svc #0
		arch.ARM64: "e10b40f9600c8092020080d2080780d2010000d4c001f8b7ff0304d1e1030091022080d2e80780d2010000d4e20300aa200080d2e1030091080880d2010000d4000080d2c80b80d2010000d4e00300cbc80b80d2010000d4",
	},
	// a load from address 8
	"fault": {
		arch.AMD64: "488b042508000000", // mov rax,[8]
		arch.ARM64: "000180d2010040f9", // mov x0,#8; ldr x1,[x0]
	},
	// Faults at the top of the address space (TestFaultHighAddress).
	"fault-high-load":  {arch.AMD64: "48c7c0f8ffffff488b00"},           // mov rax,-8; mov rax,[rax]
	"fault-high-store": {arch.AMD64: "48c7c0f8ffffff488940f0"},         // mov rax,-8; mov [rax-16],rax
	"fault-high-fetch": {arch.AMD64: "48c7c0f8ffffffffe0"},             // mov rax,-8; jmp rax
	"fault-high-push":  {arch.AMD64: "48c7c4f8ffffff50"},               // mov rsp,-8; push rax
	"fault-high-fs":    {arch.AMD64: "48c7c0f0ffffff648b0425f8ffffff"}, // mov rax,-16; mov eax,fs:[-8] (fs base 0)
}

// testELF writes a minimal static ELF executable (ET_EXEC at 0x400000, or
// ET_DYN at 0) running program name: one R+X PT_LOAD holding the headers
// and the code, and a symbol table naming the code "_start".
func testELF(t *testing.T, a *arch.Arch, typ elf.Type, name string) (path string, entry uint64) {
	t.Helper()
	code, err := hex.DecodeString(testCode[name][a])
	if err != nil || len(code) == 0 {
		t.Fatalf("test program %s for %s: %v", name, a.Name, err)
	}
	var base uint64
	if typ == elf.ET_EXEC {
		base = 0x400000
	}
	const ehsize, phsize, symsize, shsize = 64, 56, 24, 64
	codeOff := uint64(ehsize + phsize)
	entry = base + codeOff
	strtab := []byte("\x00_start\x00")
	shstrtab := []byte("\x00.text\x00.symtab\x00.strtab\x00.shstrtab\x00")
	symOff := (codeOff + uint64(len(code)) + 7) &^ 7
	strOff := symOff + 2*symsize
	shstrOff := strOff + uint64(len(strtab))
	shOff := (shstrOff + uint64(len(shstrtab)) + 7) &^ 7

	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := elf.Header64{
		Type: uint16(typ), Machine: uint16(a.Machine), Version: 1, Entry: entry,
		Phoff: ehsize, Shoff: shOff, Ehsize: ehsize, Phentsize: phsize, Phnum: 1,
		Shentsize: shsize, Shnum: 5, Shstrndx: 4,
	}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	binary.Write(&b, le, hdr)
	binary.Write(&b, le, elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: base, Paddr: base,
		Filesz: codeOff + uint64(len(code)), Memsz: codeOff + uint64(len(code)), Align: emu.PageSize,
	})
	b.Write(code)
	b.Write(make([]byte, symOff-uint64(b.Len())))
	binary.Write(&b, le, elf.Sym64{})
	binary.Write(&b, le, elf.Sym64{Name: 1, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 1, Value: entry, Size: uint64(len(code))})
	b.Write(strtab)
	b.Write(shstrtab)
	b.Write(make([]byte, shOff-uint64(b.Len())))
	for _, s := range []elf.Section64{
		{},
		{Name: 1, Type: uint32(elf.SHT_PROGBITS), Flags: uint64(elf.SHF_ALLOC | elf.SHF_EXECINSTR), Addr: entry, Off: codeOff, Size: uint64(len(code)), Addralign: 4},
		{Name: 7, Type: uint32(elf.SHT_SYMTAB), Off: symOff, Size: 2 * symsize, Link: 3, Info: 1, Addralign: 8, Entsize: symsize},
		{Name: 15, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(strtab)), Addralign: 1},
		{Name: 23, Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstrtab)), Addralign: 1},
	} {
		binary.Write(&b, le, s)
	}
	path = filepath.Join(t.TempDir(), fmt.Sprintf("%s-%s-%v", name, a.Name, typ))
	if err := os.WriteFile(path, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, entry
}

var testArches = []*arch.Arch{arch.AMD64, arch.ARM64}

// runTest loads and runs a program, failing the test on errors.
func runTest(t *testing.T, path string, cfg Config) (*Process, *Exit) {
	t.Helper()
	p, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	x, err := p.Run()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return p, x
}

// TestHello runs the smallest program as ET_EXEC and as a static PIE.
func TestHello(t *testing.T) {
	for _, a := range testArches {
		for _, typ := range []elf.Type{elf.ET_EXEC, elf.ET_DYN} {
			t.Run(fmt.Sprintf("%s/%v", a.Name, typ), func(t *testing.T) {
				path, entry := testELF(t, a, typ, "hello")
				var out bytes.Buffer
				p, x := runTest(t, path, Config{Stdout: &out})
				if x.Reason != StopExited || x.Status != 3 || out.String() != "hi\n" {
					t.Errorf("exit %+v, stdout %q; want status 3, \"hi\\n\"", x, out.String())
				}
				if x.Insns != 8 {
					t.Errorf("%d instructions, want 8", x.Insns)
				}
				if typ == elf.ET_DYN && (p.Base == 0 || p.Base%emu.PageSize != 0) {
					t.Errorf("static PIE loaded at %#x", p.Base)
				}
				if p.Entry != p.Base+entry {
					t.Errorf("Entry %#x, want %#x", p.Entry, p.Base+entry)
				}
			})
		}
	}
}

// TestInitialStack reads argc, argv, envp and the auxiliary vector back
// from guest memory, for a corpus binary of each arch.
func TestInitialStack(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, rel := range []string{"v3/x86-64/recurse-O2-static", "v3/aarch64/recurse-O2-static"} {
		t.Run(rel, func(t *testing.T) {
			path := filepath.Join(dir, rel)
			args := []string{"prog", "one", "", "three"}
			env := []string{"A=1", "LONGER=" + strings.Repeat("x", 100)}
			p, err := Load(path, Config{Args: args, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			e := p.Engine
			sp, _ := e.ReadDWARF(p.Arch.SP)
			pc, _ := e.PC()
			if sp != p.SP || sp%16 != 0 || pc != p.Entry || pc != p.ELF.Entry {
				t.Fatalf("sp %#x (SP %#x), pc %#x (Entry %#x, ELF %#x)", sp, p.SP, pc, p.Entry, p.ELF.Entry)
			}
			word := func(addr uint64) uint64 {
				v, err := e.Read64(addr)
				if err != nil {
					t.Fatalf("reading %#x: %v", addr, err)
				}
				return v
			}
			str := func(addr uint64) string {
				var s []byte
				for b := make([]byte, 1); ; addr++ {
					if err := e.ReadMem(addr, b); err != nil {
						t.Fatalf("reading string at %#x: %v", addr, err)
					}
					if b[0] == 0 {
						return string(s)
					}
					s = append(s, b[0])
				}
			}
			at := sp
			next := func() uint64 { v := word(at); at += 8; return v }
			if argc := next(); argc != uint64(len(args)) {
				t.Fatalf("argc %d", argc)
			}
			for i, want := range args {
				if got := str(next()); got != want {
					t.Errorf("argv[%d] = %q, want %q", i, got, want)
				}
			}
			if next() != 0 {
				t.Fatal("argv not NULL-terminated")
			}
			for i, want := range env {
				if got := str(next()); got != want {
					t.Errorf("envp[%d] = %q, want %q", i, got, want)
				}
			}
			if next() != 0 {
				t.Fatal("envp not NULL-terminated")
			}
			aux := map[uint64]uint64{}
			for {
				k, v := next(), next()
				if k == AT_NULL {
					break
				}
				if _, dup := aux[k]; dup {
					t.Errorf("auxv tag %d twice", k)
				}
				aux[k] = v
			}
			for k, want := range map[uint64]uint64{
				AT_PHENT: 56, AT_PHNUM: uint64(len(p.ELF.Progs)), AT_PAGESZ: 4096, AT_ENTRY: p.ELF.Entry,
				AT_SECURE: 0, AT_BASE: 0, AT_UID: guestUID, AT_EUID: guestUID, AT_GID: guestGID, AT_EGID: guestGID, AT_CLKTCK: 100,
			} {
				if got, ok := aux[k]; !ok || got != want {
					t.Errorf("auxv[%d] = %#x (present %v), want %#x", k, got, ok, want)
				}
			}
			if aux[AT_HWCAP] == 0 {
				t.Error("AT_HWCAP is 0")
			}
			t.Logf("AT_HWCAP %#x, AT_HWCAP2 %#x", aux[AT_HWCAP], aux[AT_HWCAP2])
			// AT_PHDR points at the program headers, as in the file.
			raw, _ := os.ReadFile(path)
			phoff := binary.LittleEndian.Uint64(raw[32:])
			want := raw[phoff : phoff+56*uint64(len(p.ELF.Progs))]
			got := make([]byte, len(want))
			if err := e.ReadMem(aux[AT_PHDR], got); err != nil || !bytes.Equal(got, want) {
				t.Errorf("AT_PHDR %#x does not hold the program headers (%v)", aux[AT_PHDR], err)
			}
			if got := str(aux[AT_EXECFN]); got != path {
				t.Errorf("AT_EXECFN %q, want %q", got, path)
			}
			if got, want := str(aux[AT_PLATFORM]), map[*arch.Arch]string{arch.AMD64: "x86_64", arch.ARM64: "aarch64"}[p.Arch]; got != want {
				t.Errorf("AT_PLATFORM %q, want %q", got, want)
			}
			rnd := make([]byte, 16)
			if err := e.ReadMem(aux[AT_RANDOM], rnd); err != nil || bytes.Equal(rnd, make([]byte, 16)) {
				t.Errorf("AT_RANDOM %#x: %x, %v", aux[AT_RANDOM], rnd, err)
			}
			// The strings sit above the vectors, below the top of the stack.
			for _, a := range []uint64{aux[AT_RANDOM], aux[AT_EXECFN], aux[AT_PLATFORM]} {
				if a < at || a >= p.abi.stackTop {
					t.Errorf("string at %#x outside [%#x, %#x)", a, at, p.abi.stackTop)
				}
			}
			// The program still runs with these arguments.
			var out bytes.Buffer
			p.cfg.Stdout = &out
			x, err := p.Run()
			if err != nil || x.Reason != StopExited || x.Status != 3 {
				t.Errorf("run: %v, %v", x, err)
			}
		})
	}
}

// TestBudget stops runs after an exact number of instructions, and steps
// with Continue.
func TestBudget(t *testing.T) {
	except := filepath.Join(testcorpus.Dir(t), "v3/x86-64/except-O2-static")
	loop, _ := testELF(t, arch.ARM64, elf.ET_EXEC, "loop")
	for _, c := range []struct {
		path   string
		budget uint64
	}{{except, 1}, {except, 1000}, {except, 345678}, {loop, 2*RunChunk + 12345}} {
		path, budget := c.path, c.budget
		p, x := runTest(t, path, Config{MaxInsns: budget})
		if x.Reason != StopBudget || x.Insns != budget || p.Engine.Executed() != budget {
			t.Errorf("budget %d: %+v, executed %d", budget, x, p.Engine.Executed())
		}
		if !strings.Contains(x.Detail, fmt.Sprintf("instruction budget of %d exhausted at pc %#x", budget, x.PC)) {
			t.Errorf("detail %q", x.Detail)
		}
	}
	for _, a := range testArches {
		path, entry := testELF(t, a, elf.ET_EXEC, "hello")
		p, err := Load(path, Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var x *Exit
		for i := uint64(1); x == nil; i++ {
			if x, err = p.Continue(1); err != nil {
				t.Fatal(err)
			}
			if p.Engine.Executed() != i {
				t.Fatalf("%s: step %d: executed %d", a.Name, i, p.Engine.Executed())
			}
			if pc, _ := p.Engine.PC(); x == nil && i == 1 && pc != entry+5 && pc != entry+4 {
				t.Errorf("%s: pc %#x after one step", a.Name, pc)
			}
		}
		if x.Reason != StopExited || x.Insns != 8 {
			t.Errorf("%s: stepping ended with %+v", a.Name, x)
		}
	}
}

func TestTimeout(t *testing.T) {
	for _, a := range testArches {
		path, _ := testELF(t, a, elf.ET_EXEC, "loop")
		start := time.Now()
		_, x := runTest(t, path, Config{Timeout: 300 * time.Millisecond})
		wall := time.Since(start)
		if x.Reason != StopTimeout || !strings.Contains(x.Detail, "timeout: 300ms") || !strings.Contains(x.Detail, "(_start)") {
			t.Errorf("%s: %+v", a.Name, x)
		}
		if wall < 300*time.Millisecond || wall > 3*time.Second {
			t.Errorf("%s: stopped after %v", a.Name, wall)
		}
		t.Logf("%s: %d instructions in %v", a.Name, x.Insns, wall)
	}
}

func TestUnsupportedSyscall(t *testing.T) {
	for _, c := range []struct {
		a   *arch.Arch
		nr  int
		off uint64
	}{{arch.AMD64, 101, 0xb}, {arch.ARM64, 117, 0x10}} {
		for _, typ := range []elf.Type{elf.ET_EXEC, elf.ET_DYN} {
			path, entry := testELF(t, c.a, typ, "ptrace")
			p, x := runTest(t, path, Config{})
			pc := p.Base + entry + c.off
			want := fmt.Sprintf("unsupported system call %d (ptrace) at pc %#x (_start+%#x)", c.nr, pc, c.off)
			if x.Reason != StopUnsupported || x.Detail != want || x.PC != pc {
				t.Errorf("%s %v: %+v\nwant detail %q", c.a.Name, typ, x, want)
			}
			if d := p.Denied(); d != nil {
				t.Errorf("%s %v: denied %v", c.a.Name, typ, d)
			}
		}
	}
}

// TestDenied: network calls fail with EACCES as in a sandbox, the program
// goes on (its status is the errno it got) and each denial is counted.
func TestDenied(t *testing.T) {
	for _, a := range testArches {
		for _, typ := range []elf.Type{elf.ET_EXEC, elf.ET_DYN} {
			path, _ := testELF(t, a, typ, "socket")
			p, x := runTest(t, path, Config{})
			if x.Reason != StopExited || x.Status != eACCES {
				t.Errorf("%s %v: %+v, want exit status %d (EACCES)", a.Name, typ, x, eACCES)
			}
			want := map[string]uint64{"socket": 2, "connect": 1}
			if d := p.Denied(); !maps.Equal(d, want) {
				t.Errorf("%s %v: denied %v, want %v", a.Name, typ, d, want)
			}
			if got, want := DeniedSummary(p.Denied()), "socket 2, connect 1 (sandbox: EACCES)"; got != want {
				t.Errorf("%s %v: summary %q, want %q", a.Name, typ, got, want)
			}
		}
	}
	if s := DeniedSummary(nil); s != "" {
		t.Errorf("no denials: %q", s)
	}
	if got, want := DeniedSummary(map[string]uint64{"sendto": 1, "bind": 1, "socket": 3}), "socket 3, bind 1, sendto 1 (sandbox: EACCES)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestDeniedNames: every denied call is a system call of both
// architectures (by the generated tables), and calls that cannot be
// emulated honestly stay stops (execve, handled, answers only what is
// wrong with the file: TestExecve).
func TestDeniedNames(t *testing.T) {
	for _, a := range testArches {
		known := map[string]bool{}
		for _, name := range abiFor(a).names {
			known[name] = true
		}
		for _, name := range deniedCalls {
			if !known[name] {
				t.Errorf("%s: %s is not a system call", a.Name, name)
			}
		}
		for _, name := range []string{"fork", "vfork"} {
			if known[name] && handlers[name] != nil {
				t.Errorf("%s: %s is handled, want a stop", a.Name, name)
			}
		}
	}
}

func TestMemoryCap(t *testing.T) {
	for _, a := range testArches {
		path, _ := testELF(t, a, elf.ET_EXEC, "mmap")
		_, x := runTest(t, path, Config{MaxMem: 32 << 20})
		if x.Reason != StopMemory || !strings.Contains(x.Detail, "guest memory cap of 33554432 bytes reached: mmap of 67108864 bytes") {
			t.Errorf("%s: %+v", a.Name, x)
		}
		// Within the cap the program runs (and writes to the mapping).
		_, x = runTest(t, path, Config{MaxMem: 128 << 20})
		if x.Reason != StopExited || x.Status != 0 {
			t.Errorf("%s: %+v", a.Name, x)
		}
		if _, err := Load(path, Config{MaxMem: 1 << 20}); err == nil || !strings.Contains(err.Error(), "memory cap") {
			t.Errorf("%s: Load with a 1 MiB cap: %v", a.Name, err)
		}
	}
}

func TestSignalAndFault(t *testing.T) {
	for _, a := range testArches {
		path, _ := testELF(t, a, elf.ET_EXEC, "abort")
		_, x := runTest(t, path, Config{})
		if x.Reason != StopSignaled || x.Signal != 6 || x.Status != 134 || !strings.Contains(x.Detail, "killed by signal 6 (SIGABRT)") {
			t.Errorf("%s abort: %+v", a.Name, x)
		}
		path, entry := testELF(t, a, elf.ET_EXEC, "fault")
		_, x = runTest(t, path, Config{})
		pc := entry
		if a == arch.ARM64 {
			pc += 4
		}
		if x.Reason != StopFault || x.Signal != 11 || x.PC != pc || !strings.Contains(x.Detail, "SIGSEGV: read of 8 bytes at unmapped address 0x8") {
			t.Errorf("%s fault: %+v (want pc %#x)", a.Name, x, pc)
		}
	}
}

// TestFaultHighAddress: a fault at an address with any of its top 12
// bits set is reported with all 64 bits (Unicorn hands its hook the
// address cut to 52), in the stop's detail and the SIGSEGV's si_addr.
func TestFaultHighAddress(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"fault-high-load", "read of 8 bytes at unmapped address 0xfffffffffffffff8 "},
		{"fault-high-store", "write of 8 bytes at unmapped address 0xffffffffffffffe8 "},
		{"fault-high-fetch", "fetch of 1 bytes at unmapped address 0xfffffffffffffff8 "},
		{"fault-high-push", "write of 8 bytes at unmapped address 0xfffffffffffffff0 "},
		{"fault-high-fs", "read of 4 bytes at unmapped address 0xfffffffffffffff8 "},
	} {
		path, _ := testELF(t, arch.AMD64, elf.ET_EXEC, c.name)
		_, x := runTest(t, path, Config{})
		if x.Reason != StopFault || x.Signal != 11 || !strings.Contains(x.Detail, "SIGSEGV: "+c.want) {
			t.Errorf("%s: %+v; want SIGSEGV: %s", c.name, x, c.want)
		}
	}
}

// TestReadAllow: the guest opens only allow-listed files.
func TestReadAllow(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(secret, []byte("allowed content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range testArches {
		path, _ := testELF(t, a, elf.ET_EXEC, "cat")
		var out bytes.Buffer
		_, x := runTest(t, path, Config{Args: []string{"cat", secret}, Stdout: &out})
		if x.Reason != StopExited || x.Status != eNOENT || out.Len() != 0 {
			t.Errorf("%s without allow-list: %v, %q", a.Name, x, out.String())
		}
		out.Reset()
		_, x = runTest(t, path, Config{Args: []string{"cat", secret}, Stdout: &out, ReadAllow: []string{secret}})
		if x.Reason != StopExited || x.Status != 0 || out.String() != "allowed content\n" {
			t.Errorf("%s allowed: %v, %q", a.Name, x, out.String())
		}
	}
}

// TestLoadNoInterpreter: a dynamically linked program whose sysroot has
// no program interpreter (or is not a directory) is refused with a message
// naming the interpreter and the sysroot.
func TestLoadNoInterpreter(t *testing.T) {
	dir := testcorpus.Dir(t)
	empty := t.TempDir()
	for _, c := range []struct{ rel, sysroot, want string }{
		{"v1/x86-64/recurse-O2-dynamic", empty, "program interpreter /lib64/ld-linux-x86-64.so.2 is not in the sysroot " + empty},
		{"v3/aarch64/recurse-O2-dynamic", empty, "program interpreter /lib/ld-linux-aarch64.so.1 is not in the sysroot " + empty},
		{"v3/aarch64/recurse-O2-dynamic", filepath.Join(empty, "missing"), "sysroot " + filepath.Join(empty, "missing") + " does not exist"},
		{"v3/x86-64/asm-O2-dynamic", filepath.Join(dir, "manifest.json"), "sysroot " + filepath.Join(dir, "manifest.json") + " is not a directory"},
	} {
		_, err := Load(filepath.Join(dir, c.rel), Config{Sysroot: c.sysroot})
		if !errors.Is(err, ErrNoSysroot) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.rel, err, c.want)
		}
	}
}

// TestLoadStaticBadSysroot: a static program needs no sysroot, but one
// given is its file system view: one that does not exist is refused,
// named for what it is, not for a program interpreter it does not need.
func TestLoadStaticBadSysroot(t *testing.T) {
	dir := testcorpus.Dir(t)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, rel := range []string{"v3/x86-64/nolibc-O2", "v3/aarch64/recurse-O2-static"} {
		_, err := Load(filepath.Join(dir, rel), Config{Sysroot: missing})
		if want := "sysroot " + missing + " does not exist"; err == nil || !strings.HasSuffix(err.Error(), want) || errors.Is(err, ErrNoSysroot) {
			t.Errorf("%s: %v, want an error ending %q, not ErrNoSysroot", rel, err, want)
		}
	}
}

// TestVM checks the guest memory map: reuse of unmapped pages (zeroed),
// permissions, the free-range search and the cap's accounting.
func TestVM(t *testing.T) {
	e, err := emu.NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := addrSpace{e: e, max: 16 * emu.PageSize}
	const a = 0x100000
	if err := m.mmap(a, a+4*emu.PageSize, emu.ProtRead|emu.ProtWrite, "a"); err != nil {
		t.Fatal(err)
	}
	e.WriteMem(a, bytes.Repeat([]byte{7}, 4*emu.PageSize))
	if err := m.munmap(a+emu.PageSize, a+2*emu.PageSize); err != nil {
		t.Fatal(err)
	}
	if m.total != 3*emu.PageSize || m.covered(a, a+2*emu.PageSize) || !m.covered(a+2*emu.PageSize, a+4*emu.PageSize) || !m.free(a+emu.PageSize, a+2*emu.PageSize) {
		t.Fatalf("after munmap: total %#x, vmas %+v", m.total, m.vmas)
	}
	// Mapping over the hole and a mapped page: both read as zero again.
	if err := m.mmap(a+emu.PageSize, a+3*emu.PageSize, emu.ProtRead, "b"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4*emu.PageSize)
	e.ReadMem(a, buf)
	if buf[0] != 7 || buf[emu.PageSize] != 0 || buf[2*emu.PageSize] != 0 || buf[3*emu.PageSize] != 7 {
		t.Errorf("contents after remapping: %d %d %d %d", buf[0], buf[emu.PageSize], buf[2*emu.PageSize], buf[3*emu.PageSize])
	}
	if m.total != 4*emu.PageSize || len(m.vmas) != 3 || !m.allows(a+emu.PageSize, a+3*emu.PageSize, emu.ProtRead) || m.allows(a, a+2*emu.PageSize, emu.ProtWrite) {
		t.Errorf("vmas %+v, total %#x", m.vmas, m.total)
	}
	if err := m.protect(a, a+4*emu.PageSize, emu.ProtRead|emu.ProtWrite); err != nil || !m.allows(a, a+4*emu.PageSize, emu.ProtWrite) {
		t.Errorf("protect: %v, %+v", err, m.vmas)
	}
	if err := m.protect(a, a+5*emu.PageSize, emu.ProtRead); err == nil {
		t.Error("protect of unmapped pages succeeded")
	}
	// Top-down search for free space.
	if got := m.findFree(2*emu.PageSize, 0x10000, a+4*emu.PageSize); got != a-2*emu.PageSize {
		t.Errorf("findFree below the mapping: %#x", got)
	}
	if got := m.findFree(2*emu.PageSize, 0x10000, a+8*emu.PageSize); got != a+6*emu.PageSize {
		t.Errorf("findFree above the mapping: %#x", got)
	}
	if got := m.findFree(2*emu.PageSize, a, a+5*emu.PageSize); got != 0 {
		t.Errorf("findFree with no room: %#x", got)
	}
	// The cap counts mappings, not what the engine keeps backed.
	if err := m.mmap(0x200000, 0x200000+12*emu.PageSize, emu.ProtRead, "c"); err != nil {
		t.Fatal(err)
	}
	if err := m.mmap(0x300000, 0x300000+emu.PageSize, emu.ProtRead, "d"); !errors.Is(err, errMemCap) {
		t.Errorf("mapping beyond the cap: %v", err)
	}
	m.munmap(0x200000, 0x200000+12*emu.PageSize)
	if err := m.mmap(0x300000, 0x300000+emu.PageSize, emu.ProtRead, "d"); err != nil {
		t.Errorf("mapping after unmapping: %v", err)
	}
	// Reserved address space (PROT_NONE) counts only once accessible:
	// protect checks the cap as mmap does, and taking access away frees.
	const r = 0x40000000
	used := m.used()
	if err := m.mmap(r, r+1024*emu.PageSize, 0, "reserved"); err != nil || m.used() != used {
		t.Fatalf("reserving 1024 pages with a cap of 16: %v, used %d -> %d", err, used, m.used())
	}
	room := (m.max - used) / emu.PageSize
	if err := m.protect(r, r+room*emu.PageSize, emu.ProtRead|emu.ProtWrite); err != nil || m.used() != m.max {
		t.Errorf("making the %d pages left accessible: %v, used %d of %d", room, err, m.used(), m.max)
	}
	if err := m.protect(r, r+(room+1)*emu.PageSize, emu.ProtRead); !errors.Is(err, errMemCap) || m.used() != m.max {
		t.Errorf("one page more: %v, used %d", err, m.used())
	}
	if err := m.mmap(r, r+emu.PageSize, 0, "reserved"); err != nil || m.used() != m.max-emu.PageSize {
		t.Errorf("mapping a page PROT_NONE over an accessible one: %v, used %d", err, m.used())
	}
	if err := m.protect(r, r+room*emu.PageSize, 0); err != nil || m.used() != used {
		t.Errorf("taking the access away: %v, used %d, want %d", err, m.used(), used)
	}
	m.munmap(r, r+1024*emu.PageSize)
	if m.used() != used {
		t.Errorf("after unmapping the reservation: used %d, want %d", m.used(), used)
	}
}

// TestVMRegionLimit: mappings whose pages alternate protections use up
// the emulator's memory regions (Unicorn aborts the process past a target
// page's worth of them); the address space refuses the change that would
// go past them with emu.ErrRegionLimit before changing anything, and
// freeing some makes room again.
func TestVMRegionLimit(t *testing.T) {
	// (AArch64 with 1 KiB pages only: its limit is then 1024 sections;
	// with 4 KiB pages, and on x86-64, 4096, which take Unicorn minutes to
	// reach: adding a region costs time quadratic in their number.)
	for _, a := range []*arch.Arch{arch.ARM64} {
		t.Run(a.Name, func(t *testing.T) {
			was := emu.SetSmallPages(true)
			e, err := emu.NewEngine(a)
			emu.SetSmallPages(was)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			m := addrSpace{e: e}
			const base = 0x10000000
			var n uint64
			for ; n < 10000; n++ {
				at := uint64(base + 2*n*emu.PageSize)
				if err := m.mmap(at, at+2*emu.PageSize, emu.ProtRead|emu.ProtWrite, "a"); err != nil {
					if !errors.Is(err, emu.ErrRegionLimit) {
						t.Fatalf("mmap %d: %v", n, err)
					}
					break
				}
				if err := m.protect(at+emu.PageSize, at+2*emu.PageSize, 0); err != nil {
					if !errors.Is(err, emu.ErrRegionLimit) {
						t.Fatalf("protect %d: %v", n, err)
					}
					if !m.allows(at+emu.PageSize, at+2*emu.PageSize, emu.ProtWrite) {
						t.Fatal("a refused protect changed the mapping")
					}
					break
				}
			}
			if n == 10000 || n < 400 {
				t.Fatalf("refused after %d mappings", n)
			}
			t.Logf("refused after %d mappings: %d regions", n, e.Regions())
			last := uint64(base + 2*(n-1)*emu.PageSize)
			if err := m.munmap(last, last+2*emu.PageSize); err != nil {
				t.Fatal(err)
			}
			if err := m.munmap(last-2*emu.PageSize, last); err != nil {
				t.Fatal(err)
			}
			if e.RegionRoom() <= 0 {
				t.Errorf("no room after unmapping (%d regions)", e.Regions())
			}
		})
	}
}

// TestVMJoins: mappings that continue each other are one VMA, as in
// Linux: an arena grown an mprotect at a time stays two (its accessible
// part and the rest), however many steps; mappings of other protections,
// names or files stay apart.
func TestVMJoins(t *testing.T) {
	e, err := emu.NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := addrSpace{e: e}
	const a = 0x10000000
	const size = 64 << 20
	if err := m.mmap(a, a+size, 0, "arena"); err != nil {
		t.Fatal(err)
	}
	for k := uint64(1); k <= 300; k++ {
		if err := m.protect(a+(k-1)*emu.PageSize, a+k*emu.PageSize, emu.ProtRead|emu.ProtWrite); err != nil {
			t.Fatal(err)
		}
	}
	want := []vma{{start: a, end: a + 300*emu.PageSize, prot: emu.ProtRead | emu.ProtWrite, name: "arena"}, {start: a + 300*emu.PageSize, end: a + size, name: "arena"}}
	if !slices.Equal(m.vmas, want) {
		t.Errorf("VMAs %+v, want %+v", m.vmas, want)
	}
	if m.total != 300*emu.PageSize {
		t.Errorf("total %d, want the %d accessible bytes", m.total, 300*emu.PageSize)
	}
	// Another name next to it stays apart; so does the same name with
	// another protection.
	if err := m.mmap(a+size, a+size+emu.PageSize, 0, "other"); err != nil {
		t.Fatal(err)
	}
	if err := m.protect(a+size-emu.PageSize, a+size, emu.ProtRead); err != nil {
		t.Fatal(err)
	}
	if len(m.vmas) != 4 {
		t.Errorf("VMAs %+v, want 4", m.vmas)
	}
	// Unmapped in steps, it is gone whole.
	for k := uint64(0); k < 300; k++ {
		if err := m.munmap(a+k*emu.PageSize, a+(k+1)*emu.PageSize); err != nil {
			t.Fatal(err)
		}
	}
	if m.vmas[0].start != a+300*emu.PageSize {
		t.Errorf("VMAs after unmapping %+v", m.vmas)
	}
}

// TestLoadBSSOnlySegment: a PT_LOAD with no file data (bss only) is mapped
// zeroed whatever its p_offset says, as Linux maps it (anonymous), even
// past the end of the file. The test turns a program's PT_GNU_STACK
// header into such a segment, above its others.
func TestLoadBSSOnlySegment(t *testing.T) {
	for _, a := range threadArches {
		t.Run(a, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "hostsig-"+a))
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.NewFile(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var top uint64
			stack := -1
			for i, ph := range f.Progs {
				if ph.Type == elf.PT_LOAD {
					top = max(top, ph.Vaddr+ph.Memsz)
				}
				if ph.Type == elf.PT_GNU_STACK {
					stack = i
				}
			}
			if stack < 0 || stack < len(f.Progs)-1 && f.Progs[stack+1].Type == elf.PT_LOAD {
				t.Fatal("no PT_GNU_STACK after the PT_LOAD headers")
			}
			phoff := binary.LittleEndian.Uint64(data[0x20:])
			bss := (top + 0x10000) &^ 0xffff
			binary.LittleEndian.PutUint32(data[phoff+uint64(stack)*56:], uint32(elf.PT_LOAD))
			var buf bytes.Buffer
			binary.Write(&buf, binary.LittleEndian, elf.Prog64{
				Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W), Off: uint64(len(data)) + 0x100000,
				Vaddr: bss, Paddr: bss, Filesz: 0, Memsz: 0x3000, Align: emu.PageSize,
			})
			copy(data[phoff+uint64(stack)*56:], buf.Bytes())
			path := filepath.Join(t.TempDir(), "bss-"+a)
			if err := os.WriteFile(path, data, 0o755); err != nil {
				t.Fatal(err)
			}
			var errOut bytes.Buffer
			p, x := runTest(t, path, Config{Stderr: &errOut})
			if x.Reason != StopExited || x.Status != 2 || errOut.String() != "usage: hostsig read|spin|ignore|pause|deadlock\n" {
				t.Errorf("exit %v (%s), stderr %q; want status 2 and the usage", x.Reason, x, errOut.String())
			}
			got, ok := p.readGuest(bss, 0x3000)
			if !ok || !bytes.Equal(got, make([]byte, 0x3000)) {
				t.Errorf("the bss-only segment at %#x: mapped %v, zero %v", bss, ok, bytes.Equal(got, make([]byte, 0x3000)))
			}
		})
	}
}
