/* signals: handlers interrupting the program and running on its stacks.
 * raise() of a handler that recurses a few levels deep and raises a second
 * signal whose handler runs nested in it; SIGSEGV from a NULL store and
 * from a store to an unmapped page, caught by SA_SIGINFO handlers that
 * read si_code, si_addr and the ucontext's PC and leave with siglongjmp;
 * a recursing handler on an alternate stack (sigaltstack + SA_ONSTACK);
 * an ITIMER_VIRTUAL timer interrupting a busy loop; a signal sent with
 * pthread_kill to a thread spinning in a loop.
 *
 * Handlers only record what they see; main prints it, so the output is
 * the same however the signals interleave with stdio. Prints only stable
 * facts (no addresses, no tick counts). Exits 10, or 100 + the number of
 * failed checks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int failed;

static void check(int ok, const char *what) {
	printf("%s: %s\n", what, ok ? "ok" : "FAILED");
	if (!ok)
		failed++;
}

static volatile int sink;

static NOINLINE int recurse(int n) {
	if (n == 0)
		return 1;
	int r = recurse(n - 1) + 1;
	sink = r;
	return r;
}

static void handle(int sig, void (*fn)(int), int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void handle_info(int sig, void (*fn)(int, siginfo_t *, void *), int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* raise: SIGUSR1's handler recurses, then raises SIGUSR2 the first time */
static volatile sig_atomic_t usr1, usr2, depth, usr2_depth, usr1_rec;

static void on_usr2(int sig) {
	depth++;
	usr2++;
	usr2_depth = depth;
	recurse(3);
	depth--;
}

static void on_usr1(int sig) {
	depth++;
	usr1++;
	usr1_rec = recurse(4);
	if (usr1 == 1)
		raise(SIGUSR2);
	depth--;
}

static NOINLINE void level2(void) {
	raise(SIGUSR1);
	sink++;
}

static NOINLINE void level1(void) {
	level2();
	sink++;
}

static void do_raise(void) {
	handle(SIGUSR1, on_usr1, 0);
	handle(SIGUSR2, on_usr2, 0);
	level1();
	raise(SIGUSR1);
	printf("raise: SIGUSR1 handled %d times, SIGUSR2 %d times\n", (int)usr1, (int)usr2);
	check(usr1 == 2 && usr2 == 1, "raise: handler counts");
	check(usr1_rec == 5, "raise: the handler's recursion returned 5");
	check(usr2_depth == 2, "raise: SIGUSR2 ran nested in the SIGUSR1 handler");
	check(depth == 0, "raise: every handler returned");
}

/* segv: faults caught by SA_SIGINFO handlers, left with siglongjmp */
static sigjmp_buf env;
static volatile int seg_code, seg_pc_in;
static volatile void *seg_addr;

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
	seg_code = si->si_code;
	seg_addr = si->si_addr;
	/* poke is a few instructions long at any optimisation level */
	seg_pc_in = pc >= (unsigned long)poke && pc < (unsigned long)poke + 64;
	recurse(2);
	siglongjmp(env, 1);
}

static int fault_at(volatile int *p) {
	seg_code = 0;
	seg_addr = (void *)1;
	seg_pc_in = 0;
	if (sigsetjmp(env, 1) == 0) {
		middle(p);
		return 0;
	}
	return 1;
}

static void do_segv(void) {
	handle_info(SIGSEGV, on_segv, 0);
	int caught = fault_at(NULL);
	printf("segv: NULL store: caught %d, si_code SEGV_MAPERR %d, si_addr NULL %d, PC in poke %d\n", caught,
	       seg_code == SEGV_MAPERR, seg_addr == NULL, seg_pc_in);
	check(caught && seg_code == SEGV_MAPERR && seg_addr == NULL && seg_pc_in, "segv: NULL store");
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m, pg);
	volatile int *q = (volatile int *)(m + 24);
	caught = fault_at(q);
	printf("segv: unmapped store: caught %d, si_code SEGV_MAPERR %d, si_addr is the address %d, PC in poke %d\n",
	       caught, seg_code == SEGV_MAPERR, seg_addr == (void *)q, seg_pc_in);
	check(caught && seg_code == SEGV_MAPERR && seg_addr == (void *)q && seg_pc_in, "segv: unmapped store");
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	check(!sigismember(&cur, SIGSEGV), "segv: siglongjmp restored the mask");
}

/* altstack: a recursing handler on a sigaltstack */
static char altstack[65536] __attribute__((aligned(64)));
static volatile int alt_on, alt_flags;

static void on_alt(int sig) {
	char here;
	stack_t ss;
	alt_on = &here >= altstack && &here < altstack + sizeof altstack;
	sigaltstack(NULL, &ss);
	alt_flags = ss.ss_flags;
	recurse(5);
}

static void do_altstack(void) {
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, NULL);
	handle(SIGUSR1, on_alt, SA_ONSTACK);
	level1();
	printf("altstack: handler on the alternate stack %d, SS_ONSTACK %d\n", alt_on, alt_flags == SS_ONSTACK);
	check(alt_on && alt_flags == SS_ONSTACK, "altstack: handler ran on the alternate stack");
	sigaltstack(NULL, &ss);
	check(ss.ss_flags == 0, "altstack: left the alternate stack");
	handle(SIGUSR1, on_alt, 0);
	raise(SIGUSR1);
	check(!alt_on, "altstack: without SA_ONSTACK on the normal stack");
}

/* timer: ITIMER_VIRTUAL interrupts a busy loop */
static volatile sig_atomic_t ticks;

static void on_vtalrm(int sig) {
	ticks++;
	recurse(1);
}

static NOINLINE long spin_until(int n) {
	long spins = 0;
	while (ticks < n)
		spins++;
	return spins;
}

static void do_timer(void) {
	handle(SIGVTALRM, on_vtalrm, 0);
	/* every 50 us of CPU time (Linux fires it on the scheduler tick;
	 * sframesim counts one instruction as 1 ns: 150k instructions) */
	struct itimerval it = {.it_interval = {.tv_usec = 50}, .it_value = {.tv_usec = 50}}, zero = {0};
	setitimer(ITIMER_VIRTUAL, &it, NULL);
	long spins = spin_until(3);
	setitimer(ITIMER_VIRTUAL, &zero, NULL);
	printf("timer: ticks >= 3 %d, spun %d\n", ticks >= 3, spins > 0);
	check(ticks >= 3 && spins > 0, "timer: ITIMER_VIRTUAL interrupted the loop");
}

/* thread: pthread_kill to a thread spinning in a loop, three times */
static volatile int spin_ready, spin_got, spin_in_thread;
static pthread_t spinner;

static void on_spin(int sig) {
	spin_in_thread += pthread_equal(pthread_self(), spinner);
	spin_got++;
	recurse(2);
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
	handle(SIGUSR1, on_spin, 0);
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
	printf("thread: the spinning thread handled %d signals, all in it %d\n", spin_got, spin_in_thread == 3);
	check(spin_got == 3 && spin_in_thread == 3, "thread: pthread_kill reached the thread");
}

int main(void) {
	do_raise();
	do_segv();
	do_altstack();
	do_timer();
	do_thread();
	printf("%d checks failed\n", failed);
	return failed ? 100 + failed : 10;
}
