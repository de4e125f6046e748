// Package check proves a binary's SFrame data statically, without running
// it: at every instruction boundary of every SFrame function (FDE) it
// compares the SFrame row (sframe.Section.FindFRE and Rules, as unwind
// uses them) three ways: with the rules a code analysis derives from the
// machine code (package codeflow, given the whole binary's context:
// noreturn functions by name and, to a fixed point, those whose code
// never returns; LSDA landing pads; jump tables; .cold parts entered with
// the rules their hot parts jump with; the ELF entry point as the
// outermost frame; PLT stubs entered by calls) and with the file's own
// DWARF CFI at the same PC (package cfi). It reads SFrame V1, V2 and V3
// of x86-64 and AArch64 executables and shared objects.
//
// The code is the ground truth where it knows a value: it is what the CPU
// does, and it may accept several rules at once (codeflow.Insn.Accepts:
// "sp+16" and "fp+16" once the frame pointer is set up). Per value,
// SFrame is wrong where the code rejects its rule; where the code cannot
// tell, SFrame is compared with the CFI. A PC is proven right when SFrame
// agrees with the code for every value the code knows and with the CFI
// for the others, and each value has a rule from one of them; it is
// unknown, with the reason, only when neither can tell. Where the CFI
// disagrees with the code while SFrame follows the code, the CFI is
// wrong: Report.CFIWrong lists it with the evidence, not a problem.
// Where SFrame's rule differs from the CFI's and the code accepts both
// (gas keeping `fp *(cfa-48)` after GCC's CFI restores rbp, at PCs where
// the slot still holds the caller's FP), the value is right and the PC
// proven: Report.RuleDiffers lists it with the evidence, not a problem.
// A report is OK only when every PC was proven; unknown PCs make it
// INCOMPLETE. Options.CFIOnly compares with the CFI alone.
//
// SFrame describes less than CFI, by design, and these differences are not
// problems [SFrame §4.3, §8]:
//
//   - Registers other than the CFA, the RA and the FP are not tracked.
//   - x86-64's return address is always at CFA-8 (the header's fixed RA
//     offset); AArch64's RA is "in x30" where CFI has no rule for it
//     (the same value), as SFrame's RA-less rows say.
//   - The FP is "unchanged" where CFI has no rule for it.
//   - V1 and V2 cannot encode a CFA that is an expression or based on a
//     register other than SP/FP (DRAP, hand-written code): GNU as leaves
//     such functions out, which is a coverage note, not a problem; V3
//     encodes them as FLEX rows, compared like any other.
//   - A V3 row whose CFA is based on a register other than SP/FP (a FLEX
//     rule on rbx) is right when it equals CFI, but SFrame consumers can
//     only use it in the topmost frame: counted as "limited", not a
//     problem.
//
// Each disagreement is a problem of a kind (cfa, ra, fp, mangled-ra,
// unterminated, outermost, no-row), reported once per distinct SFrame
// row and disagreement as verify reports its problems, with the PC, the
// symbol, the source line, the instruction, the FDE and FRE as objdump
// prints them, what each source says, and which is right. Findings that
// need the whole binary are problems too: a call that is the last instruction of its
// function (its return address is the next function's first byte or
// padding, which consumers that look return addresses up unchanged —
// libsframe, glibc, the kernel — resolve to another function's row or to
// none), FDEs that overlap, a function whose FDE leaves part of it
// uncovered while CFI covers it, an FDE that covers padding (bytes in no
// function and without CFI), a PCMASK FDE whose size is not a multiple
// of its repetition size, and a V3 signal-frame bit that differs from the
// CFI's 'S' augmentation.
//
// Besides the report's counts and problems, a check gives a verdict per
// SFrame row (Report.Row: proven, problem, unknown, or empty when no
// instruction starts under it), which `verify --static` uses for the rows
// a run did not execute, and, on request, per instruction
// (Options.EachPC).
package check
