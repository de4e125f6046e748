//go:build cgo

package linux

import (
	"encoding/binary"

	"github.com/sframesim/sframesim/emu"
)

// The AArch64 signal frame, as arch/arm64/kernel/signal.c (Linux 6.1)
// lays it out for a CPU with FP/SIMD and without SVE or SME (the HWCAP the
// guest sees):
//
//	frame record          {x29, x30} of the interrupted code, 16 bytes
//	                      just below the stack pointer (16-byte aligned);
//	                      x29 points at it in the handler
//	frame+0     siginfo   128 bytes, written with SA_SIGINFO only
//	frame+128   ucontext  uc_flags (0), uc_link, uc_stack (24 bytes),
//	                      uc_sigmask (8 bytes, then 120 unused),
//	                      uc_mcontext at +176 (struct sigcontext:
//	                      fault_address, regs[31], sp, pc, pstate, then
//	                      __reserved[4096]: fpsimd_context (FPSIMD_MAGIC,
//	                      528 bytes), esr_context (ESR_MAGIC, 16 bytes)
//	                      when the thread has a fault code, a terminating
//	                      null record)
//
// sizeof(struct rt_sigframe) is 4688; the frame sits 16-byte aligned
// below the frame record. The handler returns through x30 to the vDSO's
// __kernel_rt_sigreturn (or sa_restorer with SA_RESTORER).

const (
	arm64FrameSize   = 4688
	arm64UContext    = 128
	arm64SigmaskOff  = arm64UContext + 40
	arm64MContext    = arm64UContext + 176
	arm64Reserved    = arm64MContext + 288
	arm64ReservedLen = 4096
	fpsimdMagic      = 0x46508001
	fpsimdSize       = 528
	esrMagic         = 0x45535201
	esrSize          = 16
	// The PSTATE bits the frame reports and rt_sigreturn takes back: NZCV
	// (user code runs at EL0t, with DAIF clear).
	pstateNZCV = 0xf << 28
)

// arm64SigRegs are x0-x30, sp, pc and NZCV.
var arm64SigRegs = func() []emu.RegID {
	ids := make([]emu.RegID, 0, 34)
	for i := 0; i <= 30; i++ {
		ids = append(ids, emu.ARM64X(i))
	}
	return append(ids, emu.ARM64SP, emu.ARM64PC, emu.ARM64NZCV)
}()

// arm64SetupFrame delivers sig to act's handler on thread t (the running
// one): get_sigframe, setup_rt_frame, setup_sigframe and setup_return. It
// reports false if the frame could not be written.
func arm64SetupFrame(p *Process, t *thread, sig int, si *sigInfo, act sigAction) (bool, error) {
	var r [34]uint64
	if err := p.Engine.ReadRegs(arm64SigRegs, r[:]); err != nil {
		return false, err
	}
	sp := r[31]
	top := sp
	if act.flags&saOnstack != 0 && t.sig.alt.ssFlags(sp) == 0 {
		top = t.sig.alt.sp + t.sig.alt.size
	}
	record := (top - 16) &^ 15
	frame := record&^15 - arm64FrameSize
	buf, ok := p.readGuest(frame, record+16-frame)
	if !ok || !p.writable(frame, record+16-frame) || frame >= top {
		return false, nil
	}
	le := binary.LittleEndian
	rec := buf[record-frame:]
	le.PutUint64(rec[0:], r[29])
	le.PutUint64(rec[8:], r[30])
	uc := buf[arm64UContext:]
	le.PutUint64(uc[0:], 0)
	le.PutUint64(uc[8:], 0)
	putStack(uc[16:], &t.sig.alt, sp)
	le.PutUint64(buf[arm64SigmaskOff:], t.sig.mask)
	sc := buf[arm64MContext:]
	le.PutUint64(sc[0:], t.sig.faultAddr)
	for i := 0; i <= 30; i++ {
		le.PutUint64(sc[8+8*i:], r[i])
	}
	le.PutUint64(sc[256:], sp)
	le.PutUint64(sc[264:], r[32])
	le.PutUint64(sc[272:], r[33]&pstateNZCV)
	// The records of __reserved.
	res := buf[arm64Reserved:]
	le.PutUint32(res[0:], fpsimdMagic)
	le.PutUint32(res[4:], fpsimdSize)
	if err := arm64FPSave(p.Engine, res[8:fpsimdSize]); err != nil {
		return false, err
	}
	off := fpsimdSize
	if t.sig.errCode != 0 {
		le.PutUint32(res[off:], esrMagic)
		le.PutUint32(res[off+4:], esrSize)
		le.PutUint64(res[off+8:], t.sig.errCode)
		off += esrSize
	}
	le.PutUint64(res[off:], 0) // the terminator: magic 0, size 0
	ret := p.vdsoSym("__kernel_rt_sigreturn")
	if act.flags&saRestorer != 0 {
		ret = act.restorer
	}
	if act.flags&saSiginfo != 0 {
		copy(buf, si.bytes())
	}
	p.signalEvent(SignalEvent{Signal: sig, PC: r[32], SP: sp, FP: r[29],
		Handler: act.handler, HandlerSP: frame, HandlerFP: record, Return: ret, Frame: frame})
	if err := p.Engine.WriteMem(frame, buf); err != nil {
		return false, err
	}
	if t.sig.alt.flags&ssAutodisarm != 0 {
		t.sig.alt = altStack{}
	}
	ids := []emu.RegID{emu.ARM64X(0), emu.ARM64SP, emu.ARM64X(29), emu.ARM64PC, emu.ARM64X(30)}
	vals := []uint64{uint64(sig), frame, record, act.handler, ret}
	if act.flags&saSiginfo != 0 {
		ids = append(ids, emu.ARM64X(1), emu.ARM64X(2))
		vals = append(vals, frame, frame+arm64UContext)
	}
	return true, p.Engine.WriteRegs(ids, vals)
}

