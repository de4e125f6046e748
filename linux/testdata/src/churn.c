/* churn: creates and joins 10000 threads one after another, as
 * pthread_create and pthread_join do (clone with the thread flags and
 * CLONE_CHILD_CLEARTID, a futex wait on the cleared word), each thread
 * exiting at once, then prints "churn 10000". The emulator must keep
 * neither memory nor time per past thread, and still count what each
 * thread's shadow stack saw. Freestanding C, static, built
 * with the host's Debian 12 gcc 12 (the command is in
 * linux/threads_test.go). */

/* The clone flags in spawn: VM, FS, FILES, SIGHAND, THREAD, SYSVSEM,
 * CHILD_CLEARTID and CHILD_SETTID (0x1250f00). */
#define N 10000

static char stack[16384] __attribute__((aligned(16)));
static volatile int word;

/* spawn(top, ctid) starts a thread on the stack below top that exits at
 * once (exit, not exit_group), after a return no call expects (push and
 * ret; adr and ret): each thread's shadow stack counts one
 * unexpected-return; the parent gets its tid. _start calls
 * churn with no frame to return to. Both in assembly without CFI: no
 * SFrame data, so the unwinds end there. */
long spawn(void *top, volatile int *ctid);
long sys(long nr, long a, long b, long c);
void churn(void);

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl _start\n_start:\n"
        "	xor %ebp, %ebp\n"
        "	call churn\n"
        "	hlt\n"
        "spawn:\n"
        "	mov %rsi, %r10\n"
        "	mov %rdi, %rsi\n"
        "	mov $0x1250f00, %edi\n"
        "	xor %edx, %edx\n"
        "	xor %r8d, %r8d\n"
        "	mov $56, %eax\n"
        "	syscall\n"
        "	test %rax, %rax\n"
        "	jnz 1f\n"
        "	lea 2f(%rip), %rcx\n"
        "	push %rcx\n"
        "	ret\n"
        "2:	mov $60, %eax\n"
        "	xor %edi, %edi\n"
        "	syscall\n"
        "1:	ret\n"
        "sys:\n"
        "	mov %rdi, %rax\n"
        "	mov %rsi, %rdi\n"
        "	mov %rdx, %rsi\n"
        "	mov %rcx, %rdx\n"
        "	xor %r10d, %r10d\n"
        "	syscall\n"
        "	ret\n");
enum { SYS_write = 1, SYS_futex = 202, SYS_exit_group = 231 };
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl _start\n_start:\n"
        "	mov x29, 0\n"
        "	mov x30, 0\n"
        "	bl churn\n"
        "	brk 0\n"
        "spawn:\n"
        "	mov x4, x1\n"
        "	mov x1, x0\n"
        "	mov x0, 0x0f00\n"
        "	movk x0, 0x125, lsl 16\n"
        "	mov x2, 0\n"
        "	mov x3, 0\n"
        "	mov x8, 220\n"
        "	svc 0\n"
        "	cbnz x0, 1f\n"
        "	adr x30, 2f\n"
        "	ret\n"
        "2:	mov x8, 93\n"
        "	mov x0, 0\n"
        "	svc 0\n"
        "1:	ret\n"
        "sys:\n"
        "	mov x8, x0\n"
        "	mov x0, x1\n"
        "	mov x1, x2\n"
        "	mov x2, x3\n"
        "	mov x3, 0\n"
        "	svc 0\n"
        "	ret\n");
enum { SYS_write = 64, SYS_futex = 98, SYS_exit_group = 94 };
#endif

__attribute__((noinline)) static void join(void) {
	int v;
	while ((v = word) != 0)
		sys(SYS_futex, (long)&word, 0 /* FUTEX_WAIT */, v);
}

void churn(void) {
	int n;
	for (n = 0; n < N; n++) {
		if (spawn(stack + sizeof stack, &word) <= 0)
			break;
		join();
	}
	char msg[] = "churn 00000\n";
	for (int i = 10, v = n; i >= 6; i--, v /= 10)
		msg[i] = '0' + v % 10;
	sys(SYS_write, 1, (long)msg, sizeof msg - 1);
	sys(SYS_exit_group, n == N ? 0 : 1, 0, 0);
	for (;;)
		;
}
