// Package cfi evaluates an ELF file's own DWARF call frame information
// (.eh_frame, and .debug_frame when present) at every PC, in the terms
// the rest of sframesim uses for SFrame rows: a [sframe.Rule] for the CFA,
// the return address and the frame pointer, with DWARF register numbers
// (which are SFrame's too) [DWARF5 6.4; LSB 5.0 "Exception Frames"].
//
// [Load] parses every CIE and FDE; an FDE's CFA program runs once, on
// first use ([FDE.Rows], so that a caller pays only for the FDEs it
// looks at), into a list of rows: row i holds from its address up to the next row's
// (the last one up to the FDE's end). [Table.Find] finds the FDE of a PC,
// [FDE.RowAt] its row, and [Table.Rules] turns a row into rules at that
// PC: a DW_CFA_def_cfa_expression or a register's DW_CFA_expression is
// evaluated symbolically with the PC known (so ld's .plt expression,
// rsp+8 plus 8 past the stub's push, becomes sp+8 or sp+16), and becomes
// a rule when it reduces to register+offset, optionally loaded from
// memory; otherwise the value is "not expressible" and says why.
// Whether an SFrame version could encode a rule is the caller's question:
// this package only says what the CFI says.
//
// Registers no rule mentions keep their value (DWARF's "same value", as
// GCC's unwinder treats them); DW_CFA_undefined of the return-address
// column marks the outermost frame. On AArch64 the RA_SIGN_STATE
// pseudo-register (toggled by DW_CFA_AARCH64_negate_ra_state, 0x2d, the
// opcode of DW_CFA_GNU_window_save) is tracked per row, remembered and
// restored with the rest of the row.
//
// Why not go-delve/delve's pkg/dwarf/frame: it parses and evaluates
// .eh_frame for a debugger, one PC at a time, and has gaps this package
// cannot work around by wrapping it (delve v1.27.2): its parser refuses
// the whole section at a CIE with AArch64's "B" augmentation (PAuth with
// the B key, "zRB"), and it does not read .debug_frame CIEs of version 4
// (address and segment sizes); its evaluator fails at
// DW_CFA_AARCH64_negate_ra_state, restores a register to "undefined"
// instead of the CIE's rule (DW_CFA_restore after an epilogue's ldp would
// read as an undefined return address), forgets the data alignment of
// DW_CFA_val_offset, panics on a truncated program, and re-runs the
// program from the start for every PC without exposing row boundaries.
//
// Malformed input never panics: a CIE or FDE that cannot be read is
// skipped with an error in [Table.Errs] (parsing resumes at the next
// entry, whose position the length field gives); an FDE whose program
// stops at an unknown or truncated instruction keeps the rows before it
// and carries the error in [FDE.Err] for the PCs after it. Relocatable
// objects (whose .eh_frame needs relocations) are refused.
package cfi
