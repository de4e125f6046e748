/* sf_restorer: the program's own signal trampoline (sa_restorer), with
 * .cfi_signal_frame and CFI that describes the kernel's ucontext as
 * glibc's x86-64 __restore_rt does (DWARF expressions on the stack
 * pointer, which GNU as cannot put in SFrame rows): gas --gsframe 2.47.50
 * writes an SFrame V3 FDE with the signal flag and no rows for it. */
	.text
	.globl	sf_restorer
	.type	sf_restorer, %function
#if defined(__x86_64__)
	.cfi_startproc simple
	.cfi_signal_frame
	/* The return address points here: the ucontext at %rsp, uc_mcontext
	 * at +40 (r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip). */
	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06	/* CFA = *(rsp + 160): rsp */
	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01	/* rip at rsp + 168 */
	.cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00	/* rbp at rsp + 120 */
	nop	/* for unwinders that look up the return address minus one */
sf_restorer:
	mov	$15, %eax	/* rt_sigreturn */
	syscall
	.cfi_endproc
#elif defined(__aarch64__)
	.cfi_startproc simple
	.cfi_signal_frame
	/* siginfo (128 bytes) then the ucontext at sp, uc_mcontext at
	 * +128+176: fault_address, x0..x30, sp, pc. */
	.cfi_escape 0x0f, 0x04, 0x8f, 0xb0, 0x04, 0x06	/* CFA = *(sp + 560): sp */
	.cfi_escape 0x10, 0x1d, 0x03, 0x8f, 0xa8, 0x04	/* x29 at sp + 552 */
	.cfi_escape 0x10, 0x1e, 0x03, 0x8f, 0xb8, 0x04	/* x30 (the return column): pc at sp + 568 */
	nop
sf_restorer:
	mov	x8, #139	/* rt_sigreturn */
	svc	#0
	.cfi_endproc
#endif
	.size	sf_restorer, .-sf_restorer
	.section .note.GNU-stack,"",%progbits
