# A stack-clash probe loop, as GCC 12 -O2 -fstack-clash-protection emits
# it for a function with a 200 000-byte frame: the CFA is r11-based while
# the loop moves SP a page at a time, then SP-based again once SP reaches
# the bound (cmp %r11,%rsp; jne). binutils 2.40's gas writes sp+196616
# for the loop (SFrame cannot say r11+196616): a genuine problem at the
# loop's 4 PCs, and the only one. After the loop SP equals r11 (jne falls
# through): the code analysis learns it from the comparison and proves
# the rows after the loop right. In the loop it has lost what the stack
# slots hold (SP differs at each pass), so it judges no rule reading one:
# fp *(cfa-16) is neither SFrame's problem nor the CFI's.
#
# Built with binutils 2.40 (see TestStackClashLoop):
#   as --gsframe -o clash.o clash.s && ld -o clash clash.o
	.text
	.globl	_start
	.type	_start, @function
_start:
	mov	$1, %edi
	call	big
	mov	$60, %eax
	xor	%edi, %edi
	syscall
	.size	_start, .-_start

	.p2align 4
	.globl	big
	.type	big, @function
big:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	leaq	-196608(%rsp), %r11
	.cfi_def_cfa 11, 196624
.LPSRL0:
	subq	$4096, %rsp
	orq	$0, (%rsp)
	cmpq	%r11, %rsp
	jne	.LPSRL0
	.cfi_def_cfa_register 7
	subq	$3280, %rsp
	.cfi_def_cfa_offset 199904
	xorl	%eax, %eax
	movl	%edi, %ecx
.L2:
	movslq	%eax, %rdx
	addl	$4096, %eax
	movb	%cl, -120(%rsp,%rdx)
	cmpl	$200704, %eax
	jne	.L2
	movslq	%edi, %rdi
	movsbl	-120(%rsp,%rdi), %eax
	addq	$199888, %rsp
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	big, .-big
