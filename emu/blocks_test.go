//go:build cgo

package emu

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/sframesim/sframesim/arch"
)

// blockProgram is code for the block-counting tests: where it ends and
// the registers compared.
type blockProgram struct {
	a    *arch.Arch
	code []byte
	end  uint64 // the run stops when the PC gets there
	regs []RegID
}

func blockPrograms() []blockProgram {
	x86 := []byte{
		0xb9, 0x32, 0, 0, 0, // 1000: mov ecx, 50
		0xff, 0xc0, // 1005: inc eax
		0x48, 0x01, 0xc3, // 1007: add rbx, rax
		0x51,       // 100a: push rcx
		0x5a,       // 100b: pop rdx
		0xff, 0xc9, // 100c: dec ecx
		0x75, 0xf5, // 100e: jnz 1005
		0xbe, 0x02, 0, 0, 0, // 1010: mov esi, 2
		0xe8, 0x16, 0, 0, 0, // 1015: call 1030
		0xc6, 0x04, 0x25, 0x30, 0x10, 0, 0, 0x90, // 101a: mov byte [0x1030], 0x90
		0xff, 0xce, // 1022: dec esi
		0x75, 0xef, // 1024: jnz 1015
		0xf4, // 1026: hlt
	}
	x86 = append(x86, make([]byte, 0x1030-0x1027)...)
	// 1030: inc rbx; ret, then (the store) nop; inc ebx; ret: a block of
	// the same place and size with another instruction count.
	x86 = append(x86, 0x48, 0xff, 0xc3, 0xc3)
	var a64 []byte
	for _, w := range []uint32{
		0xd2800281, // 1000: movz x1, #20
		0x91000400, // 1004: add x0, x0, #1
		0x8b000042, // 1008: add x2, x2, x0
		0xf1000421, // 100c: subs x1, x1, #1
		0x54ffffa1, // 1010: b.ne 1004
		0xd503201f, // 1014: nop
	} {
		a64 = binary.LittleEndian.AppendUint32(a64, w)
	}
	// Hint NOPs x86asm does not know, as -fcf-protection code has them.
	cet := []byte{
		0xf3, 0x0f, 0x1e, 0xfa, // 1000: endbr64
		0xb9, 0x05, 0, 0, 0, // 1004: mov ecx, 5
		0xf3, 0x48, 0x0f, 0x1e, 0xc8, // 1009: rdsspq rax (a NOP without CET)
		0x0f, 0x1e, 0xfa, // 100e: nop edx
		0x0f, 0x19, 0x44, 0x24, 0x08, // 1011: nop dword [rsp+8]
		0xff, 0xc3, // 1016: inc ebx
		0xff, 0xc9, // 1018: dec ecx
		0x75, 0xed, // 101a: jnz 1009
		0xf4, // 101c: hlt
	}
	return []blockProgram{
		{arch.AMD64, x86, 0x1026, []RegID{X86RAX, X86RBX, X86RCX, X86RDX, X86RSI, X86RSP}},
		{arch.AMD64, cet, 0x101c, []RegID{X86RAX, X86RBX, X86RCX, X86RDX}},
		{arch.ARM64, a64, 0x1014, []RegID{ARM64X(0), ARM64X(1), ARM64X(2)}},
	}
}

// runChunks runs the program in Starts of chunk instructions and says
// where each one ended.
func runChunks(t *testing.T, bp blockProgram, blocks bool, chunk uint64) []string {
	t.Helper()
	e, err := NewEngine(bp.a)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Writable code: the x86 program rewrites its own instructions.
	text, err := e.Map(testText, PageSize, ProtAll, "text")
	if err != nil {
		t.Fatal(err)
	}
	copy(text, bp.code)
	if _, err := e.Map(testStack, PageSize, ProtRead|ProtWrite, "stack"); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReg(e.RegID(bp.a.SP), testSP); err != nil {
		t.Fatal(err)
	}
	if err := e.CountBlocks(blocks); err != nil {
		t.Fatal(err)
	}
	var trace []string
	pc := uint64(testText)
	for i := 0; pc != bp.end; i++ {
		if i > 1000 {
			t.Fatalf("no end: %v", trace)
		}
		if err := e.Start(pc, bp.end, 0, chunk); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if pc, err = e.PC(); err != nil {
			t.Fatal(err)
		}
		vals := make([]uint64, len(bp.regs))
		if err := e.ReadRegs(bp.regs, vals); err != nil {
			t.Fatal(err)
		}
		last, size := e.LastInsn()
		trace = append(trace, fmt.Sprintf("pc %#x insns %d last %#x/%d regs %x", pc, e.Executed(), last, size, vals))
	}
	return trace
}

