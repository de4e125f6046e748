package codeflow

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/sframe"
)

// Rules for the expectations.
func regRule(r sframe.Reg, off int32) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: r, Offset: off}
}
func derefRule(r sframe.Reg, off int32) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: r, Offset: off, Deref: true}
}

var sameRuleV = sframe.Rule{Kind: sframe.RuleSame}

// accept is a further rule an instruction must accept.
type accept struct {
	v       Value
	r       sframe.Rule
	mangled bool
}

// want is the expectation at one instruction: the preferred row as
// "CFA RA FP" (rules formatted as sframe.Rule.Format, " mangled" when the
// RA is signed), or "?" and a substring of the reason when unknown.
type want struct {
	row     string
	also    []accept
	rejects []accept
}

type snippet struct {
	name     string
	a        *arch.Arch
	code     []byte
	noReturn uint64 // a call target that does not return
	pads     []LandingPad
	want     []want
	// exits as "insn→target row" (" pad" after the target for a landing
	// pad, "?" for an unknown row).
	exits []string
}

// a64 assembles little-endian A64 words.
func a64(words ...uint32) []byte {
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

func x86(h string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

const start = 0x1000

// The bytes below come from GNU as 2.40 (`as --64`,
// `aarch64-linux-gnu-as`) on the listed source; call and jmp targets were
// set by hand.
var snippets = []snippet{
	{
		name: "x86 frame pointer, leave", a: arch.AMD64,
		// push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; leave; ret
		code: x86("55 4889e5 4883ec20 c9 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: FP, r: sameRuleV}}},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}, {v: FP, r: derefRule(6, 0)}},
				rejects: []accept{{v: FP, r: sameRuleV}}},
			{row: "sp+48 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			// After leave the saved FP is in the red zone: still valid.
			{row: "sp+8 *(cfa-8) *(cfa-16)", also: []accept{{v: FP, r: sameRuleV}}},
		},
	},
	{
		name: "x86 endbr64 (-fcf-protection)", a: arch.AMD64,
		// endbr64; push %rbp; mov %rsp,%rbp; rdsspq %rax; pop %rbp; ret
		code: x86("f30f1efa 55 4889e5 f3480f1ec8 5d c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			{row: "sp+8 *(cfa-8) *(cfa-16)", also: []accept{{v: FP, r: sameRuleV}}},
		},
	},
	{
		name: "x86 alloca", a: arch.AMD64,
		// push %rbp; mov %rsp,%rbp; sub %rax,%rsp; mov %rbp,%rsp; pop %rbp; ret
		code: x86("55 4889e5 4829c4 4889ec 5d c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			{row: "fp+16 *(cfa-8) *(cfa-16)", rejects: []accept{{v: CFA, r: regRule(7, 16)}}},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			{row: "sp+8 *(cfa-8) *(cfa-16)", also: []accept{{v: FP, r: sameRuleV}}},
		},
	},
	{
		name: "x86 realignment", a: arch.AMD64,
		// push %rbp; mov %rsp,%rbp; and $-64,%rsp; sub $0x40,%rsp; leave; ret
		code: x86("55 4889e5 4883e4c0 4883ec40 c9 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "fp+16 *(cfa-8) *(cfa-16)", rejects: []accept{{v: CFA, r: regRule(7, 16)}}},
			{row: "fp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+8 *(cfa-8) *(cfa-16)"},
		},
	},
	{
		name: "x86 DRAP", a: arch.AMD64,
		// lea 0x8(%rsp),%r10; and $-64,%rsp; push -0x8(%r10); push %rbp;
		// mov %rsp,%rbp; push %r10; sub $0x40,%rsp; mov -0x8(%rbp),%r10;
		// leave; lea -0x8(%r10),%rsp; ret
		code: x86("4c8d542408 4883e4c0 41ff72f8 55 4889e5 4152 4883ec40 4c8b55f8 c9 498d62f8 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same", also: []accept{{v: CFA, r: regRule(10, 0)}}},
			{row: "r10+0 *(cfa-8) same"},
			{row: "r10+0 *(cfa-8) same", also: []accept{{v: RA, r: derefRule(7, 0)}}},
			{row: "r10+0 *(cfa-8) *(sp+0)", also: []accept{{v: FP, r: sameRuleV}}},
			{row: "r10+0 *(cfa-8) *(fp+0)", also: []accept{{v: RA, r: derefRule(6, 8)}}, rejects: []accept{{v: FP, r: sameRuleV}}},
			{row: "r10+0 *(cfa-8) *(fp+0)", also: []accept{{v: CFA, r: derefRule(6, -8)}}},
			{row: "r10+0 *(cfa-8) *(fp+0)", also: []accept{{v: CFA, r: derefRule(6, -8)}}},
			{row: "r10+0 *(cfa-8) *(fp+0)", also: []accept{{v: CFA, r: derefRule(6, -8)}}},
			// After leave rbp is the caller's again: *(fp+0) is wrong now
			// (GCC 16's DRAP epilogue rows say it).
			{row: "r10+0 *(cfa-8) *(sp-8)", also: []accept{{v: FP, r: sameRuleV}}, rejects: []accept{{v: FP, r: derefRule(6, 0)}}},
			{row: "sp+8 *(cfa-8) same", also: []accept{{v: CFA, r: regRule(10, 0)}}},
		},
	},
	{
		name: "x86 enter", a: arch.AMD64,
		// enter $0x10,$0x0; leave; ret
		code: x86("c8100000 c9 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+32 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(6, 16)}}},
			{row: "sp+8 *(cfa-8) *(cfa-16)"},
		},
	},
	{
		name: "x86 sp from an untracked register", a: arch.AMD64,
		// mov %rax,%rsp; ret
		code: x86("4889c4 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "?CFA unknown: rsp changed by `mov %rax,%rsp`"},
		},
	},
	{
		name: "x86 paths disagree", a: arch.AMD64,
		// test %edi,%edi; je 1f; push %rbx; 1: nop; ret
		code: x86("85ff 7401 53 90 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
			{row: "?CFA unknown: paths disagree (rsp: cfa-8 vs cfa-16)"},
			{row: "?CFA unknown: paths disagree (rsp: cfa-8 vs cfa-16)"},
		},
	},
	{
		name: "x86 noreturn call", a: arch.AMD64,
		// sub $0x8,%rsp; call <start+9>; add $0x8,%rsp; ret
		code: x86("4883ec08 e800000000 4883c408 c3"), noReturn: start + 9,
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "?not reached from the entry"},
			{row: "?not reached from the entry"},
		},
	},
	{
		name: "x86 tail call", a: arch.AMD64,
		// push %rbx; pop %rbx; jmp <start+0x107>
		code: x86("53 5b e900010000"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
		},
		exits: []string{"2→0x1107 sp+8 *(cfa-8) same"},
	},
	{
		name: "x86 landing pad", a: arch.AMD64,
		// push %rbx; call f; pop %rbx; ret;
		// pad: mov %rax,%rdi; call _Unwind_Resume
		code: x86("53 e8fa020000 5b c3 4889c7 e8f0030000"), noReturn: start + 0x400,
		pads: []LandingPad{{Start: start + 1, End: start + 6, Pad: start + 8}},
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
		},
	},
	{
		name: "x86 landing pad in another partition", a: arch.AMD64,
		// push %rbx; call f; pop %rbx; ret
		code: x86("53 e8fa020000 5b c3"),
		pads: []LandingPad{{Start: start + 1, End: start + 6, Pad: start + 0x200}},
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
		},
		exits: []string{"1→0x1200 pad sp+16 *(cfa-8) same"},
	},
	{
		name: "x86 landing pad of an unreached call", a: arch.AMD64,
		// ret; call f; pad: mov %rax,%rdi
		code: x86("c3 e8fa020000 4889c7"),
		pads: []LandingPad{{Start: start + 1, End: start + 6, Pad: start + 6}},
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "?not reached from the entry"},
			{row: "?landing pad of calls not reached from the entry"},
		},
	},
	{
		name: "x86 landing pad of a call site without calls", a: arch.AMD64,
		// push %rbx; pop %rbx; ret; pad: mov %rax,%rdi
		code: x86("53 5b c3 4889c7"),
		pads: []LandingPad{{Start: start, End: start + 2, Pad: start + 3}},
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "sp+16 *(cfa-8) same"},
			{row: "sp+8 *(cfa-8) same"},
			{row: "?landing pad of call sites without calls"},
		},
	},
	{
		name: "x86 indirect jump", a: arch.AMD64,
		// jmp *%rax; ret
		code: x86("ffe0 c3"),
		want: []want{
			{row: "sp+8 *(cfa-8) same"},
			{row: "?indirect jump without a recognised table"},
		},
	},
	{
		name: "a64 frame record, call", a: arch.ARM64,
		// stp x29, x30, [sp, #-32]!; mov x29, sp; str x19, [sp, #16]; bl frame;
		// ldr x19, [sp, #16]; ldp x29, x30, [sp], #32; ret
		code: a64(0xa9be7bfd, 0x910003fd, 0xf9000bf3, 0x97fffffd, 0xf9400bf3, 0xa8c27bfd, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: RA, r: sameRuleV}, {v: FP, r: sameRuleV}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: CFA, r: regRule(29, 32)}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: RA, r: sameRuleV}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)", rejects: []accept{{v: RA, r: sameRuleV}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)"},
			// No red zone: the slots below the SP are gone.
			{row: "sp+0 same same", rejects: []accept{{v: RA, r: derefRule(sframe.RegCFA, -24)}}},
		},
	},
	{
		name: "a64 landing pad", a: arch.ARM64,
		// stp x29, x30, [sp, #-16]!; mov x29, sp; bl f; ldp x29, x30, [sp], #16; ret;
		// pad: bl _Unwind_Resume
		code: a64(0xa9bf7bfd, 0x910003fd, 0x940000be, 0xa8c17bfd, 0xd65f03c0, 0x940000fb), noReturn: start + 0x400,
		pads: []LandingPad{{Start: start + 8, End: start + 12, Pad: start + 20}},
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(29, 16)}, {v: RA, r: sameRuleV}}},
			{row: "sp+16 *(cfa-8) *(cfa-16)", rejects: []accept{{v: RA, r: sameRuleV}}},
			{row: "sp+0 same same"},
			// The state after the call: the LR no longer holds the RA.
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(29, 16)}}, rejects: []accept{{v: RA, r: sameRuleV}}},
		},
	},
	{
		name: "a64 sub sp and offset stp", a: arch.ARM64,
		// sub sp, sp, #48; stp x29, x30, [sp, #32]; add x29, sp, #32;
		// ldp x29, x30, [sp, #32]; add sp, sp, #48; ret
		code: a64(0xd100c3ff, 0xa9027bfd, 0x910083fd, 0xa9427bfd, 0x9100c3ff, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+48 same same"},
			{row: "sp+48 *(cfa-8) *(cfa-16)"},
			{row: "sp+48 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(29, 16)}}},
			{row: "sp+48 *(cfa-8) *(cfa-16)", also: []accept{{v: RA, r: sameRuleV}, {v: FP, r: sameRuleV}}},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 pointer authentication", a: arch.ARM64,
		// paciasp; stp x29, x30, [sp, #-16]!; mov x29, sp;
		// ldp x29, x30, [sp], #16; autiasp; ret
		code: a64(0xd503233f, 0xa9bf7bfd, 0x910003fd, 0xa8c17bfd, 0xd50323bf, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same", rejects: []accept{{v: RA, r: sameRuleV, mangled: true}}},
			{row: "sp+0 same mangled same"},
			{row: "sp+16 *(cfa-8) mangled *(cfa-16)", rejects: []accept{{v: RA, r: derefRule(sframe.RegCFA, -8)}}},
			{row: "sp+16 *(cfa-8) mangled *(cfa-16)"},
			{row: "sp+0 same mangled same"},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 alloca", a: arch.ARM64,
		// stp x29, x30, [sp, #-16]!; mov x29, sp; sub sp, sp, x0;
		// mov sp, x29; ldp x29, x30, [sp], #16; ret
		code: a64(0xa9bf7bfd, 0x910003fd, 0xcb2063ff, 0x910003bf, 0xa8c17bfd, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+16 *(cfa-8) *(cfa-16)", also: []accept{{v: CFA, r: regRule(29, 16)}}},
			{row: "fp+16 *(cfa-8) *(cfa-16)", rejects: []accept{{v: CFA, r: regRule(31, 16)}}},
			{row: "sp+16 *(cfa-8) *(cfa-16)"},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 str/ldr x30 with writeback", a: arch.ARM64,
		// str x30, [sp, #-16]!; ldr x30, [sp], #16; ret
		code: a64(0xf81f0ffe, 0xf84107fe, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+16 *(cfa-16) same"},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 realignment, CFA on x19", a: arch.ARM64,
		// stp x29, x30, [sp, #-32]!; mov x29, sp; str x19, [sp, #16];
		// mov x19, sp; sub x9, sp, #64; and sp, x9, #-64; mov sp, x19;
		// ldr x19, [sp, #16]; ldp x29, x30, [sp], #32; ret
		code: a64(0xa9be7bfd, 0x910003fd, 0xf9000bf3, 0x910003f3, 0xd10103e9, 0x927ae53f, 0x9100027f, 0xf9400bf3, 0xa8c27bfd, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+32 *(cfa-24) *(cfa-32)"},
			{row: "sp+32 *(cfa-24) *(cfa-32)"},
			{row: "sp+32 *(cfa-24) *(cfa-32)"},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: CFA, r: regRule(19, 32)}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: CFA, r: regRule(9, 96)}}},
			{row: "fp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: CFA, r: regRule(19, 32)}}, rejects: []accept{{v: CFA, r: regRule(31, 32)}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)", also: []accept{{v: CFA, r: regRule(19, 32)}}},
			{row: "sp+32 *(cfa-24) *(cfa-32)"},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 shifted immediate", a: arch.ARM64,
		// sub sp, sp, #0x1, lsl #12; add sp, sp, #0x1, lsl #12; ret
		code: a64(0xd14007ff, 0x914007ff, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "sp+4096 same same"},
			{row: "sp+0 same same"},
		},
	},
	{
		name: "a64 sp from an untracked register", a: arch.ARM64,
		// mov sp, x0; ret
		code: a64(0x9100001f, 0xd65f03c0),
		want: []want{
			{row: "sp+0 same same"},
			{row: "?CFA unknown: sp changed by `mov sp, x0`"},
		},
	},
}

