/* The shared library the PLT programs call into, and what they need from
   outside: sink and fail, defined here. */
void sink(void *p, int n) { __asm__ volatile("" : : "r"(p), "r"(n) : "memory"); }
void fail(int n) { for (;;) sink(0, n); }
int libfunc(int x) { return x + 1; }
int libother(int x) { return x - 1; }
