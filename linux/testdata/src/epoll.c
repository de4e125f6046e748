// epoll and eventfd between two threads: a writer thread sends 5 messages
// down a pipe and adds 1..5 to an eventfd, 1 ms apart, then closes the
// pipe; the main thread waits in epoll_wait (the eventfd level-triggered,
// the pipe edge-triggered) until the pipe hangs up. Then the errors of
// epoll_ctl, EFD_SEMAPHORE, EFD_NONBLOCK and EPOLLONESHOT. The output
// does not depend on how the threads interleave.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int pfd[2], efd;

static void *writer(void *arg) {
	(void)arg;
	for (uint64_t i = 1; i <= 5; i++) {
		write(pfd[1], "abc", 3);
		write(efd, &i, 8);
		usleep(1000);
	}
	close(pfd[1]);
	return 0;
}

int main(void) {
	pipe(pfd);
	efd = eventfd(0, EFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 100};
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 200;
	epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
	int r = epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	printf("add again: %d %s\n", r, strerror(errno));
	int fd = open("/tmp/regular", O_CREAT | O_RDWR, 0600);
	r = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	printf("regular file: %d %s\n", r, strerror(errno));
	r = epoll_ctl(ep, EPOLL_CTL_DEL, fd, 0);
	printf("delete what is not there: %d %s\n", r, strerror(errno));
	struct epoll_event out[4];
	printf("nothing yet: %d\n", epoll_wait(ep, out, 4, 0));
	pthread_t t;
	pthread_create(&t, 0, writer, 0);
	uint64_t total = 0;
	int bytes = 0, hup = 0;
	while (!hup) {
		int n = epoll_wait(ep, out, 4, -1);
		for (int i = 0; i < n; i++) {
			uint64_t v;
			if (out[i].data.u64 == 100 && read(efd, &v, 8) == 8)
				total += v;
			if (out[i].data.u64 == 200) {
				char buf[64];
				int k;
				while ((k = read(pfd[0], buf, sizeof buf)) > 0)
					bytes += k;
				hup = k == 0;
			}
		}
	}
	pthread_join(t, 0);
	uint64_t v;
	if (read(efd, &v, 8) == 8)
		total += v;
	printf("eventfd total %llu, pipe bytes %d\n", (unsigned long long)total, bytes);
	int sem = eventfd(2, EFD_NONBLOCK | EFD_SEMAPHORE);
	read(sem, &v, 8);
	printf("semaphore %llu\n", (unsigned long long)v);
	read(sem, &v, 8);
	r = read(sem, &v, 8);
	printf("empty: %d %s\n", r, strerror(errno));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 7;
	uint64_t one = 1;
	write(sem, &one, 8);
	epoll_ctl(ep, EPOLL_CTL_DEL, pfd[0], 0);
	epoll_ctl(ep, EPOLL_CTL_ADD, sem, &ev);
	int first = epoll_wait(ep, out, 4, 0);
	int second = epoll_wait(ep, out, 4, 10);
	printf("oneshot: %d (data %llu), then %d\n", first, (unsigned long long)out[0].data.u64, second);
	epoll_ctl(ep, EPOLL_CTL_MOD, sem, &ev);
	printf("after EPOLL_CTL_MOD: %d\n", epoll_wait(ep, out, 4, 0));
	return 0;
}
