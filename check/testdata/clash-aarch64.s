// The AArch64 twin of clash.s: GCC 12 -O2 -fstack-clash-protection for a
// function with a 2 000 000-byte frame probes with a loop whose CFA is
// x12-based (cmp sp, x12; b.ne), SP-based again after it. binutils 2.40's
// gas writes an SP-based CFA for the loop: the one problem, at its 4 PCs.
// After the loop SP equals x12 (b.ne falls through), which the code
// analysis learns from the comparison.
//
// Built with binutils 2.40 (see TestStackClashLoop):
//   aarch64-linux-gnu-as --gsframe -o clash-aarch64.o clash-aarch64.s
//   aarch64-linux-gnu-ld -o clash-aarch64 clash-aarch64.o
	.text
	.align	2
	.p2align 4,,11
	.global	big
	.type	big, %function
big:
.LFB0:
	.cfi_startproc
	sub	x12, sp, #1966080
	.cfi_def_cfa 12, 1966080
.LPSRL0:
	sub	sp, sp, 65536
	str	xzr, [sp, 1024]
	cmp	sp, x12
	b.ne	.LPSRL0
	.cfi_def_cfa_register 31
	and	w2, w0, 255
	mov	x12, 33920
	sub	sp, sp, x12
	.cfi_def_cfa_offset 2000000
	mov	w1, 0
	.p2align 3,,7
.L2:
	strb	w2, [sp, w1, sxtw]
	add	w1, w1, 4096
	cmp	w1, 2002944
	bne	.L2
	ldrb	w0, [sp, w0, sxtw]
	add	sp, sp, 1152
	.cfi_def_cfa_offset 1998848
	and	w0, w0, 255
	add	sp, sp, 1998848
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
.LFE0:
	.size	big, .-big
	.text
	.globl	_start
	.type	_start, %function
_start:
	mov	w0, #1
	bl	big
	mov	x8, #93
	svc	#0
	.size	_start, .-_start
