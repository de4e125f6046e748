# Hand-written x86-64 functions with CFI directives, each a shape gas turns
# into SFrame rows: push/pop frames, an rbp-based CFA, a large adjustment
# (2-byte data words), remember/restore state around an early return, a
# function in a section of its own, one in a COMDAT group, a signal frame,
# and one with a CFI rule SFrame cannot express (gas skips its FDE).
	.text
	.globl	push_pop
	.type	push_pop, @function
push_pop:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	pushq	%r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	movl	%edi, %eax
	popq	%r12
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	push_pop, .-push_pop

	.globl	rbp_frame
	.type	rbp_frame, @function
rbp_frame:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$64, %rsp
	movl	$1, %eax
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	rbp_frame, .-rbp_frame

	.globl	big_adjust
	.type	big_adjust, @function
big_adjust:
	.cfi_startproc
	subq	$0x1234, %rsp
	.cfi_adjust_cfa_offset 0x1234
	movl	$2, %eax
	addq	$0x1234, %rsp
	.cfi_adjust_cfa_offset -0x1234
	ret
	.cfi_endproc
	.size	big_adjust, .-big_adjust

	.globl	early_ret
	.type	early_ret, @function
early_ret:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	testl	%edi, %edi
	je	1f
	.cfi_remember_state
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
1:
	.cfi_restore_state
	movl	$3, %eax
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	early_ret, .-early_ret

	.section .text.own,"ax",@progbits
	.globl	own_section
	.type	own_section, @function
own_section:
	.cfi_startproc
	pushq	%rax
	.cfi_def_cfa_offset 16
	popq	%rcx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	own_section, .-own_section

	.section .text.grouped,"axG",@progbits,grouped,comdat
	.weak	grouped
	.type	grouped, @function
grouped:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	grouped, .-grouped

	.text
	.globl	sig_tramp
	.type	sig_tramp, @function
	nop
sig_tramp:
	.cfi_startproc
	.cfi_signal_frame
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sig_tramp, .-sig_tramp

	.globl	odd_rule
	.type	odd_rule, @function
odd_rule:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_register %rip, %rbx
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	odd_rule, .-odd_rule
	.section .note.GNU-stack,"",@progbits
