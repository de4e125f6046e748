package codeflow

import (
	"strconv"
	"strings"
)

// Why a value is unknown, kept in value.aux: whyEntry, an instruction
// (index+1) that set it from something untracked, or a merge point where
// paths disagreed (whyJoin|index into analysis.joins).
const (
	whyEntry uint32 = 0
	whyJoin  uint32 = 1 << 30
)

type joinWhy struct {
	at   int // instruction index of the merge point
	reg  int8
	a, b value
}

func (an *analysis) joinReason(at int, reg int8, a, b value) uint32 {
	an.joins = append(an.joins, joinWhy{at: at, reg: reg, a: a, b: b})
	return whyJoin | uint32(len(an.joins)-1)
}

// regReason says why register r holds an unknown value.
func (an *analysis) regReason(r int8, why uint32) string {
	name := an.m.regName(r)
	switch {
	case why == whyEntry:
		return name + " unknown at the entry"
	case why&whyJoin != 0:
		j := an.joins[why&^whyJoin]
		return "paths disagree (" + an.m.regName(j.reg) + ": " + an.fmtValue(j.a) + " vs " + an.fmtValue(j.b) + ")"
	}
	i := int(why - 1)
	d := &an.insns[i]
	switch d.flow {
	case flowCall:
		return name + " clobbered by a call"
	}
	return name + " changed by `" + an.text(i) + "`"
}

// text disassembles instruction i without addresses (so reasons group).
func (an *analysis) text(i int) string {
	d := &an.insns[i]
	s, _ := an.m.arch.Disasm(an.fn.Code[d.off:], an.fn.Start+uint64(d.off), nil)
	return strings.Join(strings.Fields(s), " ")
}

func (an *analysis) fmtValue(v value) string {
	off := func(base string) string {
		if v.off == 0 {
			return base
		}
		if v.off > 0 {
			return base + "+" + strconv.FormatInt(v.off, 10)
		}
		return base + strconv.FormatInt(v.off, 10)
	}
	switch v.kind {
	case vCFA:
		return off("cfa")
	case vAligned:
		return off("aligned sp")
	case vEntry:
		s := "caller's " + an.m.regName(v.reg)
		if v.reg == an.m.raID {
			s = "return address"
		}
		if v.pac != 0 {
			s += " (signed)"
		}
		return s
	case vUndef:
		return "undefined"
	case vConst:
		return "0x" + strconv.FormatUint(uint64(v.off), 16)
	}
	return "unknown"
}

// ReasonUndecodable is Insn.Reason at bytes that do not decode (their Len
// is then a guess: 1 on x86-64).
const ReasonUndecodable = "undecodable instruction"
