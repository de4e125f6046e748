package cfi

import (
	"errors"
	"fmt"

	"github.com/sframesim/sframesim/sframe"
)

// DW_OP opcodes the evaluator knows [DWARF5 7.7.1].
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opSwap       = 0x16
	opAnd        = 0x1a
	opMinus      = 0x1c
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opLit0       = 0x30 // to 0x4f: lit0–lit31
	opBreg0      = 0x70 // to 0x8f: breg0–breg31
	opBregx      = 0x92
	opNop        = 0x96
)

// A sym is a value on the evaluator's stack: a constant, or a register
// (or the CFA) plus a constant, loaded from memory when deref.
type sym struct {
	reg    sframe.Reg
	hasReg bool
	off    int64
	deref  bool
}

// maxExprStack bounds the evaluator's stack.
const maxExprStack = 64

// eval evaluates a DWARF expression symbolically at pc: the program
// counter's register is the constant pc, every other register stays a
// symbol, and the result must be register+offset, optionally loaded from
// memory as the last step. pushCFA starts the stack with the CFA, as
// DW_CFA_expression and DW_CFA_val_expression do [DWARF5 6.4.2.3].
// Anything else (two registers combined, arithmetic on a register other
// than adding a constant, a loaded value used further) is an error saying
// what the expression does.
func (t *Table) eval(expr []byte, pc uint64, pushCFA bool) (sframe.Rule, error) {
	var stack []sym
	if pushCFA {
		stack = append(stack, sym{reg: sframe.RegCFA, hasReg: true})
	}
	r := &reader{data: expr, order: t.order}
	pop := func() (sym, error) {
		if len(stack) == 0 {
			return sym{}, errors.New("pops an empty stack")
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.deref {
			return v, errors.New("uses a value loaded from memory")
		}
		return v, nil
	}
	push := func(v sym) error {
		if len(stack) == maxExprStack {
			return errors.New("overflows the stack")
		}
		stack = append(stack, v)
		return nil
	}
	reg := func(n uint64, off int64) error {
		if n > 0x7fff {
			return fmt.Errorf("names register %d", n)
		}
		if sframe.Reg(n) == t.Arch.PC {
			return push(sym{off: int64(pc) + off})
		}
		return push(sym{reg: sframe.Reg(n), hasReg: true, off: off})
	}
	for r.left() > 0 {
		op := r.u8()
		var err error
		switch {
		case op >= opLit0 && op < opLit0+32:
			err = push(sym{off: int64(op - opLit0)})
		case op >= opBreg0 && op < opBreg0+32:
			err = reg(uint64(op-opBreg0), r.sleb())
		case op == opBregx:
			n := r.uleb()
			err = reg(n, r.sleb())
		case op == opAddr:
			err = push(sym{off: int64(r.encoded(peAbsptr, 0, t.Arch.PtrSize))})
		case op == opConst1u:
			err = push(sym{off: int64(r.u8())})
		case op == opConst1s:
			err = push(sym{off: int64(int8(r.u8()))})
		case op == opConst2u:
			err = push(sym{off: int64(r.u16())})
		case op == opConst2s:
			err = push(sym{off: int64(int16(r.u16()))})
		case op == opConst4u:
			err = push(sym{off: int64(r.u32())})
		case op == opConst4s:
			err = push(sym{off: int64(int32(r.u32()))})
		case op == opConst8u, op == opConst8s:
			err = push(sym{off: int64(r.u64())})
		case op == opConstu:
			err = push(sym{off: int64(r.uleb())})
		case op == opConsts:
			err = push(sym{off: r.sleb()})
		case op == opNop:
		case op == opDup, op == opOver:
			k := 1
			if op == opOver {
				k = 2
			}
			if len(stack) < k {
				return sframe.Rule{}, errors.New("pops an empty stack")
			}
			err = push(stack[len(stack)-k])
		case op == opDrop:
			_, err = pop()
		case op == opSwap:
			if len(stack) < 2 {
				return sframe.Rule{}, errors.New("pops an empty stack")
			}
			n := len(stack)
			stack[n-1], stack[n-2] = stack[n-2], stack[n-1]
		case op == opDeref:
			var v sym
			if v, err = pop(); err == nil {
				if !v.hasReg {
					return sframe.Rule{}, errors.New("loads from a constant address")
				}
				v.deref = true
				err = push(v)
			}
		case op == opPlusUconst:
			n := r.uleb()
			var v sym
			if v, err = pop(); err == nil {
				v.off += int64(n)
				err = push(v)
			}
		case op == opNeg, op == opNot:
			var v sym
			if v, err = pop(); err == nil {
				if v.hasReg {
					return sframe.Rule{}, errors.New("negates a register")
				}
				if op == opNeg {
					v.off = -v.off
				} else {
					v.off = ^v.off
				}
				err = push(v)
			}
		case op >= opAnd && op <= opXor || op >= opEq && op <= opNe:
			err = t.binary(op, pop, push)
		default:
			return sframe.Rule{}, fmt.Errorf("uses DW_OP %#x", op)
		}
		if r.err != nil {
			return sframe.Rule{}, fmt.Errorf("is truncated")
		}
		if err != nil {
			return sframe.Rule{}, err
		}
	}
	if len(stack) == 0 {
		return sframe.Rule{}, errors.New("leaves nothing on the stack")
	}
	v := stack[len(stack)-1]
	if !v.hasReg {
		return sframe.Rule{}, fmt.Errorf("is the constant %#x", uint64(v.off))
	}
	if int64(int32(v.off)) != v.off {
		return sframe.Rule{}, fmt.Errorf("adds %d, beyond 32 bits", v.off)
	}
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: v.reg, Offset: int32(v.off), Deref: v.deref}, nil
}

// binary applies a two-operand DW_OP: constants combine freely, a
// register only with plus and minus of a constant.
func (t *Table) binary(op byte, pop func() (sym, error), push func(sym) error) error {
	b, err := pop()
	if err != nil {
		return err
	}
	a, err := pop()
	if err != nil {
		return err
	}
	switch {
	case op == opPlus && !(a.hasReg && b.hasReg):
		if b.hasReg {
			a, b = b, a
		}
		a.off += b.off
		return push(a)
	case op == opMinus && !b.hasReg:
		a.off -= b.off
		return push(a)
	case a.hasReg || b.hasReg:
		return fmt.Errorf("applies DW_OP %#x to a register", op)
	}
	x, y := a.off, b.off
	var v int64
	flag := func(c bool) int64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case opAnd:
		v = x & y
	case opMinus:
		v = x - y
	case opMul:
		v = x * y
	case opOr:
		v = x | y
	case opPlus:
		v = x + y
	case opShl:
		v = int64(uint64(x) << (uint64(y) & 63))
	case opShr:
		v = int64(uint64(x) >> (uint64(y) & 63))
	case opShra:
		v = x >> (uint64(y) & 63)
	case opXor:
		v = x ^ y
	case opEq:
		v = flag(x == y)
	case opGe:
		v = flag(x >= y)
	case opGt:
		v = flag(x > y)
	case opLe:
		v = flag(x <= y)
	case opLt:
		v = flag(x < y)
	case opNe:
		v = flag(x != y)
	default:
		return fmt.Errorf("uses DW_OP %#x", op)
	}
	return push(sym{off: v})
}
