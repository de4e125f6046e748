// except: C++ exceptions thrown through several frames (with destructors to
// run on the way: cleanup landing pads), caught by type, rethrown, nested.
// Exits with status 1.
#include <cstdio>
#include <exception>

static int live, destroyed;

struct Guard {
	int id;
	explicit Guard(int i) : id(i) { live++; }
	~Guard() { live--; destroyed += id; }
};

struct Oops {
	int depth;
	long value;
};

// own std::exception subclass: std::out_of_range & co. would pull std::string
// into the static binaries, and libgcc's first throw sorts every FDE of the
// binary (~1.5 million more instructions)
struct Range : std::exception {
	const char *msg;
	explicit Range(const char *m) : msg(m) {}
	const char *what() const noexcept override { return msg; }
};

__attribute__((noinline)) static long thrower(int depth, long v)
{
	Guard g(depth);
	if (depth == 0) {
		if (v % 3 == 0)
			throw Oops{depth, v};
		if (v % 3 == 1)
			throw Range("v % 3 == 1");
		return v * 2;
	}
	long r = thrower(depth - 1, v + depth);
	return r + g.id;
}

__attribute__((noinline)) static long middle(int depth, long v)
{
	Guard g(100);
	try {
		return thrower(depth, v);
	} catch (const Oops &o) {
		if (o.value % 2 == 0)
			throw;                     // rethrow through main's frames
		return -o.value;
	}
}

__attribute__((noinline)) static long outer(long v)
{
	try {
		return middle(4, v);
	} catch (const Oops &o) {
		return 1000 + o.depth + o.value;
	} catch (const std::exception &e) {
		std::printf("  std::exception: %s\n", e.what());
		return 2000;
	}
}

int main()
{
	long sum = 0;
	for (long v = 0; v < 6; v++) {
		long r = outer(v);
		std::printf("outer(%ld) = %ld (live %d)\n", v, r, live);
		sum += r;
	}
	std::printf("sum = %ld, destroyed = %d\n", sum, destroyed);
	return 1;
}