func fmtRow(a *arch.Arch, r Row) string {
	abi := a.ABIs[0]
	m := ""
	if r.MangledRA {
		m = " mangled"
	}
	return fmt.Sprintf("%s %s%s %s", r.CFA.Format(abi), r.RA.Format(abi), m, r.FP.Format(abi))
}

// TestTransfer checks the rules at every instruction of hand-assembled
// snippets, one per transfer function.
func TestTransfer(t *testing.T) {
	for _, s := range snippets {
		t.Run(s.name, func(t *testing.T) {
			fn := Func{Name: s.name, Start: start, Code: s.code, LandingPads: s.pads}
			if s.noReturn != 0 {
				fn.NoReturn = func(t uint64) bool { return t == s.noReturn }
			}
			res := Analyze(s.a, fn)
			if len(res.Insns) != len(s.want) {
				t.Fatalf("%d instructions, want %d", len(res.Insns), len(s.want))
			}
			for i, w := range s.want {
				in := &res.Insns[i]
				text, _ := s.a.Disasm(s.code[in.Addr-start:], in.Addr, nil)
				if r, ok := strings.CutPrefix(w.row, "?"); ok {
					if in.Known || !strings.Contains(in.Reason, r) {
						t.Errorf("%#x %s: known %v, reason %q; want unknown with %q", in.Addr, text, in.Known, in.Reason, r)
					}
					continue
				}
				if !in.Known {
					t.Errorf("%#x %s: unknown (%s); want %s", in.Addr, text, in.Reason, w.row)
					continue
				}
				if got := fmtRow(s.a, in.Row()); got != w.row {
					t.Errorf("%#x %s: have %s, want %s (all: %s)", in.Addr, text, got, w.row, fmtAlt(s.a, in))
				}
				if !in.Accepts(CFA, in.Row().CFA, false) || !in.Accepts(RA, in.Row().RA, in.Row().MangledRA) || !in.Accepts(FP, in.Row().FP, false) {
					t.Errorf("%#x %s: does not accept its own row", in.Addr, text)
				}
				for _, x := range w.also {
					if !in.Accepts(x.v, x.r, x.mangled) {
						t.Errorf("%#x %s: %s %s not accepted (all: %s)", in.Addr, text, x.v, x.r.Format(s.a.ABIs[0]), fmtAlt(s.a, in))
					}
				}
				for _, x := range w.rejects {
					if in.Accepts(x.v, x.r, x.mangled) {
						t.Errorf("%#x %s: %s %s accepted (all: %s)", in.Addr, text, x.v, x.r.Format(s.a.ABIs[0]), fmtAlt(s.a, in))
					}
				}
			}
			var exits []string
			for _, e := range res.Exits {
				x := fmt.Sprintf("%d→%#x", e.Insn, e.Target)
				if e.Pad {
					x += " pad"
				}
				if e.Known {
					x += " " + fmtRow(s.a, e.Row)
				} else {
					x += " ?"
				}
				exits = append(exits, x)
			}
			if fmt.Sprint(exits) != fmt.Sprint(s.exits) {
				t.Errorf("exits %q, want %q", exits, s.exits)
			}
		})
	}
}

