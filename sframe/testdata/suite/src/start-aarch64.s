// _start for the -nostdlib programs: the outermost frame, then exit_group.
	.text
	.globl	_start
	.type	_start, %function
_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	w0, 0
	bl	run
	mov	x8, 94
	svc	0
	.cfi_endproc
	.size	_start, .-_start
	.section .note.GNU-stack,"",%progbits