// TestCountBlocksChunks: counting per block stops where the per-instruction
// hook does, whatever the count given to Start, with the same registers,
// Executed and LastInsn; also when the program rewrites a block with
// another of the same place and size.
func TestCountBlocksChunks(t *testing.T) {
	for _, bp := range blockPrograms() {
		for _, chunk := range []uint64{0, 1, 2, 3, 5, 7, 11, 64, 173} {
			exact := runChunks(t, bp, false, chunk)
			fast := runChunks(t, bp, true, chunk)
			if !slices.Equal(exact, fast) {
				t.Errorf("%s, chunks of %d:\nper instruction %q\nper block       %q", bp.a.Name, chunk, exact, fast)
			}
		}
	}
}

// TestCountBlocksFault: a fault inside a block counted whole is reported
// as InexactError with the count before that block; per instruction it is
// exact.
func TestCountBlocksFault(t *testing.T) {
	code := []byte{
		0xb8, 0x05, 0, 0, 0, // 1000: mov eax, 5
		0x48, 0x8b, 0x14, 0x25, 0x10, 0, 0, 0, // 1005: mov rdx, [0x10]
		0xf4, // 100d: hlt
	}
	for _, blocks := range []bool{false, true} {
		e := newTestEngine(t, arch.AMD64, code)
		if err := e.CountBlocks(blocks); err != nil {
			t.Fatal(err)
		}
		err := e.Start(testText, 0x100d, 0, 0)
		var ie *InexactError
		switch {
		case blocks && (!asInexact(err, &ie) || ie.Insns != 0):
			t.Errorf("per block: %v, want InexactError after 0 instructions", err)
		case !blocks && (err == nil || asInexact(err, &ie) || e.Executed() != 2):
			t.Errorf("per instruction: %v after %d instructions, want a fault after 2", err, e.Executed())
		}
	}
}

// TestCountBlocksENDBR: a block that starts with endbr64 is counted whole
// (a fault in it is inexact), not instruction by instruction as a block
// whose instructions cannot be decoded.
func TestCountBlocksENDBR(t *testing.T) {
	code := []byte{
		0xf3, 0x0f, 0x1e, 0xfa, // 1000: endbr64
		0x48, 0x8b, 0x14, 0x25, 0x10, 0, 0, 0, // 1004: mov rdx, [0x10]
		0xf4, // 100c: hlt
	}
	e := newTestEngine(t, arch.AMD64, code)
	if err := e.CountBlocks(true); err != nil {
		t.Fatal(err)
	}
	var ie *InexactError
	if err := e.Start(testText, 0x100c, 0, 0); !asInexact(err, &ie) || ie.Insns != 0 {
		t.Errorf("%v after %d instructions, want InexactError after 0", err, e.Executed())
	}
}

// TestCountBlocksUncounted: past maxUncounted blocks run per instruction
// because their instructions cannot be counted (here port I/O), the
// engine counts every instruction with its code hook, within the same
// Start and with the same count and limit.
func TestCountBlocksUncounted(t *testing.T) {
	// Two such blocks in turn: one is run per instruction until the
	// other starts.
	code := []byte{
		0xb9, 0xd0, 0x07, 0, 0, // 1000: mov ecx, 2000
		0xec,       // 1005: in al, dx
		0xeb, 0x00, // 1006: jmp 1008
		0xec,       // 1008: in al, dx
		0xff, 0xc9, // 1009: dec ecx
		0x75, 0xf8, // 100b: jnz 1005
		0xf4, // 100d: hlt
	}
	const all = 1 + 5*2000
	for _, count := range []uint64{0, 7000, all} {
		e := newTestEngine(t, arch.AMD64, code)
		if err := e.CountBlocks(true); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(testText, 0x100d, 0, count); err != nil {
			t.Fatal(err)
		}
		want := min(count, all)
		if count == 0 {
			want = all
		}
		if e.Executed() != want || e.CountingBlocks() {
			t.Errorf("count %d: %d instructions, counting per block %v; want %d, per instruction", count, e.Executed(), e.CountingBlocks(), want)
		}
	}
}

func asInexact(err error, ie **InexactError) bool {
	e, ok := err.(*InexactError)
	*ie = e
	return ok
}

// TestDisableCounting: with counting disabled, counting per block calls
// no hook: the guest runs to its end past the count given to Start, and
// Executed does not move; the same engine without it stops at the count.
func TestDisableCounting(t *testing.T) {
	code := []byte{
		0xb9, 0xd0, 0x07, 0, 0, // 1000: mov ecx, 2000
		0xff, 0xc9, // 1005: dec ecx
		0x75, 0xfc, // 1007: jnz 1005
		0xf4, // 1009: hlt
	}
	for _, off := range []bool{false, true} {
		e := newTestEngine(t, arch.AMD64, code)
		if off {
			e.DisableCounting()
		}
		if err := e.CountBlocks(true); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(testText, 0x1009, 0, 100); err != nil {
			t.Fatal(err)
		}
		rcx, err := e.Reg(X86RCX)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case off && (e.Executed() != 0 || rcx != 0):
			t.Errorf("uncounted: %d instructions counted, rcx %d; want 0, the loop run to its end", e.Executed(), rcx)
		case !off && (e.Executed() != 100 || rcx == 0):
			t.Errorf("counted: %d instructions, rcx %d; want a stop at 100", e.Executed(), rcx)
		}
	}
}

