/* nolibc/main.c: freestanding program (-nostdlib -ffreestanding -static)
 * started by _start in start.S.  No libc: every executed instruction belongs
 * to a function with an SFrame FDE.  Calls a few levels deep: recursion, a
 * callback through a function pointer, a frame > 255 bytes, a VLA (FP-based
 * CFA).  Writes one line with write(2), exits with status 7 via
 * exit_group(2). */

long sys_write(int fd, const void *buf, unsigned long len);
void sys_exit_group(int status) __attribute__((noreturn));
int cmain(long *sp);

typedef unsigned long (*op_fn)(unsigned long, unsigned long);

__attribute__((noipa)) static unsigned long op_add(unsigned long a, unsigned long b) { return a + b; }
__attribute__((noipa)) static unsigned long op_mix(unsigned long a, unsigned long b) { return (a * 31) ^ b; }

__attribute__((noipa)) static unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* callback through a function pointer, recursive */
__attribute__((noipa)) static unsigned long reduce(op_fn f, unsigned long acc, unsigned n)
{
	if (n == 0)
		return acc;
	return reduce(f, f(acc, fib(n)), n - 1);
}

/* VLA: frame pointer based CFA on both targets */
__attribute__((noipa)) static unsigned long vla_sum(unsigned n)
{
	unsigned long v[n];
	for (unsigned i = 0; i < n; i++)
		v[i] = reduce(op_add, i, i % 5);
	unsigned long s = 0;
	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return s;
}

__attribute__((noipa)) static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

__attribute__((noipa)) static char *put_dec(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* frame > 255 bytes: the output line is built here */
__attribute__((noipa)) static long say(unsigned long a, unsigned long b, unsigned long c)
{
	char line[512];
	char *p = line;
	p = put_str(p, "nolibc: fib(20)=");
	p = put_dec(p, a);
	p = put_str(p, " mix=");
	p = put_dec(p, b);
	p = put_str(p, " vla=");
	p = put_dec(p, c);
	*p++ = '\n';
	return sys_write(1, line, (unsigned long)(p - line));
}

int cmain(long *sp)
{
	long argc = sp[0];
	unsigned long a = fib(20);
	unsigned long b = reduce(op_mix, (unsigned long)(argc > 0), 12);
	unsigned long c = vla_sum(9);
	if (say(a, b, c) <= 0)
		return 1;
	return 7;
}
