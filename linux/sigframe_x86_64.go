//go:build cgo

package linux

import (
	"encoding/binary"

	"github.com/sframesim/sframesim/emu"
)

// The x86-64 signal frame, as arch/x86/kernel/signal.c (Linux 6.1) lays it
// out on a CPU with FXSR and without XSAVE, which is what the emulated CPU
// reports in CPUID (leaf 1: FXSR and SSE2 set, XSAVE clear):
//
//	frame+0    pretcode   sa_restorer: where the handler returns
//	frame+8    ucontext   uc_flags (UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS),
//	                      uc_link, uc_stack (stack_t, 24 bytes),
//	                      uc_mcontext (struct sigcontext, 256 bytes),
//	                      uc_sigmask (8 bytes)
//	frame+312  siginfo    128 bytes, written with SA_SIGINFO only
//	fpstate               512 bytes (fxsave), 64-byte aligned, above the
//	                      frame; its software-reserved bytes (464-511)
//	                      hold struct _fpx_sw_bytes with FP_XSTATE_MAGIC1
//
// The frame is placed below the 128-byte red zone (or at the top of the
// alternate stack), the fpstate first, then the frame so that the stack
// pointer at the handler's entry is 8 mod 16 (as after a call). Bytes the
// kernel does not write (padding, reserved words) keep what the stack held.

const (
	amd64RedZone      = 128
	amd64FrameSize    = 440 // sizeof(struct rt_sigframe)
	amd64UContext     = 8   // offsetof(rt_sigframe, uc)
	amd64MContext     = amd64UContext + 40
	amd64SigmaskOff   = amd64UContext + 296
	amd64SiginfoOff   = 312
	amd64FXSize       = 512
	amd64UserCS       = 0x33 // __USER_CS
	amd64UserDS       = 0x2b // __USER_DS
	fpXstateMagic1    = 0x46505853
	fpXstateMagic2Sz  = 4
	xfeatureMaskFPSSE = 3
	// ucSigcontextSS|ucStrictRestoreSS: uc_flags on a CPU without XSAVE.
	amd64UCFlags = 0x2 | 0x4
	// fixEflags are the flags rt_sigreturn takes from the frame.
	fixEflags = 1<<18 | 1<<11 | 1<<10 | 1<<8 | 1<<7 | 1<<6 | 1<<4 | 1<<2 | 1<<0 | 1<<16 // AC OF DF TF SF ZF AF PF CF RF
	eflagsIF  = 1 << 9
	eflagsDF  = 1 << 10
	eflagsTF  = 1 << 8
	eflagsRF  = 1 << 16
)

// amd64SigRegs are the general registers in struct sigcontext order: r8-r15,
// rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags.
var amd64SigRegs = []emu.RegID{emu.X86R8, emu.X86R9, emu.X86R10, emu.X86R11, emu.X86R12,
	emu.X86R13, emu.X86R14, emu.X86R15, emu.X86RDI, emu.X86RSI, emu.X86RBP, emu.X86RBX,
	emu.X86RDX, emu.X86RAX, emu.X86RCX, emu.X86RSP, emu.X86RIP, emu.X86EFLAGS}

const (
	amd64SigRSP = 15
	amd64SigRIP = 16
	amd64SigFL  = 17
)

