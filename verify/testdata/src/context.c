/* context.c: coroutines on glibc's ucontext (makecontext, swapcontext,
 * setcontext through uc_link): 50 contexts in groups of 4 on 4 stacks in
 * .bss, reused by the next group once a group's contexts ended; each
 * recurses and switches at the bottom, to the next context of its group
 * directly or back to main; in run_in_frame, a context whose stack is an
 * array in its caller's own frame (above the stack pointer the switch
 * leaves); in run_two_in_frame, two such contexts taking turns; in
 * run_jumps, a context that longjmps within itself, then out of itself
 * into its caller's stack. The shadow stack must follow every switch: park the call stack
 * left, start one for a new context, resume the right one. Built static
 * with the host's Debian 12 gcc 12 and binutils 2.40 (SFrame V1), see
 * ../Makefile. Prints 57441 111 242, natively and under qemu-aarch64. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define N 50
static ucontext_t main_ctx, ctx[N], here, co;
static int inframe;
static long acc[N];
static int done[N];

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) static long walk(int depth, int k) {
	if (depth == 0) {
		/* switch straight to the next coroutine, or back to main */
		if (inframe)
			swapcontext(&co, &here);
		else if (k % 4 != 3 && k + 1 < N && !done[k + 1])
			swapcontext(&ctx[k], &ctx[k + 1]);
		else
			swapcontext(&ctx[k], &main_ctx);
		return leaf(k);
	}
	return walk(depth - 1, k) + leaf(depth);
}

static void body(int k) {
	for (int i = 0; i < 3; i++)
		acc[k] += walk(3 + k % 5, k);
	done[k] = 1;
}

__attribute__((noinline)) static void run_in_frame(void) {
	/* a coroutine whose stack is an array in this very frame */
	char stack[32768];
	inframe = 1;
	getcontext(&co);
	co.uc_stack.ss_sp = stack;
	co.uc_stack.ss_size = sizeof stack;
	co.uc_link = &here;
	makecontext(&co, (void (*)(void))body, 1, 0);
	done[0] = 0;
	swapcontext(&here, &co);
	while (!done[0])
		swapcontext(&here, &co);
}

static ucontext_t here2, two[2];
static int done2[2];
static long acc2;

__attribute__((noinline)) static long walk2(int d, int k) {
	if (d == 0) {
		swapcontext(&two[k], &here2);
		return leaf(k);
	}
	return walk2(d - 1, k) + leaf(d);
}

static void body2(int k) {
	for (int i = 0; i < 3; i++)
		acc2 += walk2(2 + k, k);
	done2[k] = 1;
}

__attribute__((noinline)) static void run_two_in_frame(void) {
	/* two contexts whose stacks are arrays in this frame, taking turns:
	   parking this frame's call stack must not forget theirs */
	char s0[16384], s1[16384];
	char *st[2] = {s0, s1};
	for (int k = 0; k < 2; k++) {
		getcontext(&two[k]);
		two[k].uc_stack.ss_sp = st[k];
		two[k].uc_stack.ss_size = sizeof s0;
		two[k].uc_link = &here2;
		makecontext(&two[k], (void (*)(void))body2, 1, k);
	}
	while (!done2[0] || !done2[1])
		for (int k = 0; k < 2; k++)
			if (!done2[k])
				swapcontext(&here2, &two[k]);
}

static ucontext_t jmain, jco;
static jmp_buf jback, jinner;
static long acc3;

__attribute__((noinline)) static void jdeep(int d, int how) {
	if (d == 0) {
		if (how == 1)
			longjmp(jback, 7); /* out of the context, to run_jumps */
		if (how == 2)
			longjmp(jinner, 5); /* within the context */
		swapcontext(&jco, &jmain);
		return;
	}
	acc3 += leaf(d);
	jdeep(d - 1, how);
	acc3 += leaf(d + 1);
}

static void jbody(void) {
	if (setjmp(jinner) == 0)
		jdeep(4, 2);
	acc3 += 100;
	jdeep(3, 0);
	jdeep(5, 1);
}

__attribute__((noinline)) static int run_jumps(void) {
	static char stack[65536];
	getcontext(&jco);
	jco.uc_stack.ss_sp = stack;
	jco.uc_stack.ss_size = sizeof stack;
	jco.uc_link = &jmain;
	makecontext(&jco, jbody, 0);
	int v = setjmp(jback);
	if (v == 0)
		swapcontext(&jmain, &jco); /* back when jdeep(3, 0) switches */
	if (v == 0)
		swapcontext(&jmain, &jco); /* jdeep(5, 1) longjmps to jback */
	return v;
}

int main(void) {
	static char stacks[4][65536];
	for (int round = 0; round < 3; round++) {
		/* only 4 stacks: run them 4 at a time to the end */
		for (int k = 0; k < N; k += 4) {
			int hi = k + 4 < N ? k + 4 : N;
			/* contexts reuse 4 stacks: those of contexts that ended */
			for (int j = k; j < hi; j++) {
				getcontext(&ctx[j]);
				ctx[j].uc_stack.ss_sp = stacks[j % 4];
				ctx[j].uc_stack.ss_size = sizeof stacks[j % 4];
				ctx[j].uc_link = &main_ctx;
				makecontext(&ctx[j], (void (*)(void))body, 1, j);
				done[j] = 0;
			}
			while (1) {
				int live = 0;
				for (int j = k; j < hi; j++)
					if (!done[j]) {
						live = 1;
						swapcontext(&main_ctx, &ctx[j]);
					}
				if (!live)
					break;
			}
		}
	}
	run_in_frame();
	run_two_in_frame();
	acc3 += run_jumps();
	long s = 0;
	for (int k = 0; k < N; k++)
		s += acc[k];
	printf("%ld %ld %ld\n", s, acc2, acc3);
	return 0;
}
