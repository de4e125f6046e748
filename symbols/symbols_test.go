package symbols

import (
	"debug/elf"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// open opens a binary of the test corpus (path relative to its
// directory).
func open(t *testing.T, rel string) *elf.File {
	t.Helper()
	f, err := elf.Open(filepath.Join(testcorpus.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// pie is where a position-independent test binary is loaded.
const pie = 0x555555554000

// Addresses and names below are as objdump -d and readelf -sW print them
// for the corpus binaries.

func TestFormatCode(t *testing.T) {
	tests := []struct {
		bin  string
		bias uint64
		pc   uint64
		want string
	}{
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401a0c, want: "main"},
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401a10, want: "main+0x4"},
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x4017eb, want: "xorsh"},
		// Padding after main: the nearest symbol below, as today.
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401bcc, want: "main+0x1c0"},
		// The PLT of IRELATIVE slots is not named (no .dynsym).
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x401018, want: "_init+0x18"},
		{bin: "v3/x86-64/recurse-O0-static", pc: 0x1000, want: "0x1000"},
		// Past the file's last segment: a number (an immediate such as
		// $0xffffffff), not the last symbol plus a huge offset.
		{bin: "v3/x86-64/recurse-O0-static", pc: 0xffffffff, want: "0xffffffff"},
		{bin: "v3/aarch64/recurse-O0-static", pc: 0x7fffffff0000, want: "0x7fffffff0000"},
		// PLT stubs, named after their relocations.
		{bin: "v3/x86-64/recurse-O0-dynamic", pc: 0x1020, want: ".plt"},
		{bin: "v3/x86-64/recurse-O0-dynamic", pc: 0x1030, want: "qsort@plt"},
		{bin: "v3/x86-64/recurse-O0-dynamic", pc: 0x1044, want: "printf@plt+0x4"},
		{bin: "v3/x86-64/recurse-O0-dynamic", pc: 0x1050, want: "__cxa_finalize@plt"}, // .plt.got
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, pc: pie + 0x1162, want: "mulmod"},
		{bin: "v3/x86-64/cold-O2-static", pc: 0x40111a, want: "_ZL5checkl.cold"},
		{bin: "v3/aarch64/recurse-O0-static", pc: 0x4009f4, want: "main+0x4"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.bin)+"/"+tt.want, func(t *testing.T) {
			s := New(open(t, tt.bin), tt.bias)
			if got := s.Format(tt.pc); got != tt.want {
				t.Errorf("Format(%#x) = %q, want %q", tt.pc, got, tt.want)
			}
			// A code address is named the same either way.
			if got := s.FormatAddr(tt.pc); got != tt.want {
				t.Errorf("FormatAddr(%#x) = %q, want %q", tt.pc, got, tt.want)
			}
		})
	}
}

func TestSameFunction(t *testing.T) {
	s := New(open(t, "v3/x86-64/cold-O2-static"), 0)
	check, _ := s.Addr("_ZL5checkl")
	tests := []struct {
		a, b uint64
		want bool
	}{
		{check, check + 4, true},
		{check, 0x40111a, true},           // _ZL5checkl.cold
		{0x40111a, 0x40116e, false},       // _ZL4stepll.cold
		{check, 0x401100, false},          // _ZL6reportPKcl
		{0x401100, 0x40111a - 0x10, true}, // both in _ZL6reportPKcl
	}
	if check == 0 {
		t.Fatal("no _ZL5checkl")
	}
	for _, tt := range tests {
		if got := s.SameFunction(tt.a, tt.b); got != tt.want {
			t.Errorf("SameFunction(%s, %s) = %v, want %v", s.Format(tt.a), s.Format(tt.b), got, tt.want)
		}
	}
}