// TestArbitraryBytes: random and truncated code never panics, and every
// instruction either is known or says why not.
func TestArbitraryBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range arch.All {
		for n := 0; n < 300; n++ {
			code := make([]byte, rng.IntN(200))
			for i := range code {
				code[i] = byte(rng.Uint32())
			}
			mem := func(addr uint64, n int) ([]byte, bool) {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				return b, n < 1<<16
			}
			res := Analyze(a, Func{Start: 0x4000, Code: code, NoReturn: func(uint64) bool { return rng.IntN(2) == 0 }, Mem: mem,
				LandingPads: []LandingPad{{Start: 0x4000, End: 0x4000 + uint64(len(code)), Pad: 0x4000 + uint64(rng.IntN(len(code)+1))}}})
			covered := 0
			for _, in := range res.Insns {
				if !in.Known && in.Reason == "" {
					t.Fatalf("%s %x: %#x unknown without a reason", a.Name, code, in.Addr)
				}
				covered += in.Len
			}
			if covered != len(code) {
				t.Fatalf("%s %x: instructions cover %d of %d bytes", a.Name, code, covered, len(code))
			}
		}
	}
	for _, s := range snippets {
		for n := range s.code {
			Analyze(s.a, Func{Start: start, Code: s.code[:n]})
		}
	}
}

