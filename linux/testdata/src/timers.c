/* timers: timer signals and signals interrupting blocking calls, one
 * scenario per argument. Built static for x86-64 and AArch64 (the command
 * is in linux/timers_test.go); the expected outputs are what the host's
 * kernel prints (x86-64) and qemu-user (AArch64). The output does not
 * depend on timing: counts are bounded and printed as comparisons, and a
 * thread that must find another blocked first sleeps 100 ms.
 *
 *   alarm      alarm's return value; SIGALRM cuts sleep(5) short after 2 s;
 *              a one-shot ITIMER_REAL interrupts a busy loop
 *   itimer     periodic ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF
 *              counted by handlers in busy loops; getitimer
 *   posix      timer_create: SIGEV_SIGNAL with a value on CLOCK_MONOTONIC
 *              (periodic, SA_SIGINFO: si_code, si_value), overruns while
 *              the signal is blocked, timer_gettime, a one-shot
 *              CLOCK_PROCESS_CPUTIME_ID timer, SIGEV_NONE
 *   threadid   SIGEV_THREAD_ID: the timer signals one given thread
 *   restart    a read of an empty pipe interrupted by a handler without
 *              SA_RESTART (EINTR) and with it (restarted: the data comes)
 *   nanosleep  nanosleep interrupted: EINTR with the time left, with and
 *              without SA_RESTART
 *   sigsuspend sigsuspend wakes for a signal from another thread; the
 *              mask from before is back
 *   sigwait    sigwaitinfo takes a blocked signal sigqueue'd with a value
 *              by another thread; sigtimedwait times out; sigwait
 *   sigqueue   real-time signals queued with values, delivered in order
 *   poll       poll on a pipe: timeout, then ready; ppoll interrupted
 *   futex      sem_wait (a futex wait) interrupted: EINTR without
 *              SA_RESTART, restarted with it; sem_timedwait: EINTR
 *   wakeother  a signal to the process wakes the main thread, blocked in
 *              nanosleep and then in a pipe read, but the sending thread
 *              takes it: the call goes on (restart_syscall, a restart)
 *              or returns EINTR, whichever thread won; with a second
 *              argument, says which (the emulator's one CPU: the sender)
 *   sigevthread  SIGEV_THREAD: glibc's helper thread (SIGEV_THREAD_ID and
 *              sigwaitinfo underneath) runs the function in a new thread,
 *              periodically
 *   signalfd   reading blocked signals from a signalfd: EAGAIN when
 *              non-blocking, a blocking read woken by another thread's
 *              sigqueue, poll readiness
 *   pipes      pipes between threads: a writer blocked on a full pipe,
 *              O_NONBLOCK (EAGAIN, partial writes), end of file, EPIPE and
 *              SIGPIPE, fstat, select */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got, got2, got3;
static volatile long spins;

static void on_sig(int sig) { got++; }
static void on_sig2(int sig) { got2++; }
static void on_sig3(int sig) { got3++; }

