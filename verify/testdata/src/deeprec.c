/* deeprec.c: a recursion 20 000 frames deep that stores, at every level,
 * into a local of its outermost caller (through a pointer) and into its
 * immediate caller's (an out parameter): stores among the words the
 * callers' unwind reads, at both ends of a deep stack. verify must check
 * it in time linear in the instructions, not in the instructions times
 * the depth. Freestanding, built with the host's Debian 12 gcc 12 and
 * binutils 2.40 (SFrame V1), see ../Makefile. Exits with status 83
 * (the sum's low byte), natively and under qemu-aarch64. */

#define NOINLINE __attribute__((noinline))

NOINLINE static long rec(long n, volatile long *top, long *out)
{
	long mine = 0;
	if (n == 0) {
		*out = *top;
		return 1;
	}
	long r = rec(n - 1, top, &mine) + (n & 3);
	*top += 1;
	*out = mine + 1;
	return r;
}

long cmain(void)
{
	volatile long top = 0;
	long out = 0, s = 0;
	for (int i = 0; i < 3; i++)
		s += rec(20000, &top, &out) + out;
	return s;
}

#if defined(__x86_64__)
__asm__(
	"	.text\n"
	"	.globl	_start\n"
	"	.type	_start, @function\n"
	"_start:\n"
	"	xorl	%ebp, %ebp\n"
	"	andq	$-16, %rsp\n"
	"	call	cmain\n"
	"	movl	%eax, %edi\n"
	"	movl	$231, %eax\n" /* exit_group */
	"	syscall\n"
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
	"	bl	cmain\n"
	"	mov	x8, #94\n" /* exit_group */
	"	svc	#0\n"
	"	.size	_start, .-_start\n");
#endif
