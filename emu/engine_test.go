//go:build cgo

package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sframesim/sframesim/arch"
)

func TestVersion(t *testing.T) {
	if v := Version(); v[:4] != "2.1." {
		t.Fatalf("libunicorn %s, want 2.1.x (run ./setup.sh)", v)
	}
}

// TestAMD64Loop runs a small loop with the record observer and checks the
// instruction count, the records and direct memory access.
func TestAMD64Loop(t *testing.T) {
	e, err := NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// mov ecx, 10; l: push rcx; pop rax; dec ecx; jnz l; hlt
	code := []byte{0xb9, 0x0a, 0, 0, 0, 0x51, 0x58, 0xff, 0xc9, 0x75, 0xfa, 0xf4}
	text, err := e.Map(0x400000, PageSize, ProtRead|ProtExec, "text")
	if err != nil {
		t.Fatal(err)
	}
	copy(text, code)
	if _, err := e.Map(0x7000_0000, 4*PageSize, ProtRead|ProtWrite, "stack"); err != nil {
		t.Fatal(err)
	}
	if err := e.SetReg(X86RSP, 0x7000_4000); err != nil {
		t.Fatal(err)
	}
	var recs []Record
	e.ObserveRecords(4, func(r []Record) { recs = append(recs, r...) })
	err = e.Start(0x400000, 0x400000+uint64(len(code))-1, 0, 0)
	e.FlushRecords()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got, want := e.Executed(), uint64(1+10*4); got != want {
		t.Errorf("Executed = %d, want %d", got, want)
	}
	if len(recs) != 41 || recs[0].PC != 0x400000 || recs[1].PC != 0x400005 || recs[2].SP != 0x7000_4000-8 {
		t.Errorf("records: %d, first %+v %+v %+v", len(recs), recs[0], recs[1], recs[2])
	}
	// The last push left rcx=1 on the stack, read straight from host memory.
	if v, err := e.Read64(0x7000_4000 - 8); err != nil || v != 1 {
		t.Errorf("Read64 = %d, %v", v, err)
	}
}

