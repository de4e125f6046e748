/* keystore.S: a function whose CFA is SP-based overwrites its return
 * address and then moves SP (a push, or sub on AArch64), so the next
 * instructions are in other SFrame rows with other registers: the run the
 * engine extends across such changes recomputes frame 0's key from the
 * words it read, and must read the overwritten one again rather than
 * reuse the value it read before the store. The RA is wrong at exactly the
 * 4 instructions from the store to the one putting it back (and right at
 * the push after that), at each of f's 3 calls: the engine knows an
 * instruction's flow from its second run on, and extends runs only then.
 * _start has no CFI: the unwind ends there. Freestanding, static. */

#if defined(__x86_64__)

	.text
	.globl	_start
	.type	_start, @function
_start:
	xorl	%ebp, %ebp
	movl	$3, %r14d
1:	call	f
	decl	%r14d
	jnz	1b
	movl	$231, %eax		/* exit_group(0) */
	xorl	%edi, %edi
	syscall
	hlt
	.size	_start, .-_start

	.type	f, @function
f:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	movq	8(%rsp), %rax		/* the return address */
	movq	$0x1234, 8(%rsp)	/* RA slot: wrong from the next instruction */
	pushq	%r12
	.cfi_def_cfa_offset 24
	nop
	popq	%r12
	.cfi_def_cfa_offset 16
	movq	%rax, 8(%rsp)		/* put back: right from the next one */
	pushq	%r13
	.cfi_def_cfa_offset 24
	nop
	popq	%r13
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f, .-f

	.section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__)

	.text
	.globl	_start
	.type	_start, %function
	.p2align 2
_start:
	mov	x29, 0
	mov	x30, 0
	mov	x19, 3
1:	bl	f
	subs	x19, x19, 1
	b.ne	1b
	mov	x0, 0			/* exit_group(0) */
	mov	x8, 94
	svc	0
	.size	_start, .-_start

	.type	f, %function
	.p2align 2
f:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset x29, -16
	.cfi_offset x30, -8
	mov	x30, 0			/* the RA is in its slot now */
	ldr	x1, [sp, 8]		/* the return address */
	mov	x2, 0x1234
	str	x2, [sp, 8]		/* RA slot: wrong from the next instruction */
	sub	sp, sp, 16
	.cfi_def_cfa_offset 32
	nop
	add	sp, sp, 16
	.cfi_def_cfa_offset 16
	str	x1, [sp, 8]		/* put back: right from the next one */
	sub	sp, sp, 16
	.cfi_def_cfa_offset 32
	nop
	add	sp, sp, 16
	.cfi_def_cfa_offset 16
	ldp	x29, x30, [sp], 16
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	f, .-f

#endif
