package codeflow

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/sframesim/sframesim/arch"
)

// equalOn recognizes a conditional branch k on the equality of two 64-bit
// registers compared right before it (x86-64 `cmp %rA,%rB; je|jne`;
// AArch64 `cmp xA, xB` or `cmp sp, xB`, then `b.eq|b.ne`): a and b are
// equal where the branch is taken (taken) or where it falls through. A
// stack-clash probe loop ends so (`sub $0x1000,%rsp; orq $0,(%rsp); cmp
// %r11,%rsp; jne`): after it, SP is the bound register's value.
func (an *analysis) equalOn(k int) (a, b int8, taken, ok bool) {
	// (The comparison right before the branch, which no other path
	// enters: it starts no block.)
	if k == 0 || an.insns[k-1].flow != flowNext || an.blockOf[k] >= 0 {
		return 0, 0, false, false
	}
	if an.m.arch == arch.ARM64 {
		w := an.wordAt(k)
		if w&0xff000010 != 0x54000000 || w&0xf > 1 { // b.eq, b.ne
			return 0, 0, false, false
		}
		taken = w&0xf == 0
		c := an.wordAt(k - 1)
		switch {
		case c&0xff20fc1f == 0xeb00001f: // subs xzr, xN, xM (no shift): xzr, not SP, for 31
			n, m := int8(c>>5&31), int8(c>>16&31)
			if n == a64SP || m == a64SP {
				return 0, 0, false, false
			}
			return n, m, taken, true
		case c&0xffe0fc1f == 0xeb20601f: // subs xzr, sp|xN, xM, uxtx
			n, m := int8(c>>5&31), int8(c>>16&31)
			if m == a64SP {
				return 0, 0, false, false
			}
			return n, m, taken, true
		}
		return 0, 0, false, false
	}
	j, ok1 := an.decodeAMD64At(k)
	c, ok2 := an.decodeAMD64At(k - 1)
	if !ok1 || !ok2 || j.Op != x86asm.JE && j.Op != x86asm.JNE || c.Op != x86asm.CMP {
		return 0, 0, false, false
	}
	ra, fa := regArg(c.Args[0])
	rb, fb := regArg(c.Args[1])
	if !fa || !fb {
		return 0, 0, false, false
	}
	return ra, rb, j.Op == x86asm.JE, true
}

// refineEqual sets, in st, the one of registers a and b whose value is
// not known to the other's, an address by the CFA or an aligned base. It
// reports false where both are known and differ: no execution in st takes
// the branch that says they are equal (in a loop's first pass, the values
// of its first iteration).
func refineEqual(st *state, a, b int8) bool {
	va, vb := st.r[a], st.r[b]
	known := func(v value) bool { return v.kind == vCFA || v.kind == vAligned }
	switch {
	case known(va) && known(vb):
		return sameBase(va, vb) && va.off == vb.off
	case known(va) && vb.kind == vUnknown:
		st.r[b] = va
	case known(vb) && va.kind == vUnknown:
		st.r[a] = vb
	}
	return true
}
