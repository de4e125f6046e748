/* slotstore.S: a function that overwrites the slots an unwinder reads —
 * its return address, then its caller's saved frame pointer — and puts
 * them back, all within one SFrame row with SP and FP unchanged; then a
 * function g it calls does the same to f's return address (a word the
 * unwind reads for the caller's frame, not g's own). Between a store and
 * its undoing the unwind is wrong (RA, then FP, then RA one frame up):
 * verify must say so at exactly those instructions, batched as
 * instruction by instruction, though no register changes there. _start
 * has no CFI: the unwind ends there, at a frame without SFrame data.
 * Freestanding, static. */

#if defined(__x86_64__)

	.text
	.globl	_start
	.type	_start, @function
_start:
	xorl	%ebp, %ebp
	call	f
	movl	$231, %eax		/* exit_group(0) */
	xorl	%edi, %edi
	syscall
	hlt
	.size	_start, .-_start

	.type	f, @function
f:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq	8(%rbp), %rax		/* the return address */
	movq	$0x1234, 8(%rbp)	/* RA slot: wrong from the next instruction */
	nop
	nop
	nop
	movq	%rax, 8(%rbp)		/* put back: right from the next one */
	movq	(%rbp), %rcx		/* the caller's FP */
	movq	$0x5678, (%rbp)		/* FP slot: wrong from the next instruction */
	nop
	nop
	movq	%rcx, (%rbp)		/* put back */
	nop
	call	g
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	f, .-f

	.type	g, @function
g:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq	(%rbp), %rcx		/* f's frame pointer */
	movq	8(%rcx), %rax		/* f's return address */
	movq	$0x1234, 8(%rcx)	/* f's RA slot: frame 1 wrong from the next instruction */
	nop
	nop
	movq	%rax, 8(%rcx)		/* put back */
	nop
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	g, .-g

	.section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__)

	.text
	.globl	_start
	.type	_start, %function
	.p2align 2
_start:
	mov	x29, 0
	mov	x30, 0
	bl	f
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
	mov	x29, sp
	.cfi_def_cfa_register x29
	mov	x30, 0			/* the RA is in its slot now */
	ldr	x1, [x29, 8]		/* the return address */
	mov	x2, 0x1234
	str	x2, [x29, 8]		/* RA slot: wrong from the next instruction */
	nop
	nop
	nop
	str	x1, [x29, 8]		/* put back: right from the next one */
	ldr	x3, [x29]		/* the caller's FP */
	mov	x2, 0x5678
	str	x2, [x29]		/* FP slot: wrong from the next instruction */
	nop
	nop
	str	x3, [x29]		/* put back */
	nop
	bl	g
	ldp	x29, x30, [sp], 16
	.cfi_def_cfa sp, 0
	ret
	.cfi_endproc
	.size	f, .-f

	.type	g, %function
	.p2align 2
g:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset x29, -16
	.cfi_offset x30, -8
	mov	x29, sp
	.cfi_def_cfa_register x29
	ldr	x4, [x29]		/* f's frame pointer */
	ldr	x5, [x4, 8]		/* f's return address */
	mov	x6, 0x1234
	str	x6, [x4, 8]		/* f's RA slot: frame 1 wrong from the next instruction */
	nop
	nop
	str	x5, [x4, 8]		/* put back */
	nop
	ldp	x29, x30, [sp], 16
	.cfi_def_cfa sp, 0
	ret
	.cfi_endproc
	.size	g, .-g

	.section .note.GNU-stack, "", @progbits

#endif
