# s390x-real.s: two tiny s390x functions with CFI, for sframesim's tests.
# Built by goldens.sh in the Debian sid chroot with binutils 2.47.50:
#   s390x-linux-gnu-as --gsframe -o s390x-real.o s390x-real.s
#   s390x-linux-gnu-ld -e func -o s390x-real.elf s390x-real.o
# func is a plain frame (DEFAULT FDE); func_fpr keeps the RA in an FPR
# (.cfi_register %r14, %f8), which only a FLEX FDE can describe.
	.text
	.globl	func
	.type	func, @function
func:
	.cfi_startproc
	stmg	%r11,%r15,88(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r11, -72
	aghi	%r15,-160
	.cfi_def_cfa_offset 320
	lgr	%r11,%r15
	.cfi_def_cfa_register %r11
	lmg	%r11,%r15,248(%r11)
	.cfi_def_cfa %r15, 160
	.cfi_restore %r11
	.cfi_restore %r14
	br	%r14
	.cfi_endproc
	.size	func, .-func

	.globl	func_fpr
	.type	func_fpr, @function
func_fpr:
	.cfi_startproc
	.cfi_def_cfa_offset 160
	ldgr	%f8,%r14
	.cfi_register %r14, %f8
	stmg	%r11,%r13,88(%r15)
	.cfi_offset %r11, -72
	lgdr	%r14,%f8
	.cfi_restore %r14
	lmg	%r11,%r13,88(%r15)
	.cfi_restore %r11
	br	%r14
	.cfi_endproc
	.size	func_fpr, .-func_fpr
