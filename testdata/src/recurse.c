/* recurse: recursion a few levels deep (fib, Ackermann, a tree walk), a
 * callback through a function pointer (fold, and qsort's comparator called
 * back from glibc).  Also the program used for the AArch64 pointer
 * authentication variants (-mbranch-protection=...): it has leaf and
 * non-leaf functions.  Prints and exits with status 3. */
#include <stdio.h>
#include <stdlib.h>

typedef long (*binop)(long, long);

__attribute__((noipa)) static long add(long a, long b) { return a + b; }
__attribute__((noipa)) static long mulmod(long a, long b) { return a * (b + 1) % 1000003; }
__attribute__((noipa)) static long xorsh(long a, long b) { return (a << 3) ^ (b * 7) ^ (a >> 5); }

/* the callback is called through a function pointer */
__attribute__((noipa)) static long fold(const long *v, int n, binop f, long init)
{
	long acc = init;
	for (int i = 0; i < n; i++)
		acc = f(acc, v[i]);
	return acc;
}

__attribute__((noipa)) static long fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

__attribute__((noipa)) static long ack(long m, long n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

struct node {
	long val;
	const struct node *left, *right;
};

/* recursive walk that applies a callback at every node, depth-first */
__attribute__((noipa)) static long walk(const struct node *t, int depth, binop f)
{
	if (!t)
		return depth;
	long l = walk(t->left, depth + 1, f);
	long r = walk(t->right, depth + 1, f);
	return f(f(l, r), t->val);
}

static int cmp_desc(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x < y) - (x > y);
}

static const struct node n7 = {7, 0, 0}, n6 = {6, 0, 0}, n5 = {5, &n7, 0};
static const struct node n4 = {4, 0, &n6}, n3 = {3, &n5, 0}, n2 = {2, &n4, 0};
static const struct node root = {1, &n2, &n3};

int main(void)
{
	long v[12];
	for (int i = 0; i < 12; i++)
		v[i] = fib(i + 3);
	static const binop ops[] = {add, mulmod, xorsh};
	static const char *const names[] = {"add", "mulmod", "xorsh"};
	for (int k = 0; k < 3; k++)
		printf("fold %-6s = %ld\n", names[k], fold(v, 12, ops[k], k));
	printf("ack(2,3) = %ld\n", ack(2, 3));
	printf("walk add = %ld, walk xorsh = %ld\n", walk(&root, 0, add), walk(&root, 0, xorsh));
	qsort(v, 12, sizeof v[0], cmp_desc);
	printf("sorted:");
	for (int i = 0; i < 12; i++)
		printf(" %ld", v[i]);
	printf("\nfib(16) = %ld\n", fib(16));
	return 3;
}
