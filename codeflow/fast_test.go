package codeflow

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/internal/testcorpus"
)

// sameDecode compares what decodeAMD64 uses of two decodings.
func sameDecode(a, b x86asm.Inst) bool {
	return a.Op == b.Op && a.Args == b.Args && a.Len == b.Len && a.DataSize == b.DataSize &&
		a.AddrSize == b.AddrSize && a.MemBytes == b.MemBytes
}

func fmtInst(i x86asm.Inst) string {
	return fmt.Sprintf("%v %#v len %d data %d addr %d mem %d", i.Op, i.Args, i.Len, i.DataSize, i.AddrSize, i.MemBytes)
}

// TestFastDecodeAMD64: the fast decoder agrees with x86asm.Decode on every
// instruction of the executable sections of the corpus's x86-64 binaries
// (decoded linearly) and on random bytes, and handles most of them.
func TestFastDecodeAMD64(t *testing.T) {
	if testing.Short() {
		t.Skip("whole corpus")
	}
	dir := testcorpus.Dir(t)
	total, fast, bad := 0, 0, 0
	seen := map[string]bool{}
	check := func(where string, code []byte) {
		slow, err := x86asm.Decode(code, 64)
		f, ok := fastDecodeAMD64(code)
		if !ok {
			return
		}
		fast++
		if err != nil || !sameDecode(slow, f) {
			bad++
			if bad <= 20 {
				t.Errorf("%s % x:\n fast %s\n slow %s (%v)", where, code[:min(len(code), 12)], fmtInst(f), fmtInst(slow), err)
			}
		}
	}
	for _, e := range testcorpus.Entries(t) {
		if e.Arch != "x86-64" {
			continue
		}
		f, err := elf.Open(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS {
				continue
			}
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < len(data); {
				total++
				n := 1
				if inst, err := decodeX86(data[off:]); err == nil {
					n = inst.Len
				}
				// Each distinct instruction once (static binaries share
				// their libc).
				if k := string(data[off : off+n]); !seen[k] {
					seen[k] = true
					check(fmt.Sprintf("%s %#x", e.Path, s.Addr+uint64(off)), data[off:])
				}
				off += n
			}
		}
		f.Close()
	}
	corpusFast := fast
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 16)
	for n := 0; n < 100000; n++ {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		// Bias towards the handled opcodes.
		if n%2 == 0 {
			buf[0] = []byte{0x48, 0x4c, 0x41, 0x49, 0x89, 0x8b, 0x8d, 0x83, 0x81, 0x0f, 0x50, 0xe8, 0x74, 0xb8, 0x85, 0x01}[n/2%16]
		}
		check("random", buf[:1+rng.IntN(len(buf))])
	}
	t.Logf("%d instructions, %d distinct, %d of these decoded by the fast path; %d random ones; %d differ", total, len(seen), corpusFast, fast-corpusFast, bad)
	if len(seen) == 0 || corpusFast < len(seen)/4 {
		t.Errorf("the fast path decodes %d of %d distinct instructions", corpusFast, len(seen))
	}
}

// TestFastDecodeARM64: the instructions writesRdOnly takes give the same
// ops and flow as through x/arch, on every distinct word of the corpus's
// AArch64 code and on random words.
func TestFastDecodeARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("whole corpus")
	}
	dir := testcorpus.Dir(t)
	decodeBoth := func(w uint32) (fast, slow string, taken bool) {
		code := binary.LittleEndian.AppendUint32(nil, w)
		run := func() string {
			an := &analysis{m: arm64Machine, fn: &Func{Start: 0x1000, Code: code}}
			an.decode()
			return fmt.Sprintf("%+v %+v", an.insns, an.ops)
		}
		defer func() { a64Fast = true }()
		a64Fast = true
		fast = run()
		a64Fast = false
		slow = run()
		return fast, slow, writesRdOnly(w)
	}
	seen := map[uint32]bool{}
	taken, bad := 0, 0
	check := func(w uint32) {
		if seen[w] {
			return
		}
		seen[w] = true
		f, s, ok := decodeBoth(w)
		if ok {
			taken++
		}
		if f != s {
			bad++
			if bad <= 20 {
				t.Errorf("%#08x: fast %s, x/arch %s", w, f, s)
			}
		}
	}
	for _, e := range testcorpus.Entries(t) {
		if e.Arch != "aarch64" {
			continue
		}
		f, err := elf.Open(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS {
				continue
			}
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+4 <= len(data); off += 4 {
				check(binary.LittleEndian.Uint32(data[off:]))
			}
		}
		f.Close()
	}
	corpusTaken := taken
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 200000; n++ {
		check(rng.Uint32())
	}
	t.Logf("%d distinct words, %d of the corpus's taken by the fast path, %d random ones; %d differ", len(seen), corpusTaken, taken-corpusTaken, bad)
	if corpusTaken == 0 {
		t.Error("the fast path takes no instruction")
	}
}

// TestFastDecodeAMD64Encodings: the fast decoder agrees with x86asm.Decode
// on every one- and two-byte opcode without and with each REX prefix, with
// every ModRM byte, and, where the ModRM byte takes one, every SIB byte
// (without REX and with REX.WRXB; a spread of them with the other REX
// prefixes), followed by displacement and immediate bytes (and on every truncation of
// those for the one-byte opcodes). It is the one x86-64 decoder of
// codeflow and check (check's instruction boundaries come from it).
func TestFastDecodeAMD64Encodings(t *testing.T) {
	tail := []byte{0x11, 0x22, 0x33, 0x84, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc}
	tried, fast, bad := 0, 0, 0
	check := func(code []byte) {
		tried++
		f, ok := fastDecodeAMD64(code)
		if !ok {
			return
		}
		fast++
		slow, err := x86asm.Decode(code, 64)
		if err != nil || !sameDecode(slow, f) {
			bad++
			if bad <= 20 {
				t.Errorf("% x:\n fast %s\n slow %s (%v)", code, fmtInst(f), fmtInst(slow), err)
			}
		}
	}
	var code []byte
	for rex := 0x3f; rex <= 0x4f; rex++ { // 0x3f: no REX prefix
		for _, esc := range []bool{false, true} {
			for op := 0; op < 256; op++ {
				for modrm := 0; modrm < 256; modrm++ {
					sibs, step := 1, 1
					if modrm>>6 != 3 && modrm&7 == 4 {
						sibs = 256
						if rex != 0x3f && rex != 0x4f {
							step = 29
						}
					}
					for sib := 0; sib < sibs; sib += step {
						code = code[:0]
						if rex >= 0x40 {
							code = append(code, byte(rex))
						}
						if esc {
							code = append(code, 0x0f)
						}
						code = append(code, byte(op), byte(modrm))
						if sibs > 1 {
							code = append(code, byte(sib))
						}
						code = append(code, tail...)
						check(code)
						if !esc && sib == 0 && modrm%17 == 0 {
							for n := 1; n < len(code); n++ {
								check(code[:n])
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d encodings, %d decoded by the fast path, %d differ", tried, fast, bad)
	if fast == 0 {
		t.Error("the fast path decodes nothing")
	}
}