// TestRewrittenCode: code in writable and executable memory that the guest
// rewrites in place (a JIT's) runs as rewritten, with the same count per
// block as per instruction: counting per block, each block of such code
// seen anew or rewritten stops the engine so that its translation is
// dropped (hook_block_slow), and that restart must count nothing twice.
// The loop calls a function through a register, then rewrites the
// immediate of its first instruction. (Unicorn drops this function's old
// translation itself; linux's TestRewrittenCode has a JIT's pattern
// where it did not.)
func TestRewrittenCode(t *testing.T) {
	for _, blocks := range []bool{true, false} {
		e := newTestEngine(t, arch.AMD64, []byte{0xf4})
		end := mapJIT(t, e, []byte{0xc7, 0x04, 0x25, 0x01, 0x60, 0, 0, 0x02, 0, 0, 0}) // mov dword [0x6001], 2
		if err := e.CountBlocks(blocks); err != nil {
			t.Fatal(err)
		}
		if err := e.SetReg(X86RCX, 3); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(0x5000, end, 0, 0); err != nil {
			t.Fatal(err)
		}
		edx, err := e.Reg(X86RDX)
		if err != nil {
			t.Fatal(err)
		}
		// 1 + 2 + 2, in 3 rounds of 6 instructions and the function's 2.
		if edx != 5 || e.Executed() != 24 {
			t.Errorf("per block %v: edx %d after %d instructions, want 5 (the rewritten code ran) after 24", blocks, edx, e.Executed())
		}
	}
}

// TestRewrittenCodeChurn: a function rewritten before each of 5000 calls,
// counting per block: every call runs the code as rewritten, each
// instruction counted once (TestCodeBufferFull runs it long enough to
// fill the translation buffer several times).
func TestRewrittenCodeChurn(t *testing.T) {
	const rounds = 5000
	e := newTestEngine(t, arch.AMD64, []byte{0xf4})
	mapChurn(t, e)
	if err := e.CountBlocks(true); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReg(X86RCX, rounds); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(churnStart, churnEnd, 0, 0); err != nil {
		t.Fatal(err)
	}
	want := churnWant(rounds)
	edx, err := e.Reg(X86RDX)
	if err != nil {
		t.Fatal(err)
	}
	if edx != want || e.Executed() != 8*rounds {
		t.Errorf("edx %d after %d instructions, want %d after %d", edx, e.Executed(), want, 8*rounds)
	}
}

// mapJIT maps a loop at 0x5000, in one writable and executable mapping
// with the function it calls at 0x6000 (mov eax, 1; ret): call the
// function, add eax to edx, run rewrite (which changes the function's
// code), rcx times, then hlt, whose address it returns.
func mapJIT(t *testing.T, e *Engine, rewrite []byte) uint64 {
	t.Helper()
	const jit, fn = 0x5000, 0x6000
	loop := []byte{
		0xbe, 0x00, 0x60, 0, 0, // mov esi, 0x6000
		0xff, 0xd6, // call rsi
		0x01, 0xc2, // add edx, eax
	}
	loop = append(loop, rewrite...)
	loop = append(loop, 0xff, 0xc9)                         // dec ecx
	loop = append(loop, 0x75, byte(-(len(loop) + 2)), 0xf4) // jnz 0x5000; hlt
	f := []byte{
		0xb8, 0x01, 0, 0, 0, // 6000: mov eax, 1
		0xc3, // 6005: ret
	}
	mem, err := e.Map(jit, 2*PageSize, ProtRead|ProtWrite|ProtExec, "jit")
	if err != nil {
		t.Fatal(err)
	}
	copy(mem, loop)
	copy(mem[fn-jit:], f)
	return jit + uint64(len(loop)) - 1
}

// The churn program (x86-64): mapJIT's loop rewriting the constant the
// function returns, adding 1 to it; edx sums what it returned
// (churnWant), and each round is 8 instructions.
const churnStart, churnEnd = 0x5000, 0x5015

func mapChurn(t *testing.T, e *Engine) {
	t.Helper()
	mapJIT(t, e, []byte{0x80, 0x04, 0x25, 0x01, 0x60, 0, 0, 0x01}) // add byte [0x6001], 1
}

// churnWant is edx after rounds rounds of the churn program.
func churnWant(rounds int) uint64 {
	var want uint64
	for i := range rounds {
		want += uint64((1 + i) % 256)
	}
	return want
}
