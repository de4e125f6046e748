// Hand-written AArch64 functions with CFI directives: an stp/ldp frame,
// a leaf, return-address signing (.cfi_negate_ra_state around
// paciasp/autiasp), the B key (.cfi_b_key_frame), remember/restore state,
// a large frame, a function in a section of its own and one in a COMDAT
// group.
	.text
	.globl	stp_frame
	.type	stp_frame, %function
stp_frame:
	.cfi_startproc
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	mov	w0, 1
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	stp_frame, .-stp_frame

	.globl	asm_leaf
	.type	asm_leaf, %function
asm_leaf:
	.cfi_startproc
	add	w0, w0, 1
	ret
	.cfi_endproc
	.size	asm_leaf, .-asm_leaf

	.globl	signed_ra
	.type	signed_ra, %function
signed_ra:
	.cfi_startproc
	hint	25	// paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint	29	// autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	signed_ra, .-signed_ra

	.globl	bkey
	.type	bkey, %function
bkey:
	.cfi_startproc
	.cfi_b_key_frame
	hint	27	// pacibsp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint	31	// autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	bkey, .-bkey

	.globl	early_ret
	.type	early_ret, %function
early_ret:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	cbz	w0, 1f
	.cfi_remember_state
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
1:
	.cfi_restore_state
	mov	w0, 3
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	early_ret, .-early_ret

	.globl	big_frame
	.type	big_frame, %function
big_frame:
	.cfi_startproc
	sub	sp, sp, #0x11000
	.cfi_def_cfa_offset 0x11000
	mov	w0, 2
	add	sp, sp, #0x11000
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	big_frame, .-big_frame

	.section .text.own,"ax",%progbits
	.globl	own_section
	.type	own_section, %function
own_section:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	own_section, .-own_section

	.section .text.grouped,"axG",%progbits,grouped,comdat
	.weak	grouped
	.type	grouped, %function
grouped:
	.cfi_startproc
	nop
	ret
	.cfi_endproc
	.size	grouped, .-grouped
	.section .note.GNU-stack,"",%progbits
