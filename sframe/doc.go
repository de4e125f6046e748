// Package sframe reads, checks, looks up, writes and dumps SFrame stack-trace
// data: the .sframe section GNU as emits with --gsframe and ld merges.
//
// # Versions
//
// All three versions are decoded, following the fact sheet in the project's
// shared docs (docs/sframe-format.md, cited as [SFrame §N]) and the
// sframe-spec of each binutils release:
//
//   - V1 (binutils 2.40): 17-byte FDEs, section-relative function starts.
//   - V2 (2.41–2.45): 20-byte FDEs with rep_size; errata 1 adds the
//     SFRAME_F_FDE_FUNC_START_PCREL flag and the s390x ABI, errata 2 the
//     "RA undefined" FRE without data words.
//   - V3 (2.46 and later): a 16-byte index entry per function plus a 5-byte
//     attribute record at the head of its FREs, FLEX FDEs (control/offset
//     word pairs naming DWARF registers, with dereference), the signal-frame
//     bit, field-relative starts.
//
// Sections of either byte order are read (the order comes from the magic),
// for the AArch64 (both orders), AMD64 and s390x ABIs.
//
// # Use
//
// [Decode] turns section bytes and the section's virtual address into a
// [Section]; [Open], [NewFile] and [FromELF] find the section in an ELF file
// (by name, else through PT_GNU_SFRAME; in relocatable objects the start
// fields' relocations are applied where newest objdump applies them).
// [Section.Lookup] maps a PC to its FDE and FRE and decodes the recovery
// rules into a [Row]: CFA, RA and FP as [Rule] values (register + offset,
// optionally dereferenced, or "unchanged"), the mangled-RA bit, the
// pointer-authentication key, the signal-frame and outermost flags.
// [Section.Validate] checks every rule of the format; [Section.Dump] prints
// the section as `objdump --sframe` of the binutils that made it does, byte
// for byte; [Section.Encode] writes a section back in canonical layout, so
// tests can build edge cases and fault injection can alter one row.
//
// # Malformed input
//
// Nothing in this package panics on bad input, and nothing allocates more
// than the input's size justifies. [Decode] returns a nil Section only when
// not even the header is usable (too short, bad magic, unknown version);
// otherwise it decodes everything that is safely readable and reports each
// structural problem as a [*FormatError] carrying the byte offset in the
// section, the field (such as "FDE[3].FRE[1].fre_info") and its value, all
// collected in an [Errors]. Lookups on such a section work on what was
// decoded. [Section.Validate] adds the semantic checks (ordering, totals,
// word counts, flags, ...) in the same form, marking legal-but-suspicious
// findings as warnings.
package sframe
