/* A program calling several library functions through the PLT, one of
   them also through its address (which ld may route through .plt.got). */
extern int libfunc(int), libother(int);
extern void sink(void *, int);

int (*volatile fp)(int) = libother;

int run(int x) { return libfunc(x) + libother(x) + fp(x); }
