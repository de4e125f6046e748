/* callend.c: the program's work runs below calls that end their functions
 * (calls of noreturn functions, each the last instruction of its caller),
 * as in busybox (run_applet_and_exit) and Tcl (Tcl_Exit). Every unwind
 * from inside the work reaches such a return address: after dispatch_pad
 * it lies in the padding before an aligned function (ended-early), after
 * dispatch_next on the first byte of the function that follows (a CFA
 * mismatch in a caller's frame). verify must say so for every instruction,
 * and batched runs must still merge. Freestanding, built with the host's
 * Debian 12 gcc 12 and binutils 2.40 (SFrame V1), -falign-functions=1 and
 * -fno-toplevel-reorder, see ../Makefile. Exits with status 77 natively
 * and under qemu-aarch64. */

#define NOINLINE __attribute__((noinline))
#define NORETURN __attribute__((noreturn))

static NORETURN void sys_exit(long status)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(231), "D"(status) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x0 __asm__("x0") = status;
	register long x8 __asm__("x8") = 94;
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8) : "memory");
#endif
	for (;;)
		;
}

static volatile long sink;

NOINLINE long leaf(long x)
{
	return x * 3 + (x >> 2);
}

NOINLINE long mid(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		s += leaf(i);
		sink = s;
	}
	return s;
}

static long total;

NOINLINE NORETURN void work(long n, long last)
{
	total += mid(n) + mid(n / 2);
	if (last)
		sys_exit(77);
	sys_exit(1);
}

NOINLINE NORETURN void dispatch_pad(long n)
{
	volatile long frame[3] = {n};
	sink = (long)frame;
	work(frame[0], 1);
}

/* Aligned: dispatch_pad's return address lies in the padding before it. */
__attribute__((aligned(64))) NOINLINE NORETURN void dispatch_next(long n)
{
	volatile long frame[3] = {n};
	sink = (long)frame;
	work(frame[0], 0);
}

/* Right behind dispatch_next (functions aligned to 1 byte): dispatch_next's
 * return address is its first byte. */
NOINLINE void after(void)
{
	sink = 0;
}

/* With an argument, through dispatch_next; without, dispatch_pad. */
void cmain(long argc)
{
	after();
	if (argc > 1)
		dispatch_next(20000);
	dispatch_pad(20000);
}

#if defined(__x86_64__)
__asm__(
	"	.text\n"
	"	.globl	_start\n"
	"	.type	_start, @function\n"
	"_start:\n"
	"	xorl	%ebp, %ebp\n"
	"	movq	(%rsp), %rdi\n"
	"	andq	$-16, %rsp\n"
	"	call	cmain\n"
	"	hlt\n"
	"	.size	_start, .-_start\n");
#elif defined(__aarch64__)
__asm__(
	"	.text\n"
	"	.globl	_start\n"
	"	.type	_start, %function\n"
	"_start:\n"
	"	mov	x29, #0\n"
	"	mov	x30, #0\n"
	"	ldr	x0, [sp]\n"
	"	bl	cmain\n"
	"	brk	#0\n"
	"	.size	_start, .-_start\n");
#endif
