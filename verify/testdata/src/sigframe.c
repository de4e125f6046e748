/* sigframe: signal handlers that return through the program's own signal
 * trampoline (sf_restorer in sigtramp.S, installed with the raw
 * rt_sigaction system call and SA_RESTORER), whose SFrame V3 FDE has the
 * signal flag: an SFrame unwinder can go through every delivery into the
 * interrupted code. The signals are raised with raw system calls from the
 * program's own functions, so the interrupted code has SFrame data too.
 *
 *   raise     SIGUSR1 raised at depth 3; its handler recurses, and raises
 *             SIGUSR2, whose handler runs nested in it
 *   nodefer   SA_NODEFER: the SIGUSR1 handler raises SIGUSR1 again, once
 *   segv      SA_SIGINFO SIGSEGV from a NULL store at depth 3: the handler
 *             reads si_addr and the ucontext's PC and leaves with
 *             siglongjmp
 *   altstack  SA_ONSTACK: a recursing handler on a sigaltstack
 *   thread    SIGUSR1 sent to a thread spinning in a loop, three times:
 *             each interrupts the loop wherever the scheduler switches
 *
 * Build (sid: gcc 16, binutils 2.47.50; see verify/testdata/Makefile):
 *   gcc -O2 -static -pthread -Wa,--gsframe sigframe.c sigtramp.S */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define SA_RESTORER_ 0x04000000

extern void sf_restorer(void);

/* sys4 is a system call made here, in code with SFrame data. */
static NOINLINE long sys4(long nr, long a, long b, long c, long d) {
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
#else
	register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c, x3 __asm__("x3") = d;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#endif
}

struct ksigaction {
	void *handler;
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static void install(int sig, void *handler, unsigned long flags) {
	struct ksigaction ksa = {handler, flags | SA_RESTORER_, sf_restorer, 0};
	long ret = sys4(SYS_rt_sigaction, sig, (long)&ksa, 0, 8);
	if (ret != 0) {
		printf("rt_sigaction(%d): %ld\n", sig, ret);
		exit(1);
	}
}

static NOINLINE void kill_self(int sig) { sys4(SYS_tgkill, getpid(), gettid(), sig, 0); }

static volatile int sink;

static NOINLINE int recurse(int n) {
	if (n == 0)
		return 1;
	int r = recurse(n - 1) + 1;
	sink = r;
	return r;
}

static volatile int usr1, usr2;

static void on_usr2(int sig) {
	usr2++;
	recurse(3);
}

static void on_usr1(int sig) {
	usr1++;
	recurse(4);
	if (usr1 == 1)
		kill_self(SIGUSR2);
}

static NOINLINE void level3(int sig) {
	kill_self(sig);
	sink++;
}
static NOINLINE void level2(int sig) {
	level3(sig);
	sink++;
}
static NOINLINE void level1(int sig) {
	level2(sig);
	sink++;
}

static void do_raise(void) {
	install(SIGUSR1, on_usr1, 0);
	install(SIGUSR2, on_usr2, 0);
	level1(SIGUSR1);
	printf("raise: SIGUSR1 handled %d times, SIGUSR2 %d times\n", usr1, usr2);
}

static volatile int nested, maxnested, calls;

static void on_nodefer(int sig) {
	calls++;
	nested++;
	if (nested > maxnested)
		maxnested = nested;
	if (calls == 1)
		level3(SIGUSR1);
	recurse(2);
	nested--;
}

static void do_nodefer(void) {
	install(SIGUSR1, on_nodefer, SA_NODEFER);
	level1(SIGUSR1);
	printf("nodefer: %d calls, nested %d deep\n", calls, maxnested);
}

static sigjmp_buf env;

static NOINLINE void poke(volatile int *p) {
	*p = 42;
	sink++;
}
static NOINLINE void middle(volatile int *p) {
	poke(p);
	sink++;
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
	ucontext_t *uc = ctx;
#if defined(__x86_64__)
	unsigned long pc = uc->uc_mcontext.gregs[REG_RIP];
#else
	unsigned long pc = uc->uc_mcontext.pc;
#endif
	int in_poke = pc >= (unsigned long)poke && pc < (unsigned long)poke + 16;
	printf("segv: si_code %d si_addr %#lx, pc in poke: %d\n", si->si_code, (unsigned long)si->si_addr, in_poke);
	recurse(2);
	siglongjmp(env, 1);
}

static void do_segv(void) {
	install(SIGSEGV, on_segv, SA_SIGINFO);
	if (sigsetjmp(env, 1) == 0) {
		middle(NULL);
		printf("not reached\n");
	}
	printf("segv: recovered\n");
}

static char altstack[65536] __attribute__((aligned(64)));
static volatile int alt_on;

static void on_alt(int sig) {
	char here;
	alt_on = &here >= altstack && &here < altstack + sizeof altstack;
	recurse(5);
}

static void do_altstack(void) {
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	install(SIGUSR1, on_alt, SA_ONSTACK);
	level1(SIGUSR1);
	printf("altstack: handler on the alternate stack: %d\n", alt_on);
}

static volatile int spin_stop, spin_ready, spin_got;
static pthread_t spinner;

static void on_spin(int sig) {
	spin_got++;
	recurse(1);
}

static NOINLINE void spin(void) {
	spin_ready = 1;
	while (spin_got < 3)
		sink++;
}

static void *spin_main(void *arg) {
	spin();
	return NULL;
}

static void do_thread(void) {
	install(SIGUSR1, on_spin, 0);
	pthread_create(&spinner, NULL, spin_main, NULL);
	while (!spin_ready)
		sched_yield();
	for (int i = 0; i < 3; i++) {
		int before = spin_got;
		pthread_kill(spinner, SIGUSR1);
		while (spin_got == before)
			sched_yield();
	}
	pthread_join(spinner, NULL);
	printf("thread: the spinning thread handled %d signals\n", spin_got);
}

int main(int argc, char **argv) {
	const char *what = argc > 1 ? argv[1] : "all";
	int all = strcmp(what, "all") == 0;
	if (all || !strcmp(what, "raise"))
		do_raise();
	if (all || !strcmp(what, "nodefer"))
		do_nodefer();
	if (all || !strcmp(what, "segv"))
		do_segv();
	if (all || !strcmp(what, "altstack"))
		do_altstack();
	if (all || !strcmp(what, "thread"))
		do_thread();
	return 0;
}
