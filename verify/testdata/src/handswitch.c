/* handswitch.c: coroutines switched by hand-written assembly, as Ruby's
 * and boost.context's are: callee-saved registers (and on AArch64 the
 * link register) saved below SP, SP swapped, restored, ret. A new
 * context's stack holds zeros for the registers and its entry function
 * where ret finds it: on x86-64 with 0 above as its return address, on
 * AArch64 in x30 (entry's own address). The switch has no CFI. The shadow
 * stack must see the first switch as a new context and the others as
 * resumes. Freestanding, built with the host's Debian 12 gcc 12 and
 * binutils 2.40 (SFrame V1), see ../Makefile. Exits with status 104 (the
 * total's low byte), natively and under qemu-aarch64. */

#define NOINLINE __attribute__((noinline))

#if defined(__x86_64__)
void xfer(void **save, void *to);
__asm__(
	"	.text\n	.globl xfer\n	.type xfer, @function\nxfer:\n"
	"	pushq %rbp\n	pushq %rbx\n	pushq %r12\n	pushq %r13\n	pushq %r14\n	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n	popq %r14\n	popq %r13\n	popq %r12\n	popq %rbx\n	popq %rbp\n"
	"	ret\n	.size xfer, .-xfer\n"
	"	.globl _start\n	.type _start, @function\n_start:\n"
	"	xorl %ebp, %ebp\n	andq $-16, %rsp\n	call cmain\n"
	"	movl %eax, %edi\n	movl $231, %eax\n	syscall\n	hlt\n"
	"	.size _start, .-_start\n");
#elif defined(__aarch64__)
void xfer(void **save, void *to);
__asm__(
	"	.text\n	.globl xfer\n	.type xfer, %function\nxfer:\n"
	"	sub sp, sp, #96\n"
	"	stp x19, x20, [sp, #0]\n	stp x21, x22, [sp, #16]\n	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n	stp x27, x28, [sp, #64]\n	stp x29, x30, [sp, #80]\n"
	"	mov x9, sp\n	str x9, [x0]\n	mov sp, x1\n"
	"	ldp x19, x20, [sp, #0]\n	ldp x21, x22, [sp, #16]\n	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n	ldp x27, x28, [sp, #64]\n	ldp x29, x30, [sp, #80]\n"
	"	add sp, sp, #96\n	ret\n	.size xfer, .-xfer\n"
	"	.globl _start\n	.type _start, %function\n_start:\n"
	"	mov x29, #0\n	mov x30, #0\n	bl cmain\n"
	"	mov x8, #94\n	svc #0\n	.size _start, .-_start\n");
#endif

static void *main_sp, *co_sp;
static long total;
static char stack[65536] __attribute__((aligned(16)));

NOINLINE static long leaf(long x) { return x * 7 + 1; }

NOINLINE static long deep(int n)
{
	if (n == 0) {
		xfer(&co_sp, main_sp);
		return leaf(n);
	}
	return deep(n - 1) + leaf(n);
}

NOINLINE static void entry(void)
{
	for (;;)
		total += deep(6);
}

long cmain(void)
{
	void **sp = (void **)(stack + sizeof stack);
#if defined(__x86_64__)
	*--sp = 0;             /* entry's return address: none */
	*--sp = (void *)entry; /* where ret goes */
	for (int i = 0; i < 6; i++)
		*--sp = 0; /* rbp rbx r12 r13 r14 r15 */
#else
	sp -= 12;
	for (int i = 0; i < 12; i++)
		sp[i] = 0;
	sp[11] = (void *)entry; /* x30: where ret goes */
#endif
	co_sp = sp;
	for (int i = 0; i < 5; i++)
		xfer(&main_sp, co_sp);
	return total;
}