static void handle(int sig, void (*fn)(int), int flags) {
	struct sigaction sa = {.sa_handler = fn, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static long long now_ns(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void do_alarm(void) {
	handle(SIGALRM, on_sig, 0);
	alarm(10);
	printf("alarm(0) after alarm(10): %u\n", alarm(0));
	alarm(2);
	unsigned left = sleep(5);
	printf("sleep(5) cut short by alarm(2): returned 2 or 3: %d, handler ran %d\n", left == 2 || left == 3, (int)got);
	got = 0;
	struct itimerval it = {.it_value = {.tv_usec = 5000}};
	setitimer(ITIMER_REAL, &it, NULL);
	while (!got)
		spins++;
	printf("busy loop interrupted: handler ran %d, spun: %d\n", (int)got, spins > 0);
}

static void do_itimer(void) {
	struct itimerval it = {.it_interval = {.tv_usec = 1000}, .it_value = {.tv_usec = 1000}}, cur, zero = {0};
	handle(SIGALRM, on_sig, 0);
	handle(SIGVTALRM, on_sig2, 0);
	handle(SIGPROF, on_sig3, 0);
	setitimer(ITIMER_REAL, &it, NULL);
	getitimer(ITIMER_REAL, &cur);
	printf("ITIMER_REAL armed: interval %ld us, value in (0, 1000] us: %d\n", (long)cur.it_interval.tv_usec,
	       cur.it_value.tv_sec == 0 && cur.it_value.tv_usec > 0 && cur.it_value.tv_usec <= 1000);
	while (got < 5)
		spins++;
	setitimer(ITIMER_REAL, &zero, &cur);
	printf("ITIMER_REAL: at least 5 ticks: %d; old interval %ld us\n", got >= 5, (long)cur.it_interval.tv_usec);
	getitimer(ITIMER_REAL, &cur);
	printf("disarmed: %ld %ld\n", (long)cur.it_value.tv_sec, (long)cur.it_value.tv_usec);
	setitimer(ITIMER_VIRTUAL, &it, NULL);
	while (got2 < 3)
		spins++;
	setitimer(ITIMER_VIRTUAL, &zero, NULL);
	printf("ITIMER_VIRTUAL: at least 3 ticks: %d\n", got2 >= 3);
	setitimer(ITIMER_PROF, &it, NULL);
	while (got3 < 3)
		spins++;
	setitimer(ITIMER_PROF, &zero, NULL);
	printf("ITIMER_PROF: at least 3 ticks: %d\n", got3 >= 3);
	struct itimerval bad = {.it_value = {.tv_usec = 1000000}};
	int r = setitimer(ITIMER_REAL, &bad, NULL);
	printf("setitimer with tv_usec 1000000: %d %s\n", r, strerrorname_np(errno));
}

static volatile int last_code, last_value;

static void on_timer(int sig, siginfo_t *si, void *uc) {
	got++;
	last_code = si->si_code;
	last_value = si->si_value.sival_int;
}

static void do_posix(void) {
	struct sigaction sa = {.sa_sigaction = on_timer, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN, .sigev_value.sival_int = 42};
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
		perror("timer_create");
		return;
	}
	struct itimerspec its = {.it_interval = {.tv_nsec = 1000000}, .it_value = {.tv_nsec = 1000000}}, cur;
	timer_settime(t, 0, &its, NULL);
	timer_gettime(t, &cur);
	printf("armed: interval %ld ns, value in (0, 1 ms]: %d\n", cur.it_interval.tv_nsec,
	       cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 1000000);
	while (got < 3)
		spins++;
	printf("at least 3 signals: %d; si_code SI_TIMER: %d; si_value %d\n", got >= 3, last_code == SI_TIMER, last_value);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int before = got;
	long long end = now_ns(CLOCK_MONOTONIC) + 10000000;
	while (now_ns(CLOCK_MONOTONIC) < end)
		spins++;
	printf("blocked for 10 ms: no signal: %d\n", got == before);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	int overrun = timer_getoverrun(t);
	printf("unblocked: one signal: %d; overrun at least 5: %d\n", got == before + 1, overrun >= 5);
	timer_delete(t);
	int r = timer_gettime(t, &cur);
	printf("timer_gettime after delete: %d %s\n", r, strerrorname_np(errno));

	/* One shot on the process's CPU time. */
	got = 0;
	sev.sigev_value.sival_int = 7;
	timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t);
	struct itimerspec once = {.it_value = {.tv_nsec = 2000000}};
	timer_settime(t, 0, &once, NULL);
	while (!got)
		spins++;
	timer_gettime(t, &cur);
	printf("CPU-time timer: one signal, value %d; disarmed: %d\n", last_value,
	       cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);
	timer_delete(t);

	/* SIGEV_NONE: nothing is sent, timer_gettime counts down. */
	struct sigevent none = {.sigev_notify = SIGEV_NONE};
	timer_create(CLOCK_MONOTONIC, &none, &t);
	struct itimerspec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs.it_value);
	abs.it_value.tv_sec += 100;
	abs.it_interval.tv_sec = abs.it_interval.tv_nsec = 0;
	timer_settime(t, TIMER_ABSTIME, &abs, NULL);
	timer_gettime(t, &cur);
	printf("SIGEV_NONE absolute in 100 s: value in (99, 100] s: %d\n",
	       cur.it_value.tv_sec == 99 || (cur.it_value.tv_sec == 100 && cur.it_value.tv_nsec == 0));
	timer_delete(t);
}

