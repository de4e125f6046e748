/* storeloop.S: a loop of 4 million iterations, each storing to the stack:
 * one SFrame row, SP and FP unchanged, so the whole loop arrives in long
 * merged records (64 K instructions each). A run with a timeout must
 * still look at the clock every few million instructions. Freestanding,
 * static; _start has an FDE. */

#if defined(__x86_64__)

	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	movl	$4000000, %ecx
1:	movq	%rcx, (%rsp)
	decl	%ecx
	jnz	1b
	movl	$231, %eax		/* exit_group(0) */
	xorl	%edi, %edi
	syscall
	hlt
	.cfi_endproc
	.size	_start, .-_start

	.section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__)

	.text
	.globl	_start
	.type	_start, %function
	.p2align 2
_start:
	.cfi_startproc
	sub	sp, sp, 16
	.cfi_def_cfa_offset 16
	movz	w1, 0x0900
	movk	w1, 0x3d, lsl 16	/* 4 000 000 */
1:	str	x1, [sp]
	subs	w1, w1, 1
	b.ne	1b
	mov	x0, 0			/* exit_group(0) */
	mov	x8, 94
	svc	0
	.cfi_endproc
	.size	_start, .-_start

	.section .note.GNU-stack, "", @progbits

#endif
