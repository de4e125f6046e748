// cold: C++ with rarely taken paths (__builtin_expect, [[unlikely]],
// __attribute__((cold)) callees).  At -O2 GCC moves those blocks into
// "fn.cold" partitions in .text.unlikely: separate FDEs whose first row
// already has a non-entry CFA (the partition starts mid-frame).  The cold
// paths do run (and one throws), so the stack passes through them.
// Exits with status 9.
#include <cstdio>
#include <exception>

static int rare_hits;

struct Failure : std::exception {
	const char *what() const noexcept override { return "check failed"; }
};

__attribute__((cold, noinline)) static void report(const char *what, long v)
{
	rare_hits++;
	std::printf("rare: %s %ld\n", what, v);
}

__attribute__((noinline)) static long check(long v)
{
	long buf[8];
	for (int i = 0; i < 8; i++)
		buf[i] = v * i;
	if (__builtin_expect(v % 37 == 5, 0)) {
		report("check", v);
		if (v > 100)
			throw Failure();
		buf[3] += 1000;
	}
	return buf[3] + buf[7];
}

__attribute__((noinline)) static long step(long v, long acc)
{
	if (v % 53 == 7) [[unlikely]] {
		report("step", v);
		acc = acc * 3 + check(v + 1);
		return acc ^ 0x1234;
	}
	return acc + check(v);
}

__attribute__((noinline)) static long run(long n)
{
	long acc = 0, failed = 0;
	for (long v = 0; v < n; v++) {
		try {
			acc = step(v, acc);
		} catch (const std::exception &e) {
			failed++;
			std::printf("caught at %ld: %s\n", v, e.what());
		}
	}
	return acc + failed * 100000;
}

int main()
{
	long r = run(200);
	std::printf("result = %ld, rare hits = %d\n", r, rare_hits);
	return 9;
}