static volatile pid_t worker_tid, handled_tid;
static volatile int worker_stop;

static void on_tid(int sig) {
	handled_tid = gettid();
	worker_stop = 1;
}

static void *tid_worker(void *arg) {
	worker_tid = gettid();
	while (!worker_stop)
		spins++;
	return NULL;
}

static void do_threadid(void) {
	handle(SIGUSR1, on_tid, 0);
	pthread_t th;
	pthread_create(&th, NULL, tid_worker, NULL);
	while (!worker_tid)
		sched_yield();
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	sev._sigev_un._tid = worker_tid;
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
		perror("timer_create");
		return;
	}
	struct itimerspec once = {.it_value = {.tv_nsec = 3000000}};
	timer_settime(t, 0, &once, NULL);
	pthread_join(th, NULL);
	printf("SIGEV_THREAD_ID: handled in the worker: %d, not in main: %d\n", handled_tid == worker_tid, handled_tid != gettid());
	timer_delete(t);
	sev._sigev_un._tid = 1;
	int r = timer_create(CLOCK_MONOTONIC, &sev, &t);
	printf("timer_create for a thread not ours: %d %s\n", r, strerrorname_np(errno));
}

static pthread_t main_thread;
static int pfd[2];

static void *kick_then_write(void *arg) {
	usleep(100000);
	pthread_kill(main_thread, SIGUSR1);
	usleep(100000);
	write(pfd[1], "x", 1);
	return NULL;
}

static void do_restart(void) {
	main_thread = pthread_self();
	for (int restart = 0; restart <= 1; restart++) {
		got = 0;
		handle(SIGUSR1, on_sig, restart ? SA_RESTART : 0);
		pipe(pfd);
		pthread_t th;
		pthread_create(&th, NULL, kick_then_write, NULL);
		char c = 0;
		ssize_t n = read(pfd[0], &c, 1);
		int e = errno;
		printf("%s: read returned %zd (%s), handler ran %d\n", restart ? "SA_RESTART" : "no SA_RESTART", n,
		       n < 0 ? strerrorname_np(e) : (c == 'x' ? "got x" : "?"), (int)got);
		pthread_join(th, NULL);
		if (n < 0) {
			n = read(pfd[0], &c, 1);
			printf("read again: %zd %c\n", n, c);
		}
		close(pfd[0]);
		close(pfd[1]);
	}
}

