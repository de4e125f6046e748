//go:build cgo

package linux

import (
	"path/filepath"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/shadow"
)

// funcCode returns the code of a function symbol.
func funcCode(t *testing.T, s *Session, name string) (uint64, []byte) {
	t.Helper()
	addr, ok := s.Syms.Addr(name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	size := s.Syms.Size(addr)
	{
	}
	code := make([]byte, size)
	if err := s.P.Engine.ReadMem(addr, code); err != nil {
		t.Fatal(err)
	}
	return addr, code
}

// callsTo returns the return addresses of the direct calls in code (at
// addr) whose target is target, and the frame size the function's prologue
// allocates before its first call, both read off the disassembly.
func callsTo(t *testing.T, a *arch.Arch, addr uint64, code []byte, target uint64) (rets []uint64, frame uint64) {
	t.Helper()
	sawCall := false
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		if a == arch.ARM64 {
			inst, err := arch.DecodeARM64(code[off:])
			w := uint32(code[off]) | uint32(code[off+1])<<8 | uint32(code[off+2])<<16 | uint32(code[off+3])<<24
			if err == nil {
				switch inst.Op {
				case arm64asm.BL:
					if pc+uint64(int64(inst.Args[0].(arm64asm.PCRel))) == target {
						rets = append(rets, pc+4)
					}
					sawCall = true
				case arm64asm.STP, arm64asm.SUB:
					if !sawCall {
						frame += arm64Alloc(inst)
					}
				}
			}
			_ = w
			off += 4
			continue
		}
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			t.Fatalf("decode at %#x: %v", pc, err)
		}
		switch inst.Op {
		case x86asm.CALL:
			if rel, ok := inst.Args[0].(x86asm.Rel); ok && pc+uint64(inst.Len)+uint64(int64(rel)) == target {
				rets = append(rets, pc+uint64(inst.Len))
			}
			sawCall = true
		case x86asm.PUSH:
			if !sawCall {
				frame += 8
			}
		case x86asm.SUB:
			if r, ok := inst.Args[0].(x86asm.Reg); ok && r == x86asm.RSP && !sawCall {
				frame += uint64(int64(inst.Args[1].(x86asm.Imm)))
			}
		}
		off += inst.Len
	}
	if a == arch.AMD64 {
		frame += 8 // the return address the call pushed
	}
	return rets, frame
}

// arm64Alloc returns the stack an AArch64 prologue instruction allocates:
// "stp x29, x30, [sp, #-N]!" and "sub sp, sp, #N".
func arm64Alloc(inst arm64asm.Inst) uint64 {
	switch inst.Op {
	case arm64asm.STP:
		if m, ok := inst.Args[2].(arm64asm.MemImmediate); ok && m.Base == arm64asm.RegSP(arm64asm.SP) && m.Mode == arm64asm.AddrPreIndex {
			var off int64
			_, err := fmtSscan(m.String(), &off)
			if err == nil && off < 0 {
				return uint64(-off)
			}
		}
	case arm64asm.SUB:
		if r, ok := inst.Args[0].(arm64asm.RegSP); ok && r == arm64asm.RegSP(arm64asm.SP) {
			if imm, ok := inst.Args[2].(arm64asm.ImmShift); ok {
				var v int64
				if _, err := fmtSscan(imm.String(), &v); err == nil {
					return uint64(v)
				}
			}
		}
	}
	return 0
}

