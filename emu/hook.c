#include <string.h>
#include "hook.h"
#include "_cgo_export.h"

static void hook_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user) {
	sfs_state *st = user;
	st->count++;
	switch (st->observe) {
	case SFS_OBSERVE_RECORD: {
		sfs_rec *r = &st->buf[st->nbuf];
		uint64_t v[4] = {0, 0, 0, 0};
		void *p[4] = {&v[0], &v[1], &v[2], &v[3]};
		uc_reg_read_batch(uc, st->regs + 1, p, st->nregs - 1);
		r->pc = addr;
		r->size = size;
		r->sp = v[0];
		r->fp = v[1];
		r->ra = st->nregs > 3 ? v[2] : 0;
		if (++st->nbuf == st->cap) {
			sfsGoFlush(st->slot);
			st->nbuf = 0;
		}
		break;
	}
	case SFS_OBSERVE_STEP:
		sfsGoStep(st->slot, addr, size);
		break;
	}
}

static void hook_syscall(uc_engine *uc, void *user) {
	sfs_state *st = user;
	sfsGoSyscall(st->slot);
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user) {
	sfs_state *st = user;
	sfsGoInterrupt(st->slot, intno);
}

static bool hook_mem_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user) {
	sfs_state *st = user;
	st->fault_type = type;
	st->fault_addr = addr;
	st->fault_size = size;
	st->fault_value = value;
	uint64_t pc = 0;
	uc_reg_read(uc, st->regs[0], &pc);
	st->fault_pc = pc;
	return false; // stop with UC_ERR_*_UNMAPPED / _PROT
}

uc_err sfs_hooks_install(sfs_state *st, int arch) {
	uc_err err = uc_hook_add(st->uc, &st->code_hook, UC_HOOK_CODE, hook_code, st, 1, 0);
	if (err != UC_ERR_OK)
		return err;
	if (arch == UC_ARCH_X86)
		err = uc_hook_add(st->uc, &st->sys_hook, UC_HOOK_INSN, hook_syscall, st, 1, 0, UC_X86_INS_SYSCALL);
	else
		err = uc_hook_add(st->uc, &st->sys_hook, UC_HOOK_INTR, hook_intr, st, 1, 0);
	if (err != UC_ERR_OK)
		return err;
	return uc_hook_add(st->uc, &st->mem_hook, UC_HOOK_MEM_INVALID, hook_mem_invalid, st, 1, 0);
}

uc_err sfs_reg_read_batch(uc_engine *uc, int *ids, uint64_t *vals, int n) {
	void *p[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		p[i] = &vals[i];
	return uc_reg_read_batch(uc, ids, p, n);
}

uc_err sfs_reg_write_batch(uc_engine *uc, int *ids, uint64_t *vals, int n) {
	void *p[64];
	if (n > 64)
		return UC_ERR_ARG;
	for (int i = 0; i < n; i++)
		p[i] = &vals[i];
	return uc_reg_write_batch(uc, ids, (void *const *)p, n);
}

uc_err sfs_set_cpu_model(uc_engine *uc, int model) {
	return uc_ctl_set_cpu_model(uc, model);
}

uc_err sfs_arm64_sysreg(uc_engine *uc, int write, uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2, uint64_t *val) {
	uc_arm64_cp_reg r = {.crn = crn, .crm = crm, .op0 = op0, .op1 = op1, .op2 = op2, .val = *val};
	uc_err err = write ? uc_reg_write(uc, UC_ARM64_REG_CP_REG, &r) : uc_reg_read(uc, UC_ARM64_REG_CP_REG, &r);
	*val = r.val;
	return err;
}

uc_err sfs_code_hook_del(sfs_state *st) {
	if (!st->code_hook)
		return UC_ERR_OK;
	uc_err err = uc_hook_del(st->uc, st->code_hook);
	st->code_hook = 0;
	return err;
}