func TestFormatAddrData(t *testing.T) {
	tests := []struct {
		bin  string
		bias uint64
		addr uint64
		want string
	}{
		// A sized data object containing the address.
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x478004, want: "__rseq_flags"},              // not its local alias dummy_bucket.5
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a4a18, want: "main_arena+0x818"},          // .data
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4aa950, want: "_dl_x86_cpu_features+0x10"}, // .bss
		// No symbol: the section (objdump says "__rseq_flags+0x4", past
		// its 4 bytes).
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x478008, want: "__rseq_flags+0x4"},
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a3f50, want: ".got+0x8"}, // filled by the linker, no relocation
		// GOT: GOT[0] is _GLOBAL_OFFSET_TABLE_ (unsized), GOT[1] has no name,
		// IRELATIVE slots are named by the IFUNC their resolver serves.
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a3fe8, want: "_GLOBAL_OFFSET_TABLE_"},
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a3ff0, want: "_GLOBAL_OFFSET_TABLE_+0x8"},
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a40a8, want: "strchr@got.plt"},
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a40ac, want: "strchr@got.plt+0x4"},
		// Dynamic: JUMP_SLOT and GLOB_DAT slots by their symbols.
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x4000, want: "qsort@got.plt"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x4008, want: "printf@got.plt"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x3fb8, want: "__libc_start_main@got"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x3fd8, want: "__cxa_finalize@got"},
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, addr: pie + 0x4008, want: "printf@got.plt"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x4018, want: "__dso_handle"}, // unsized, at its address
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x4020, want: "completed.0"},  // sized, beside unsized __TMC_END__
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x2040, want: "n6+0x10"},
		{bin: "v3/x86-64/recurse-O0-dynamic", bias: pie, addr: pie + 0x2040, want: "n6+0x10"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x2048, want: "n6+0x18"}, // just past n6's 24 bytes: objdump names it so
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x2004, want: "_IO_stdin_used+0x4"},
		{bin: "v3/x86-64/recurse-O0-dynamic", addr: 0x3da8, want: "ops.1+0x8"}, // .data.rel.ro
		{bin: "v3/aarch64/recurse-O0-dynamic", addr: 0x1ffc8, want: "__cxa_finalize@got"},
		{bin: "v3/aarch64/recurse-O0-dynamic", addr: 0x20008, want: "__cxa_finalize@got.plt"},
		{bin: "v3/aarch64/recurse-O0-dynamic", addr: 0x20028, want: "printf@got.plt"},
		// .tbss overlaps .init_array: TLS sections name nothing.
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a0088, want: "__frame_dummy_init_array_entry+0x8"},
		{bin: "v3/x86-64/recurse-O0-static", addr: 0x4a0080, want: "__frame_dummy_init_array_entry"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.bin)+"/"+tt.want, func(t *testing.T) {
			s := New(open(t, tt.bin), tt.bias)
			if got := s.FormatAddr(tt.addr); got != tt.want {
				t.Errorf("FormatAddr(%#x) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}

// TestAddObject checks that a shared object's data is named with the
// object's file name before its sections.
func TestAddObject(t *testing.T) {
	s := New(open(t, "v3/x86-64/recurse-O0-static"), 0)
	const base = 0x7f0000000000
	s.AddObject("/lib/librecurse.so", open(t, "v3/x86-64/recurse-O0-dynamic"), base, base, base+0x5000)
	tests := []struct {
		addr uint64
		want string
	}{
		{base + 0x4008, "printf@got.plt"},
		{base + 0x2004, "_IO_stdin_used+0x4"},
		{base + 0x1030, "qsort@plt"},
		{0x478008, "__rseq_flags+0x4"}, // the program's own
	}
	for _, tt := range tests {
		if got := s.FormatAddr(tt.addr); got != tt.want {
			t.Errorf("FormatAddr(%#x) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// TestResolver disassembles instructions that refer to data: the operand
// is named by LookupAddr, a branch target by Lookup.
func TestResolver(t *testing.T) {
	tests := []struct {
		bin  string
		pc   uint64
		want string // objdump's comment in parentheses
	}{
		{"v3/x86-64/recurse-O0-static", 0x46e9a1, "movss __rseq_flags+4,%xmm0"}, // objdump: <__rseq_flags+0x4>
		{"v3/x86-64/recurse-O0-static", 0x40c81e, "mov main_arena+2072,%rax"},   // <main_arena+0x818>
		{"v3/x86-64/recurse-O0-static", 0x401018, "jmpq *strcpy@got.plt"},       // <_GLOBAL_OFFSET_TABLE_+0x18>
		{"v3/x86-64/recurse-O0-dynamic", 0x1040, "jmpq *printf@got.plt"},        // <printf@GLIBC_2.2.5>
		{"v3/x86-64/recurse-O0-dynamic", 0x1074, "lea main,%rdi"},               // <main>
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.bin)+"/"+tt.want, func(t *testing.T) {
			f := open(t, tt.bin)
			s := New(f, 0)
			var code []byte
			for _, sec := range f.Sections {
				if sec.Addr <= tt.pc && tt.pc < sec.Addr+sec.Size {
					data, err := sec.Data()
					if err != nil {
						t.Fatal(err)
					}
					code = data[tt.pc-sec.Addr:]
				}
			}
			inst, err := x86asm.Decode(code, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := x86asm.GNUSyntax(inst, tt.pc, s.Resolver()); got != tt.want {
				t.Errorf("at %#x: %q, want %q", tt.pc, got, tt.want)
			}
		})
	}
}

// TestAddrDemangled: a C++ function is found by its symbol, by its name as
// Demangle prints it, and by that name without the parameters (what a
// user types at the TUI's breakpoint prompt).
func TestAddrDemangled(t *testing.T) {
	s := New(open(t, "v3/x86-64/except-O2-static"), 0)
	for _, name := range []string{"_ZL7throweril", "thrower(int, long)", "thrower"} {
		if a, ok := s.Addr(name); !ok || a != 0x401eb0 {
			t.Errorf("Addr(%q) = %#x, %v; want 0x401eb0", name, a, ok)
		}
	}
	if a, ok := s.Addr("thrower(int)"); ok {
		t.Errorf("Addr(thrower(int)) = %#x: no such overload", a)
	}
}

// TestBounds: between two consecutive Bounds, Lookup names the same symbol
// (or none), checked at every address of a static program's text and of a
// shared object added to it, and at addresses outside both.
func TestBounds(t *testing.T) {
	s := New(open(t, "v3/x86-64/recurse-O0-static"), 0)
	const base = 0x7f0000000000
	s.AddObject("/lib/librecurse.so", open(t, "v3/x86-64/recurse-O0-dynamic"), base, base, base+0x5000)
	b := s.Bounds()
	if !slices.IsSorted(b) || len(slices.Compact(slices.Clone(b))) != len(b) {
		t.Fatal("bounds not sorted and distinct")
	}
	name := func(pc uint64) string { n, _, _ := s.Lookup(pc); return n }
	checked := 0
	for i := 0; i+1 < len(b); i++ {
		lo, hi := b[i], b[i+1]
		if hi-lo > 1<<20 {
			hi = lo + 1<<20 // the gap between the program and the object
		}
		want := name(lo)
		for pc := lo; pc < hi; pc++ {
			if got := name(pc); got != want {
				t.Fatalf("Lookup(%#x) = %q but Lookup(%#x) = %q with no bound between them", pc, got, lo, want)
			}
			checked++
		}
	}
	if checked < 100000 {
		t.Errorf("only %d addresses checked", checked)
	}
}