// TestShadowStackDeepestFib stops at the deepest call of fib(20) in the
// nolibc corpus program (fib(20) → fib(19) → … → fib(1)) and checks every
// fib frame of the shadow stack against values derived from symbols and
// disassembly: the return addresses of the calls to fib in cmain and in fib,
// CFAs one prologue frame size apart, and the return address stored in
// guest memory where the ABI puts it.
func TestShadowStackDeepestFib(t *testing.T) {
	for _, path := range []string{"v3/x86-64/nolibc-O0", "v3/aarch64/nolibc-O0", "v2/x86-64/nolibc-O2", "v1/aarch64/nolibc-O2"} {
		t.Run(path, func(t *testing.T) {
			p, err := Load(filepath.Join(testcorpus.Dir(t), path), Config{Args: []string{"nolibc"}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := NewSession(p)
			fib, fibCode := funcCode(t, s, "fib")
			cmain, cmainCode := funcCode(t, s, "cmain")
			fromCmain, _ := callsTo(t, p.Arch, cmain, cmainCode, fib)
			fromFib, frame := callsTo(t, p.Arch, fib, fibCode, fib)
			if len(fromCmain) == 0 || len(fromFib) == 0 || frame == 0 {
				t.Fatalf("disassembly: calls from cmain %#x, from fib %#x, frame %d", fromCmain, fromFib, frame)
			}
			d0 := -1
			_, stopped, err := s.RunUntil(func(r shadow.Record) bool {
				if r.PC != fib {
					return false
				}
				if d0 < 0 {
					d0 = s.Shadow.Depth()
				}
				return s.Shadow.Depth() == d0+19
			}, 10_000_000)
			if err != nil || !stopped {
				t.Fatalf("RunUntil: stopped %v, %v", stopped, err)
			}
			frames := s.Shadow.Frames()
			fibs := frames[d0-1:]
			if len(fibs) != 20 {
				t.Fatalf("%d fib frames, want 20", len(fibs))
			}
			for k, f := range fibs {
				wantRA := fromFib[0]
				if k == 0 {
					wantRA = fromCmain[0]
				}
				if f.ReturnAddr != wantRA || f.Entry != fib {
					t.Errorf("fib frame %d: RA %s entry %s, want RA %s", k, s.Syms.Format(f.ReturnAddr), s.Syms.Format(f.Entry), s.Syms.Format(wantRA))
				}
				if k > 0 && fibs[k-1].CFA-f.CFA != frame {
					t.Errorf("fib frame %d: CFA %#x is %d below the caller's, the prologue allocates %d", k, f.CFA, int64(fibs[k-1].CFA-f.CFA), frame)
				}
				// Where the ABI keeps the return address: x86-64 at CFA-8
				// (pushed by the call); AArch64 in x30 for the deepest
				// frame, in the frame record of each caller otherwise.
				var stored uint64
				if p.Arch == arch.AMD64 {
					stored, err = p.Engine.Read64(f.CFA - 8)
				} else if k == len(fibs)-1 {
					stored = s.State().RA
				} else {
					// The callee's "stp x29, x30, [sp, #-frame]!" saved
					// x30 at its CFA - frame + 8 (O0 and O2 fib alike).
					stored, err = p.Engine.Read64(f.CFA - frame + 8)
				}
				if err != nil || p.Arch.StripPAC(stored) != f.ReturnAddr {
					t.Errorf("fib frame %d: return address in memory/x30 %#x (%v), shadow says %#x", k, stored, err, f.ReturnAddr)
				}
			}
			if s.State().SP > fibs[19].CFA {
				t.Errorf("SP %#x above the deepest CFA %#x", s.State().SP, fibs[19].CFA)
			}
		})
	}
}

func fmtSscan(s string, v *int64) (int, error) {
	// "[sp,#-32]!" / "#32" → the signed number after '#'.
	i := 0
	for i < len(s) && s[i] != '#' {
		i++
	}
	if i == len(s) {
		return 0, errNoNumber
	}
	j := i + 1
	neg := false
	if j < len(s) && s[j] == '-' {
		neg = true
		j++
	}
	var n int64
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		n = n*10 + int64(s[k]-'0')
		k++
	}
	if k == j {
		return 0, errNoNumber
	}
	if neg {
		n = -n
	}
	*v = n
	return 1, nil
}

var errNoNumber = errorString("no number")

type errorString string

func (e errorString) Error() string { return string(e) }
