package codeflow

import (
	"debug/elf"
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
