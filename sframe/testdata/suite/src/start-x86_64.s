# _start for the -nostdlib programs: the outermost frame, then exit_group.
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%edi, %edi
	call	run
	movl	%eax, %edi
	movl	$231, %eax
	syscall
	hlt
	.cfi_endproc
	.size	_start, .-_start
	.section .note.GNU-stack,"",@progbits
