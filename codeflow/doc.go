// Package codeflow derives, from a function's machine code alone, the
// rules that recover the caller's frame at each instruction: how to find
// the CFA, the return address and the caller's frame pointer — what an
// SFrame FRE or a DWARF CFI row says — so that a checker can compare the
// three. It covers x86-64 and AArch64 (golang.org/x/arch decodes; the
// per-architecture files amd64_arch.go and arm64_arch.go turn each
// instruction into a few ops on an abstract state, flow.go and state.go
// are architecture-neutral).
//
// # Method
//
// The function's bytes (its FDE range) are decoded linearly and split into
// basic blocks at direct branch targets. A state is propagated over the
// control-flow graph to a fixed point: each register holds CFA+k, A+k (A:
// the SP after the stack's realignment, known only within bounds of the
// CFA), the value a register had at the entry (the caller's FP, the
// return address, possibly signed), or is unknown; stack slots at CFA- or
// A-relative addresses hold such values (saved FP, saved RA, the saved
// DRAP register). Where paths meet, what differs becomes unknown ("paths
// disagree (rsp: cfa-8 vs cfa-16)"); an FP-based CFA survives a merge
// where the SP differs. Calls clobber the caller-saved registers; a call
// to a Func.NoReturn target ends its path, as do returns, traps and
// jumps out of the range (tail calls, jumps to .cold parts: Result.Exits).
//
// At each instruction every rule that recovers each value is listed
// (Insn.Rules, Insn.Accepts): "sp+16" and "fp+16" once the frame pointer
// is set, "same" and "*(cfa-16)" for the FP between `push %rbp` and its
// overwrite. Row holds the preferred one: SP before FP before other
// registers for the CFA, a live save slot before the register for the RA
// and FP.
//
// # Assumptions and limits
//
// Never a guess: what the analysis cannot follow is unknown with a
// concrete reason (Insn.Reason). What it assumes, as the compiler's CFI
// does: stores through untracked pointers or with an index register do
// not hit the frame's save slots; `sub %reg,%rsp` and `sub sp, sp, xN`
// (alloca) move the SP down. A save slot stays valid while it is at or
// above the SP, on x86-64 also in the 128-byte red zone below it (psABI
// §3.2.2; signal delivery skips it), on AArch64 not at all below the SP.
// An indirect jump is followed only as a recognised switch table (GCC's
// x86-64 PIC `movslq (%rX,%rY,4); add %rX; jmp *` and non-PIC
// `jmp *T(,%rY,8)`, AArch64's `ldrb/ldrh/ldr` + `adr` + `add … sxt* #2` +
// `br`): its base a known address (lea sym(%rip), adrp/add, adr — also
// hoisted out of a loop, as a constant of the state), its index limited
// by an unsigned bounds check on every path to it (`cmp $N; ja`, `cmp;
// b.ls`), its entries read through Func.Mem and all leading to
// instructions of the function (table.go). Code reached only through
// other indirect jumps, landing pads not given in Func.LandingPads and
// padding are unknown as "not reached from the entry", with the reason
// the table was not recognised. Undecodable bytes
// are unknown and end their path. Analyze does not fail: malformed or
// truncated code gives unknown instructions, never a panic.
package codeflow