// amd64SetupFrame delivers sig to act's handler on thread t (the running
// one): __setup_rt_frame and handle_signal. It reports false if the frame
// could not be written (Linux then forces SIGSEGV).
func amd64SetupFrame(p *Process, t *thread, sig int, si *sigInfo, act sigAction) (bool, error) {
	var r [18]uint64
	if err := p.Engine.ReadRegs(amd64SigRegs, r[:]); err != nil {
		return false, err
	}
	if act.flags&saRestorer == 0 {
		return false, nil // x86-64 needs a restorer
	}
	rsp := r[amd64SigRSP]
	// get_sigframe.
	sp := rsp - amd64RedZone
	nested := t.sig.alt.on(rsp)
	entering := false
	if act.flags&saOnstack != 0 && t.sig.alt.ssFlags(sp) == 0 {
		sp, entering = t.sig.alt.sp+t.sig.alt.size, true
	}
	fx := (sp - amd64FXSize) &^ 63
	frame := ((fx - amd64FrameSize) &^ 15) - 8
	if (nested || entering) && !t.sig.alt.onStack(frame) {
		return false, nil
	}
	end := fx + amd64FXSize
	buf, ok := p.readGuest(frame, end-frame)
	if !ok || !p.writable(frame, end-frame) {
		return false, nil
	}
	le := binary.LittleEndian
	// The fxsave image and its software-reserved bytes (save_sw_bytes).
	fxb := buf[fx-frame:]
	if err := amd64FXSave(p.Engine, fxb); err != nil {
		return false, err
	}
	le.PutUint32(fxb[464:], fpXstateMagic1)
	le.PutUint32(fxb[468:], amd64FXSize+fpXstateMagic2Sz)
	le.PutUint64(fxb[472:], xfeatureMaskFPSSE)
	le.PutUint32(fxb[480:], amd64FXSize)
	clear(fxb[484:512])
	// pretcode and the ucontext.
	le.PutUint64(buf[0:], act.restorer)
	uc := buf[amd64UContext:]
	le.PutUint64(uc[0:], amd64UCFlags)
	le.PutUint64(uc[8:], 0)
	putStack(uc[16:], &t.sig.alt, rsp)
	sc := buf[amd64MContext:]
	for i := 0; i < 17; i++ {
		le.PutUint64(sc[8*i:], r[i])
	}
	le.PutUint64(sc[136:], r[amd64SigFL]|eflagsIF|2)
	le.PutUint16(sc[144:], amd64UserCS)
	le.PutUint16(sc[146:], 0) // gs
	le.PutUint16(sc[148:], 0) // fs
	le.PutUint16(sc[150:], amd64UserDS)
	le.PutUint64(sc[152:], t.sig.errCode)
	le.PutUint64(sc[160:], t.sig.trapNo)
	le.PutUint64(sc[168:], t.sig.mask) // oldmask
	le.PutUint64(sc[176:], t.sig.faultAddr)
	le.PutUint64(sc[184:], fx)
	le.PutUint64(buf[amd64SigmaskOff:], t.sig.mask)
	if act.flags&saSiginfo != 0 {
		copy(buf[amd64SiginfoOff:], si.bytes())
	}
	p.signalEvent(SignalEvent{Signal: sig, PC: r[amd64SigRIP], SP: rsp, FP: r[10],
		Handler: act.handler, HandlerSP: frame, HandlerFP: r[10], Return: act.restorer, Frame: frame})
	if err := p.Engine.WriteMem(frame, buf); err != nil {
		return false, err
	}
	if t.sig.alt.flags&ssAutodisarm != 0 {
		t.sig.alt = altStack{}
	}
	// The handler's registers; the floating-point state starts afresh
	// (fpu__clear_user_states).
	flags := r[amd64SigFL] &^ (eflagsDF | eflagsRF | eflagsTF)
	if err := p.Engine.WriteRegs([]emu.RegID{emu.X86RDI, emu.X86RAX, emu.X86RSI, emu.X86RDX, emu.X86RIP, emu.X86RSP, emu.X86EFLAGS},
		[]uint64{uint64(sig), 0, frame + amd64SiginfoOff, frame + amd64UContext, act.handler, frame, flags}); err != nil {
		return false, err
	}
	return true, amd64FXInit(p.Engine)
}

// amd64RestoreFrame is rt_sigreturn: the frame is below the stack pointer
// (the handler's ret popped pretcode).
func amd64RestoreFrame(p *Process, t *thread) (bool, error) {
	rsp, err := p.Engine.Reg(emu.X86RSP)
	if err != nil {
		return false, err
	}
	frame := rsp - 8
	buf, ok := p.readGuest(frame, amd64FrameSize)
	if !ok {
		return false, nil
	}
	le := binary.LittleEndian
	t.sig.mask = le.Uint64(buf[amd64SigmaskOff:]) &^ unblockable
	sc := buf[amd64MContext:]
	var r [18]uint64
	for i := 0; i < 17; i++ {
		r[i] = le.Uint64(sc[8*i:])
	}
	cur, err := p.Engine.Reg(emu.X86EFLAGS)
	if err != nil {
		return false, err
	}
	r[amd64SigFL] = cur&^fixEflags | le.Uint64(sc[136:])&fixEflags&^eflagsTF
	p.signalEvent(SignalEvent{Sigreturn: true, PC: r[amd64SigRIP], SP: r[amd64SigRSP], FP: r[10], Frame: frame})
	if err := p.Engine.WriteRegs(amd64SigRegs, r[:]); err != nil {
		return false, err
	}
	if fp := le.Uint64(sc[184:]); fp == 0 {
		if err := amd64FXInit(p.Engine); err != nil {
			return false, err
		}
	} else {
		fxb, ok := p.readGuest(fp, amd64FXSize)
		if !ok || fp%16 != 0 {
			return false, nil
		}
		if err := amd64FXRestore(p.Engine, fxb); err != nil {
			return false, err
		}
	}
	restoreAltstack(p, t, buf[amd64UContext+16:], r[amd64SigRSP])
	return true, nil
}

