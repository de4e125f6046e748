/* threads: two worker threads and the main thread share a counter under a
 * mutex and hand turns over with a condition variable; the output is the
 * same however the threads interleave. Built static for x86-64 and
 * AArch64 (the command is in linux/threads_test.go).
 *
 * "threads timeout": a timed wait on a condition variable nobody signals
 * times out, while main yields until the worker is done.
 * "threads deadlock": a worker waits on a condition variable nobody
 * signals while main joins it. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn; /* which worker goes next: 0 or 1 */
static long total;

__attribute__((noinline)) static long work(int id, int i) {
	long s = 0;
	for (int k = 0; k < 1000 * (id + 1); k++)
		s += (k ^ i) & 7;
	return s;
}

static void *worker(void *arg) {
	int id = (int)(long)arg;
	for (int i = 0; i < 5; i++) {
		long w = work(id, i);
		pthread_mutex_lock(&mu);
		while (turn != id)
			pthread_cond_wait(&cv, &mu);
		total += w;
		printf("worker %d round %d\n", id, i);
		turn = 1 - id;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, 0);
	return (void *)(long)(id + 10);
}

static volatile int done;

static void *timed(void *arg) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 5000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&mu);
	int r = pthread_cond_timedwait(&cv, &mu, &ts);
	pthread_mutex_unlock(&mu);
	printf("timedwait: %s\n", r == ETIMEDOUT ? "timed out" : "woken");
	done = 1;
	return arg;
}

static void *stuck(void *arg) {
	pthread_mutex_lock(&mu);
	pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

int main(int argc, char **argv) {
	pthread_t t[2];
	if (argc > 1) {
		int dead = strcmp(argv[1], "deadlock") == 0;
		pthread_create(&t[0], 0, dead ? stuck : timed, 0);
		long yields = 0;
		while (!dead && !done) {
			sched_yield();
			yields++;
		}
		pthread_join(t[0], 0);
		printf("joined after %s\n", yields > 0 ? "yielding" : "no yield");
		return 0;
	}
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], 0, worker, (void *)i) != 0)
			return 1;
	long sum = 0;
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("total %ld joined %ld\n", total, sum);
	return 0;
}
