/* nolibc/start.S: entry point and raw system calls for the freestanding
 * programs (x86-64 and AArch64).  _start marks the return-address register
 * undefined (.cfi_undefined), which SFrame records as the outermost frame;
 * every instruction the program executes is covered by an FDE. */

#if defined(__x86_64__)

	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%rsp, %rdi		/* argc, argv, envp, auxv */
	call	cmain
	movl	%eax, %edi
	call	sys_exit_group
	hlt
	.cfi_endproc
	.size	_start, .-_start

	/* long sys_write(int fd, const void *buf, unsigned long len) */
	.globl	sys_write
	.type	sys_write, @function
sys_write:
	.cfi_startproc
	movl	$1, %eax
	syscall
	ret
	.cfi_endproc
	.size	sys_write, .-sys_write

	/* void sys_exit_group(int status) */
	.globl	sys_exit_group
	.type	sys_exit_group, @function
sys_exit_group:
	.cfi_startproc
	movl	$231, %eax
	syscall
	hlt
	.cfi_endproc
	.size	sys_exit_group, .-sys_exit_group

	.section .note.GNU-stack, "", @progbits

#elif defined(__aarch64__)

	.text
	.globl	_start
	.type	_start, %function
	.p2align 2
_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, 0
	mov	x30, 0
	mov	x0, sp			/* argc, argv, envp, auxv */
	bl	cmain
	bl	sys_exit_group
	brk	#0
	.cfi_endproc
	.size	_start, .-_start

	.globl	sys_write
	.type	sys_write, %function
	.p2align 2
sys_write:
	.cfi_startproc
	mov	x8, 64
	svc	#0
	ret
	.cfi_endproc
	.size	sys_write, .-sys_write

	.globl	sys_exit_group
	.type	sys_exit_group, %function
	.p2align 2
sys_exit_group:
	.cfi_startproc
	mov	x8, 94
	svc	#0
	brk	#0
	.cfi_endproc
	.size	sys_exit_group, .-sys_exit_group

	.section .note.GNU-stack, "", %progbits

#else
#error unsupported architecture
#endif
