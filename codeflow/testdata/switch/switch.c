// switch: switch statements GCC compiles to jump tables, for codeflow's
// table recogniser (build.sh). Not run: only analysed. The case bodies
// call functions so that GCC cannot turn the switch into a lookup table
// of values.

extern long f0(long), f1(long), f2(long), f3(long), f4(long), f5(long), f6(long), f7(long);
extern void sink(long);

// A leaf-like dispatcher: every case a tail call.
long dispatch(int op, long v)
{
	switch (op) {
	case 0: return f0(v);
	case 1: return f1(v + 1);
	case 2: return f2(v * 3);
	case 3: return f3(v - 7);
	case 4: return f4(v ^ 5);
	case 5: return f5(v << 2);
	case 6: return f6(v >> 1);
	case 7: return f7(-v);
	case 8: return f0(v + 9);
	case 9: return f1(v * 10);
	case 10: return f2(v - 11);
	case 11: return f3(v | 12);
	case 12: return f4(v & 13);
	case 13: return f5(v + 14);
	}
	return -1;
}

// Cases that do not start at 0, inside a frame with saved registers, the
// cases rejoining.
long offset_cases(int op, long a, long b)
{
	long r = a;
	switch (op) {
	case 10: r = f0(a) + b; break;
	case 11: r = f1(b) - a; break;
	case 12: r = f2(a + b); break;
	case 13: sink(a); r = f3(b); break;
	case 15: r = f4(a) * f5(b); break;
	case 16: r = f6(a - b); break;
	case 18: r = f7(b - a); break;
	case 19: r = f0(a * 3) + 1; break;
	case 20: r = f1(b * 5) - 1; break;
	case 22: sink(b); r = f2(a); break;
	case 23: r = f3(a | b); break;
	case 25: r = f4(a & b); break;
	}
	sink(r);
	return r + a * b;
}

// Large case bodies: the AArch64 table needs 16-bit entries.
#define BODY(n) do { sink(x * (n)); sink(x + (n)); sink(x - (n)); sink(x ^ (n)); \
	sink(x | (n)); sink(x & (n)); sink(x << ((n) & 7)); sink(x >> ((n) & 7)); } while (0)
#define BODY4(n) BODY(n); BODY((n) + 100); BODY((n) + 200); BODY((n) + 300)
#define BODY16(n) BODY4(n); BODY4((n) + 1000); BODY4((n) + 2000); BODY4((n) + 3000)

long big_cases(unsigned op, long x)
{
	switch (op) {
	case 0: BODY16(1); break;
	case 1: BODY16(2); break;
	case 2: BODY16(3); break;
	case 3: BODY16(4); break;
	case 4: BODY16(5); break;
	case 5: BODY(6); break;
	case 6: BODY(7); break;
	case 7: BODY(8); break;
	case 8: BODY(9); break;
	case 9: BODY(10); break;
	case 10: BODY(11); break;
	case 11: BODY(12); break;
	case 12: BODY(13); break;
	case 13: BODY16(14); break;
	default: return 0;
	}
	return x + 1;
}

// A switch in a loop with a frame pointer kept (-O2 omits it elsewhere).
__attribute__((optimize("no-omit-frame-pointer")))
long interp(const unsigned char *code, long acc)
{
	for (;;) {
		switch (*code++) {
		case 0: return acc;
		case 1: acc = f0(acc); break;
		case 2: acc = f1(acc); break;
		case 3: acc += *code++; break;
		case 4: acc -= *code++; break;
		case 5: acc = f2(acc); break;
		case 6: sink(acc); break;
		case 7: acc = f3(acc) + f4(acc); break;
		case 8: acc <<= 1; break;
		case 9: acc = f6(acc); break;
		case 10: acc = f7(acc) - 1; break;
		case 11: acc ^= *code++; break;
		case 12: acc = -acc; break;
		case 13: sink(acc + 1); break;
		default: acc = f5(acc); break;
		}
	}
}

long f0(long v) { sink(v); return v + 1; }
long f1(long v) { sink(v); return v + 2; }
long f2(long v) { sink(v); return v + 3; }
long f3(long v) { sink(v); return v + 4; }
long f4(long v) { sink(v); return v + 5; }
long f5(long v) { sink(v); return v + 6; }
long f6(long v) { sink(v); return v + 7; }
long f7(long v) { sink(v); return v + 8; }

volatile long sunk;
void sink(long v) { sunk = v; }
