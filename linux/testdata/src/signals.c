/* signals: signal delivery as Linux does it, one scenario per argument.
 * Built static for x86-64 and AArch64 (the command is in
 * linux/signals_test.go); the expected outputs are what qemu-user prints
 * (and, on x86-64, the host's kernel).
 *
 *   raise      a SIGUSR1 handler run by raise()
 *   thread     pthread_kill (tgkill) of SIGUSR1 to another thread
 *   segv       SA_SIGINFO SIGSEGV handler: si_code, si_addr of a NULL
 *              store and of a write to a read-only page; siglongjmp out
 *   fpe        x86-64: SIGFPE (FPE_INTDIV) from a division by zero
 *   altstack   SA_ONSTACK handler on a sigaltstack
 *   skip       a handler moves the PC past an undefined instruction
 *   trap       SIGTRAP from int3 / brk
 *   resethand  SA_RESETHAND: the second SIGUSR1 kills (status 138)
 *   nodefer    nested delivery with SA_NODEFER, and the same signal
 *              pending until the handler returns without it
 *   mask       sigprocmask: a blocked signal is delivered when unblocked
 *   frame      the handler dumps its ucontext (registers, relative to the
 *              alternate stack it runs on) */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t got, depth, maxdepth;
static sigjmp_buf env;
static char altstack[65536] __attribute__((aligned(64)));

static void on_usr1(int sig) {
	got++;
	printf("handler: signal %d, call %d\n", sig, (int)got);
}

static void do_raise(void) {
	struct sigaction sa = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	raise(SIGUSR1);
	printf("after raise: %d calls\n", (int)got);
}

static pthread_t worker_id;
static volatile int stop_worker, worker_ready;
static volatile pthread_t handled_by;

static void on_usr1_thread(int sig) {
	handled_by = pthread_self();
	stop_worker = 1;
}

static void *worker(void *arg) {
	worker_ready = 1;
	while (!stop_worker)
		sched_yield();
	printf("worker: stopped by the signal, handled in the worker: %d\n", pthread_equal(handled_by, worker_id));
	return NULL;
}

static void do_thread(void) {
	struct sigaction sa = {.sa_handler = on_usr1_thread};
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&worker_id, NULL, worker, NULL);
	while (!worker_ready)
		sched_yield();
	pthread_kill(worker_id, SIGUSR1);
	pthread_join(worker_id, NULL);
	printf("main: joined\n");
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
	printf("SIGSEGV: si_signo %d si_code %d si_addr %#lx\n", si->si_signo, si->si_code, (unsigned long)si->si_addr);
	siglongjmp(env, 1);
}

static void do_segv(void) {
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1) == 0) {
		*(volatile int *)0 = 1;
		printf("not reached\n");
	}
	static const int ro = 5;
	if (sigsetjmp(env, 1) == 0) {
		*(volatile int *)&ro = 1;
		printf("not reached\n");
	}
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("recovered twice, SIGSEGV blocked after siglongjmp: %d\n", sigismember(&cur, SIGSEGV));
}

static void on_fpe(int sig, siginfo_t *si, void *uc) {
	printf("SIGFPE: si_code %d (FPE_INTDIV %d)\n", si->si_code, FPE_INTDIV);
	siglongjmp(env, 1);
}

static void do_fpe(void) {
	struct sigaction sa = {.sa_sigaction = on_fpe, .sa_flags = SA_SIGINFO};
	sigaction(SIGFPE, &sa, NULL);
	volatile int a = 7, b = 0;
	if (sigsetjmp(env, 1) == 0)
		printf("not reached: %d\n", a / b);
	printf("recovered\n");
}

static void on_alt(int sig) {
	char here;
	stack_t ss;
	sigaltstack(NULL, &ss);
	int on = &here >= altstack && &here < altstack + sizeof altstack;
	printf("handler on the alternate stack: %d, ss_flags %d\n", on, ss.ss_flags);
}

static void do_altstack(void) {
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_handler = on_alt, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	sigaltstack(NULL, &ss);
	printf("after: ss_flags %d ss_size %zu\n", ss.ss_flags, ss.ss_size);
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
}

static void on_ill(int sig, siginfo_t *si, void *ctx) {
	ucontext_t *uc = ctx;
	printf("SIGILL: si_code %d\n", si->si_code);
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RIP] += 2; /* ud2 */
#else
	uc->uc_mcontext.pc += 4; /* udf */
#endif
}

static void do_skip(void) {
	struct sigaction sa = {.sa_sigaction = on_ill, .sa_flags = SA_SIGINFO};
	sigaction(SIGILL, &sa, NULL);
#if defined(__x86_64__)
	__asm__ volatile("ud2");
#else
	__asm__ volatile(".inst 0x00000000"); /* udf #0 */
#endif
	printf("skipped the undefined instruction\n");
}

static void on_trap(int sig, siginfo_t *si, void *ctx) {
	ucontext_t *uc = ctx;
	printf("SIGTRAP: si_code %d\n", si->si_code);
#if defined(__aarch64__)
	uc->uc_mcontext.pc += 4; /* brk leaves the PC at itself */
#endif
}

static void do_trap(void) {
	struct sigaction sa = {.sa_sigaction = on_trap, .sa_flags = SA_SIGINFO};
	sigaction(SIGTRAP, &sa, NULL);
#if defined(__x86_64__)
	__asm__ volatile("int3");
#else
	__asm__ volatile("brk #0");
#endif
	printf("after the breakpoint\n");
}