// TestNoReturn: Result.NoReturn is set only when no path from the call
// entry returns or leaves the function.
func TestNoReturn(t *testing.T) {
	exit := uint64(0x9000)
	noRet := func(target uint64) bool { return target == exit }
	// call rel32 to exit from an instruction at pc.
	call := func(pc uint64) string {
		rel := uint32(int64(exit) - int64(pc+5))
		return fmt.Sprintf("e8 %02x %02x %02x %02x", byte(rel), byte(rel>>8), byte(rel>>16), byte(rel>>24))
	}
	for _, c := range []struct {
		name string
		code []byte
		fn   Func
		want bool
	}{
		// push %rbp; call exit; (the next function)
		{name: "noreturn call", code: x86("55 " + call(start+1)), want: true},
		// push %rbp; call exit; ud2
		{name: "trap", code: x86("55 " + call(start+1) + " 0f0b"), want: true},
		// jmp .
		{name: "loop", code: x86("ebfe"), want: true},
		// test %edi,%edi; je +1; ret; call exit
		{name: "a path returns", code: x86("85ff 7401 c3 " + call(start+5)), want: false},
		// push %rbp; pop %rbp; jmp rel32 (a tail call)
		{name: "tail call", code: x86("55 5d e9 00100000"), want: false},
		// jmp *%rax (not a table)
		{name: "indirect jump", code: x86("ffe0"), want: false},
		// push %rbp; call some function that returns: falls off the end
		{name: "falls off the end", code: x86("55 e8 00100000"), want: false},
		// the call to exit, entered as a .cold partition
		{name: "partition", code: x86(call(start)), fn: Func{EntriesOnly: true, Entries: []Entry{{Addr: start}}}, want: false},
	} {
		fn := c.fn
		fn.Start, fn.Code, fn.NoReturn = start, c.code, noRet
		if got := Analyze(arch.AMD64, fn).NoReturn; got != c.want {
			t.Errorf("%s: NoReturn %v, want %v", c.name, got, c.want)
		}
	}
}

