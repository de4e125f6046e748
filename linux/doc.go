//go:build cgo

// Package linux is sframesim's user-mode Linux kernel: it loads an x86-64
// or AArch64 Linux ELF program (ET_EXEC, static PIE, or dynamically linked
// with its program interpreter from a sysroot) into an emu.Engine with the
// stack, auxiliary vector and registers Linux would give it, and runs it
// with its system calls emulated, until it exits or a limit stops it.
//
// Files: process.go (Config, Process, Run, how a run ends), loader.go
// (ELF segments, the address space, the initial stack), dynamic.go (the
// interpreter, shared objects, paths inside the sysroot), syscalls.go
// (the dispatcher and each system call), abi_x86_64.go and abi_aarch64.go
// (the kernel's ABI per architecture: system call registers, struct stat,
// TLS, entry registers), threads.go and sched.go (threads: clone, futexes
// and the deterministic scheduler), session.go (stepping with a shadow
// call stack per thread) and checkpoint.go (saving and restoring a whole
// session).
//
// The guest never touches the host: its writes to stdout and stderr go to
// Config.Stdout and Config.Stderr, it reads only the files listed in
// Config.ReadAllow (and below the directories listed there) and the files
// of its sysroot (snapshotted when
// opened), and it cannot exec, fork or use the network. Its threads share
// one emulated CPU. Time, process ids, random bytes and the interleaving of
// threads are fixed or derived from the instruction count, so every run of
// a program is the same.
package linux
