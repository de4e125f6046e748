/* privileged: what user code gets from instructions only a kernel may run,
 * and from the time-stamp counters. Built static for x86-64 and AArch64
 * (the command is in linux/privileged_test.go).
 *
 *   priv     each privileged instruction in turn, under SA_SIGINFO handlers
 *            for SIGSEGV, SIGILL and SIGFPE that print the signal, si_code
 *            and si_addr (relative to the instruction) and siglongjmp out;
 *            then three divisions by zero (x86-64), each a SIGFPE
 *   counter  two reads of the counter (rdtsc; CNTVCT_EL0) around a
 *            clock_gettime(CLOCK_MONOTONIC), and CNTFRQ_EL0 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static sigjmp_buf env;
static volatile int got, code;
static void *volatile addr;

static void on_fault(int sig, siginfo_t *si, void *uc) {
	got = sig;
	code = si->si_code;
	addr = si->si_addr;
	siglongjmp(env, 1);
}

/* Each test is a function whose first instruction is the one tried. */
#define TEST(name, insn) \
	extern void name(void); \
	__asm__(".text\n.globl " #name "\n.type " #name ",%function\n" #name ":\n" insn "\nret\n.size " #name ",.-" #name);

#if defined(__x86_64__)
TEST(t_dr7, "mov %rax,%dr7")
TEST(t_dr7_read, "mov %dr6,%rax")
TEST(t_cr0, "mov %cr0,%rax")
TEST(t_cr3, "mov %rax,%cr3")
TEST(t_cli, "cli")
TEST(t_sti, "sti")
TEST(t_hlt, "hlt")
TEST(t_wrmsr, "wrmsr")
TEST(t_rdmsr, "rdmsr")
TEST(t_invlpg, "invlpg (%rsp)")
TEST(t_swapgs, "swapgs")
TEST(t_wbinvd, "wbinvd")
TEST(t_invd, "invd")
TEST(t_lgdt, "lgdt (%rsp)")
TEST(t_lidt, "lidt (%rsp)")
TEST(t_ltr, "ltr %ax")
TEST(t_lldt, "lldt %ax")
TEST(t_clts, "clts")
TEST(t_lmsw, "lmsw %ax")
TEST(t_sysret, "sysretq")
TEST(t_in, "in %dx,%al")
TEST(t_out, "out %al,$0x80")
#define DIVS 3
#elif defined(__aarch64__)
TEST(t_daifset, "msr daifset, #2")
TEST(t_daif_read, "mrs x0, daif")
TEST(t_sctlr, "msr sctlr_el1, x0")
TEST(t_sctlr_read, "mrs x0, sctlr_el1")
TEST(t_ttbr0, "msr ttbr0_el1, x0")
TEST(t_tcr, "mrs x0, tcr_el1")
TEST(t_vbar, "msr vbar_el1, x0")
TEST(t_currentel, "mrs x0, currentel")
TEST(t_smc, "smc #0")
TEST(t_hvc, "hvc #0")
TEST(t_eret, "eret")
TEST(t_dc_ivac, "dc ivac, x1")
TEST(t_tlbi, "tlbi vmalle1")
TEST(t_at, "at s1e1r, x0")
#define DIVS 0
#endif

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
#if defined(__x86_64__)
	{"mov %rax,%dr7", t_dr7}, {"mov %dr6,%rax", t_dr7_read}, {"mov %cr0,%rax", t_cr0},
	{"mov %rax,%cr3", t_cr3}, {"cli", t_cli}, {"sti", t_sti}, {"hlt", t_hlt},
	{"wrmsr", t_wrmsr}, {"rdmsr", t_rdmsr}, {"invlpg", t_invlpg}, {"swapgs", t_swapgs},
	{"wbinvd", t_wbinvd}, {"invd", t_invd}, {"lgdt", t_lgdt}, {"lidt", t_lidt},
	{"ltr", t_ltr}, {"lldt", t_lldt}, {"clts", t_clts}, {"lmsw", t_lmsw},
	{"sysretq", t_sysret}, {"in", t_in}, {"out", t_out},
#elif defined(__aarch64__)
	{"msr daifset", t_daifset}, {"mrs daif", t_daif_read}, {"msr sctlr_el1", t_sctlr},
	{"mrs sctlr_el1", t_sctlr_read}, {"msr ttbr0_el1", t_ttbr0}, {"mrs tcr_el1", t_tcr},
	{"msr vbar_el1", t_vbar}, {"mrs currentel", t_currentel},
	{"smc", t_smc}, {"hvc", t_hvc}, {"eret", t_eret}, {"dc ivac", t_dc_ivac},
	{"tlbi vmalle1", t_tlbi}, {"at s1e1r", t_at},
#endif
};

static volatile int zero;

static void priv(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		got = 0;
		if (!sigsetjmp(env, 1))
			tests[i].fn();
		long off = addr ? (long)((char *)addr - (char *)tests[i].fn) : -1;
		printf("%-16s signal %d code %d addr %s%ld\n", tests[i].name, got, got ? code : 0,
		       addr ? "fn+" : "", addr ? off : 0L);
		addr = 0;
	}
	for (int i = 0; i < DIVS; i++) {
		got = 0;
		if (!sigsetjmp(env, 1)) {
			volatile int q = 12345 / zero;
			(void)q;
		}
		printf("division by zero %d: signal %d code %d\n", i + 1, got, got ? code : 0);
	}
}

static uint64_t counter(void) {
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	uint64_t v;
	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
#endif
}

static void counters(void) {
	struct timespec ts;
	uint64_t a = counter();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t b = counter();
	printf("counter %llu\nmonotonic %llu\ncounter %llu\n", (unsigned long long)a,
	       (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec, (unsigned long long)b);
#if defined(__aarch64__)
	uint64_t f;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	printf("frequency %llu\n", (unsigned long long)f);
#endif
}

int main(int argc, char **argv) {
	if (argc > 1 && !strcmp(argv[1], "counter"))
		counters();
	else
		priv();
	return 0;
}
