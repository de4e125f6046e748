// Package emu runs x86-64 and AArch64 Linux programs instruction by
// instruction under the Unicorn CPU emulator (libunicorn 2.1, linked
// statically; see scripts/fetch-unicorn.sh), and keeps the true call stack
// while it does. It is the only package of sframesim that uses cgo.
//
// # Binding
//
// The binding is deliberately thin: an [Engine] owns one unicorn instance,
// guest memory is host memory mapped with uc_mem_map_ptr (so Go reads it
// without a cgo call), registers are read in batches, and the hooks that
// run on every instruction live in C (hook.c), crossing into Go only for
// system calls, full record buffers, or an explicit per-instruction
// observer. Every unicorn return code becomes an [Error]. The AArch64 engine
// uses the "max" CPU model with pointer authentication enabled, so paciasp
// really signs the return address.
//
// # Truth: the shadow call stack
//
// [ShadowStack] records a [Frame] at every call instruction (x86-64 call;
// AArch64 bl, blr, blraa, blrab, blraaz, blrabz) and pops it at the return
// that comes back to it (x86-64 ret; AArch64 ret, retaa, retab). For a
// frame created by a call instruction at address S of length L, executed
// with stack pointer SP and frame pointer FP (rbp / x29) before it ran:
//
//   - Return address (RA) = S + L: where the callee returns. On x86-64 it is
//     the value the call pushed at CFA-8; on AArch64 the value the call put
//     in x30 (the callee may sign it; the truth is the unsigned address).
//   - CFA (canonical frame address) = SP before the call. On x86-64 that is
//     the address just above the pushed return address (the callee's SP at
//     entry is CFA-8); on AArch64 the callee's SP at entry equals the CFA.
//     This is the DWARF/SFrame CFA of the callee, and the caller's SP after
//     the callee returns.
//   - Caller's FP = FP before the call: the value the callee must restore
//     (the "FP" an unwinder recovers for the caller's frame).
//
// Returns to another frame's return address (skipping frames) and returns
// to an address no frame expects are reported as [Anomaly] values, never a
// crash. Frames the stack pointer has left without a return (longjmp, C++
// exception unwinding) are dropped: on x86-64 when SP >= CFA; on AArch64
// when SP > CFA, or — right after an indirect branch (br, as longjmp ends
// and libgcc enters a landing pad) or an unexpected return, with SP at the
// top frame's CFA — when the branch lands in the function a frame returns
// to (that frame and those above it are dropped; with symbols; without
// them, when x30, PAC stripped, no longer holds the frame's return
// address). A tail call keeps its caller's frame, as the machine state does.
package emu
