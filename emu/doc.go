// Package emu runs x86-64 and AArch64 Linux programs instruction by
// instruction under the Unicorn CPU emulator (libunicorn 2.1, linked
// statically; see scripts/fetch-unicorn.sh). It is the only package of
// sframesim that uses cgo.
//
// The binding is deliberately thin: an [Engine] owns one unicorn instance,
// guest memory is host memory mapped with uc_mem_map_ptr (so Go reads it
// without a cgo call), registers are read in batches, and the hooks that
// run on every instruction live in C (hook.c), crossing into Go only for
// system calls, full record buffers, or an explicit per-instruction
// observer. Every unicorn return code becomes an [Error].
package emu
