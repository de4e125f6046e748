// Running the guest at user privilege, as Linux runs programs.
//
// Unicorn starts an x86-64 engine at CPL 0 and an AArch64 one at EL1, where
// mov to a debug or control register, wrmsr, cli, hlt, swapgs, invlpg, msr
// to DAIF or SCTLR_EL1 and the like run as a kernel's would, and
// `mov %rax,%dr7` crashed the emulator. sfs_user_mode drops a new engine
// to CPL 3 / EL0 the architected way, by running one sysretq or eret on a
// scratch page: the CPU itself then refuses every privileged instruction
// (#GP on x86-64, an undefined-instruction exception on AArch64), as the
// hardware under Linux does, and the package's users turn those into
// SIGSEGV and SIGILL. It also makes the time-stamp counters trap (CR4.TSD;
// CNTKCTL_EL1 left at 0), so that rdtsc and reads of CNTVCT_EL0 can be
// answered from the guest's deterministic clock instead of the host's.
//
// x86-64 has one more thing to mend. QEMU remembers the last contributory
// exception (#DE, #TS, #NP, #SS, #GP) or page fault in env->old_exception
// until it has delivered it through the IDT, which Unicorn never does when
// an interrupt hook takes it: the next such exception became a double
// fault (vector 8), and the one after a triple fault that halted the CPU.
// A guest that survived one SIGFPE or SIGSEGV from a privileged
// instruction could not survive a second. Unicorn has no call to clear it,
// but the field is part of the CPU context (uc_context_save/restore); its
// offset is found here by running a divide error twice (the field goes
// from -1 to 0, then 8) and sfs_clear_exception puts it back to -1 after
// each exception a hook took. A libunicorn laid out so that the field is
// not found exactly once keeps its behaviour (the offset is -1).

#include <string.h>
#include "hook.h"

#define SCRATCH 0x10000ULL // the page the drop runs on, unmapped after

