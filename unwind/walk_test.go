package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// memory is a sparse simulated memory of 8-byte words.
type memory map[uint64]uint64

func (m memory) ReadUint64(addr uint64) (uint64, error) {
	v, ok := m[addr]
	if !ok {
		return 0, fmt.Errorf("unmapped %#x", addr)
	}
	return v, nil
}

func fre(start uint32, base sframe.BaseReg, mangled bool, words ...int32) sframe.FRE {
	return sframe.FRE{Start: start, Info: sframe.FREInfo(base, mangled), Words: words}
}

// section encodes and decodes a V3 section.
func section(t *testing.T, abi sframe.ABI, fixedRA int8, fdes ...sframe.FDE) *sframe.Section {
	t.Helper()
	s := &sframe.Section{
		Header: sframe.Header{Version: sframe.Version3, Flags: sframe.FlagFDESorted | sframe.FlagFDEFuncStartPCRel, ABI: abi, CFAFixedRAOffset: fixedRA},
		Order:  binary.LittleEndian, Addr: 0x10000, FDEs: fdes,
	}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := sframe.Decode(data, 0x10000)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var inc1 = sframe.FDEInfo(sframe.FREAddr1, sframe.PCInc, false, false)

// amd64Section: f at 0x1100 (push rbp; mov rbp,rsp; ...; leave at +0x19),
// g at 0x1200 (leaf), _start at 0x1300 (outermost), a FLEX DRAP function
// at 0x1400.
func amd64Section(t *testing.T) *sframe.Section {
	return section(t, sframe.ABIAMD64LE, -8,
		sframe.FDE{Start: 0x1100, Size: 0x1a, Info: inc1, FREs: []sframe.FRE{
			fre(0, sframe.BaseSP, false, 8), fre(1, sframe.BaseSP, false, 16, -16),
			fre(4, sframe.BaseFP, false, 16, -16), fre(0x19, sframe.BaseSP, false, 8, -16)}},
		sframe.FDE{Start: 0x1200, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 8)}},
		sframe.FDE{Start: 0x1300, Size: 0x20, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false)}},
		sframe.FDE{Start: 0x1400, Size: 0x20, Info: inc1, Info2: uint8(sframe.FDETypeFlex), FREs: []sframe.FRE{
			{Start: 0, Words: []int32{sframe.FlexCtrl(7, false), 8}},
			{Start: 4, Words: []int32{sframe.FlexCtrl(10, false), 0}},
		}},
	)
}

func TestWalkAMD64(t *testing.T) {
	u := New(arch.AMD64, amd64Section(t))
	// _start (0x1310) called f, which called g; we are in g.
	mem := memory{
		0x7fe8: 0x1110, // g's RA (pushed by call in f at 0x110b)
		0x7ff0: 0x8000, // f's saved rbp
		0x7ff8: 0x1310, // f's RA into _start
	}
	it := u.Walk(Registers{PC: 0x1204, SP: 0x7fe8, FP: 0x7ff0}, mem)
	type want struct {
		pc, cfa, ra, callerFP uint64
		outermost             bool
	}
	wants := []want{
		{pc: 0x1204, cfa: 0x7ff0, ra: 0x1110, callerFP: 0x7ff0},
		{pc: 0x1110, cfa: 0x8000, ra: 0x1310, callerFP: 0x8000},
		{pc: 0x1310, outermost: true},
	}
	n := 0
	for it.Next() {
		f := it.Frame()
		if n >= len(wants) {
			t.Fatalf("extra frame %+v", f)
		}
		w := wants[n]
		if f.PC != w.pc || f.Outermost != w.outermost || f.Err != nil ||
			!w.outermost && (f.CFA != w.cfa || f.RA != w.ra || f.CallerFP != w.callerFP) {
			t.Errorf("frame %d = pc %#x cfa %#x ra %#x fp %#x outermost %v err %v; want %+v", n, f.PC, f.CFA, f.RA, f.CallerFP, f.Outermost, f.Err, w)
		}
		n++
	}
	if n != len(wants) || it.Err() != nil {
		t.Errorf("%d frames, err %v", n, it.Err())
	}
}