// TestExitEntryKeepsAlternatives: a hot part saves the FP in a slot,
// reloads it (the slot still holds it, and so does the register) and
// jumps to its cold part. The cold part, entered through Exit.Entry,
// knows both: its FP rule may be the slot's or "same" (SFrame and CFI
// may each pick one). Entered with the preferred Row alone it knows only
// the slot.
func TestExitEntryKeepsAlternatives(t *testing.T) {
	// sub $0x18,%rsp; mov %rbp,0x10(%rsp); mov 0x10(%rsp),%rbp; jmp 0x2000
	hot := Analyze(arch.AMD64, Func{Start: start, Code: x86("4883ec18 48896c2410 488b6c2410 e9ed0f0000")})
	if len(hot.Exits) != 1 || !hot.Exits[0].Known || hot.Exits[0].Target != 0x2000 {
		t.Fatalf("exits %+v, want one known jump to 0x2000", hot.Exits)
	}
	slot := derefRule(sframe.RegCFA, -16)
	cold := func(e Entry) *Insn {
		// nop; ud2
		res := Analyze(arch.AMD64, Func{Start: 0x2000, Code: x86("90 0f0b"), EntriesOnly: true, Entries: []Entry{e}})
		return &res.Insns[0]
	}
	in := cold(hot.Exits[0].Entry())
	if !in.Known || !in.Accepts(FP, slot, false) || !in.Accepts(FP, sameRuleV, false) || !in.Accepts(CFA, regRule(7, 32), false) {
		t.Errorf("entered through Exit.Entry: FP rules %v (known %v, %s); want *(cfa-16) and same", in.Rules(FP), in.Known, in.Reason)
	}
	in = cold(Entry{Addr: 0x2000, Row: hot.Exits[0].Row})
	if !in.Accepts(FP, slot, false) || in.Accepts(FP, sameRuleV, false) {
		t.Errorf("entered with the preferred row alone: FP rules %v; want *(cfa-16) only", in.Rules(FP))
	}
}