// putStack writes uc_stack as __save_altstack does: ss_sp, ss_flags and
// ss_size (the padding after ss_flags is left alone).
func putStack(b []byte, s *altStack, sp uint64) {
	le := binary.LittleEndian
	le.PutUint64(b, s.sp)
	le.PutUint32(b[8:], s.ssFlags(sp)|s.flags)
	le.PutUint64(b[16:], s.size)
}

// amd64FXSave writes the x87 and SSE state into b as the emulated CPU's
// fxsave64 stores it: FCW, FSW, the abridged tag byte, FOP, FIP, FDP,
// MXCSR, MXCSR_MASK, st0-st7 (10 bytes in each 16-byte slot), xmm0-xmm15.
// The slot padding and bytes 416-463 are not written.
func amd64FXSave(e *emu.Engine, b []byte) error {
	ids := []emu.RegID{emu.X86FPCW, emu.X86FPSW, emu.X86FPTAG, emu.X86FOP, emu.X86FIP, emu.X86FDP, emu.X86MXCSR}
	var v [7]uint64
	for i, id := range ids {
		x, err := e.Reg(id)
		if err != nil {
			return err
		}
		v[i] = x
	}
	le := binary.LittleEndian
	le.PutUint16(b[0:], uint16(v[0]))
	le.PutUint16(b[2:], uint16(v[1]))
	var ftw byte
	for i := 0; i < 8; i++ {
		if (v[2]>>(2*i))&3 != 3 { // not empty
			ftw |= 1 << i
		}
	}
	b[4], b[5] = ftw, 0
	le.PutUint16(b[6:], uint16(v[3]))
	le.PutUint64(b[8:], v[4])
	le.PutUint64(b[16:], v[5])
	le.PutUint32(b[24:], uint32(v[6]))
	le.PutUint32(b[28:], 0xffff)
	for i := 0; i < 8; i++ {
		if err := e.RegBytes(emu.X86ST(i), b[32+16*i:32+16*i+10]); err != nil {
			return err
		}
	}
	for i := 0; i < 16; i++ {
		if err := e.RegBytes(emu.X86XMM(i), b[160+16*i:176+16*i]); err != nil {
			return err
		}
	}
	return nil
}

// amd64FXRestore loads the x87 and SSE state from an fxsave image, as
// fxrstor64 does (MXCSR's reserved bits cleared).
func amd64FXRestore(e *emu.Engine, b []byte) error {
	le := binary.LittleEndian
	var tag uint64
	for i := 0; i < 8; i++ {
		if b[4]&(1<<i) == 0 {
			tag |= 3 << (2 * i)
		}
	}
	if err := e.WriteRegs([]emu.RegID{emu.X86FPCW, emu.X86FPSW, emu.X86FPTAG, emu.X86FOP, emu.X86FIP, emu.X86FDP, emu.X86MXCSR},
		[]uint64{uint64(le.Uint16(b[0:])), uint64(le.Uint16(b[2:])), tag, uint64(le.Uint16(b[6:])),
			le.Uint64(b[8:]), le.Uint64(b[16:]), uint64(le.Uint32(b[24:]) & 0xffff)}); err != nil {
		return err
	}
	for i := 0; i < 8; i++ {
		if err := e.SetRegBytes(emu.X86ST(i), b[32+16*i:32+16*i+10]); err != nil {
			return err
		}
	}
	for i := 0; i < 16; i++ {
		if err := e.SetRegBytes(emu.X86XMM(i), b[160+16*i:176+16*i]); err != nil {
			return err
		}
	}
	return nil
}

// amd64FXInit puts the x87 and SSE state in the state a signal handler
// starts with (init_fpstate): control word 0x37f, MXCSR 0x1f80, every
// register empty and zero.
func amd64FXInit(e *emu.Engine) error {
	var b [amd64FXSize]byte
	binary.LittleEndian.PutUint16(b[0:], 0x37f)
	binary.LittleEndian.PutUint32(b[24:], 0x1f80)
	return amd64FXRestore(e, b[:])
}
