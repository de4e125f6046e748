/* retaddr.c: code that moves return addresses by hand, as PCRE2's JIT
 * code (sljit's fast calls: the callee pops its return address into a
 * register and returns with push and ret), glibc's vfork and hand-written
 * assembly do — in functions with symbols and no SFrame data (no CFI),
 * in functions with SFrame data (CFI), and in code copied into an
 * anonymous executable mapping (a JIT: no symbols, no SFrame data):
 *
 *   - a callee that takes its return address off the stack, calls C and
 *     returns with push and ret (x86-64), or keeps x30 in a register and
 *     returns with br x30 (AArch64);
 *   - returns by pop and jmp *reg, by mov, add $8,%rsp and jmp *reg;
 *   - ret as an indirect jump (push addr; ret / adr x30; ret);
 *   - a call to the next instruction to learn the PC (call 1f; 1: pop);
 *   - a retpoline (x86-64: call 1f ... mov %rax,(%rsp); ret).
 *
 * C code with SFrame data runs around and between them, and is called
 * from them: its unwinds must stay right, the true stack exact. Built
 * freestanding and static with the host's Debian 12 gcc and binutils
 * 2.40 (SFrame V1), see ../Makefile; retaddr-$ARCH-stripped is the same
 * program without its symbol table, and retaddr-lost-x86_64 (-DLOST) adds
 * a case the shadow stack cannot decide (rtail). Prints "retaddr N". */

#define NOINLINE __attribute__((noinline))

typedef unsigned long size_t;

#if defined(__x86_64__)

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}
#define SYS_write 1
#define SYS_mmap 9

#elif defined(__aarch64__)

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
}
#define SYS_write 64
#define SYS_mmap 222

#endif

/* Initialized: a writable segment of file data (sframesim's loader
 * refuses an AArch64 bss-only PT_LOAD whose offset lies past the end of
 * the file, which Linux maps). */
long counter = 1;

/* Called from the assembly routines and the JIT code. */
NOINLINE long leaf(long x)
{
	counter += x;
	return x * 3 + (counter & 1);
}

extern long fastsub(long x);  /* pops (x86-64) or keeps its return address, calls leaf */
extern long jmpret(long x);   /* x + 1, returning by an indirect jump */
extern long addjmp(long x);   /* x + 2, x86-64: mov, add $8,%rsp, jmp */
extern long pushret(long x);  /* x + 3, with ret as a jump inside (CFI) */
extern long getpc(void);      /* its own address, by calling its next instruction (CFI) */
extern long viathunk(long x); /* leaf(x) through a retpoline (x86-64, CFI) */
extern const unsigned char jit_start[], jit_end[];

static long (*jit)(long, long (*)(long)) = (long (*)(long, long (*)(long)))1;

NOINLINE long work(long i)
{
	long s = fastsub(i);
	s += leaf(s);
	s += jmpret(s);
	s += leaf(s);
	s += addjmp(s);
	s += pushret(s);
	s += leaf(s);
	s += getpc() & 0xff;
	s += viathunk(s & 0xff);
	s += jit(s & 0xff, leaf);
	s += leaf(s);
	return s & 0xffff;
}

NOINLINE long outer(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += work(i + s);
	return s;
}

static void copy(unsigned char *d, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)d)[i] = s[i];
}