func TestWalkEnds(t *testing.T) {
	u := New(arch.AMD64, amd64Section(t))
	tests := []struct {
		name    string
		regs    Registers
		mem     memory
		lastErr error // of the last frame
		itErr   bool  // Err() non-nil
		frames  int
	}{
		{"no FDE at the top", Registers{PC: 0x5000, SP: 0x7000}, memory{}, ErrNoFDE, false, 1},
		{"caller without FDE", Registers{PC: 0x1200, SP: 0x7ff8}, memory{0x7ff8: 0x5000}, ErrNoFDE, false, 2},
		{"RA unreadable", Registers{PC: 0x1200, SP: 0x7ff8}, memory{}, nil, true, 1},
		{"FLEX register base, topmost", Registers{PC: 0x1404, SP: 0x6000, Get: func(r sframe.Reg) (uint64, bool) { return 0x7000, r == 10 }},
			memory{0x6ff8: 0x5000}, ErrNoFDE, false, 2},
		{"FLEX register base, no value", Registers{PC: 0x1404, SP: 0x6000}, memory{}, ErrRegister, true, 1},
		{"CFA below SP", Registers{PC: 0x1108, SP: 0x7000, FP: 0x6000}, memory{}, nil, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := u.Walk(tt.regs, tt.mem)
			var last Frame
			n := 0
			for it.Next() {
				last = it.Frame()
				n++
			}
			if n != tt.frames || (it.Err() != nil) != tt.itErr {
				t.Fatalf("%d frames, Err %v; want %d, error %v", n, it.Err(), tt.frames, tt.itErr)
			}
			if tt.lastErr != nil && !errors.Is(last.Err, tt.lastErr) {
				t.Errorf("last frame error %v, want %v", last.Err, tt.lastErr)
			}
			var se *StepError
			if tt.itErr && !errors.As(it.Err(), &se) {
				t.Errorf("Err %v is not a StepError", it.Err())
			}
		})
	}
}