// TestARM64PAuth checks that the "max" CPU model really signs: paciasp
// changes x30, autiasp restores it.
func TestARM64PAuth(t *testing.T) {
	e, err := NewEngine(arch.ARM64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	code := []uint32{0xd503233f /* paciasp */, 0xaa1e03e1 /* mov x1, x30 */, 0xd50323bf /* autiasp */, 0xaa1e03e2 /* mov x2, x30 */}
	text, err := e.Map(0x10000, PageSize, ProtRead|ProtExec, "text")
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range code {
		text[4*i], text[4*i+1], text[4*i+2], text[4*i+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
	}
	if _, err := e.Map(0x20000, PageSize, ProtRead|ProtWrite, "stack"); err != nil {
		t.Fatal(err)
	}
	const lr = 0x0000_0000_0040_1234
	e.SetReg(ARM64X(30), lr)
	e.SetReg(ARM64SP, 0x21000)
	if err := e.Start(0x10000, 0x10000+uint64(4*len(code)), time.Second, 0); err != nil {
		t.Fatalf("Start: %v", err)
	}
	x1, _ := e.Reg(ARM64X(1))
	x2, _ := e.Reg(ARM64X(2))
	t.Logf("signed %#x, authenticated %#x", x1, x2)
	if x1 == lr {
		t.Errorf("paciasp did not sign x30 (%#x): the CPU model lacks FEAT_PAuth", x1)
	}
	if x2 != lr {
		t.Errorf("autiasp gave %#x, want %#x", x2, lr)
	}
}

func TestFaultIsTyped(t *testing.T) {
	e, err := NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	text, _ := e.Map(0x400000, PageSize, ProtRead|ProtExec, "text")
	copy(text, []byte{0x48, 0x8b, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00}) // mov rax, [0x1000]
	err = e.Start(0x400000, 0x400008, 0, 0)
	if !errors.Is(err, ErrReadUnmapped) {
		t.Fatalf("Start = %v, want ErrReadUnmapped", err)
	}
	f, ok := e.LastFault()
	if !ok || f.Kind != "read" || f.Addr != 0x1000 || f.PC != 0x400000 {
		t.Errorf("fault = %+v, %v", f, ok)
	}
}

// TestMapPieces: Map hands Unicorn a mapping larger than mapChunk in
// pieces; the guest still sees one mapping — a load and a store across a
// piece's end, Protect over parts of several pieces (a store there
// faults, a load does not) — and the host reads what the guest stored.
func TestMapPieces(t *testing.T) {
	e := newIncEngine(t)
	const base = 0x4010_0000 // not a multiple of mapChunk
	size := uint64(3*mapChunk + 5*PageSize)
	mem, err := e.Map(base, size, ProtRead|ProtWrite, "data")
	if err != nil {
		t.Fatal(err)
	}
	end := uint64(base + mapChunk - base%mapChunk) // the first piece's end
	at := end - 4                                  // 8-byte accesses across it
	binary.LittleEndian.PutUint64(mem[at-base:], 41)
	if err := runInc(e, at); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint64(mem[at+8-base:]); v != 42 {
		t.Fatalf("stored %d across the piece's end, want 42", v)
	}
	// Read-only from inside the first piece to inside the third: the
	// same store now faults; the load still works.
	if err := e.Protect(end-PageSize, 2*mapChunk, ProtRead); err != nil {
		t.Fatal(err)
	}
	wantWriteFault(t, e, runInc(e, at), at+8)
	if v, err := e.Read64(at); err != nil || v != 41 {
		t.Errorf("Read64 = %d, %v", v, err)
	}
}

// TestProtectCutsBigRegion: Unicorn gets a mapping in regions of up to
// mapChunk bytes; a protection change of part of one first makes the
// protChunk bytes around the change a region of their own (which Unicorn
// then splits at the page), while a change of a whole region leaves it
// whole. The guest sees the protections and the host shares the memory
// throughout.
func TestProtectCutsBigRegion(t *testing.T) {
	e := newIncEngine(t)
	const base = 0x4000_0000 // a multiple of mapChunk
	size := uint64(mapChunk + 3*protChunk)
	mem, err := e.Map(base, size, ProtRead|ProtWrite, "data")
	if err != nil {
		t.Fatal(err)
	}
	within := func() []protRange {
		var out []protRange
		for _, r := range e.unicornRegions() {
			if r.lo >= base && r.hi <= base+size {
				out = append(out, r)
			}
		}
		return out
	}
	const rw, ro = ProtRead | ProtWrite, ProtRead
	if got, want := within(), []protRange{{base, base + mapChunk, rw}, {base + mapChunk, base + size, rw}}; !slices.Equal(got, want) {
		t.Fatalf("Unicorn's regions %v, want %v", got, want)
	}
	m0 := uint64(base + 5*protChunk)
	page := m0 + 3*PageSize
	if err := e.Protect(page, PageSize, ro); err != nil {
		t.Fatal(err)
	}
	if err := e.Protect(base+mapChunk, 3*protChunk, ro); err != nil {
		t.Fatal(err)
	}
	want := []protRange{
		{base, m0, rw},
		{m0, page, rw},
		{page, page + PageSize, ro},
		{page + PageSize, m0 + protChunk, rw},
		{m0 + protChunk, base + mapChunk, rw},
		{base + mapChunk, base + size, ro},
	}
	if got := within(); !slices.Equal(got, want) {
		t.Fatalf("Unicorn's regions %v, want %v", got, want)
	}
	if want := []span{{base, m0}, {m0 + protChunk, base + mapChunk}, {base + mapChunk, base + size}}; !slices.Equal(e.big, want) {
		t.Errorf("big regions %x, want %x", e.big, want)
	}
	// A load from the read-only page and a store right after it work; a
	// store into it faults.
	binary.LittleEndian.PutUint64(mem[page+PageSize-8-base:], 41)
	if err := runInc(e, page+PageSize-8); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint64(mem[page+PageSize-base:]); v != 42 {
		t.Fatalf("stored %d after the read-only page, want 42", v)
	}
	wantWriteFault(t, e, runInc(e, page-8), page)
}

func (r protRange) String() string { return fmt.Sprintf("%#x-%#x %s", r.lo, r.hi, r.prot) }

// TestProtectCoalesces: an arena grown page by page (an mprotect each
// time, as glibc's malloc grows a thread's heap) stays a few regions in
// Unicorn, not a region per step; the guest still sees each page's
// protection.
func TestProtectCoalesces(t *testing.T) {
	e := newIncEngine(t)
	const base = 0x4000_0000
	const size = 4 * mapChunk
	if _, err := e.Map(base, size, 0, "arena"); err != nil {
		t.Fatal(err)
	}
	const steps = 700 // across a protChunk boundary
	for k := uint64(1); k <= steps; k++ {
		if err := e.Protect(base+(k-1)*PageSize, PageSize, ProtRead|ProtWrite); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	for _, r := range e.unicornRegions() {
		if r.lo >= base && r.hi <= base+size {
			n++
		}
	}
	// Joined once Unicorn has more than joinAbove regions.
	if n > joinAbove {
		t.Errorf("%d regions in Unicorn after %d steps: %v", n, steps, e.unicornRegions())
	}
	top := uint64(base + steps*PageSize)
	if err := runInc(e, top-16); err != nil {
		t.Fatalf("a store below the top: %v", err)
	}
	wantWriteFault(t, e, runInc(e, top-8), top)
}

// newIncEngine returns an x86-64 engine whose code at testText loads the
// word at RDI, adds one and stores it at RDI+8 (runInc).
func newIncEngine(t *testing.T) *Engine {
	code := make([]byte, 0x20)
	copy(code[0x00:], []byte{0x48, 0x8b, 0x07})       // 1000: mov (%rdi),%rax
	copy(code[0x03:], []byte{0x48, 0xff, 0xc0})       // 1003: inc %rax
	copy(code[0x06:], []byte{0x48, 0x89, 0x47, 0x08}) // 1006: mov %rax,8(%rdi)
	copy(code[0x0a:], []byte{0xf4})                   // 100a: hlt
	return newTestEngine(t, arch.AMD64, code)
}

// runInc runs newIncEngine's code with RDI at.
func runInc(e *Engine, at uint64) error {
	if err := e.SetReg(X86RDI, at); err != nil {
		return err
	}
	return e.Start(testText, 0x100a, 0, 0)
}

// wantWriteFault checks that err, runInc's, is the fault of a store at
// addr.
func wantWriteFault(t *testing.T, e *Engine, err error, addr uint64) {
	t.Helper()
	if err == nil {
		t.Fatalf("a store at %#x did not fault", addr)
	}
	if f, ok := e.LastFault(); !ok || f.Kind != "write" || f.Addr != addr {
		t.Errorf("fault %+v, %v; want a write at %#x", f, ok, addr)
	}
}
