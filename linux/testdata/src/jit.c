/* A JIT's pattern: a function generated into writable and executable
   memory, called many times, then generated again in place with another
   constant (and the instruction cache flushed), six times over; then a
   leaf function replaced by one of another length, four times over. Each
   round prints what the function returned; the exit status is the number
   of rounds that ran old code. linux's TestRewrittenCode runs it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef long (*func)(long);

/* emit writes a function that adds k to its argument ten times. */
static void emit(unsigned char *at, int k) {
#if defined(__x86_64__)
	unsigned char code[] = {
		0xb9, 0x0a, 0x00, 0x00, 0x00,        /* mov $10, %ecx */
		0x48, 0x83, 0xc7, (unsigned char)k, /* 1: add $k, %rdi */
		0xff, 0xc9,                          /* dec %ecx */
		0x75, 0xf8,                          /* jne 1b */
		0x48, 0x89, 0xf8,                    /* mov %rdi, %rax */
		0xc3,                                /* ret */
	};
#else
	uint32_t code[] = {
		0xd2800141,                     /* mov x1, #10 */
		0x91000000 | (uint32_t)k << 10, /* 1: add x0, x0, #k */
		0xf1000421,                     /* subs x1, x1, #1 */
		0x54ffffc1,                     /* b.ne 1b */
		0xd65f03c0,                     /* ret */
	};
#endif
	memcpy(at, code, sizeof code);
	__builtin___clear_cache((char *)at, (char *)at + sizeof code);
}

/* emitLeaf writes x + 1000 (variant 0) or 3x (variant 1), of other
   lengths. */
static void emitLeaf(unsigned char *at, int variant) {
#if defined(__x86_64__)
	static const unsigned char plus[] = {0x48, 0x8d, 0x87, 0xe8, 0x03, 0x00, 0x00, 0xc3}; /* lea 1000(%rdi), %rax; ret */
	static const unsigned char times[] = {0x48, 0x8d, 0x04, 0x7f, 0x90, 0x90, 0x90, 0x90, 0xc3}; /* lea (%rdi,%rdi,2), %rax; nop x4; ret */
#else
	static const uint32_t plus[] = {0x910fa000, 0xd65f03c0}; /* add x0, x0, #1000; ret */
	static const uint32_t times[] = {0x8b000400, 0xd503201f, 0xd65f03c0}; /* add x0, x0, x0, lsl #1; nop; ret */
#endif
	size_t n = variant ? sizeof times : sizeof plus;
	memcpy(at, variant ? (const void *)times : (const void *)plus, n);
	__builtin___clear_cache((char *)at, (char *)at + n);
}

int main(void) {
	unsigned char *buf = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || mprotect(buf, 65536, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return 100;
	int stale = 0;
	for (int k = 1; k <= 6; k++) {
		emit(buf, k);
		long r = 0;
		for (int i = 0; i < 1000; i++)
			r = ((func)buf)(i) - i;
		printf("round %d: %ld\n", k, r);
		stale += r != 10 * k;
	}
	for (int round = 0; round < 4; round++) {
		emitLeaf(buf + 4096, round & 1);
		long sum = 0, want = 0;
		for (long i = 0; i < 1000; i++) {
			sum += ((func)(buf + 4096))(i);
			want += round & 1 ? 3 * i : i + 1000;
		}
		printf("leaf %d: %ld\n", round, sum);
		stale += sum != want;
	}
	return stale;
}
