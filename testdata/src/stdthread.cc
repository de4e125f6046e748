// stdthread: C++ threads whose output does not depend on the interleaving.
// Three std::threads throw and catch exceptions through several frames with
// destructors, count under a std::mutex (lock_guard), and print in turn
// (std::unique_lock + std::condition_variable hand the turn over).  A
// thread_local object with a constructor and a destructor is made in each
// thread that touches it and destroyed when the thread exits.  A
// std::promise carries an exception from a thread to main, std::async
// returns a value, and a detached std::thread reports to main through the
// condition variable.  Exits with status 8, or 100 + the number of failed
// checks.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <future>
#include <mutex>
#include <thread>

static std::mutex mu;
static std::condition_variable cv;
static int turn;           // which worker may print
static long counter;       // under mu
static bool detached_done; // under mu
static long detached_result;
static std::atomic<int> tl_made, tl_destroyed;
static std::atomic<long> guards_destroyed, tl_sum;
static int failures;

static void check(bool ok, const char *what)
{
	if (!ok) {
		std::printf("FAILED: %s\n", what);
		failures++;
	}
}

// one per thread that uses it, destroyed at that thread's exit
struct Tally {
	long sum = 0;
	Tally() { tl_made++; }
	~Tally()
	{
		tl_sum += sum;
		tl_destroyed++;
	}
};
static thread_local Tally tally;

struct Guard {
	int id;
	explicit Guard(int i) : id(i) {}
	~Guard() { guards_destroyed += id; }
};

// own std::exception subclass (see except.cc: std::runtime_error would pull
// std::string into the static binaries)
struct Fault : std::exception {
	int code;
	explicit Fault(int c) : code(c) {}
	const char *what() const noexcept override { return "fault"; }
};

__attribute__((noinline)) static long dive(int depth, int code)
{
	Guard g(depth);
	if (depth == 0) {
		if (code % 2)
			throw Fault(code);
		return code;
	}
	return dive(depth - 1, code) + g.id;
}

__attribute__((noinline)) static long attempt(int depth, int code)
{
	Guard g(1000);
	try {
		return dive(depth, code);
	} catch (const Fault &f) {
		if (f.code % 3 == 0)
			throw;  // rethrown to the thread's own function
		return -f.code;
	}
}

static void worker(int id)
{
	long r = 0;
	int caught = 0;
	for (int i = 0; i < 4; i++) {
		try {
			r += attempt(4 + 3 * id, id + i);
		} catch (const std::exception &) {
			caught++;
			r += 100;
		}
	}
	tally.sum += r;
	for (int i = 0; i < 30; i++) {
		std::lock_guard<std::mutex> g(mu);
		counter += id + 1;
	}
	std::unique_lock<std::mutex> lk(mu);
	cv.wait(lk, [id] { return turn == id; });
	std::printf("worker %d: result %ld, caught %d in the thread\n", id, r, caught);
	turn++;
	lk.unlock();
	cv.notify_all();
}

static long produce(int code)
{
	tally.sum += code;
	return attempt(5, code);
}

int main()
{
	std::thread ts[3];
	for (int i = 0; i < 3; i++)
		ts[i] = std::thread(worker, i);
	for (auto &t : ts)
		t.join();
	std::printf("main: counter %ld, thread_local made %d destroyed %d, sum %ld\n",
		    counter, tl_made.load(), tl_destroyed.load(), tl_sum.load());

	// an exception from a thread, carried to main by a promise
	std::promise<long> p;
	std::future<long> f = p.get_future();
	std::thread pt([&p] {
		try {
			p.set_value(produce(9));
		} catch (...) {
			p.set_exception(std::current_exception());
		}
	});
	try {
		std::printf("promise: value %ld\n", f.get());
	} catch (const Fault &e) {
		std::printf("promise: main caught %s %d from the thread\n", e.what(), e.code);
	}
	pt.join();

	// a value computed in another thread by std::async
	std::future<long> a = std::async(std::launch::async, produce, 4);
	std::printf("async: value %ld\n", a.get());

	// a detached thread, waited for through the condition variable
	std::thread([] {
		long r = dive(30, 2);
		std::lock_guard<std::mutex> g(mu);
		detached_result = r;
		detached_done = true;
		cv.notify_all();
	}).detach();
	{
		std::unique_lock<std::mutex> lk(mu);
		cv.wait(lk, [] { return detached_done; });
	}
	std::printf("detached: result %ld\n", detached_result);

	std::printf("main: thread_local made %d destroyed %d, sum %ld, guards %ld\n",
		    tl_made.load(), tl_destroyed.load(), tl_sum.load(), guards_destroyed.load());
	check(counter == 30 * (1 + 2 + 3), "counter");
	check(tl_made == 5 && tl_destroyed == 5, "thread_local objects");
	check(tally.sum == 0, "main's thread_local untouched");
	std::printf("failures: %d\n", failures);
	return failures ? 100 + failures : 8;
}
