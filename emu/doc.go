// Package emu is sframesim's binding to the Unicorn CPU emulator
// (libunicorn ≥ 2.1, linked statically; see scripts/fetch-unicorn.sh) and
// the only package that uses cgo. It knows CPUs, memory and hooks, not
// Linux: the user-mode kernel lives in package linux, the true call stack
// in package shadow.
//
// The binding is deliberately thin: an [Engine] owns one unicorn instance
// for an [arch.Arch]; guest memory is host memory mapped with
// uc_mem_map_ptr (so Go reads it without a cgo call); registers are
// libunicorn ids ([RegID], translated from DWARF numbers by
// [Engine.RegID]) read in batches; and the hooks that run on every
// instruction live in C (hook.c), crossing into Go only for system calls,
// interrupts and full record buffers. Every unicorn return code becomes an
// [Error]. The AArch64 engine uses the "max" CPU model with pointer
// authentication enabled, so paciasp really signs the return address.
//
// # Records and history
//
// With [Engine.ObserveHistory] the C code hook writes one [Record] per
// instruction (PC, size, SP, FP and link register before it runs) into a
// buffer, and the C store hook logs every guest store with the bytes it
// overwrote. When the buffer is full — or at a system call, an interrupt,
// or an instruction in a live range ([Engine.SetLiveRanges]) — Go receives
// the batch: memory is rolled back to before its first instruction and
// rolled forward store by store, so the observer sees each instruction
// with its own registers and exactly the memory it saw.
//
// # Counting per block
//
// By default the C code hook runs before every instruction, to count it
// (and, for observers, record it). [Engine.CountBlocks] replaces it by a
// block hook: each translated block adds its instruction count when it
// starts (decoded once per place and size, with x86asm on x86-64, and
// again when its code changes; size/4 on AArch64). Start's count stops
// before the block that would pass it, and that block then runs with a
// code hook on it alone, so stops are exact. A system call or interrupt
// inside a block settles the count at the instruction the PC names; a
// fault inside a block cannot be placed (Unicorn leaves the PC at an
// earlier instruction and x86 flags pending) and is reported as
// [InexactError], for the caller to run again counting per instruction
// from that block (linux.RunFast). The result is the same Executed,
// LastInsn, registers and stops as with the code hook, for about the cost
// of one C call per block.
//
// # Snapshots
//
// [Engine.Snapshot] and [Engine.Restore] save and restore the CPU context
// and the contents of every mapped region, pages shared with the previous
// snapshot where unchanged: the engine half of the stepping session's
// checkpoints (linux.Session.Checkpoint).
package emu
