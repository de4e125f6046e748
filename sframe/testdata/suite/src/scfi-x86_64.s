# x86-64 functions without CFI directives, for gas --scfi=experimental to
# synthesize CFI (and from it SFrame): push/pop of callee-saved registers,
# an rbp frame, a stack allocation.
	.text
	.globl	s_push
	.type	s_push, @function
s_push:
	pushq	%rbx
	pushq	%r12
	movl	%edi, %eax
	popq	%r12
	popq	%rbx
	ret
	.size	s_push, .-s_push

	.globl	s_frame
	.type	s_frame, @function
s_frame:
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$32, %rsp
	movl	$1, %eax
	addq	$32, %rsp
	popq	%rbp
	ret
	.size	s_frame, .-s_frame

	.globl	s_alloc
	.type	s_alloc, @function
s_alloc:
	subq	$200, %rsp
	movl	$2, %eax
	addq	$200, %rsp
	ret
	.size	s_alloc, .-s_alloc
	.section .note.GNU-stack,"",@progbits
