/* asm.S: hand-written functions with CFI, called from asm.c (x86-64 and
 * AArch64 in one file, chosen by the preprocessor).  Every function is a
 * different CFI shape:
 *   asm_leaf_sum       leaf, CFA never moves
 *   asm_push_call      pushes / stp, callback through a register
 *   asm_frame_call     FP-based CFA with a dynamically sized buffer
 *   asm_sigframe_call  .cfi_signal_frame with ordinary (representable) rules
 *   asm_fake_sigtramp  .cfi_signal_frame with DWARF expressions like a
 *                      kernel signal trampoline (CFA = *(sp+16)); not
 *                      representable in SFrame
 *   asm_regcfa_call    CFA based on a callee-saved register (rbx / x19):
 *                      V3 FLEX on x86-64, unrepresentable on AArch64
 *   asm_pac_call       (AArch64) paciasp/autiasp with .cfi_negate_ra_state,
 *                      written as HINT #25 / #29 so any assembler takes it
 * All take (long x, callback) except asm_leaf_sum (const long *v, long n)
 * and asm_frame_call (long n, long (*cb)(const long *buf, long n)). */

#if defined(__x86_64__)

	.text
	.globl	asm_leaf_sum
	.type	asm_leaf_sum, @function
asm_leaf_sum:
	.cfi_startproc
	xorl	%eax, %eax
	testq	%rsi, %rsi
	jle	2f
1:	addq	(%rdi), %rax
	addq	$8, %rdi
	decq	%rsi
	jnz	1b
2:	ret
	.cfi_endproc
	.size	asm_leaf_sum, .-asm_leaf_sum

	/* returns cb(3*x) + x */
	.globl	asm_push_call
	.type	asm_push_call, @function
asm_push_call:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	movq	%rdi, %rbx
	movq	%rsi, %r12
	leaq	(%rdi,%rdi,2), %rdi
	movq	%rdi, 8(%rsp)
	call	*%r12
	addq	%rbx, %rax
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	popq	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	asm_push_call, .-asm_push_call

	/* buf[i] = i*i for i < n on the stack, returns cb(buf, n) */
	.globl	asm_frame_call
	.type	asm_frame_call, @function
asm_frame_call:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	pushq	%r12
	.cfi_offset %r12, -32
	movq	%rdi, %rbx
	movq	%rsi, %r12
	leaq	15(,%rdi,8), %rax
	andq	$-16, %rax
	subq	%rax, %rsp
	xorl	%ecx, %ecx
1:	cmpq	%rbx, %rcx
	jge	2f
	movq	%rcx, %rax
	imulq	%rcx, %rax
	movq	%rax, (%rsp,%rcx,8)
	incq	%rcx
	jmp	1b
2:	movq	%rsp, %rdi
	movq	%rbx, %rsi
	call	*%r12
	leaq	-16(%rbp), %rsp
	popq	%r12
	.cfi_restore %r12
	popq	%rbx
	.cfi_restore %rbx
	popq	%rbp
	.cfi_restore %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	asm_frame_call, .-asm_frame_call

	/* signal-frame bit, ordinary rules: returns cb(x + 1) * 2 */
	.globl	asm_sigframe_call
	.type	asm_sigframe_call, @function
asm_sigframe_call:
	.cfi_startproc
	.cfi_signal_frame
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	movq	%rsi, %rbx
	incq	%rdi
	call	*%rbx
	addq	%rax, %rax
	popq	%rbx
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	asm_sigframe_call, .-asm_sigframe_call

	/* signal-frame bit and expression rules like glibc's __restore_rt:
	   16(%rsp) holds the caller's CFA, 24(%rsp) the return address.
	   returns cb(x) - 1 */
	.globl	asm_fake_sigtramp
	.type	asm_fake_sigtramp, @function
asm_fake_sigtramp:
	.cfi_startproc
	.cfi_signal_frame
	subq	$40, %rsp
	.cfi_def_cfa_offset 48
	leaq	48(%rsp), %rax
	movq	%rax, 16(%rsp)
	movq	40(%rsp), %rax
	movq	%rax, 24(%rsp)
	/* DW_CFA_def_cfa_expression { DW_OP_breg7 (rsp) 16; DW_OP_deref } */
	.cfi_escape 0x0f, 0x03, 0x77, 0x10, 0x06
	/* DW_CFA_expression rip(16) { DW_OP_breg7 (rsp) 24 } */
	.cfi_escape 0x10, 0x10, 0x02, 0x77, 0x18
	call	*%rsi
	.cfi_def_cfa %rsp, 48
	.cfi_offset 16, -8
	decq	%rax
	addq	$40, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	asm_fake_sigtramp, .-asm_fake_sigtramp

	/* CFA = rbx + 16 while the stack is realigned: returns cb(x) ^ 0x55 */
	.globl	asm_regcfa_call
	.type	asm_regcfa_call, @function