static int32_t le32(const uint8_t *p) {
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

// x86_old_exception finds the offset of env->old_exception in a saved
// context (see above); the engine is at CPL 3 with SCRATCH mapped and no
// hooks, and its context is put back as it was.
static int32_t x86_old_exception(uc_engine *uc) {
	static const uint8_t div[] = {0x48, 0xf7, 0xf1}; // div %rcx
	size_t size = uc_context_size(uc);
	uc_context *ctx[3] = {0};
	int32_t off = -1;
	for (int i = 0; i < 3; i++)
		if (uc_context_alloc(uc, &ctx[i]) != UC_ERR_OK)
			goto out;
	if (uc_context_save(uc, ctx[0]) != UC_ERR_OK || uc_mem_write(uc, SCRATCH + 0x100, div, sizeof div) != UC_ERR_OK)
		goto out;
	uint64_t zero = 0;
	for (int i = 1; i < 3; i++) {
		uc_reg_write(uc, UC_X86_REG_RCX, &zero);
		uc_reg_write(uc, UC_X86_REG_RDX, &zero);
		// Without an interrupt hook the divide error ends the run with
		// UC_ERR_EXCEPTION; what matters is the context after it.
		uc_emu_start(uc, SCRATCH + 0x100, SCRATCH + 0x100 + sizeof div, 0, 0);
		if (uc_context_save(uc, ctx[i]) != UC_ERR_OK)
			goto out;
	}
	const uint8_t *a = (const uint8_t *)ctx[0], *b = (const uint8_t *)ctx[1], *c = (const uint8_t *)ctx[2];
	int found = 0;
	for (size_t k = 0; k + 4 <= size; k += 4)
		if (le32(a + k) == -1 && le32(b + k) == 0 && le32(c + k) == 8) {
			off = (int32_t)k;
			found++;
		}
	if (found != 1)
		off = -1;
	uc_context_restore(uc, ctx[0]);
out:
	for (int i = 0; i < 3; i++)
		if (ctx[i])
			uc_context_free(ctx[i]);
	return off;
}

static uc_err x86_user_mode(uc_engine *uc, int32_t *oldexc) {
	static const uint8_t sysret[] = {0x48, 0x0f, 0x07}; // sysretq
	uc_err err = uc_mem_write(uc, SCRATCH, sysret, sizeof sysret);
	if (err != UC_ERR_OK)
		return err;
	// sysretq needs EFER.SCE; it loads CS and SS from STAR[63:48]: 0x23
	// gives Linux's user selectors, CS 0x33 and SS 0x2b, both RPL 3.
	uc_x86_msr efer = {.rid = 0xc0000080};
	if ((err = uc_reg_read(uc, UC_X86_REG_MSR, &efer)) != UC_ERR_OK)
		return err;
	efer.value |= 1; // SCE
	uc_x86_msr star = {.rid = 0xc0000081, .value = (uint64_t)0x23 << 48};
	if ((err = uc_reg_write(uc, UC_X86_REG_MSR, &efer)) != UC_ERR_OK || (err = uc_reg_write(uc, UC_X86_REG_MSR, &star)) != UC_ERR_OK)
		return err;
	uint64_t cr4;
	if ((err = uc_reg_read(uc, UC_X86_REG_CR4, &cr4)) != UC_ERR_OK)
		return err;
	cr4 |= 1 << 2; // TSD: rdtsc at CPL 3 raises #GP
	if ((err = uc_reg_write(uc, UC_X86_REG_CR4, &cr4)) != UC_ERR_OK)
		return err;
	// sysretq goes to RCX with RFLAGS from R11: the flags stay as they are.
	uint64_t flags, rcx = SCRATCH + 0x80, zero = 0;
	if ((err = uc_reg_read(uc, UC_X86_REG_EFLAGS, &flags)) != UC_ERR_OK)
		return err;
	uc_reg_write(uc, UC_X86_REG_RCX, &rcx);
	uc_reg_write(uc, UC_X86_REG_R11, &flags);
	if ((err = uc_emu_start(uc, SCRATCH, rcx, 0, 0)) != UC_ERR_OK)
		return err;
	uint64_t cs = 0, pc = 0;
	uc_reg_read(uc, UC_X86_REG_CS, &cs);
	uc_reg_read(uc, UC_X86_REG_RIP, &pc);
	if (cs != 0x33 || pc != rcx)
		return UC_ERR_EXCEPTION;
	*oldexc = x86_old_exception(uc);
	uc_reg_write(uc, UC_X86_REG_RCX, &zero);
	uc_reg_write(uc, UC_X86_REG_R11, &zero);
	uc_reg_write(uc, UC_X86_REG_RIP, &zero);
	return UC_ERR_OK;
}

static uc_err arm64_sysreg_or(uc_engine *uc, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t bits) {
	uint64_t v = 0;
	uc_err err = sfs_arm64_sysreg(uc, 0, 3, op1, crn, crm, op2, &v);
	if (err != UC_ERR_OK)
		return err;
	v |= bits;
	return sfs_arm64_sysreg(uc, 1, 3, op1, crn, crm, op2, &v);
}

static uc_err arm64_user_mode(uc_engine *uc) {
	static const uint32_t eret = 0xd69f03e0;
	uc_err err = uc_mem_write(uc, SCRATCH, &eret, sizeof eret);
	if (err != UC_ERR_OK)
		return err;
	// What Linux gives EL0: floating point and SIMD (CPACR_EL1.FPEN), and
	// in SCTLR_EL1 dc zva (DZE), CTR_EL0 reads (UCT) and cache maintenance
	// by address (UCI). The counter-timer registers stay trapped
	// (CNTKCTL_EL1 is 0).
	if ((err = arm64_sysreg_or(uc, 0, 1, 0, 2, 3 << 20)) != UC_ERR_OK)
		return err;
	if ((err = arm64_sysreg_or(uc, 0, 1, 0, 0, 1 << 14 | 1 << 15 | 1 << 26)) != UC_ERR_OK)
		return err;
	uint64_t pstate = 0;
	if ((err = uc_reg_read(uc, UC_ARM64_REG_PSTATE, &pstate)) != UC_ERR_OK)
		return err;
	uint32_t el = (pstate >> 2) & 3, op1 = el == 3 ? 6 : el == 2 ? 4 : 0;
	if (el == 0)
		return UC_ERR_OK;
	// eret to EL0t with the flags and interrupt masks as they are.
	uint64_t spsr = pstate & 0xf00003c0, elr = SCRATCH + 0x80, zero = 0;
	if ((err = sfs_arm64_sysreg(uc, 1, 3, op1, 4, 0, 0, &spsr)) != UC_ERR_OK || (err = sfs_arm64_sysreg(uc, 1, 3, op1, 4, 0, 1, &elr)) != UC_ERR_OK)
		return err;
	if ((err = uc_emu_start(uc, SCRATCH, elr, 0, 0)) != UC_ERR_OK)
		return err;
	uint64_t pc = 0;
	uc_reg_read(uc, UC_ARM64_REG_PSTATE, &pstate);
	uc_reg_read(uc, UC_ARM64_REG_PC, &pc);
	if (((pstate >> 2) & 3) != 0 || pc != elr)
		return UC_ERR_EXCEPTION;
	sfs_arm64_sysreg(uc, 1, 3, op1, 4, 0, 1, &zero);
	return uc_reg_write(uc, UC_ARM64_REG_PC, &zero);
}

uc_err sfs_user_mode(uc_engine *uc, int arm64, int32_t *oldexc) {
	*oldexc = -1;
	uc_err err = uc_mem_map(uc, SCRATCH, 0x1000, UC_PROT_ALL);
	if (err != UC_ERR_OK)
		return err;
	err = arm64 ? arm64_user_mode(uc) : x86_user_mode(uc, oldexc);
	// Only the scratch page's translations go: a flush of them all, or
	// a uc_emu_start with an instruction count (whose hook Unicorn then
	// removes, flushing), made every run's resident memory grow by the
	// translation buffer's size (1 GiB) at its next start.
	uc_err cerr = uc_ctl_remove_cache(uc, SCRATCH, SCRATCH + 0x1000);
	uc_err uerr = uc_mem_unmap(uc, SCRATCH, 0x1000);
	if (err == UC_ERR_OK)
		err = cerr != UC_ERR_OK ? cerr : uerr;
	return err;
}

void sfs_clear_exception(sfs_state *st) {
	if (st->oldexc_off < 0)
		return;
	uc_context *ctx = NULL;
	if (uc_context_alloc(st->uc, &ctx) != UC_ERR_OK)
		return;
	if (uc_context_save(st->uc, ctx) == UC_ERR_OK) {
		uint8_t *p = (uint8_t *)ctx + st->oldexc_off;
		if (le32(p) != -1) {
			memset(p, 0xff, 4);
			uc_context_restore(st->uc, ctx);
		}
	}
	uc_context_free(ctx);
}
