/* threadwork N: the same work done by the main thread alone (N = 1) or
 * split over N threads (N = 2..8) that main starts and joins: each item is
 * a small tree of calls and returns, so the shadow stack and the unwinder
 * are busy all the time. The output is the same for every N. Built static
 * for x86-64 and AArch64 (the command is in linux/threads_test.go); the
 * verify package's BenchmarkVerifyThreads compares "threadwork 1" with
 * "threadwork 4". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 2400
#define MAXTHREADS 8

static int nthreads = 1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;

__attribute__((noinline)) static unsigned long leaf(unsigned long x) {
	return (x * 2654435761u) ^ (x >> 7);
}

/* A binary tree of calls, depth levels deep. */
__attribute__((noinline)) static unsigned long node(unsigned long x, int depth) {
	if (depth == 0)
		return leaf(x);
	return node(x + 1, depth - 1) + (node(x ^ (unsigned long)depth, depth - 1) >> 1);
}

__attribute__((noinline)) static unsigned long item(int i) {
	return node((unsigned long)i, 4 + i % 3);
}

/* work does the items of share k of nthreads: every nthreads-th one. */
__attribute__((noinline)) static void work(long k) {
	unsigned long s = 0;
	for (int i = (int)k; i < ITEMS; i += nthreads)
		s += item(i);
	pthread_mutex_lock(&mu);
	total += s;
	pthread_mutex_unlock(&mu);
}

/* A thread's work is one frame deeper than start_thread (no SFrame data
 * in glibc), as main's is than __libc_start_call_main: the unwinder walks
 * the same frames in both cases. */
__attribute__((noinline)) static void *thread(void *arg) {
	work((long)arg);
	return arg;
}

int main(int argc, char **argv) {
	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (nthreads < 1 || nthreads > MAXTHREADS) {
		fprintf(stderr, "usage: threadwork [1-%d]\n", MAXTHREADS);
		return 2;
	}
	if (nthreads == 1)
		work(0);
	else {
		pthread_t t[MAXTHREADS];
		for (long k = 0; k < nthreads; k++)
			if (pthread_create(&t[k], 0, thread, (void *)k) != 0)
				return 1;
		for (int k = 0; k < nthreads; k++)
			pthread_join(t[k], 0);
	}
	printf("total %lu\n", total);
	return 0;
}
