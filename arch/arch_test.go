package arch

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/sframesim/sframesim/sframe"
)

func TestForMachine(t *testing.T) {
	tests := []struct {
		m    elf.Machine
		want *Arch
	}{
		{elf.EM_X86_64, AMD64},
		{elf.EM_AARCH64, ARM64},
		{elf.EM_386, nil},
		{elf.EM_RISCV, nil},
		{elf.EM_NONE, nil},
	}
	for _, tt := range tests {
		if got := ForMachine(tt.m); got != tt.want {
			t.Errorf("ForMachine(%v) = %v, want %v", tt.m, got, tt.want)
		}
	}
}

func TestForABI(t *testing.T) {
	tests := []struct {
		abi  sframe.ABI
		want *Arch
	}{
		{sframe.ABIAMD64LE, AMD64},
		{sframe.ABIAArch64LE, ARM64},
		{sframe.ABIAArch64BE, ARM64},
		{sframe.ABIS390XBE, nil},
		{0, nil},
	}
	for _, tt := range tests {
		if got := ForABI(tt.abi); got != tt.want {
			t.Errorf("ForABI(%v) = %v, want %v", tt.abi, got, tt.want)
		}
	}
}

func TestRegName(t *testing.T) {
	tests := []struct {
		a    *Arch
		r    Reg
		want string
	}{
		// x86-64 psABI DWARF numbers: not the encoding order.
		{AMD64, 0, "rax"}, {AMD64, 1, "rdx"}, {AMD64, 2, "rcx"}, {AMD64, 3, "rbx"},
		{AMD64, AMD64.FP, "rbp"}, {AMD64, AMD64.SP, "rsp"}, {AMD64, 15, "r15"}, {AMD64, AMD64.PC, "rip"},
		{AMD64, 17, "r17"}, // xmm0: not a general register
		{AMD64, sframe.RegCFA, "cfa"},
		{ARM64, 0, "x0"}, {ARM64, ARM64.FP, "x29"}, {ARM64, ARM64.LR, "x30"},
		{ARM64, ARM64.SP, "sp"}, {ARM64, ARM64.PC, "pc"},
		{ARM64, 64, "r64"}, // v0
		{ARM64, sframe.RegCFA, "cfa"},
	}
	for _, tt := range tests {
		if got := tt.a.RegName(tt.r); got != tt.want {
			t.Errorf("%s.RegName(%d) = %q, want %q", tt.a.Name, tt.r, got, tt.want)
		}
	}
}

// TestRegisters: every listed register is named, each once, the PC last.
func TestRegisters(t *testing.T) {
	for _, a := range All {
		seen := map[string]bool{}
		for _, r := range a.Registers {
			n, ok := a.names[r]
			if !ok || seen[n] {
				t.Errorf("%s: register %d named %q (unnamed or twice)", a.Name, r, n)
			}
			seen[n] = true
		}
		if last := a.Registers[len(a.Registers)-1]; last != a.PC {
			t.Errorf("%s: last register %s, want the PC", a.Name, a.RegName(last))
		}
		for _, r := range []Reg{a.SP, a.FP} {
			if !seen[a.RegName(r)] {
				t.Errorf("%s: %s not in Registers", a.Name, a.RegName(r))
			}
		}
	}
}

func TestHasLinkRegister(t *testing.T) {
	if AMD64.HasLinkRegister() || AMD64.LR != NoReg {
		t.Error("x86-64 has a link register")
	}
	if !ARM64.HasLinkRegister() || ARM64.LR != 30 {
		t.Errorf("aarch64: link register %d, want x30", ARM64.LR)
	}
}

func TestStripPAC(t *testing.T) {
	tests := []struct {
		a          *Arch
		addr, want uint64
	}{
		{ARM64, 0x0000_0000_0040_1234, 0x0040_1234},
		{ARM64, 0x0023_0000_0040_1234, 0x0040_1234}, // signed by paciasp
		{ARM64, 0xff7f_ffff_ffff_fffc, 0xffff_ffff_fffc},
		{ARM64, 0x0000_ffff_ffff_fffc, 0xffff_ffff_fffc}, // the highest user address stays
		{AMD64, 0x0023_0000_0040_1234, 0x0023_0000_0040_1234},
		{AMD64, 0xffff_ffff_ff60_0000, 0xffff_ffff_ff60_0000}, // vsyscall page
	}
	for _, tt := range tests {
		if got := tt.a.StripPAC(tt.addr); got != tt.want {
			t.Errorf("%s.StripPAC(%#x) = %#x, want %#x", tt.a.Name, tt.addr, got, tt.want)
		}
	}
}

func TestDisasm(t *testing.T) {
	sym := func(addr uint64) (string, uint64) {
		if addr == 0x1010 {
			return "f", 0x1010
		}
		return "", 0
	}
	a64 := func(w uint32) []byte { return binary.LittleEndian.AppendUint32(nil, w) }
	tests := []struct {
		a        *Arch
		code     []byte
		sym      func(uint64) (string, uint64)
		want     string
		wantSize int
	}{
		{AMD64, []byte{0xe8, 0x0b, 0, 0, 0}, nil, "callq 0x1010", 5},
		{AMD64, []byte{0xe8, 0x0b, 0, 0, 0}, sym, "callq f", 5},
		{AMD64, []byte{0xe8, 0x0c, 0, 0, 0}, sym, "callq 0x1011", 5}, // not a symbol's start
		{AMD64, []byte{0xff, 0xd0}, nil, "call *%rax", 2},
		{AMD64, []byte{0x48, 0x89, 0xe5, 0xc3}, nil, "mov %rsp,%rbp", 3},
		{AMD64, []byte{0x48, 0xc7, 0x04, 0x24, 0x06, 0x10, 0, 0}, nil, "movq $0x1006,(%rsp)", 8},
		{AMD64, []byte{0xc3}, nil, "retq", 1},
		{AMD64, []byte{0x06}, nil, "(bad)", 1}, // push %es: invalid in 64-bit mode
		{AMD64, []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55}, nil, "endbr64", 4},
		{AMD64, []byte{0xf3, 0x0f, 0x1e, 0xfb}, nil, "endbr32", 4},
		{AMD64, []byte{0x0f, 0x1e, 0xfa}, nil, "nop %edx", 3},
		{AMD64, []byte{0xf3, 0x0f, 0x01, 0xea}, nil, "(bad)", 1}, // saveprevssp: x86asm's "rep" of one byte
		{ARM64, a64(0x94000004), nil, "bl .+0x10", 4},
		{ARM64, a64(0xa9bf7bfd), nil, "stp x29, x30, [sp,#-16]!", 4},
		{ARM64, a64(0x910003fd), nil, "mov x29, sp", 4},
		{ARM64, a64(0xd61f0200), nil, "br x16", 4},
		{ARM64, a64(0xd65f03c0), nil, "ret", 4},
		{ARM64, a64(0xd65f0bff), nil, "retaa", 4}, // not decoded by x/arch
		{ARM64, a64(0x00000000), nil, "(bad)", 4},
		{ARM64, []byte{0xc0, 0x03, 0x5f}, nil, "(bad)", 0},
	}
	for _, tt := range tests {
		got, n := tt.a.Disasm(tt.code, 0x1000, tt.sym)
		if got != tt.want || n != tt.wantSize {
			t.Errorf("%s.Disasm(% x) = %q, %d; want %q, %d", tt.a.Name, tt.code, got, n, tt.want, tt.wantSize)
		}
	}
}