static void *kick(void *arg) {
	usleep(100000);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void do_nanosleep(void) {
	main_thread = pthread_self();
	for (int restart = 0; restart <= 1; restart++) {
		got = 0;
		handle(SIGUSR1, on_sig, restart ? SA_RESTART : 0);
		pthread_t th;
		pthread_create(&th, NULL, kick, NULL);
		struct timespec req = {.tv_sec = 2}, rem = {0};
		int r = nanosleep(&req, &rem);
		int e = errno;
		printf("%s: nanosleep returned %d (%s), handler ran %d, time left in (1 s, 2 s): %d\n",
		       restart ? "SA_RESTART" : "no SA_RESTART", r, r < 0 ? strerrorname_np(e) : "-", (int)got,
		       rem.tv_sec == 1 && rem.tv_nsec > 0);
		pthread_join(th, NULL);
	}
	/* clock_nanosleep returns the error number itself. */
	pthread_t th;
	pthread_create(&th, NULL, kick, NULL);
	struct timespec req = {.tv_sec = 2}, rem = {0};
	int r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	printf("clock_nanosleep returned %s, time left in (1 s, 2 s): %d\n", strerrorname_np(r), rem.tv_sec == 1 && rem.tv_nsec > 0);
	pthread_join(th, NULL);
}

static void *send_usr1(void *arg) {
	usleep(100000);
	kill(getpid(), SIGUSR1);
	return NULL;
}

static void do_sigsuspend(void) {
	handle(SIGUSR1, on_sig, 0);
	sigset_t block, empty, now;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	pthread_t th;
	pthread_create(&th, NULL, send_usr1, NULL);
	sigemptyset(&empty);
	int r = sigsuspend(&empty);
	int e = errno;
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("sigsuspend returned %d (%s), handler ran %d, SIGUSR1 blocked again: %d\n", r, strerrorname_np(e), (int)got,
	       sigismember(&now, SIGUSR1));
	pthread_join(th, NULL);
	got = 0;
	raise(SIGUSR1); /* pending while blocked */
	r = sigsuspend(&empty);
	printf("with it pending: sigsuspend returned %d, handler ran %d\n", r, (int)got);
}

static void *queue_usr2(void *arg) {
	usleep(100000);
	sigqueue(getpid(), SIGUSR2, (union sigval){.sival_int = 7});
	return NULL;
}

static void do_sigwait(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pthread_t th;
	pthread_create(&th, NULL, queue_usr2, NULL);
	siginfo_t si;
	int sig = sigwaitinfo(&set, &si);
	printf("sigwaitinfo: %d (SIGUSR2 %d), si_code SI_QUEUE: %d, si_value %d, si_pid ours: %d\n", sig, SIGUSR2,
	       si.si_code == SI_QUEUE, si.si_value.sival_int, si.si_pid == getpid());
	pthread_join(th, NULL);
	struct timespec ts = {.tv_nsec = 10000000};
	int r = sigtimedwait(&set, &si, &ts);
	printf("sigtimedwait with nothing pending: %d %s\n", r, strerrorname_np(errno));
	raise(SIGUSR2);
	int which = 0;
	r = sigwait(&set, &which);
	printf("sigwait: %d, signal %d\n", r, which);
	sigpending(&set);
	printf("pending after: %d\n", sigismember(&set, SIGUSR2));
}

static volatile int values[8], nvalues;

static void on_rt(int sig, siginfo_t *si, void *uc) {
	if (nvalues < 8)
		values[nvalues++] = si->si_value.sival_int;
	last_code = si->si_code;
}

static void do_sigqueue(void) {
	struct sigaction sa = {.sa_sigaction = on_rt, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 1; i <= 3; i++)
		sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = 100 * i});
	printf("queued 3, delivered %d\n", nvalues);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("unblocked: delivered %d:", nvalues);
	for (int i = 0; i < nvalues; i++)
		printf(" %d", values[i]);
	printf("; si_code SI_QUEUE: %d\n", last_code == SI_QUEUE);
}

static void *write_later(void *arg) {
	usleep(100000);
	write(pfd[1], "y", 1);
	return NULL;
}

static void do_poll(void) {
	pipe(pfd);
	struct pollfd p = {.fd = pfd[0], .events = POLLIN};
	printf("poll with 10 ms timeout on an empty pipe: %d\n", poll(&p, 1, 10));
	pthread_t th;
	pthread_create(&th, NULL, write_later, NULL);
	int r = poll(&p, 1, -1);
	printf("poll until written: %d, revents POLLIN: %d\n", r, p.revents == POLLIN);
	pthread_join(th, NULL);
	char c;
	read(pfd[0], &c, 1);
	main_thread = pthread_self();
	handle(SIGUSR1, on_sig, SA_RESTART);
	got = 0;
	pthread_create(&th, NULL, kick, NULL);
	r = ppoll(&p, 1, NULL, NULL);
	printf("ppoll interrupted (even with SA_RESTART): %d %s, handler ran %d\n", r, strerrorname_np(errno), (int)got);
	pthread_join(th, NULL);
	close(pfd[1]);
	r = poll(&p, 1, -1);
	printf("write end closed: %d, revents POLLHUP: %d\n", r, p.revents == POLLHUP);
	close(pfd[0]);
}

static sem_t sem;

static void *kick_then_post(void *arg) {
	usleep(100000);
	pthread_kill(main_thread, SIGUSR1);
	usleep(100000);
	sem_post(&sem);
	return NULL;
}

