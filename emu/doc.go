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
// # Snapshots
//
// [Engine.Snapshot] and [Engine.Restore] save and restore the CPU context
// and the contents of every mapped region, pages shared with the previous
// snapshot where unchanged: the engine half of the stepping session's
// checkpoints (linux.Session.Checkpoint).
package emu
