//go:build cgo

package linux

import (
	"encoding/binary"
	"sync"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// The x86-64 side of the Linux layer: system calls are the syscall
// instruction (number in rax, arguments in rdi rsi rdx r10 r8 r9, result in
// rax), TLS is the FS base (arch_prctl), struct stat is 144 bytes.

var amd64 = &sysABI{
	sysRegs: [7]emu.RegID{emu.X86RAX, emu.X86RDI, emu.X86RSI, emu.X86RDX,
		emu.X86R10, emu.X86R8, emu.X86R9},
	ret:        emu.X86RAX,
	names:      amd64Names,
	machine:    "x86_64",
	platform:   "x86_64",
	hwcap:      amd64Hwcap,
	stackTop:   0x7fff_ffff_f000,
	mmapTop:    0x7fff_ffff_f000 - 128<<20,
	pieBase:    0x5555_5555_4000,
	oDirectory: 0o200000,
	insnPC:     func(pc uint64) uint64 { return pc },
	stat:       amd64Stat,
	start:      amd64Start,
	archPrctl:  amd64ArchPrctl,
}

func amd64Start(p *Process) error {
	p.Engine.OnSyscall(p.syscall)
	// Linux runs user code with CR4.OSFXSR and OSXMMEXCPT set; without
	// OSFXSR, fxsave and fxrstor skip the XMM registers, and ld.so's lazy
	// binding trampoline (fxsave, resolve, fxrstor) would lose the
	// floating-point arguments of the function it binds.
	const cr4OSFXSR, cr4OSXMMEXCPT = 1 << 9, 1 << 10
	cr4, err := p.Engine.Reg(emu.X86CR4)
	if err != nil {
		return err
	}
	if err := p.Engine.SetReg(emu.X86CR4, cr4|cr4OSFXSR|cr4OSXMMEXCPT); err != nil {
		return err
	}
	// rdx is the rtld_fini function _start passes to __libc_start_main:
	// none for a static program (ld.so passes its own to a dynamic one).
	return p.Engine.WriteRegs([]emu.RegID{emu.X86RSP, emu.X86RIP, emu.X86RDX, emu.X86FSBase},
		[]uint64{p.SP, p.start, 0, 0})
}

func amd64ArchPrctl(p *Process, code, addr uint64) uint64 {
	const setGS, setFS, getFS, getGS = 0x1001, 0x1002, 0x1003, 0x1004
	reg := emu.X86FSBase
	if code == setGS || code == getGS {
		reg = emu.X86GSBase
	}
	switch code {
	case setFS, setGS:
		if addr >= 1<<47 {
			return sysErr(ePERM)
		}
		if err := p.Engine.SetReg(reg, addr); err != nil {
			return sysErr(eINVAL)
		}
		return 0
	case getFS, getGS:
		v, err := p.Engine.Reg(reg)
		if err != nil {
			return sysErr(eINVAL)
		}
		if !p.put64(addr, v) {
			return sysErr(eFAULT)
		}
		return 0
	}
	return sysErr(eINVAL)
}

// amd64Stat encodes struct stat (arch/x86/include/uapi/asm/stat.h).
func amd64Stat(st statInfo) []byte {
	b := make([]byte, 144)
	le := binary.LittleEndian
	le.PutUint64(b[0:], st.dev)
	le.PutUint64(b[8:], st.ino)
	le.PutUint64(b[16:], st.nlink)
	le.PutUint32(b[24:], st.mode)
	le.PutUint32(b[28:], st.uid)
	le.PutUint32(b[32:], st.gid)
	le.PutUint64(b[40:], st.rdev)
	le.PutUint64(b[48:], uint64(st.size))
	le.PutUint64(b[56:], uint64(st.blksize))
	le.PutUint64(b[64:], uint64(st.blocks))
	for i := 72; i < 120; i += 16 {
		le.PutUint64(b[i:], epoch) // atime, mtime, ctime
	}
	return b
}

var (
	amd64HwcapOnce sync.Once
	amd64HwcapVal  uint64
)

// amd64Hwcap is AT_HWCAP as Linux gives it on x86-64: CPUID leaf 1's
// EDX, here of the emulated CPU (asked once, on a scratch engine).
func amd64Hwcap() uint64 {
	amd64HwcapOnce.Do(func() {
		amd64HwcapVal = 0x078bfbff // qemu64's, if asking fails
		e, err := emu.NewEngine(arch.AMD64)
		if err != nil {
			return
		}
		defer e.Close()
		const at = 0x1000
		mem, err := e.Map(at, emu.PageSize, emu.ProtRead|emu.ProtExec, "cpuid")
		if err != nil {
			return
		}
		copy(mem, []byte{0x0f, 0xa2}) // cpuid
		if e.WriteRegs([]emu.RegID{emu.X86RAX, emu.X86RCX}, []uint64{1, 0}) != nil || e.Start(at, at+2, 0, 0) != nil {
			return
		}
		if v, err := e.Reg(emu.X86RDX); err == nil {
			amd64HwcapVal = v & 0xffffffff
		}
	})
	return amd64HwcapVal
}

// amd64Names maps x86-64 system call numbers below 424 to names
// (arch/x86/entry/syscalls/syscall_64.tbl).
var amd64Names = map[uint64]string{
	0: "read", 1: "write", 2: "open", 3: "close", 4: "stat", 5: "fstat", 6: "lstat", 7: "poll",
	8: "lseek", 9: "mmap", 10: "mprotect", 11: "munmap", 12: "brk", 13: "rt_sigaction", 14: "rt_sigprocmask",
	15: "rt_sigreturn", 16: "ioctl", 17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev", 21: "access",
	22: "pipe", 23: "select", 24: "sched_yield", 25: "mremap", 26: "msync", 27: "mincore", 28: "madvise",
	29: "shmget", 30: "shmat", 31: "shmctl", 32: "dup", 33: "dup2", 34: "pause", 35: "nanosleep",
	36: "getitimer", 37: "alarm", 38: "setitimer", 39: "getpid", 40: "sendfile", 41: "socket", 42: "connect",
	43: "accept", 44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 48: "shutdown", 49: "bind",
	50: "listen", 51: "getsockname", 52: "getpeername", 53: "socketpair", 54: "setsockopt", 55: "getsockopt",
	56: "clone", 57: "fork", 58: "vfork", 59: "execve", 60: "exit", 61: "wait4", 62: "kill", 63: "uname",
	64: "semget", 65: "semop", 66: "semctl", 67: "shmdt", 68: "msgget", 69: "msgsnd", 70: "msgrcv",
	71: "msgctl", 72: "fcntl", 73: "flock", 74: "fsync", 75: "fdatasync", 76: "truncate", 77: "ftruncate",
	78: "getdents", 79: "getcwd", 80: "chdir", 81: "fchdir", 82: "rename", 83: "mkdir", 84: "rmdir",
	85: "creat", 86: "link", 87: "unlink", 88: "symlink", 89: "readlink", 90: "chmod", 91: "fchmod",
	92: "chown", 93: "fchown", 94: "lchown", 95: "umask", 96: "gettimeofday", 97: "getrlimit", 98: "getrusage",
	99: "sysinfo", 100: "times", 101: "ptrace", 102: "getuid", 103: "syslog", 104: "getgid", 105: "setuid",
	106: "setgid", 107: "geteuid", 108: "getegid", 109: "setpgid", 110: "getppid", 111: "getpgrp",
	112: "setsid", 113: "setreuid", 114: "setregid", 115: "getgroups", 116: "setgroups", 117: "setresuid",
	118: "getresuid", 119: "setresgid", 120: "getresgid", 121: "getpgid", 122: "setfsuid", 123: "setfsgid",
	124: "getsid", 125: "capget", 126: "capset", 127: "rt_sigpending", 128: "rt_sigtimedwait", 129: "rt_sigqueueinfo",
	130: "rt_sigsuspend", 131: "sigaltstack", 132: "utime", 133: "mknod", 134: "uselib", 135: "personality",
	136: "ustat", 137: "statfs", 138: "fstatfs", 139: "sysfs", 140: "getpriority", 141: "setpriority",
	142: "sched_setparam", 143: "sched_getparam", 144: "sched_setscheduler", 145: "sched_getscheduler",
	146: "sched_get_priority_max", 147: "sched_get_priority_min", 148: "sched_rr_get_interval",
	149: "mlock", 150: "munlock", 151: "mlockall", 152: "munlockall", 153: "vhangup", 154: "modify_ldt",
	155: "pivot_root", 156: "_sysctl", 157: "prctl", 158: "arch_prctl", 159: "adjtimex", 160: "setrlimit",
	161: "chroot", 162: "sync", 163: "acct", 164: "settimeofday", 165: "mount", 166: "umount2",
	167: "swapon", 168: "swapoff", 169: "reboot", 170: "sethostname", 171: "setdomainname", 172: "iopl",
	173: "ioperm", 174: "create_module", 175: "init_module", 176: "delete_module", 177: "get_kernel_syms",
	178: "query_module", 179: "quotactl", 180: "nfsservctl", 181: "getpmsg", 182: "putpmsg", 183: "afs_syscall",
	184: "tuxcall", 185: "security", 186: "gettid", 187: "readahead", 188: "setxattr", 189: "lsetxattr",
	190: "fsetxattr", 191: "getxattr", 192: "lgetxattr", 193: "fgetxattr", 194: "listxattr", 195: "llistxattr",
	196: "flistxattr", 197: "removexattr", 198: "lremovexattr", 199: "fremovexattr", 200: "tkill",
	201: "time", 202: "futex", 203: "sched_setaffinity", 204: "sched_getaffinity", 205: "set_thread_area",
	206: "io_setup", 207: "io_destroy", 208: "io_getevents", 209: "io_submit", 210: "io_cancel",
	211: "get_thread_area", 212: "lookup_dcookie", 213: "epoll_create", 214: "epoll_ctl_old", 215: "epoll_wait_old",
	216: "remap_file_pages", 217: "getdents64", 218: "set_tid_address", 219: "restart_syscall",
	220: "semtimedop", 221: "fadvise64", 222: "timer_create", 223: "timer_settime", 224: "timer_gettime",
	225: "timer_getoverrun", 226: "timer_delete", 227: "clock_settime", 228: "clock_gettime", 229: "clock_getres",
	230: "clock_nanosleep", 231: "exit_group", 232: "epoll_wait", 233: "epoll_ctl", 234: "tgkill",
	235: "utimes", 236: "vserver", 237: "mbind", 238: "set_mempolicy", 239: "get_mempolicy", 240: "mq_open",
	241: "mq_unlink", 242: "mq_timedsend", 243: "mq_timedreceive", 244: "mq_notify", 245: "mq_getsetattr",
	246: "kexec_load", 247: "waitid", 248: "add_key", 249: "request_key", 250: "keyctl", 251: "ioprio_set",
	252: "ioprio_get", 253: "inotify_init", 254: "inotify_add_watch", 255: "inotify_rm_watch", 256: "migrate_pages",
	257: "openat", 258: "mkdirat", 259: "mknodat", 260: "fchownat", 261: "futimesat", 262: "newfstatat",
	263: "unlinkat", 264: "renameat", 265: "linkat", 266: "symlinkat", 267: "readlinkat", 268: "fchmodat",
	269: "faccessat", 270: "pselect6", 271: "ppoll", 272: "unshare", 273: "set_robust_list", 274: "get_robust_list",
	275: "splice", 276: "tee", 277: "sync_file_range", 278: "vmsplice", 279: "move_pages", 280: "utimensat",
	281: "epoll_pwait", 282: "signalfd", 283: "timerfd_create", 284: "eventfd", 285: "fallocate",
	286: "timerfd_settime", 287: "timerfd_gettime", 288: "accept4", 289: "signalfd4", 290: "eventfd2",
	291: "epoll_create1", 292: "dup3", 293: "pipe2", 294: "inotify_init1", 295: "preadv", 296: "pwritev",
	297: "rt_tgsigqueueinfo", 298: "perf_event_open", 299: "recvmmsg", 300: "fanotify_init", 301: "fanotify_mark",
	302: "prlimit64", 303: "name_to_handle_at", 304: "open_by_handle_at", 305: "clock_adjtime",
	306: "syncfs", 307: "sendmmsg", 308: "setns", 309: "getcpu", 310: "process_vm_readv", 311: "process_vm_writev",
	312: "kcmp", 313: "finit_module", 314: "sched_setattr", 315: "sched_getattr", 316: "renameat2",
	317: "seccomp", 318: "getrandom", 319: "memfd_create", 320: "kexec_file_load", 321: "bpf", 322: "execveat",
	323: "userfaultfd", 324: "membarrier", 325: "mlock2", 326: "copy_file_range", 327: "preadv2",
	328: "pwritev2", 329: "pkey_mprotect", 330: "pkey_alloc", 331: "pkey_free", 332: "statx", 333: "io_pgetevents",
	334: "rseq",
}