static void do_futex(void) {
	main_thread = pthread_self();
	for (int restart = 0; restart <= 2; restart++) {
		got = 0;
		handle(SIGUSR1, on_sig, restart ? SA_RESTART : 0);
		sem_init(&sem, 0, 0);
		pthread_t th;
		pthread_create(&th, NULL, kick_then_post, NULL);
		int r;
		if (restart == 2) {
			struct timespec abs;
			clock_gettime(CLOCK_REALTIME, &abs);
			abs.tv_sec += 5;
			r = sem_timedwait(&sem, &abs);
		} else {
			r = sem_wait(&sem);
		}
		int e = errno;
		printf("%s: returned %d (%s), handler ran %d\n",
		       restart == 2 ? "sem_timedwait, SA_RESTART" : restart ? "sem_wait, SA_RESTART" : "sem_wait, no SA_RESTART", r,
		       r < 0 ? strerrorname_np(e) : "-", (int)got);
		if (r < 0)
			printf("again: %d\n", sem_wait(&sem));
		pthread_join(th, NULL);
		sem_destroy(&sem);
	}
}

static volatile pid_t handler_tid;
static volatile int sender_done;

static void on_who(int sig) {
	handler_tid = gettid();
	got++;
}

static void *send_blocked_then_take(void *arg) {
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	usleep(100000);
	kill(getpid(), SIGUSR1); /* the main thread can take it, and is woken */
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	usleep(100000);
	write(pfd[1], "z", 1);
	return NULL;
}

static int detail;

static void do_wakeother(void) {
	handle(SIGUSR1, on_who, 0);
	pid_t me = gettid();
	for (int call = 0; call < 2; call++) {
		got = 0;
		handler_tid = 0;
		pipe(pfd);
		pthread_t th;
		pthread_create(&th, NULL, send_blocked_then_take, NULL);
		long long t0 = now_ns(CLOCK_MONOTONIC);
		int r, e;
		char c = 0;
		if (call == 0) {
			struct timespec req = {.tv_sec = 1};
			r = nanosleep(&req, NULL);
		} else {
			r = read(pfd[0], &c, 1);
		}
		e = errno;
		long long dt = now_ns(CLOCK_MONOTONIC) - t0;
		pthread_join(th, NULL);
		int in_main = handler_tid == me;
		int consistent = call == 0 ? (r == 0 && dt >= 1000000000 && !in_main) || (r < 0 && e == EINTR && in_main)
		                           : (r == 1 && c == 'z' && !in_main) || (r < 0 && e == EINTR && in_main);
		printf("%s: handler ran %d, consistent: %d\n", call == 0 ? "nanosleep" : "read", (int)got, consistent);
		if (detail)
			printf("  %s, handled in %s\n", r < 0 ? strerrorname_np(e) : "went on", in_main ? "main" : "the sender");
		close(pfd[0]);
		close(pfd[1]);
	}
}

static volatile int calls, callback_value;
static volatile pid_t callback_tid;

static void callback(union sigval v) {
	callback_value = v.sival_int;
	callback_tid = gettid();
	if (++calls == 3)
		sem_post(&sem);
}

static void do_sigevthread(void) {
	sem_init(&sem, 0, 0);
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD, .sigev_notify_function = callback, .sigev_value.sival_int = 99};
	timer_t t;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0) {
		perror("timer_create");
		return;
	}
	struct itimerspec its = {.it_interval = {.tv_nsec = 20000000}, .it_value = {.tv_nsec = 20000000}};
	timer_settime(t, 0, &its, NULL);
	while (sem_wait(&sem) != 0)
		;
	timer_delete(t);
	printf("SIGEV_THREAD: 3 calls, value %d, in another thread: %d\n", callback_value, callback_tid != gettid());
}

static void *queue_rt(void *arg) {
	usleep(100000);
	sigqueue(getpid(), SIGRTMIN + 2, (union sigval){.sival_int = 5});
	return NULL;
}