long cmain(void)
{
	size_t n = jit_end - jit_start;
	/* PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS */
	unsigned char *p = (unsigned char *)sys6(SYS_mmap, 0, 4096, 7, 0x22, -1, 0);
	copy(p, jit_start, n);
	__builtin___clear_cache((char *)p, (char *)p + n);
	jit = (long (*)(long, long (*)(long)))p;
	long s = outer(4);
	char buf[32] = "retaddr ";
	int k = 8;
	char digits[20];
	int m = 0;
	unsigned long v = (unsigned long)s;
	do {
		digits[m++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (m)
		buf[k++] = digits[--m];
	buf[k++] = '\n';
	sys6(SYS_write, 1, (long)buf, k, 0, 0, 0);
	return 0;
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
	"	.size	_start, .-_start\n"

	/* PCRE2's JIT fast call: the return address into a register,
	 * push and ret. No CFI (the return address in a register is
	 * nothing SFrame can say). */
	"	.globl	fastsub\n"
	"	.type	fastsub, @function\n"
	"fastsub:\n"
	"	popq	%r11\n"
	"	pushq	%rbx\n"
	"	movq	%r11, %rbx\n"
	"	subq	$8, %rsp\n"
	"	call	leaf\n"
	"	addq	$8, %rsp\n"
	"	movq	%rbx, %r11\n"
	"	popq	%rbx\n"
	"	pushq	%r11\n"
	"	ret\n"
	"	.size	fastsub, .-fastsub\n"

	"	.globl	jmpret\n"
	"	.type	jmpret, @function\n"
	"jmpret:\n"
	"	leaq	1(%rdi), %rax\n"
	"	popq	%rcx\n"
	"	jmp	*%rcx\n"
	"	.size	jmpret, .-jmpret\n"

	"	.globl	addjmp\n"
	"	.type	addjmp, @function\n"
	"addjmp:\n"
	"	leaq	2(%rdi), %rax\n"
	"	movq	(%rsp), %rcx\n"
	"	addq	$8, %rsp\n"
	"	jmp	*%rcx\n"
	"	.size	addjmp, .-addjmp\n"

	"	.globl	pushret\n"
	"	.type	pushret, @function\n"
	"pushret:\n"
	"	.cfi_startproc\n"
	"	leaq	1f(%rip), %rax\n"
	"	pushq	%rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"1:	leaq	3(%rdi), %rax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	pushret, .-pushret\n"

	"	.globl	getpc\n"
	"	.type	getpc, @function\n"
	"getpc:\n"
	"	.cfi_startproc\n"
	"	call	1f\n"
	"1:	.cfi_adjust_cfa_offset 8\n"
	"	popq	%rax\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	getpc, .-getpc\n"

	/* __x86_indirect_thunk_rax's shape: call *%rax. */
	"	.globl	thunk_rax\n"
	"	.type	thunk_rax, @function\n"
	"thunk_rax:\n"
	"	.cfi_startproc\n"
	"	call	1f\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"2:	pause\n"
	"	lfence\n"
	"	jmp	2b\n"
	"1:	movq	%rax, (%rsp)\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	thunk_rax, .-thunk_rax\n"

	"	.globl	viathunk\n"
	"	.type	viathunk, @function\n"
	"viathunk:\n"
	"	.cfi_startproc\n"
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	leaq	leaf(%rip), %rax\n"
	"	call	thunk_rax\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	viathunk, .-viathunk\n"

#ifdef LOST
	/* Jumped to by JIT code that popped its return address into r11:
	 * returns x + 5 to it. Its CFI says CFA = SP (no return address on
	 * the stack). Whether the JIT code's frame still stands here (a tail
	 * call keeping the return address in r11) or not, nothing tells:
	 * verify must say it lost track, neither OK nor a problem. */
	"	.globl	rtail\n"
	"	.type	rtail, @function\n"
	"rtail:\n"
	"	.cfi_startproc\n"
	"	.cfi_def_cfa_offset 0\n"
	"	leaq	5(%rdi), %rax\n"
	"	jmp	*%r11\n"
	"	.cfi_endproc\n"
	"	.size	rtail, .-rtail\n"
#endif

	/* The JIT code, copied to an anonymous mapping: long jit(long x,
	 * long (*leaf)(long)). Position-independent. */
	"	.section .rodata.jit, \"a\"\n"
	"	.globl	jit_start, jit_end\n"
	"jit_start:\n"
	"	pushq	%rbx\n"
	"	pushq	%r12\n"
	"	pushq	%r13\n"
	"	movq	%rsi, %rbx\n"
	"	movq	%rdi, %r13\n"
	"	call	10f\n" /* fast call: r12 = return address */
	"	addq	%rax, %r13\n"
	"	call	20f\n" /* the PC */
	"20:	popq	%rcx\n"
	"	call	30f\n" /* pop, jmp */
	"	movq	%rax, %r13\n"
	"	call	50f\n" /* mov, add, jmp */
	"	movq	%rax, %r13\n"
#ifdef LOST
	"	call	60f\n" /* rtail(r13), entered detached */
	"	movq	%rax, %r13\n"
#endif
	"	leaq	40f(%rip), %rcx\n"
	"	pushq	%rcx\n"
	"	ret\n" /* a jump */
	"40:	movq	%r13, %rax\n"
	"	popq	%r13\n"
	"	popq	%r12\n"
	"	popq	%rbx\n"
	"	ret\n"
	"10:	popq	%r12\n"
	"	movq	%r13, %rdi\n"
	"	call	*%rbx\n"
	"	pushq	%r12\n"
	"	ret\n"
	"30:	leaq	1(%r13), %rax\n"
	"	popq	%rcx\n"
	"	jmp	*%rcx\n"
	"50:	leaq	2(%r13), %rax\n"
	"	movq	(%rsp), %rcx\n"
	"	addq	$8, %rsp\n"
	"	jmp	*%rcx\n"
#ifdef LOST
	"60:	popq	%r11\n"
	"	movq	%r13, %rdi\n"
	"	movabsq	$rtail, %rdx\n"
	"	jmp	*%rdx\n"
#endif
	"jit_end:\n"
	"	.text\n");

#elif defined(__aarch64__)
/* No retpoline on AArch64 (viathunk tail-calls leaf); jmpret returns by
 * br through another register, addjmp plainly. */
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
	"	.size	_start, .-_start\n"

	/* x30 kept in a register across a call, return by br x30. No
	 * CFI. */
	"	.globl	fastsub\n"
	"	.type	fastsub, %function\n"
	"fastsub:\n"
	"	stp	x19, x20, [sp, #-16]!\n"
	"	mov	x19, x30\n"
	"	bl	leaf\n"
	"	mov	x30, x19\n"
	"	ldp	x19, x20, [sp], #16\n"
	"	br	x30\n"
	"	.size	fastsub, .-fastsub\n"

	"	.globl	jmpret\n"
	"	.type	jmpret, %function\n"
	"jmpret:\n"
	"	add	x0, x0, #1\n"
	"	mov	x9, x30\n"
	"	br	x9\n"
	"	.size	jmpret, .-jmpret\n"

	"	.globl	addjmp\n"
	"	.type	addjmp, %function\n"
	"addjmp:\n"
	"	add	x0, x0, #2\n"
	"	ret\n"
	"	.size	addjmp, .-addjmp\n"

	"	.globl	pushret\n"
	"	.type	pushret, %function\n"
	"pushret:\n"
	"	.cfi_startproc\n"
	"	stp	x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	adr	x30, 1f\n"
	"	ret\n" /* a jump */
	"1:	add	x0, x0, #3\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa_offset 0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	pushret, .-pushret\n"

	"	.globl	getpc\n"
	"	.type	getpc, %function\n"
	"getpc:\n"
	"	.cfi_startproc\n"
	"	stp	x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	mov	x29, sp\n"
	"	bl	1f\n"
	"1:	mov	x0, x30\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa_offset 0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	getpc, .-getpc\n"

	"	.globl	viathunk\n"
	"	.type	viathunk, %function\n"
	"viathunk:\n"
	"	b	leaf\n"
	"	.size	viathunk, .-viathunk\n"

	"	.section .rodata.jit, \"a\"\n"
	"	.globl	jit_start, jit_end\n"
	"	.p2align 2\n"
	"jit_start:\n"
	"	stp	x29, x30, [sp, #-32]!\n"
	"	stp	x19, x20, [sp, #16]\n"
	"	mov	x29, sp\n"
	"	mov	x19, x0\n"
	"	mov	x20, x1\n"
	"	bl	10f\n" /* x0 = leaf(x19), x30 games */
	"	add	x19, x19, x0\n"
	"	bl	20f\n" /* the PC */
	"20:	mov	x9, x30\n"
	"	bl	30f\n" /* returns with br x30 */
	"	mov	x19, x0\n"
	"	adr	x30, 40f\n"
	"	ret\n" /* a jump */
	"40:	mov	x0, x19\n"
	"	ldp	x19, x20, [sp, #16]\n"
	"	ldp	x29, x30, [sp], #32\n"
	"	ret\n"
	"10:	str	x30, [sp, #-16]!\n"
	"	mov	x0, x19\n"
	"	blr	x20\n"
	"	ldr	x9, [sp], #16\n"
	"	mov	x30, x9\n"
	"	ret\n"
	"30:	add	x0, x19, #1\n"
	"	br	x30\n"
	"jit_end:\n"
	"	.text\n");
#endif
