package check

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/internal/testcorpus"
	"github.com/sframesim/sframesim/sframe"
)

// x86Agrees compares the decoder d with x86asm (arch.Classify) on code.
func x86Agrees(t *testing.T, d *x86Decoder, code []byte) bool {
	t.Helper()
	flow, n := d.classify(code)
	wflow, wn := arch.AMD64.Classify(code)
	if wn != n || wflow != flow {
		t.Errorf("% x: x86Decoder %v %d, x86asm %v %d", code[:min(len(code), 16)], flow, n, wflow, wn)
		return false
	}
	return true
}

// TestX86LenExhaustive runs every opcode of the one-byte, 0F, 0F 38 and
// 0F 3A maps under prefix combinations, with every ModRM byte of register
// form, every reg under each memory addressing form (SIB with and without
// a base, RIP-relative, disp8, disp32), and random displacement and
// immediate bytes. In -short mode, fewer prefix combinations.
func TestX86LenExhaustive(t *testing.T) {
	prefixes := [][]byte{
		{}, {0x66}, {0xf2}, {0xf3}, {0xf0}, {0x2e}, {0x67}, {0x48}, {0x66, 0x48}, {0xf3, 0x48},
		{0x3e}, {0x64}, {0x65}, {0x26}, {0x36}, {0x40}, {0x41}, {0x4c}, {0x4f}, {0x66, 0x41}, {0xf2, 0x48}, {0xf0, 0x48},
		{0x66, 0x66, 0x2e}, {0x66, 0xf3}, {0x66, 0xf2}, {0xf2, 0xf3}, {0xf3, 0xf2}, {0x67, 0x48}, {0x64, 0x48}, {0x48, 0x66}, {0x48, 0x41},
	}
	if testing.Short() {
		prefixes = prefixes[:10]
	}
	var opcodes [][]byte
	for op := range 256 {
		if op != 0x0f {
			opcodes = append(opcodes, []byte{byte(op)})
		}
		opcodes = append(opcodes, []byte{0x0f, byte(op)})
		opcodes = append(opcodes, []byte{0x0f, 0x38, byte(op)}, []byte{0x0f, 0x3a, byte(op)})
	}
	// ModRM and SIB bytes: every register form; every reg with each
	// memory form.
	var modrms [][]byte
	for modrm := range 256 {
		mod, rm := modrm>>6, modrm&7
		switch {
		case mod == 3:
			modrms = append(modrms, []byte{byte(modrm)})
		case rm == 4:
			modrms = append(modrms, []byte{byte(modrm), 0x24}, []byte{byte(modrm), 0xe5})
		case rm == 5 || rm == 0:
			modrms = append(modrms, []byte{byte(modrm)})
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	d := &x86Decoder{}
	tail := make([]byte, 16)
	checked, fails := 0, 0
	for _, p := range prefixes {
		for _, op := range opcodes {
			for _, m := range modrms {
				for k := range tail {
					tail[k] = byte(rng.Uint32())
				}
				code := append(append(append(append([]byte{}, p...), op...), m...), tail...)
				checked++
				if !x86Agrees(t, d, code) {
					if fails++; fails > 50 {
						t.Fatal("too many differences")
					}
				}
			}
		}
	}
	t.Logf("%d encodings compared, %d shapes", checked, len(d.shapes))
}

// TestX86LenRandom compares the two on random bytes.
func TestX86LenRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	code := make([]byte, 20)
	n := 300_000
	if testing.Short() {
		n = 50_000
	}
	d := &x86Decoder{}
	for range n {
		for k := range code {
			code[k] = byte(rng.Uint32())
		}
		if !x86Agrees(t, d, code) {
			return
		}
	}
}

// TestX86LenCorpus walks every FDE of x86-64 corpus binaries instruction
// by instruction with x86asm and checks x86Len at each, counting how much
// of the code it knows.
func TestX86LenCorpus(t *testing.T) {
	dir := testcorpus.Dir(t)
	var known, total int
	for _, e := range testcorpus.Entries(t) {
		if e.Arch != "x86-64" {
			continue
		}
		f, err := sframe.Open(filepath.Join(dir, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		d := &x86Decoder{}
		c := &checker{ef: f.ELF}
		c.loadCode()
		for i := range f.Section.FDEs {
			fde := &f.Section.FDEs[i]
			code := c.codeAt(fde.Start, fde.End())
			for off := 0; off < len(code); {
				flow, n := arch.AMD64.Classify(code[off:])
				if flow == arch.FlowBad {
					break
				}
				total++
				if !x86Agrees(t, d, code[off:]) {
					t.Fatalf("%s at %#x", e.Path, fde.Start+uint64(off))
				}
				if _, _, shape, ok := x86Len(code[off:]); ok && d.shapes[shape] {
					known++
				}
				off += n
			}
		}
		f.Close()
	}
	t.Logf("%d instructions, %d (%.2f%%) known to x86Len", total, known, 100*float64(known)/float64(total))
	if total == 0 || float64(known) < 0.99*float64(total) {
		t.Errorf("x86Len knows %d of %d instructions", known, total)
	}
}
