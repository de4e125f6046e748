/* timerfd: timers read through descriptors. Built static for x86-64 and
 * AArch64 (the command is in linux/timerfd_test.go); the expected output
 * is what the host's kernel prints (x86-64) and qemu-user (AArch64). It
 * does not depend on timing: counts and times are printed as
 * comparisons.
 *
 * Errors of timerfd_create, timerfd_settime, read and write; a one-shot
 * timer read blocking, then EAGAIN; a periodic one counted after a
 * sleep; timerfd_gettime and the old value settime returns; an absolute
 * expiry in the future and in the past; poll, select, and epoll
 * (level- and edge-triggered: a periodic timer that fired stops until a
 * read or timerfd_gettime starts it again) waiting for one; a thread
 * blocked in a read while another thread sets the timer sooner.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void msleep(long ms) {
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
	nanosleep(&ts, 0);
}

static struct itimerspec its(long value_ms, long interval_ms) {
	struct itimerspec t = {
		.it_interval = {interval_ms / 1000, interval_ms % 1000 * 1000000L},
		.it_value = {value_ms / 1000, value_ms % 1000 * 1000000L},
	};
	return t;
}

static void result(const char *what, long r) {
	if (r < 0)
		printf("%s: -1 %s\n", what, strerror(errno));
	else
		printf("%s: %ld\n", what, r);
}

static int64_t ms(const struct timespec *ts) { return ts->tv_sec * 1000 + ts->tv_nsec / 1000000; }

static void errors(void) {
	result("create, bad clock", timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0));
	result("create, bad flags", timerfd_create(CLOCK_MONOTONIC, 1));
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec t = its(10, 0), old;
	result("settime, bad flags", timerfd_settime(fd, 4, &t, 0));
	t.it_value.tv_nsec = 1000000000;
	result("settime, bad timespec", timerfd_settime(fd, 0, &t, 0));
	t = its(10, 0);
	result("settime, bad descriptor", timerfd_settime(99, 0, &t, 0));
	result("settime, not a timerfd", timerfd_settime(1, 0, &t, 0));
	result("gettime, not a timerfd", timerfd_gettime(1, &old));
	uint64_t v = 0;
	result("read of 4 bytes", read(fd, &v, 4));
	result("write", write(fd, &v, 8));
	close(fd);
}

static void oneshot(void) {
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec t = its(50, 0), cur;
	int64_t start = now_ns();
	timerfd_settime(fd, 0, &t, 0);
	timerfd_gettime(fd, &cur);
	printf("one-shot: remaining in (0, 50] ms: %d, interval 0: %d\n", ms(&cur.it_value) <= 50 && (cur.it_value.tv_sec || cur.it_value.tv_nsec), !cur.it_interval.tv_sec && !cur.it_interval.tv_nsec);
	uint64_t v = 0;
	result("one-shot read", read(fd, &v, 8));
	printf("  expirations %llu, after 50 ms or more: %d\n", (unsigned long long)v, now_ns() - start >= 50000000);
	timerfd_gettime(fd, &cur);
	printf("  then gettime: %lld %lld\n", (long long)cur.it_value.tv_sec, (long long)cur.it_value.tv_nsec);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	result("  nonblocking read", read(fd, &v, 8));
	close(fd);
}

static void periodic(void) {
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct itimerspec t = its(10, 10), old;
	uint64_t v = 0;
	result("periodic, nothing yet", read(fd, &v, 8));
	timerfd_settime(fd, 0, &t, 0);
	msleep(55);
	result("periodic read", read(fd, &v, 8));
	printf("  expirations >= 5: %d, <= 7: %d\n", v >= 5, v <= 7);
	result("  read again at once", read(fd, &v, 8));
	struct itimerspec cur;
	timerfd_gettime(fd, &cur);
	printf("  gettime: next in (0, 10] ms: %d, interval %lld ms\n", ms(&cur.it_value) <= 10 && (cur.it_value.tv_sec || cur.it_value.tv_nsec), (long long)ms(&cur.it_interval));
	t = its(0, 0);
	timerfd_settime(fd, 0, &t, &old);
	printf("  disarmed, old: next in (0, 10] ms: %d, interval %lld ms\n", ms(&old.it_value) <= 10 && (old.it_value.tv_sec || old.it_value.tv_nsec), (long long)ms(&old.it_interval));
	msleep(30);
	result("  read after disarming", read(fd, &v, 8));
	timerfd_gettime(fd, &cur);
	printf("  gettime: %lld %lld\n", (long long)ms(&cur.it_value), (long long)ms(&cur.it_interval));
	close(fd);
}

static void absolute(void) {
	int fd = timerfd_create(CLOCK_REALTIME, 0);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct itimerspec t = {.it_value = now};
	t.it_value.tv_nsec += 20000000;
	if (t.it_value.tv_nsec >= 1000000000) {
		t.it_value.tv_sec++;
		t.it_value.tv_nsec -= 1000000000;
	}
	int64_t start = now_ns();
	result("absolute settime", timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &t, 0));
	uint64_t v = 0;
	result("absolute read", read(fd, &v, 8));
	printf("  expirations %llu, after 20 ms or more: %d\n", (unsigned long long)v, now_ns() - start >= 20000000);
	t.it_value.tv_sec -= 5;
	t.it_interval.tv_sec = 1;
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &t, 0);
	result("past absolute read", read(fd, &v, 8));
	printf("  expirations %llu\n", (unsigned long long)v);
	close(fd);
}

static void pollers(void) {
	int fd = timerfd_create(CLOCK_BOOTTIME, 0);
	struct itimerspec t = its(5, 5);
	timerfd_settime(fd, 0, &t, 0);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	result("poll", poll(&pfd, 1, -1));
	printf("  revents %#x\n", pfd.revents);
	uint64_t v = 0;
	read(fd, &v, 8);
	printf("  expirations >= 1: %d\n", v >= 1);
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	result("select", select(fd + 1, &rd, 0, 0, 0));
	printf("  set: %d\n", FD_ISSET(fd, &rd) != 0);
	read(fd, &v, 8);
	pfd.revents = 0;
	result("poll, 1 ms timeout, timer in 5 ms", poll(&pfd, 1, 1));

	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7}, out[2];
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	int n = epoll_wait(ep, out, 2, -1);
	printf("epoll, level-triggered: %d, data %llu\n", n, (unsigned long long)out[0].data.u64);
	n = epoll_wait(ep, out, 2, -1);
	printf("  again without reading: %d\n", n);
	read(fd, &v, 8);
	ev.events = EPOLLIN | EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	result("epoll, edge-triggered", epoll_wait(ep, out, 2, -1));
	/* The timer stopped when it fired: no other edge until it is read. */
	result("  again without reading, 30 ms", epoll_wait(ep, out, 2, 30));
	read(fd, &v, 8);
	printf("  read: expirations >= 6: %d\n", v >= 6);
	result("  after the read", epoll_wait(ep, out, 2, -1));
	struct itimerspec cur;
	timerfd_gettime(fd, &cur); /* starts it again too */
	result("  after gettime", epoll_wait(ep, out, 2, -1));
	read(fd, &v, 8);
	printf("  read: expirations >= 2: %d\n", v >= 2);
	t = its(0, 0);
	timerfd_settime(fd, 0, &t, 0);
	result("epoll, disarmed, 20 ms", epoll_wait(ep, out, 2, 20));
	close(ep);
	close(fd);
}

static int shared;

static void *reader(void *arg) {
	(void)arg;
	uint64_t v = 0;
	int64_t start = now_ns();
	long r = read(shared, &v, 8);
	int64_t took = now_ns() - start;
	printf("thread read: %ld, expirations %llu, before the first setting's 10 s: %d\n", r, (unsigned long long)v, took < 5000000000LL);
	return 0;
}

static void rearm(void) {
	shared = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec t = its(10000, 0), old;
	timerfd_settime(shared, 0, &t, 0);
	pthread_t th;
	pthread_create(&th, 0, reader, 0);
	msleep(100); /* the reader blocks first */
	t = its(5, 0);
	timerfd_settime(shared, 0, &t, &old);
	printf("re-armed; old remaining > 9 s: %d\n", old.it_value.tv_sec >= 9);
	pthread_join(th, 0);
	close(shared);
}

int main(void) {
	errors();
	oneshot();
	periodic();
	absolute();
	pollers();
	rearm();
	return 0;
}
