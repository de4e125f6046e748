/* hostsig: signals sent from outside (the user's Ctrl-C, a kill of the
 * emulator) while the program waits for its stdin or computes. Built
 * static for x86-64 and AArch64 (the command is in
 * linux/hostsignal_test.go). Each line it prints is flushed, so that the
 * sender knows what it is doing.
 *
 *   read     SIGUSR1 has an SA_RESTART handler, SIGINT one without (each
 *            says it ran): a read of stdin restarts after the first,
 *            fails with EINTR after the second; SIGQUIT is ignored; it
 *            echoes what it reads until the end of its input
 *   spin     computes until a signal ends it (the default action)
 *   ignore   ignores SIGINT, SIGTERM and SIGHUP and computes forever
 *   pause    waits in pause() for a signal, SIGUSR1 has a handler; then
 *            in sigwaitinfo() for SIGUSR2, blocked
 *   deadlock two threads wait for each other (a mutex never released): no
 *            signal is awaited, so it stays a deadlock */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t last;

static void on_signal(int sig) {
	char m[] = "handler NN\n";
	m[8] = '0' + sig / 10;
	m[9] = '0' + sig % 10;
	write(1, m, sizeof m - 1);
	last = sig;
}

static void handle(int sig, int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static int readloop(void) {
	handle(SIGUSR1, SA_RESTART);
	handle(SIGINT, 0);
	signal(SIGQUIT, SIG_IGN);
	printf("ready\n");
	fflush(stdout);
	char buf[256];
	for (;;) {
		ssize_t n = read(0, buf, sizeof buf);
		int seen = last;
		last = 0;
		if (n < 0 && errno == EINTR) {
			printf("read: EINTR (signal %d handled)\n", seen);
		} else if (n < 0) {
			printf("read: %s\n", strerror(errno));
			return 1;
		} else if (n == 0) {
			printf("end of input (signal %d handled before)\n", seen);
			return 0;
		} else {
			printf("read %zd bytes: %.*s (signal %d handled before)\n", n, (int)n, buf, seen);
		}
		fflush(stdout);
	}
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *locker(void *arg) {
	pthread_mutex_lock(&lock);
	return arg;
}

static int spin(void) {
	printf("ready\n");
	fflush(stdout);
	volatile unsigned long x = 0;
	for (;;)
		x = x * 6364136223846793005UL + 1;
}

int main(int argc, char **argv) {
	if (argc == 2 && strcmp(argv[1], "read") == 0)
		return readloop();
	if (argc == 2 && strcmp(argv[1], "spin") == 0)
		return spin();
	if (argc == 2 && strcmp(argv[1], "pause") == 0) {
		handle(SIGUSR1, 0);
		printf("ready\n");
		fflush(stdout);
		int r = pause();
		printf("pause: %d %s (signal %d handled)\n", r, strerror(errno), (int)last);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("waiting\n");
		fflush(stdout);
		siginfo_t si;
		r = sigwaitinfo(&set, &si);
		printf("sigwaitinfo: %d, si_code %d, si_pid %d\n", r, si.si_code, (int)si.si_pid);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "deadlock") == 0) {
		pthread_t t;
		pthread_mutex_lock(&lock);
		printf("ready\n");
		fflush(stdout);
		pthread_create(&t, NULL, locker, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "ignore") == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		return spin();
	}
	fprintf(stderr, "usage: hostsig read|spin|ignore|pause|deadlock\n");
	return 2;
}