static void do_resethand(void) {
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESETHAND};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sigaction(SIGUSR1, NULL, &sa);
	printf("handler reset to SIG_DFL: %d\n", sa.sa_handler == SIG_DFL);
	fflush(stdout);
	raise(SIGUSR1);
	printf("not reached\n");
}

static volatile sig_atomic_t calls;

static void on_nested(int sig) {
	depth++;
	if (depth > maxdepth)
		maxdepth = depth;
	printf("enter depth %d\n", (int)depth);
	if (++calls < 3)
		raise(sig);
	printf("leave depth %d\n", (int)depth);
	depth--;
}

static void do_nodefer(void) {
	struct sigaction sa = {.sa_handler = on_nested, .sa_flags = SA_NODEFER};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("SA_NODEFER: max depth %d\n", (int)maxdepth);
	maxdepth = calls = 0;
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("deferred: max depth %d\n", (int)maxdepth);
}

static void do_mask(void) {
	struct sigaction sa = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
	sigpending(&pend);
	printf("blocked: %d calls, pending %d\n", (int)got, sigismember(&pend, SIGUSR1));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("unblocked: %d calls\n", (int)got);
	signal(SIGUSR2, SIG_IGN);
	raise(SIGUSR2);
	printf("ignored SIGUSR2\n");
}

static unsigned long stack_mark; /* an address on the main stack */

/* rel prints v relative to the alternate stack, "(stack)" for an address
 * on the main stack (which differs between kernels and emulators), or v. */
static void rel(const char *name, unsigned long v) {
	unsigned long lo = (unsigned long)altstack, hi = lo + sizeof altstack;
	if (v >= lo && v <= hi)
		printf("%s alt+%#lx\n", name, v - lo);
	else if (v - (stack_mark - (1 << 20)) < (2 << 20))
		printf("%s (stack)\n", name);
	else
		printf("%s %#lx\n", name, v);
}

static void on_frame(int sig, siginfo_t *si, void *ctx) {
	ucontext_t *uc = ctx;
	rel("siginfo", (unsigned long)si);
	rel("ucontext", (unsigned long)uc);
	printf("si_signo %d si_code %d si_addr %#lx\n", si->si_signo, si->si_code, (unsigned long)si->si_addr);
	printf("uc_flags %#lx uc_link %p\n", uc->uc_flags, (void *)uc->uc_link);
	rel("ss_sp", (unsigned long)uc->uc_stack.ss_sp);
	printf("ss_flags %d ss_size %#zx\n", uc->uc_stack.ss_flags, uc->uc_stack.ss_size);
	printf("uc_sigmask %#lx\n", ((unsigned long *)&uc->uc_sigmask)[0]);
#if defined(__x86_64__)
	static const char *names[] = {"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi",
				      "rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip"};
	for (int i = 0; i < 17; i++)
		rel(names[i], uc->uc_mcontext.gregs[i]);
	printf("eflags %#llx\n", uc->uc_mcontext.gregs[REG_EFL] & 0xcd5);
	printf("csgsfs %#llx\n", uc->uc_mcontext.gregs[REG_CSGSFS]);
	printf("err %#llx trapno %lld oldmask %#llx cr2 %#llx\n", uc->uc_mcontext.gregs[REG_ERR],
	       uc->uc_mcontext.gregs[REG_TRAPNO], uc->uc_mcontext.gregs[REG_OLDMASK], uc->uc_mcontext.gregs[REG_CR2]);
	rel("fpregs", (unsigned long)uc->uc_mcontext.fpregs);
	printf("mxcsr %#x cwd %#x\n", uc->uc_mcontext.fpregs->mxcsr, uc->uc_mcontext.fpregs->cwd);
#else
	printf("fault_address %#llx\n", uc->uc_mcontext.fault_address);
	/* x9-x18 are left out: scratch registers whose values depend on the
	 * string functions glibc picked for the CPU. */
	for (int i = 0; i < 31; i++) {
		char name[8];
		if (i >= 9 && i <= 18)
			continue;
		snprintf(name, sizeof name, "x%d", i);
		rel(name, uc->uc_mcontext.regs[i]);
	}
	rel("sp", uc->uc_mcontext.sp);
	rel("pc", uc->uc_mcontext.pc);
	printf("pstate %#llx\n", uc->uc_mcontext.pstate & 0xf0000000);
	for (unsigned char *r = uc->uc_mcontext.__reserved;;) {
		unsigned magic = ((unsigned *)r)[0], size = ((unsigned *)r)[1];
		printf("record %#x size %u\n", magic, size);
		if (magic == 0 || size == 0)
			break;
		r += size;
	}
#endif
	siglongjmp(env, 1);
}

static void do_frame(void) {
	char mark;
	stack_mark = (unsigned long)&mark;
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_sigaction = on_frame, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1) == 0)
		*(volatile long *)0x18 = 42;
	printf("frame done\n");
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *what = argc > 1 ? argv[1] : "raise";
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {{"raise", do_raise}, {"thread", do_thread}, {"segv", do_segv}, {"fpe", do_fpe},
		     {"altstack", do_altstack}, {"skip", do_skip}, {"trap", do_trap}, {"resethand", do_resethand},
		     {"nodefer", do_nodefer}, {"mask", do_mask}, {"frame", do_frame}};
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
		if (strcmp(what, tests[i].name) == 0) {
			tests[i].fn();
			return 0;
		}
	fprintf(stderr, "unknown test %s\n", what);
	return 2;
}
