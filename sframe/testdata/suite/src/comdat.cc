// Inline functions and template instances land in COMDAT groups
// (.text._Z..., "axG"): two objects carry the same group and a link keeps
// one, discarding the other's .sframe contribution.
extern "C" void sink(void *, int);

template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get() const { sink((void *)&v, 1); return v; }
};

inline __attribute__((noinline)) int shared_inline(int x) { sink(&x, 2); return x * 5; }

#ifdef SECOND
int second(int x) { Box<int> b{x}; return b.get() + shared_inline(x); }
#else
int first(int x) { Box<int> b{x}; return b.get() + shared_inline(x) + Box<long>{x}.get(); }
#endif
