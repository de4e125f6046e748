/* pthreads: POSIX threads whose output does not depend on the interleaving.
 * Four joinable workers each run pthread_once, a recursive walk (deep
 * stacks in non-main threads), a callback through a function pointer, and
 * a mutex-protected counter; they meet main at a barrier, then print in
 * turn (a condition variable hands the turn over) and return a value to
 * pthread_join.  Thread-local storage: an initialised __thread (.tdata) and
 * _Thread_local zero ones (.tbss) with per-thread values.  A detached
 * thread (64 KiB stack) reports to main through a semaphore, not a join.
 * Exits with status 6, or 100 + the number of failed checks. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define NWORKERS 4
#define ROUNDS 50

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn = -1;  /* which worker may print; main starts it at 0 */
static long counter;   /* incremented under lock by every worker */
static pthread_barrier_t barrier;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static int failures;

static __thread int tls_seed = 7;     /* initialised: each thread starts at 7 */
static _Thread_local long tls_calls;  /* zero-initialised */
static _Thread_local char tls_name[16];

typedef long (*op_fn)(long, long);

__attribute__((noipa)) static long add_op(long a, long b) { return a + b; }
__attribute__((noipa)) static long mul_op(long a, long b) { return a * (b + 3) % 10007; }
__attribute__((noipa)) static long xor_op(long a, long b) { return (a << 2) ^ b; }

static const op_fn ops[] = {add_op, mul_op, xor_op, mul_op};

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAILED: %s\n", what);
		failures++;
	}
}

static void init_once(void) { once_runs++; }

/* recursion with a frame of its own at every level */
__attribute__((noipa)) static long walk(int depth, long acc)
{
	volatile long frame[6] = {acc, depth, tls_seed, acc ^ depth, 3, 5};
	tls_calls++;
	if (depth == 0)
		return frame[0] % 1000 + frame[2];
	return walk(depth - 1, (acc * 3 + depth) % 1000003) + frame[4] + (frame[1] & 1);
}

/* the callback is called through a function pointer */
__attribute__((noipa)) static long apply(op_fn f, long a, long b)
{
	tls_calls++;
	return f(a, b);
}

struct job {
	int id, depth;
	long result;
};

static void wait_turn(int id)
{
	pthread_mutex_lock(&lock);
	while (turn != id)
		pthread_cond_wait(&turn_changed, &lock);
}

static void pass_turn(void)
{
	turn++;
	pthread_cond_broadcast(&turn_changed);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	pthread_once(&once, init_once);
	tls_seed += 10 * j->id;
	snprintf(tls_name, sizeof tls_name, "worker %d", j->id);
	long r = walk(j->depth, j->id + 1);
	r = apply(ops[j->id], r, j->id);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		counter += j->id + 1;
		pthread_mutex_unlock(&lock);
	}
	pthread_barrier_wait(&barrier);
	wait_turn(j->id);
	printf("%s: depth %d, tls_seed %d, tls_calls %ld, result %ld\n",
	       tls_name, j->depth, tls_seed, tls_calls, r);
	pass_turn();
	j->result = r;
	return (void *)(r + 1);
}

static sem_t detached_done;
static long detached_result;
static int detached_seed;

static void *detached(void *arg)
{
	(void)arg;
	detached_seed = tls_seed;  /* its own copy: still the initial 7 */
	long w = walk(40, 9);
	detached_result = apply(add_op, w, tls_calls);
	sem_post(&detached_done);
	return NULL;
}

int main(void)
{
	pthread_t th[NWORKERS];
	struct job jobs[NWORKERS];
	tls_seed = 1;  /* main's copy only */

	check(pthread_barrier_init(&barrier, NULL, NWORKERS + 1) == 0, "barrier_init");
	for (int i = 0; i < NWORKERS; i++) {
		jobs[i] = (struct job){i, 20 + 15 * i, 0};
		check(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0, "pthread_create");
	}
	/* every worker has done its walk and counted when the barrier opens */
	pthread_barrier_wait(&barrier);
	pthread_mutex_lock(&lock);
	printf("main: barrier passed, counter %ld, once_runs %d\n", counter, once_runs);
	turn = 0;
	pthread_cond_broadcast(&turn_changed);
	pthread_mutex_unlock(&lock);

	long sum = 0;
	for (int i = 0; i < NWORKERS; i++) {
		void *ret;
		check(pthread_join(th[i], &ret) == 0, "pthread_join");
		check((long)ret == jobs[i].result + 1, "return value");
		sum += (long)ret;
	}
	printf("main: joined %d workers, sum of return values %ld\n", NWORKERS, sum);

	pthread_attr_t attr;
	pthread_t dt;
	sem_init(&detached_done, 0, 0);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	check(pthread_create(&dt, &attr, detached, NULL) == 0, "pthread_create detached");
	pthread_attr_destroy(&attr);
	while (sem_wait(&detached_done) != 0)
		check(errno == EINTR, "sem_wait");
	printf("detached: tls_seed %d, result %ld\n", detached_seed, detached_result);

	printf("main: tls_seed %d, tls_calls %ld, tls_name \"%s\"\n", tls_seed, tls_calls, tls_name);
	check(counter == ROUNDS * (1 + 2 + 3 + 4), "counter");
	check(once_runs == 1, "pthread_once");
	check(tls_seed == 1 && tls_calls == 0 && tls_name[0] == 0, "main's TLS untouched");
	check(detached_seed == 7, "new thread's TLS initialised");
	pthread_barrier_destroy(&barrier);
	printf("failures: %d\n", failures);
	return failures ? 100 + failures : 6;
}
