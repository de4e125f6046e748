//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// fxsaveFields are the bytes of an fxsave64 image the frame code writes
// (the ST slots' padding and bytes 416-511 aside).
func fxsaveFields(b []byte) []byte {
	var out []byte
	out = append(out, b[:32]...)
	for i := 0; i < 8; i++ {
		out = append(out, b[32+16*i:42+16*i]...)
	}
	return append(out, b[160:416]...)
}

// TestFXSave checks amd64FXSave and amd64FXRestore against the emulated
// CPU's own fxsave64: after some x87 and SSE work the image built from the
// registers is what the instruction stores, and a restored image is what
// the instruction then stores.
func TestFXSave(t *testing.T) {
	e, err := emu.NewEngine(arch.AMD64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const code, data = 0x1000, 0x3000
	mem, err := e.Map(code, 0x4000, emu.ProtRead|emu.ProtWrite|emu.ProtExec, "test")
	if err != nil {
		t.Fatal(err)
	}
	cr4, _ := e.Reg(emu.X86CR4)
	if err := e.SetReg(emu.X86CR4, cr4|1<<9|1<<10); err != nil {
		t.Fatal(err)
	}
	if err := amd64FXInit(e); err != nil {
		t.Fatal(err)
	}
	prog := []byte{
		0xd9, 0xe8, // fld1
		0xd9, 0xeb, // fldpi
		0xde, 0xc1, // faddp
		0xd9, 0xee, // fldz
		0x66, 0x0f, 0x6f, 0x0c, 0x25, 0x00, 0x20, 0x00, 0x00, // movdqa xmm1, [0x2000]
		0x66, 0x44, 0x0f, 0x6f, 0x3c, 0x25, 0x10, 0x20, 0x00, 0x00, // movdqa xmm15, [0x2010]
		0x48, 0x0f, 0xae, 0x04, 0x25, 0x00, 0x30, 0x00, 0x00, // fxsave64 [0x3000]
	}
	copy(mem, prog)
	for i := 0; i < 32; i++ {
		mem[0x1000+i] = byte(0x11 * (i + 1))
	}
	end := uint64(code + len(prog))
	if err := e.Start(code, end, 0, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 512)
	if err := amd64FXSave(e, got); err != nil {
		t.Fatal(err)
	}
	want := mem[data-code : data-code+512]
	if !bytes.Equal(fxsaveFields(got), fxsaveFields(want)) {
		t.Errorf("built from the registers:\n% x\nfxsave64 stored:\n% x", fxsaveFields(got), fxsaveFields(want))
	}
	// Restore a different image, then let the CPU store it again.
	img := append([]byte(nil), got...)
	binary.LittleEndian.PutUint16(img[0:], 0x27f)   // another precision control
	binary.LittleEndian.PutUint32(img[24:], 0x1fc0) // MXCSR with DAZ
	for i := 160; i < 416; i++ {
		img[i] = byte(i)
	}
	if err := amd64FXRestore(e, img); err != nil {
		t.Fatal(err)
	}
	clear(mem[data-code : data-code+512])
	save := uint64(code + len(prog) - 9)
	if err := e.Start(save, end, 0, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fxsaveFields(img), fxsaveFields(want)) {
		t.Errorf("restored:\n% x\nfxsave64 stored:\n% x", fxsaveFields(img), fxsaveFields(want))
	}
}

// TestFPSIMDRoundTrip saves and restores the AArch64 FP/SIMD state.
func TestFPSIMDRoundTrip(t *testing.T) {
	e, err := emu.NewEngine(arch.ARM64)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b := make([]byte, fpsimdSize-8)
	binary.LittleEndian.PutUint32(b[0:], 0x8000010) // FPSR: QC, IDC
	binary.LittleEndian.PutUint32(b[4:], 0x3000000) // FPCR: DN, FZ
	for i := 8; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := arm64FPRestore(e, b); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(b))
	if err := arm64FPSave(e, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Errorf("saved % x\nwant % x", got, b)
	}
}
