/* vdso: calls the functions glibc takes from the vDSO (clock_gettime,
 * gettimeofday, time, clock_getres; sched_getcpu on x86-64) and prints
 * what does not depend on the clock's value. Built static and dynamic for
 * x86-64 and AArch64 (the command is in linux/signals_test.go). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void) {
	struct timespec a, b, res;
	struct timeval tv;
	int ok = clock_gettime(CLOCK_MONOTONIC, &a) == 0 && clock_gettime(CLOCK_MONOTONIC, &b) == 0;
	printf("clock_gettime: %d, monotonic: %d\n", ok, b.tv_sec > a.tv_sec || b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
	printf("gettimeofday: %d\n", gettimeofday(&tv, NULL) == 0 && tv.tv_sec > 1700000000);
	printf("time: %d\n", time(NULL) > 1700000000);
	int r = clock_getres(CLOCK_MONOTONIC, &res);
	printf("clock_getres: %d %ld\n", r, res.tv_nsec);
	printf("sched_getcpu: %d\n", sched_getcpu() >= 0);
	return 0;
}