asm_regcfa_call:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	movq	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	andq	$-32, %rsp
	subq	$32, %rsp
	call	*%rsi
	xorq	$0x55, %rax
	movq	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbx
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	asm_regcfa_call, .-asm_regcfa_call

	.section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__)

	.text
	.globl	asm_leaf_sum
	.type	asm_leaf_sum, %function
	.p2align 2
asm_leaf_sum:
	.cfi_startproc
	mov	x2, 0
	cmp	x1, 0
	b.le	2f
1:	ldr	x3, [x0], 8
	add	x2, x2, x3
	subs	x1, x1, 1
	b.ne	1b
2:	mov	x0, x2
	ret
	.cfi_endproc
	.size	asm_leaf_sum, .-asm_leaf_sum

	.globl	asm_push_call
	.type	asm_push_call, %function
	.p2align 2
asm_push_call:
	.cfi_startproc
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	str	x19, [sp, 16]
	.cfi_offset 19, -16
	mov	x19, x0
	add	x0, x0, x0, lsl 1
	blr	x1
	add	x0, x0, x19
	ldr	x19, [sp, 16]
	.cfi_restore 19
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_push_call, .-asm_push_call

	.globl	asm_frame_call
	.type	asm_frame_call, %function
	.p2align 2
asm_frame_call:
	.cfi_startproc
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa 29, 32
	stp	x19, x20, [sp, 16]
	.cfi_offset 19, -16
	.cfi_offset 20, -8
	mov	x19, x0
	mov	x20, x1
	lsl	x2, x0, 3
	add	x2, x2, 15
	and	x2, x2, -16
	sub	sp, sp, x2
	mov	x3, 0
1:	cmp	x3, x19
	b.ge	2f
	mul	x4, x3, x3
	str	x4, [sp, x3, lsl 3]
	add	x3, x3, 1
	b	1b
2:	mov	x0, sp
	mov	x1, x19
	blr	x20
	mov	sp, x29
	.cfi_def_cfa 31, 32
	ldp	x19, x20, [sp, 16]
	.cfi_restore 20
	.cfi_restore 19
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_frame_call, .-asm_frame_call

	.globl	asm_sigframe_call
	.type	asm_sigframe_call, %function
	.p2align 2
asm_sigframe_call:
	.cfi_startproc
	.cfi_signal_frame
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	add	x0, x0, 1
	blr	x1
	add	x0, x0, x0
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_sigframe_call, .-asm_sigframe_call

	.globl	asm_fake_sigtramp
	.type	asm_fake_sigtramp, %function
	.p2align 2
asm_fake_sigtramp:
	.cfi_startproc
	.cfi_signal_frame
	sub	sp, sp, 48
	.cfi_def_cfa_offset 48
	stp	x29, x30, [sp, 32]
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	add	x2, sp, 48
	str	x2, [sp, 16]
	str	x30, [sp, 24]
	/* DW_CFA_def_cfa_expression { DW_OP_breg31 (sp) 16; DW_OP_deref } */
	.cfi_escape 0x0f, 0x03, 0x8f, 0x10, 0x06
	/* DW_CFA_expression x30 { DW_OP_breg31 (sp) 24 } */
	.cfi_escape 0x10, 0x1e, 0x02, 0x8f, 0x18
	blr	x1
	.cfi_def_cfa 31, 48
	.cfi_offset 30, -8
	sub	x0, x0, 1
	ldp	x29, x30, [sp, 32]
	.cfi_restore 30
	.cfi_restore 29
	add	sp, sp, 48
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_fake_sigtramp, .-asm_fake_sigtramp

	.globl	asm_regcfa_call
	.type	asm_regcfa_call, %function
	.p2align 2
asm_regcfa_call:
	.cfi_startproc
	stp	x19, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 19, -16
	.cfi_offset 30, -8
	mov	x19, sp
	.cfi_def_cfa_register 19
	sub	sp, sp, 64
	and	sp, x19, -32
	blr	x1
	mov	x2, 0x55
	eor	x0, x0, x2
	mov	sp, x19
	.cfi_def_cfa_register 31
	ldp	x19, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 19
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	asm_regcfa_call, .-asm_regcfa_call

	/* return-address signing: returns cb(x) + 1 */
	.globl	asm_pac_call
	.type	asm_pac_call, %function
	.p2align 2
asm_pac_call:
	.cfi_startproc
	hint	#25			/* paciasp */
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	blr	x1
	add	x0, x0, 1
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint	#29			/* autiasp */
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	asm_pac_call, .-asm_pac_call

	.section .note.GNU-stack, "", %progbits

#else
#error unsupported architecture
#endif