// arm64RestoreFrame is rt_sigreturn: the frame is at the stack pointer,
// which must be 16-byte aligned; __reserved must hold an fpsimd_context.
func arm64RestoreFrame(p *Process, t *thread) (bool, error) {
	sp, err := p.Engine.Reg(emu.ARM64SP)
	if err != nil {
		return false, err
	}
	if sp%16 != 0 {
		return false, nil
	}
	buf, ok := p.readGuest(sp, arm64FrameSize)
	if !ok {
		return false, nil
	}
	le := binary.LittleEndian
	t.sig.mask = le.Uint64(buf[arm64SigmaskOff:]) &^ unblockable
	sc := buf[arm64MContext:]
	var r [34]uint64
	for i := 0; i <= 30; i++ {
		r[i] = le.Uint64(sc[8+8*i:])
	}
	r[31], r[32] = le.Uint64(sc[256:]), le.Uint64(sc[264:])
	pstate := le.Uint64(sc[272:])
	if pstate&0x1f != 0 || pstate&(0xf<<6) != 0 {
		return false, nil // not AArch64 EL0t with DAIF clear (valid_user_regs)
	}
	r[33] = pstate & pstateNZCV
	// parse_user_sigframe: the records up to the terminator.
	res := buf[arm64Reserved : arm64Reserved+arm64ReservedLen]
	var fpsimd []byte
	for off := 0; ; {
		if off+8 > len(res) {
			return false, nil
		}
		magic, size := le.Uint32(res[off:]), int(le.Uint32(res[off+4:]))
		if magic == 0 {
			if size != 0 {
				return false, nil
			}
			break
		}
		if size < 8 || size%16 != 0 || off+size > len(res) {
			return false, nil
		}
		switch magic {
		case fpsimdMagic:
			if fpsimd != nil || size != fpsimdSize {
				return false, nil
			}
			fpsimd = res[off : off+size]
		case esrMagic:
		default:
			return false, nil
		}
		off += size
	}
	if fpsimd == nil {
		return false, nil
	}
	p.signalEvent(SignalEvent{Sigreturn: true, PC: r[32], SP: r[31], FP: r[29], Frame: sp})
	if err := p.Engine.WriteRegs(arm64SigRegs, r[:]); err != nil {
		return false, err
	}
	if err := arm64FPRestore(p.Engine, fpsimd[8:]); err != nil {
		return false, err
	}
	restoreAltstack(p, t, buf[arm64UContext+16:], r[31])
	return true, nil
}

// arm64FPSave writes fpsr, fpcr and v0-v31 (the body of fpsimd_context).
func arm64FPSave(e *emu.Engine, b []byte) error {
	var v [2]uint64
	if err := e.ReadRegs([]emu.RegID{emu.ARM64FPSR, emu.ARM64FPCR}, v[:]); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(v[0]))
	binary.LittleEndian.PutUint32(b[4:], uint32(v[1]))
	for i := 0; i < 32; i++ {
		if err := e.RegBytes(emu.ARM64V(i), b[8+16*i:24+16*i]); err != nil {
			return err
		}
	}
	return nil
}

// arm64FPRestore loads fpsr, fpcr and v0-v31 from an fpsimd_context body.
func arm64FPRestore(e *emu.Engine, b []byte) error {
	if err := e.WriteRegs([]emu.RegID{emu.ARM64FPSR, emu.ARM64FPCR},
		[]uint64{uint64(binary.LittleEndian.Uint32(b[0:])), uint64(binary.LittleEndian.Uint32(b[4:]))}); err != nil {
		return err
	}
	for i := 0; i < 32; i++ {
		if err := e.SetRegBytes(emu.ARM64V(i), b[8+16*i:24+16*i]); err != nil {
			return err
		}
	}
	return nil
}
