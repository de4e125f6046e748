# A function's jump to its own empty .cold part lands on the next .cold
# part: GCC emits such a jump for code it proved unreachable
# (__builtin_unreachable, as CPython's Py_UNREACHABLE in ast2obj_expr),
# and the linker puts the empty part (f.cold, size 0) where the next one
# (g.cold) starts. check must not take f's jump as an entry into g.cold:
# the code analysis would then find g.cold at f's stack height (g enters
# it by a jump through a register, which the analysis cannot follow, as
# it cannot CPython's computed gotos) and call SFrame and the CFI wrong.
#
# Built with binutils 2.40 (see TestEmptyColdPart):
#   as --gsframe -o emptycold.o emptycold.s && ld -o emptycold emptycold.o
	.text
	.globl	_start
	.type	_start, @function
_start:
	mov	$1, %edi
	call	f
	mov	$1, %edi
	call	g
	mov	$60, %eax
	xor	%edi, %edi
	syscall
	.size	_start, .-_start

	.type	f, @function
f:
	.cfi_startproc
	sub	$72, %rsp
	.cfi_def_cfa_offset 80
	cmp	$10, %edi
	ja	f.cold
	add	$72, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f, .-f

	.type	g, @function
g:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	sub	$352, %rsp
	.cfi_def_cfa_offset 368
	lea	g.cold(%rip), %rax
	cmp	$10, %edi
	jbe	1f
	jmp	*%rax		# into g.cold: a jump the analysis cannot follow
1:	add	$352, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	g, .-g

	.section	.text.unlikely,"ax",@progbits
	.type	f.cold, @function
f.cold:
	.size	f.cold, 0
	.type	g.cold, @function
g.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 368
	.cfi_offset %rbp, -16
	mov	%r14, 0x38(%rsp)
	ud2
	.cfi_endproc
	.size	g.cold, .-g.cold