// TestWalkARM64: RA in the link register is fine in the topmost frame and
// an error below it; a mangled RA is stripped.
func TestWalkARM64(t *testing.T) {
	u := New(arch.ARM64, section(t, sframe.ABIAArch64LE, 0,
		// f: paciasp; stp x29,x30,[sp,#-16]!; mov x29,sp; ...
		sframe.FDE{Start: 0x2000, Size: 0x40, Info: inc1, FREs: []sframe.FRE{
			fre(0, sframe.BaseSP, false, 0), fre(4, sframe.BaseSP, true, 0),
			fre(8, sframe.BaseSP, true, 16, -8, -16), fre(12, sframe.BaseFP, true, 16, -8, -16)}},
		// leaf: RA stays in x30
		sframe.FDE{Start: 0x2100, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 0)}},
		sframe.FDE{Start: 0x2200, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false)}},
	))
	const signed = 0x00a5_0000_0000_2204
	mem := memory{0x7ff0: 0x9000, 0x7ff8: signed}
	// In the leaf, called from f (x30 = 0x2020), f called from _start.
	it := u.Walk(Registers{PC: 0x2104, SP: 0x7ff0, FP: 0x7ff0, LR: 0x2020}, mem)
	var got []uint64
	for it.Next() {
		f := it.Frame()
		got = append(got, f.PC)
		if f.PC == 0x2020 && (f.RawRA != signed || f.RA != 0x2204) {
			t.Errorf("f: raw RA %#x, RA %#x; want %#x stripped to 0x2204", f.RawRA, f.RA, uint64(signed))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint([]uint64{0x2104, 0x2020, 0x2204}) || it.Err() != nil {
		t.Errorf("PCs %#x, err %v", got, it.Err())
	}
	// The same leaf row below the topmost frame: the RA is lost.
	mem2 := memory{0x7ff8: 0x2104}
	it = u.Walk(Registers{PC: 0x2004, SP: 0x7ff8, LR: 0x2104}, mem2) // f before stp: RA in x30 → leaf
	for it.Next() {
	}
	if !errors.Is(it.Err(), ErrRAInRegister) {
		t.Errorf("Err = %v, want ErrRAInRegister", it.Err())
	}
}

// TestCacheAdd: a cached unwinder gives the rows an uncached one does, and
// a section added later (a shared library mapped after a lookup missed)
// is found: Add forgets cached misses and changes Generation.
func TestCacheAdd(t *testing.T) {
	lib := section(t, sframe.ABIAMD64LE, -8,
		sframe.FDE{Start: 0x5000, Size: 0x10, Info: inc1, FREs: []sframe.FRE{fre(0, sframe.BaseSP, false, 8), fre(4, sframe.BaseSP, false, 16)}})
	plain := New(arch.AMD64, amd64Section(t))
	cached := New(arch.AMD64, amd64Section(t)).WithCache()
	for _, pc := range []uint64{0x1100, 0x1101, 0x1105, 0x1119, 0x1200, 0x1404, 0x5004, 0x1100, 0x5004} {
		_, want, werr := plain.Lookup(pc)
		_, got, gerr := cached.Lookup(pc)
		if want != got || !errors.Is(gerr, werr) && gerr != werr {
			t.Fatalf("%#x: cached %+v %v, uncached %+v %v", pc, got, gerr, want, werr)
		}
	}
	if _, _, err := cached.Lookup(0x5004); err != ErrNoFDE {
		t.Fatalf("before Add: %v", err)
	}
	gen := cached.Generation()
	cached.Add(lib)
	if cached.Generation() == gen {
		t.Error("Add did not change Generation")
	}
	sec, row, err := cached.Lookup(0x5004)
	if err != nil || sec != lib || row.FRE != 1 {
		t.Fatalf("after Add: %v %+v %v", sec, row, err)
	}
}

// fpChain is a stack of n frames of f (0x1100, in its frame-pointer row at
// 0x1110) called from _start: each frame 32 bytes, FP at its bottom, the
// saved FP and the RA above it.
func fpChain(n int) (Registers, memory) {
	mem := memory{}
	fp := uint64(0x100000)
	regs := Registers{PC: 0x1110, SP: fp - 16, FP: fp}
	for i := 0; i < n; i++ {
		mem[fp], mem[fp+8] = fp+32, 0x1110
		if i == n-1 {
			mem[fp+8] = 0x1310 // into _start
		}
		fp += 32
	}
	return regs, mem
}

// TestWalkDeep: a walk goes as deep as the stack does, unless a frame
// limit cuts it, which is not an unwinding failure; a stack whose CFA does
// not climb (a frame pointer pointing to itself) ends with an error.
func TestWalkDeep(t *testing.T) {
	u := New(arch.AMD64, amd64Section(t))
	regs, mem := fpChain(5000)
	count := func(u *Unwinder, mem memory) (int, Frame, error) {
		it := u.Walk(regs, mem)
		n := 0
		for it.Next() {
			n++
		}
		return n, it.Frame(), it.Err()
	}
	if n, last, err := count(u, mem); n != 5001 || !last.Outermost || err != nil {
		t.Errorf("5000 frames of f: %d frames, last %+v, err %v", n, last, err)
	}
	gen := u.Generation()
	u.SetMaxFrames(100)
	if u.Generation() == gen || u.MaxFrames() != 100 || u.WithCache().MaxFrames() != 100 {
		t.Errorf("SetMaxFrames: generation %d → %d, limit %d", gen, u.Generation(), u.MaxFrames())
	}
	if n, last, err := count(u, mem); n != 100 || last.Err != nil || !errors.Is(err, ErrMaxFrames) || NoData(err) {
		t.Errorf("limit 100: %d frames, last %+v, err %v", n, last, err)
	}
	// A stack that ends right at the limit is not cut.
	u.SetMaxFrames(5001)
	if n, last, err := count(u, mem); n != 5001 || !last.Outermost || err != nil {
		t.Errorf("limit 5001: %d frames, last %+v, err %v", n, last, err)
	}
	u.SetMaxFrames(0)
	// Frame 3000's saved FP points to itself: the caller's CFA would be
	// the same as its own.
	fp := uint64(0x100000 + 3000*32)
	mem[fp] = fp
	n, last, err := count(u, mem)
	var se *StepError
	if n != 3002 || !errors.As(err, &se) || se.What != "CFA" || last.Err != err {
		t.Errorf("looping stack: %d frames, last %+v, err %v", n, last, err)
	}
}

// TestResetRegisters: Reset keeps every field of the Registers (it copies
// them one by one, so a field added to Registers must be added there too).
func TestResetRegisters(t *testing.T) {
	var regs Registers
	v := reflect.ValueOf(&regs).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Uint64 {
			f.SetUint(uint64(0x1000 + i))
		} else {
			f.Set(reflect.ValueOf(func(sframe.Reg) (uint64, bool) { return 0, false }))
		}
	}
	var it Iterator
	it.Reset(nil, regs, nil)
	got := reflect.ValueOf(it.regs)
	for i := range v.NumField() {
		a, b := v.Field(i), got.Field(i)
		if a.Kind() == reflect.Func && a.Pointer() != b.Pointer() || a.Kind() != reflect.Func && !a.Equal(b) {
			t.Errorf("Reset left Registers.%s %v, want %v", v.Type().Field(i).Name, b, a)
		}
	}
}