static void do_signalfd(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN + 2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int nb = signalfd(-1, &set, SFD_NONBLOCK);
	struct signalfd_siginfo ssi;
	ssize_t n = read(nb, &ssi, sizeof ssi);
	printf("non-blocking, nothing pending: %zd %s\n", n, strerrorname_np(errno));
	n = read(nb, &ssi, 8);
	printf("short buffer: %zd %s\n", n, strerrorname_np(errno));
	int fd = signalfd(-1, &set, 0);
	pthread_t th;
	pthread_create(&th, NULL, queue_rt, NULL);
	n = read(fd, &ssi, sizeof ssi);
	printf("blocking read: %zd bytes, signal SIGRTMIN+2: %d, SI_QUEUE: %d, ssi_int %d, ssi_pid ours: %d\n", n,
	       ssi.ssi_signo == SIGRTMIN + 2, ssi.ssi_code == SI_QUEUE, ssi.ssi_int, ssi.ssi_pid == (unsigned)getpid());
	pthread_join(th, NULL);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	printf("poll, nothing pending: %d\n", poll(&p, 1, 0));
	raise(SIGUSR1);
	int r = poll(&p, 1, 0);
	printf("poll, SIGUSR1 pending: %d, POLLIN: %d\n", r, p.revents == POLLIN);
	struct signalfd_siginfo two[2];
	n = read(nb, two, sizeof two);
	printf("read: %zd bytes, SIGUSR1: %d, SI_TKILL: %d\n", n, two[0].ssi_signo == SIGUSR1, two[0].ssi_code == SI_TKILL);
	sigpending(&set);
	printf("still pending: %d\n", sigismember(&set, SIGUSR1));
}

static char big[200000];

static void *write_big(void *arg) {
	ssize_t n = write(pfd[1], big, sizeof big);
	printf("writer: wrote %zd of %zu at once\n", n, sizeof big);
	close(pfd[1]);
	return NULL;
}

static void do_pipes(void) {
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)(i * 7);
	pipe(pfd);
	struct stat st;
	fstat(pfd[0], &st);
	printf("fstat: FIFO %d\n", S_ISFIFO(st.st_mode));
	pthread_t th;
	pthread_create(&th, NULL, write_big, NULL);
	static char in[sizeof big];
	size_t total = 0;
	ssize_t n;
	usleep(100000); /* the writer fills the pipe and waits */
	while ((n = read(pfd[0], in + total, 1000)) > 0)
		total += n;
	pthread_join(th, NULL);
	printf("reader: %zu bytes, same: %d, then end of file: %zd\n", total, memcmp(in, big, sizeof big) == 0, n);
	close(pfd[0]);

	pipe2(pfd, O_NONBLOCK);
	char c;
	n = read(pfd[0], &c, 1);
	printf("O_NONBLOCK read of an empty pipe: %zd %s\n", n, strerrorname_np(errno));
	n = write(pfd[1], big, sizeof big);
	printf("O_NONBLOCK write of %zu: %zd\n", sizeof big, n);
	n = write(pfd[1], big, 10);
	printf("full: %zd %s\n", n, strerrorname_np(errno));
	fd_set rs, ws;
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_SET(pfd[0], &rs);
	FD_SET(pfd[1], &ws);
	struct timeval tv = {0};
	int r = select(pfd[1] + 1, &rs, &ws, NULL, &tv);
	printf("select: %d, readable %d, writable %d\n", r, FD_ISSET(pfd[0], &rs) != 0, FD_ISSET(pfd[1], &ws) != 0);
	printf("fcntl F_GETFL O_NONBLOCK: %d\n", (fcntl(pfd[0], F_GETFL) & O_NONBLOCK) != 0);
	close(pfd[0]);
	got = 0;
	handle(SIGPIPE, on_sig, 0);
	n = write(pfd[1], "x", 1);
	printf("write without a reader: %zd %s, SIGPIPE handled %d\n", n, strerrorname_np(errno), (int)got);
	close(pfd[1]);
}

int main(int argc, char **argv) {
	static const struct {
		const char *name;
		void (*fn)(void);
	} scenarios[] = {
	    {"alarm", do_alarm},         {"itimer", do_itimer},       {"posix", do_posix},       {"threadid", do_threadid},
	    {"restart", do_restart},     {"nanosleep", do_nanosleep}, {"sigsuspend", do_sigsuspend}, {"sigwait", do_sigwait},
	    {"sigqueue", do_sigqueue},   {"poll", do_poll},           {"futex", do_futex},
	    {"wakeother", do_wakeother}, {"sigevthread", do_sigevthread},
	    {"signalfd", do_signalfd},   {"pipes", do_pipes},
	};
	detail = argc == 3;
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: timers SCENARIO\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		if (strcmp(argv[1], scenarios[i].name) == 0) {
			scenarios[i].fn();
			return 0;
		}
	}
	fprintf(stderr, "timers: unknown scenario %s\n", argv[1]);
	return 2;
}
