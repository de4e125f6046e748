//go:build cgo

package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// System calls of the Linux user-mode layer. Each call the guest makes is
// looked up by name (zsysnum_x86_64.go and zsysnum_aarch64.go, generated
// from the kernel's uapi headers, map numbers to names) in handlers.
// Every call is one of:
//
//   - emulated: the guest sees what Linux would do, within the sandbox;
//   - ENOSYS: not emulated, but glibc copes with ENOSYS: rseq, statx,
//     membarrier; and features a kernel may lack, which their callers
//     probe for: inotify, io_uring, openat2, pidfd_open, futex_waitv,
//     Landlock, memfd_secret, NUMA memory policies (notImplemented, with
//     the reasons); and, as from Linux,
//     for a number no system call has (of the number's low 32 bits, which
//     are all Linux looks at; x86-64's x32 calls included);
//   - denied: network calls (socket, connect, sendto... deniedCalls in
//     sys_net.go) fail with EACCES, as in a sandbox, and are counted by
//     name (Process.Denied): programs cope with that failure;
//   - EPERM: the calls that need a capability the guest lacks (syslog,
//     reboot, sethostname, swapon, the module calls, chroot, umount2...:
//     sys_capable.go), after the checks Linux makes before;
//   - stop: anything else ends the run with StopUnsupported, naming the
//     call's number and name, the PC and its symbol (exec, fork, clone of a
//     process... deliberately: they cannot be emulated honestly, and
//     whatever no corpus program needs).
//
// Emulated calls, and their limits:
//
//	read readv pread64       fd 0 (Config.Stdin, else EOF; waited for with
//	                         poll(2) so that the timeout or an interrupt
//	                         still ends the run: hostwait.go) and opened
//	                         files, read from the host file as the guest
//	                         asks, 64 KiB at a time
//	write writev             fds 1 and 2 (Config.Stdout/Stderr), passed on
//	                         64 KiB at a time (4 KiB after poll(2) to a pipe
//	                         or terminal; at most MAX_RW_COUNT bytes per
//	                         call, as Linux), and files of the overlay; others
//	                         EBADF
//	openat open              read-only, paths in Config.ReadAllow and, for
//	                         a dynamically linked program (or with
//	                         Config.Sysroot), files in the sysroot, resolved
//	                         as in a chroot (dynamic.go), and everything
//	                         below the directories in Config.ReadAllow
//	                         (fsview.go); regular files and directories
//	                         (read: EISDIR; devices, FIFOs and sockets
//	                         EACCES), each host file opened once however
//	                         often the guest opens it, and read lazily:
//	                         others ENOENT; each host file has its own inode.
//	                         Below /tmp and the working directory files are
//	                         created and written in the overlay (overlay.go:
//	                         O_CREAT, O_EXCL, O_TRUNC, O_APPEND; a host file is
//	                         copied up when opened for writing); elsewhere
//	                         writing or creating is EROFS
//	close lseek fcntl        fds 0-2 and opened files (fcntl: F_GETFD/SETFD/GETFL/SETFL,
//	dup dup2 dup3            F_DUPFD/F_DUPFD_CLOEXEC; record locks F_GETLK/SETLK/
//	                         SETLKW are granted at once, as for a process alone,
//	                         but where an open file description lock is in the
//	                         way; F_OFD_GETLK/SETLK/SETLKW kept per description
//	                         (ofdlocks.go)); duplicates share the file
//	                         offset; at most 1024 descriptors (RLIMIT_NOFILE):
//	                         EMFILE when all are taken, EBADF for dup2/dup3 to
//	                         one beyond, EINVAL for F_DUPFD from one beyond
//	fstat newfstatat stat lstat
//	                         fds 0-2 are pipes (S_IFIFO), but a regular file
//	                         given as stdin (fd 0 is then that file, seekable),
//	                         opened files regular files;
//	                         the view's files 0444 with the host's execute
//	                         bits, its directories 0555 (size
//	                         4096, 2 links and one per subdirectory)
//	access faccessat faccessat2  allowed and sysroot files exist (read-only), others ENOENT;
//	                         the overlay's by their owner bits (faccessat2's flags too)
//	mknod mknodat            regular files, named pipes and socket names in the
//	                         overlay; devices EPERM; a named pipe's open stops the run
//	ioctl                    ENOTTY: the guest has no terminal (glibc then
//	                         buffers stdout fully, as for a pipe)
//	readlink readlinkat      /proc/self/exe (the program's path, links resolved),
//	                         /proc/self/fd/N, /proc/self, links in the
//	                         sysroot; others ENOENT
//	getcwd chdir fchdir      the guest's working directory, at first the host's;
//	                         chdir and fchdir move it to a directory the guest
//	                         sees (the host's stays as it is); once removed,
//	                         "." in it (or in a descriptor's) is still that
//	                         directory, getcwd ENOENT
//	creat pwrite64 pwritev ftruncate truncate mkdir mkdirat rmdir unlink unlinkat
//	symlink symlinkat rename renameat renameat2 chmod fchmod fchmodat fchmodat2
//	                         on the in-memory overlay (overlay.go): nothing is
//	                         written on the host; what it holds counts against
//	                         Config.MaxMem (beyond it ENOSPC); RENAME_NOREPLACE
//	                         and RENAME_EXCHANGE (RENAME_WHITEOUT EINVAL);
//	                         directories the host shows are not renamed
//	                         (EXDEV)
//	umask                    the mask applied to the modes of files and
//	                         directories the guest creates (022 at start)
//	utimensat                sets the access and modification times of the
//	                         overlay's files (the others' stay the fake
//	                         clock's start, as every ctime); now is the fake
//	                         clock's; the view's files are read-only (EROFS)
//	utime utimes futimesat   the same, in seconds and microseconds (x86-64)
//	fallocate                files of the overlay: grows them with zeros and
//	                         reserves the range (the memory cap: ENOSPC),
//	                         KEEP_SIZE, ZERO_RANGE, PUNCH_HOLE (gives whole
//	                         chunks back); other modes EOPNOTSUPP
//	chown lchown fchown fchownat  to the guest's own ids only (EPERM
//	                         otherwise), which they have already
//	fadvise64                accepted (ESPIPE on pipes), nothing to do
//	copy_file_range          between files of the overlay (one file system,
//	                         as tmpfs); from or to a file of the view (the
//	                         host's: another file system) EXDEV, as Linux
//	                         answers across file systems, and programs
//	                         fall back to read and write (sys_copy.go)
//	sendfile                 from a regular file to a file of the overlay or
//	                         to the standard output or error; to a pipe
//	                         between threads it stops the run
//	statfs fstatfs           the sandbox's file systems, the same on every
//	                         machine: the overlay (the writable trees) tmpfs
//	                         of the memory cap's size, the view's other
//	                         files a read-only ext4 of no size, procfs,
//	                         sysfs, devtmpfs, pipefs (sys_statfs.go)
//	fsync fdatasync syncfs sync  nothing to do (syncfs: EBADF for a closed fd)
//	setxattr getxattr listxattr removexattr (and the l and f forms)
//	                         the guest's files have no extended attributes:
//	                         an empty list, ENODATA, and writes refused as
//	                         Linux refuses them there (sys_xattr.go)
//	link linkat              hard links within the overlay (a file of the view
//	                         below /tmp or the working directory is copied up
//	                         first, elsewhere EXDEV; a directory: EPERM;
//	                         AT_SYMLINK_FOLLOW; AT_EMPTY_PATH as without the
//	                         capability it needs)
//	getdents64               directories of the overlay (/tmp, the working
//	                         directory, those the guest made), with what the
//	                         view shows in them, and the view's directories
//	                         (named trees, the sysroot's); sorted by name
//	mincore                  every mapped page resident; ENOMEM for unmapped
//	                         memory (gnulib's c-stack probes with it)
//	brk mmap munmap mprotect mremap madvise msync
//	                         anonymous memory, private copies of opened
//	                         files, and shared mappings of overlay files
//	                         open for reading and writing, coherent with the
//	                         file at every system call (shared.go; msync
//	                         has nothing left to do) (MAP_FIXED replaces what was there; mapping
//	                         an ELF file's first page registers it as an
//	                         Object, as ld.so does for each library, and
//	                         keeps the file's contents, once per file);
//	                         madvise(MADV_DONTNEED) reads a file mapping's
//	                         pages from the file again, anonymous ones as
//	                         zeros; everything counts against Config.MaxMem
//	                         (exceeding it stops the run with StopMemory)
//	exit exit_group          exit ends the calling thread (the last one ends the
//	                         run), exit_group the run (StopExited)
//	clone clone3             threads only: the flags of pthread_create (VM, FS,
//	                         FILES, SIGHAND, THREAD, SYSVSEM required; SETTLS,
//	                         PARENT_SETTID, CHILD_SETTID, CHILD_CLEARTID); any
//	                         other flags (fork, vfork, new namespaces) stop the
//	                         run; threads share one emulated CPU (sched.go)
//	arch_prctl               x86-64 ARCH_SET_FS/GET_FS/SET_GS/GET_GS; others EINVAL
//	set_tid_address set_robust_list get_robust_list  recorded (the clear-tid
//	                         word is zeroed and woken at the thread's exit;
//	                         robust lists reported back, not walked)
//	gettid                   the thread's id: 4242 for the main thread, then
//	                         4243, ... in the order of creation
//	getpid getppid getpgid getpgrp getsid getuid geteuid getgid getegid
//	getgroups                no supplementary groups
//	sysinfo                  uptime from the fake clock, the memory cap as RAM
//	                         (4 GiB without one), what is not mapped as free
//	prlimit64 getrlimit setrlimit  RLIMIT_STACK 8 MiB, NOFILE 1024, NPROC 4096 and
//	                         SIGPENDING 16384 (soft and hard; NPROC: the threads
//	                         alive at once, beyond which clone fails with EAGAIN;
//	                         SIGPENDING: queued real-time signals and POSIX
//	                         timers, beyond which sigqueue, tkill and
//	                         timer_create fail with EAGAIN), others
//	                         unlimited; new limits lowered or raised up to the
//	                         hard limit (EPERM beyond), kept by checkpoints;
//	                         NOFILE, NPROC and SIGPENDING act (below the
//	                         layer's own bounds), the others are only kept
//	getrandom                fixed-seed ChaCha8 bytes (reproducible)
//	open openat with O_PATH  a descriptor naming the file (a link itself with
//	                         O_NOFOLLOW): fstat, fchdir, dirfd, dup, F_GETFL;
//	                         reads, writes, mmap and the like EBADF
//	execve execveat          what is wrong with the file (ENOENT, ENOTDIR,
//	                         EACCES, ENOEXEC for neither ELF nor #!) as Linux;
//	                         an executable stops the run
//	uname                    Linux 6.1.0, node "sframesim" (personality
//	                         UNAME26: 2.6.61; PER_LINUX32 on x86-64: i686)
//	personality              per thread; the flags that act only when a
//	                         program is executed are kept; UNAME26 and
//	                         PER_LINUX32 as in uname (AArch64: EINVAL, no
//	                         AArch32); READ_IMPLIES_EXEC and STICKY_TIMEOUTS
//	                         stop the run
//	capget capset            no capabilities in any set; capset only to none
//	times getrusage          CPU time from the instruction count (all user
//	                         time), no children; getrusage's ru_maxrss the most
//	                         memory held at once; other counters 0
//	clock_gettime clock_getres gettimeofday time nanosleep clock_nanosleep
//	                         a fake clock: 2025-01-01 UTC (monotonic: 1000 s)
//	                         plus 1 ns per executed instruction plus time slept;
//	                         sleeping only advances it
//	adjtimex clock_adjtime   read: a clock no NTP daemon disciplines (TIME_ERROR,
//	                         STA_UNSYNC); setting it EPERM (sys_time.go)
//	settimeofday clock_settime  EPERM after Linux's checks (EINVAL, EFAULT)
//	futex                    WAIT, WAIT_BITSET, WAKE, WAKE_BITSET, REQUEUE,
//	                         CMP_REQUEUE, WAKE_OP (PRIVATE makes no difference);
//	                         timeouts on the fake clock; a lone thread's wait
//	                         times out at once with a timeout, and otherwise
//	                         stops the run (StopDeadlock: nobody could wake it),
//	                         as does every thread waiting with no timeout
//	rt_sigaction rt_sigprocmask rt_sigpending sigaltstack rt_sigreturn
//	                         signals delivered as Linux does (signals.go):
//	                         handlers on a kernel-exact signal frame,
//	                         per-thread masks, default actions (terminating
//	                         ones end the run: StopSignaled)
//	kill tkill tgkill        to the process itself or any of its threads;
//	                         others ESRCH
//	rt_sigsuspend pause rt_sigtimedwait rt_sigqueueinfo rt_tgsigqueueinfo
//	restart_syscall          as Linux (signals.go); a signal interrupts a
//	                         blocking call with EINTR or restarts it
//	alarm setitimer getitimer timer_create timer_settime timer_gettime
//	timer_getoverrun timer_delete
//	                         on the fake clock (the real clocks) and the
//	                         instruction count (ITIMER_VIRTUAL, ITIMER_PROF,
//	                         CLOCK_PROCESS_CPUTIME_ID); signals at exact
//	                         instructions (timers.go); SIGEV_SIGNAL, NONE,
//	                         THREAD_ID; thread CPU-time and alarm clocks stop
//	                         the run
//	pipe pipe2               between threads: reads wait for data, writes
//	                         for room (64 KiB; F_SETPIPE_SZ up to 1 MiB), EOF
//	                         and EPIPE/SIGPIPE when an end is closed,
//	                         O_NONBLOCK (pipes.go)
//	poll ppoll select pselect6  on pipes, signalfds, eventfds, timerfds and
//	                         epoll instances (other descriptors are always ready), with timeouts on the fake clock
//	                         and ppoll's and pselect6's masks
//	signalfd signalfd4       reads pending signals of its set (signalfd.go)
//	prctl                    names (PR_SET_NAME, PR_GET_NAME: the program's
//	                         file name at first, inherited by new threads),
//	                         dumpable, keepcaps, parent death signal, child
//	                         subreaper, no_new_privs, THP disable, timer
//	                         slack, the capability bounding set (full), no
//	                         seccomp, no SVE, anonymous memory names (not
//	                         kept); other options stop the run (sys_prctl.go)
//	setuid setgid setreuid setregid setresuid setresgid getresuid getresgid
//	                         the guest's own ids only (uid and gid 1000), else EPERM
//	setgroups setsid setpgid EPERM: no capability; the process leads its session
//	wait4 waitid             ECHILD: no children (it cannot fork)
//	getpriority setpriority  nice values per thread, raised but never lowered (EACCES)
//	sched_getscheduler sched_setscheduler sched_getparam sched_setparam
//	sched_get_priority_max sched_get_priority_min sched_setaffinity
//	                         SCHED_OTHER, BATCH and IDLE; real-time policies EPERM
//	                         (RLIMIT_RTPRIO 0); a mask must hold CPU 0
//	mlock mlock2 munlock mlockall munlockall  mapped ranges within RLIMIT_MEMLOCK (8 MiB)
//	                         succeed (nothing is ever swapped out)
//	close_range flock preadv preadv2 pwritev2 readahead sync_file_range
//	                         closing ranges, flock locks that conflict between open
//	                         files of one file (a blocking one waits), positional
//	                         vector I/O (RWF_NOWAIT EOPNOTSUPP), hints with
//	                         nothing to do (sys_fdops.go)
//	memfd_create             a nameless file of the overlay (as O_TMPFILE), no sealing
//	epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
//	eventfd eventfd2         epoll over pipes, signalfds, eventfds and the
//	                         standard streams (level-triggered, EPOLLONESHOT,
//	                         EPOLLET by the wakeups Linux's queues get),
//	                         reported in the order added; waits on the fake
//	                         clock, ended by a signal with EINTR; eventfd
//	                         counters with EFD_SEMAPHORE and EFD_NONBLOCK;
//	                         an epoll inside another stops the run (epoll.go)
//	open stat access readlink of /dev/null, zero, full, random, urandom
//	                         emulated character devices (devices.go: random
//	                         and urandom the getrandom stream, zero mappable);
//	                         /dev/stdin, stdout, stderr, /dev/fd/N and
//	                         /proc/self/fd/N open the descriptor's file (a regular
//	                         file anew, a stream, pipe or device as dup), and
//	                         lead to an open file or directory (and below it)
//	                         for every call that follows links;
//	                         /proc/self/maps, cmdline, environ, comm, status,
//	                         stat, statm, limits, auxv, the fd and task
//	                         directories, /proc/cpuinfo, meminfo, uptime,
//	                         loadavg, stat, vmstat and
//	                         /sys/devices/system/cpu/online are
//	                         made (procfs.go, cpuinfo.go), /etc/passwd and
//	                         /etc/group too unless the view has them
//	timerfd_create timerfd_settime timerfd_gettime
//	                         on the fake real-time, monotonic and boot clocks
//	                         (the _ALARM ones EPERM), read, polled and
//	                         watched by epoll; a periodic one stops when it
//	                         fires until a read or gettime starts it again
//	                         (timerfd.go). signalfds, eventfds, timerfds and
//	                         epoll instances: pread ESPIPE, lseek 0, readv
//	                         one read (spread over iovecs: stops the run)
//	sched_getaffinity sched_yield getcpu  one CPU; sched_yield lets the next
//	                         runnable thread run
//
// Memory passed to a call must be mapped, and writable where the kernel
// would write, else EFAULT. Paths are resolved by their absolute names,
// which must be shorter than PATH_MAX (4096 bytes) even when relative to
// a directory descriptor (ENAMETOOLONG; Linux has no limit there).
//
// The corpus programs (static glibc of bookworm, trixie and sid: startup,
// stdio, C++ exceptions; seen with strace and qemu-aarch64 -strace) use
// brk, arch_prctl, set_tid_address, set_robust_list, rseq, prlimit64,
// getrandom, uname, readlink(at) of /proc/self/exe, mprotect (RELRO),
// futex wake, fstat or newfstatat of fd 1, ioctl TCGETS(2), write and
// exit_group. Dynamically linked ones (ld.so of bookworm, trixie and sid)
// add openat, read, pread64, fstat/newfstatat, mmap of files, mprotect,
// munmap, close and access.

// sysErr returns -errno as a system call result.
func sysErr(errno int) uint64 { return uint64(-int64(errno)) }

// notImplemented lists the calls answered with ENOSYS, and why that is enough.
var notImplemented = map[string]string{
	"rseq":       "glibc then runs without restartable sequences",
	"statx":      "glibc's stat family uses newfstatat/fstat on 64-bit targets",
	"membarrier": "threads share one emulated CPU: nothing to order; glibc copes with ENOSYS",
	// Features a Linux kernel may lack, which their callers probe for
	// and go on without: the guest then runs as on such a kernel.
	"inotify_init":            "a kernel without CONFIG_INOTIFY_USER: file watchers (tail -f, less +F) poll instead; only the guest itself changes its files here",
	"inotify_init1":           "as inotify_init",
	"io_uring_setup":          "a kernel without io_uring (CONFIG_IO_URING=n, or disabled by sysctl as on hardened systems): liburing's users fall back to plain reads and writes",
	"openat2":                 "Linux before 5.6: its callers (systemd, libpathrs) fall back to openat",
	"pidfd_open":              "Linux before 5.3: there are no child processes here anyway, and its callers (Python's asyncio, Go's os) fall back",
	"futex_waitv":             "Linux before 5.16: its callers (Wine) fall back to futex",
	"landlock_create_ruleset": "a kernel without Landlock: sandboxing programs go on unrestricted, as they must there",
	"memfd_secret":            "a kernel without secretmem (off unless enabled at boot): callers fall back to memfd_create",
	// A kernel without CONFIG_NUMA answers all memory-policy calls with
	// ENOSYS: libnuma's numa_available() (loaded by procps's ps and top)
	// probes get_mempolicy and then treats the machine as one node.
	"get_mempolicy":           "a kernel without NUMA (CONFIG_NUMA=n): libnuma's users (ps, top, numactl) see one node",
	"set_mempolicy":           "as get_mempolicy",
	"mbind":                   "as get_mempolicy",
	"migrate_pages":           "as get_mempolicy",
	"move_pages":              "as get_mempolicy",
	"set_mempolicy_home_node": "as get_mempolicy",
}

type handler func(p *Process, a *[6]uint64) uint64

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"read": (*Process).sysRead, "readv": (*Process).sysReadv, "pread64": (*Process).sysPread64,
		"write": (*Process).sysWrite, "writev": (*Process).sysWritev,
		"openat": (*Process).sysOpenat, "open": (*Process).sysOpen, "close": (*Process).sysClose,
		"dup": (*Process).sysDup, "dup2": (*Process).sysDup2, "dup3": (*Process).sysDup3,
		"lseek": (*Process).sysLseek, "fcntl": (*Process).sysFcntl, "ioctl": (*Process).sysIoctl,
		"fstat": (*Process).sysFstat, "newfstatat": (*Process).sysNewfstatat,
		"stat": (*Process).sysStat, "lstat": (*Process).sysLstat,
		"access": (*Process).sysAccess, "faccessat": (*Process).sysFaccessat, "faccessat2": (*Process).sysFaccessat2,
		"readlink": (*Process).sysReadlink, "readlinkat": (*Process).sysReadlinkat, "getcwd": (*Process).sysGetcwd,
		"chdir": (*Process).sysChdir, "fchdir": (*Process).sysFchdir,
		"brk": (*Process).sysBrk, "mmap": (*Process).sysMmap, "munmap": (*Process).sysMunmap,
		"mprotect": (*Process).sysMprotect, "mremap": (*Process).sysMremap, "madvise": (*Process).sysMadvise,
		"msync": (*Process).sysMsync, "mincore": (*Process).sysMincore,
		"exit": (*Process).sysExitThread, "exit_group": (*Process).sysExit,
		"clone": (*Process).sysClone, "clone3": (*Process).sysClone3,
		"arch_prctl":      (*Process).sysArchPrctl,
		"set_tid_address": (*Process).sysSetTidAddress, "set_robust_list": (*Process).sysSetRobustList,
		"getpid": constResult(guestPID), "gettid": (*Process).sysGettid, "getppid": constResult(1),
		"getpgid": constResult(guestPID), "getpgrp": constResult(guestPID), "getsid": constResult(guestPID),
		"getuid": constResult(guestUID), "geteuid": constResult(guestUID), "getgid": constResult(guestGID), "getegid": constResult(guestGID),
		"execve": (*Process).sysExecve, "execveat": (*Process).sysExecveat,
		"prlimit64": (*Process).sysPrlimit64, "getrlimit": (*Process).sysGetrlimit, "setrlimit": (*Process).sysSetrlimit,
		"getrandom": (*Process).sysGetrandom, "uname": (*Process).sysUname,
		"sysinfo": (*Process).sysSysinfo, "getgroups": (*Process).sysGetgroups,
		"clock_gettime": (*Process).sysClockGettime, "clock_getres": (*Process).sysClockGetres,
		"gettimeofday": (*Process).sysGettimeofday, "time": (*Process).sysTime,
		"adjtimex": (*Process).sysAdjtimex, "clock_adjtime": (*Process).sysClockAdjtime,
		"settimeofday": (*Process).sysSettimeofday, "clock_settime": (*Process).sysClockSettime,
		"times": (*Process).sysTimes, "getrusage": (*Process).sysGetrusage,
		"nanosleep": (*Process).sysNanosleep, "clock_nanosleep": (*Process).sysClockNanosleep,
		"futex":        (*Process).sysFutex,
		"rt_sigaction": (*Process).sysRtSigaction, "rt_sigprocmask": (*Process).sysRtSigprocmask,
		"sigaltstack": (*Process).sysSigaltstack, "rt_sigreturn": (*Process).sysRtSigreturn,
		"rt_sigpending": (*Process).sysRtSigpending,
		"kill":          (*Process).sysKill, "tkill": (*Process).sysTkill, "tgkill": (*Process).sysTgkill,
		"prctl": (*Process).sysPrctl,
		// Ids, children, priorities, scheduling (sys_ids.go).
		"setuid": (*Process).sysSetuid, "setgid": (*Process).sysSetgid,
		"setreuid": (*Process).sysSetreuid, "setregid": (*Process).sysSetregid,
		"setresuid": (*Process).sysSetresuid, "setresgid": (*Process).sysSetresgid,
		"getresuid": (*Process).sysGetresuid, "getresgid": (*Process).sysGetresgid,
		"setgroups": (*Process).sysSetgroups, "setsid": (*Process).sysSetsid, "setpgid": (*Process).sysSetpgid,
		"wait4": (*Process).sysWait4, "waitid": (*Process).sysWaitid,
		"getpriority": (*Process).sysGetpriority, "setpriority": (*Process).sysSetpriority,
		"sched_getscheduler": (*Process).sysSchedGetscheduler, "sched_setscheduler": (*Process).sysSchedSetscheduler,
		"sched_getparam": (*Process).sysSchedGetparam, "sched_setparam": (*Process).sysSchedSetparam,
		"sched_get_priority_max": (*Process).sysSchedGetPriorityMax, "sched_get_priority_min": (*Process).sysSchedGetPriorityMin,
		"sched_setaffinity": (*Process).sysSchedSetaffinity,
		"mlock2":            (*Process).sysMlock2, "get_robust_list": (*Process).sysGetRobustList,
		"capget": (*Process).sysCapget, "capset": (*Process).sysCapset, "personality": (*Process).sysPersonality,
		"mlock": (*Process).sysMlock, "munlock": (*Process).sysMunlock, "mlockall": (*Process).sysMlockall, "munlockall": constResult(0),
		// Descriptor operations (sys_fdops.go).
		"close_range": (*Process).sysCloseRange, "flock": (*Process).sysFlock,
		"preadv": (*Process).sysPreadv, "preadv2": (*Process).sysPreadv2, "pwritev2": (*Process).sysPwritev2,
		"readahead": (*Process).sysReadahead, "sync_file_range": (*Process).sysSyncFileRange,
		"memfd_create": (*Process).sysMemfdCreate,
		// epoll and eventfd (epoll.go).
		"epoll_create": (*Process).sysEpollCreate, "epoll_create1": (*Process).sysEpollCreate1,
		"epoll_ctl": (*Process).sysEpollCtl, "epoll_wait": (*Process).sysEpollWait,
		"epoll_pwait": (*Process).sysEpollPwait, "epoll_pwait2": (*Process).sysEpollPwait2,
		"eventfd": (*Process).sysEventfd, "eventfd2": (*Process).sysEventfd2,
		// timerfd (timerfd.go).
		"timerfd_create": (*Process).sysTimerfdCreate, "timerfd_settime": (*Process).sysTimerfdSettime,
		"timerfd_gettime":   (*Process).sysTimerfdGettime,
		"sched_getaffinity": (*Process).sysSchedGetaffinity, "sched_yield": (*Process).sysSchedYield, "getcpu": (*Process).sysGetcpu,
		// The writable overlay (overlay.go).
		"creat": (*Process).sysCreat, "pwrite64": (*Process).sysPwrite64, "pwritev": (*Process).sysPwritev,
		"ftruncate": (*Process).sysFtruncate, "truncate": (*Process).sysTruncate,
		"fsync": (*Process).sysFsync, "fdatasync": (*Process).sysFsync,
		"mkdir": (*Process).sysMkdir, "mkdirat": (*Process).sysMkdirat, "rmdir": (*Process).sysRmdir,
		"unlink": (*Process).sysUnlink, "unlinkat": (*Process).sysUnlinkat,
		"symlink": (*Process).sysSymlink, "symlinkat": (*Process).sysSymlinkat,
		"link": (*Process).sysLink, "linkat": (*Process).sysLinkat,
		"sync": constResult(0), "syncfs": (*Process).sysFsync,
		"rename": (*Process).sysRename, "renameat": (*Process).sysRenameat, "renameat2": (*Process).sysRenameat2,
		"chmod": (*Process).sysChmod, "fchmod": (*Process).sysFchmod, "fchmodat": (*Process).sysFchmodat, "fchmodat2": (*Process).sysFchmodat2,
		"umask":     (*Process).sysUmask,
		"utimensat": (*Process).sysUtimensat, "utime": (*Process).sysUtime, "utimes": (*Process).sysUtimes, "futimesat": (*Process).sysFutimesat,
		"fallocate": (*Process).sysFallocate,
		"chown":     (*Process).sysChown, "lchown": (*Process).sysLchown, "fchown": (*Process).sysFchown, "fchownat": (*Process).sysFchownat,
		"fadvise64":       (*Process).sysFadvise64,
		"copy_file_range": (*Process).sysCopyFileRange, "sendfile": (*Process).sysSendfile,
		"statfs": (*Process).sysStatfs, "fstatfs": (*Process).sysFstatfs,
		"getdents64": (*Process).sysGetdents64,
		// Timers (timers.go), waiting for signals, sending them with a
		// value (signals.go), pipes and polling (pipes.go).
		"alarm": (*Process).sysAlarm, "setitimer": (*Process).sysSetitimer, "getitimer": (*Process).sysGetitimer,
		"timer_create": (*Process).sysTimerCreate, "timer_settime": (*Process).sysTimerSettime,
		"timer_gettime": (*Process).sysTimerGettime, "timer_getoverrun": (*Process).sysTimerGetoverrun,
		"timer_delete":  (*Process).sysTimerDelete,
		"rt_sigsuspend": (*Process).sysRtSigsuspend, "pause": (*Process).sysPause,
		"rt_sigtimedwait": (*Process).sysRtSigtimedwait, "rt_sigqueueinfo": (*Process).sysRtSigqueueinfo,
		"rt_tgsigqueueinfo": (*Process).sysRtTgsigqueueinfo, "restart_syscall": (*Process).sysRestartSyscall,
		"pipe": (*Process).sysPipe, "pipe2": (*Process).sysPipe2,
		"mknod": (*Process).sysMknod, "mknodat": (*Process).sysMknodat,
		"poll": (*Process).sysPoll, "ppoll": (*Process).sysPpoll,
		"select": (*Process).sysSelect, "pselect6": (*Process).sysPselect6,
		"signalfd": (*Process).sysSignalfd, "signalfd4": (*Process).sysSignalfd4,
	}
	addXattrHandlers()
	for name := range notImplemented {
		handlers[name] = constResult(sysErr(eNOSYS))
	}
	for _, name := range deniedCalls {
		handlers[name] = deny(name)
	}
	for _, name := range capDenied {
		handlers[name] = sysCapDenied
	}
	handlers["chroot"], handlers["umount2"] = (*Process).sysChroot, (*Process).sysUmount2
	for name, args := range pathFDArgs {
		if h := handlers[name]; h != nil {
			handlers[name] = refusePathFD(h, args)
		}
	}
}

// pathFDArgs are the calls that refuse a descriptor opened with O_PATH
// (EBADF, Linux's fdget where others take fdget_raw), by the arguments
// that are descriptors (mmap, whose descriptor counts only for a file
// mapping, and fcntl check it themselves).
var pathFDArgs = map[string][]int{
	"read": {0}, "write": {0}, "pread64": {0}, "pwrite64": {0}, "readv": {0}, "writev": {0},
	"preadv": {0}, "pwritev": {0}, "preadv2": {0}, "pwritev2": {0}, "getdents64": {0},
	"lseek": {0}, "ioctl": {0}, "fsync": {0}, "fdatasync": {0}, "ftruncate": {0},
	"fallocate": {0}, "fchmod": {0}, "fchown": {0}, "flock": {0}, "fadvise64": {0},
	"readahead": {0}, "sync_file_range": {0}, "sendfile": {0, 1},
	"copy_file_range": {0, 2}, "epoll_ctl": {2}, "fgetxattr": {0}, "fsetxattr": {0},
	"flistxattr": {0}, "fremovexattr": {0},
}

// refusePathFD wraps h so that an O_PATH descriptor among args is EBADF.
func refusePathFD(h handler, args []int) handler {
	return func(p *Process, a *[6]uint64) uint64 {
		for _, i := range args {
			if f := p.fds[int(int32(a[i]))]; f != nil && f.pathOnly() {
				return sysErr(eBADF)
			}
		}
		return h(p, a)
	}
}

// deny is the handler of a denied call: it counts the call and fails it.
func deny(name string) handler {
	return func(p *Process, _ *[6]uint64) uint64 {
		if p.denied == nil {
			p.denied = map[string]uint64{}
		}
		p.denied[name]++
		return sysErr(deniedErrno)
	}
}

// constResult is a handler returning v.
func constResult(v uint64) handler { return func(*Process, *[6]uint64) uint64 { return v } }

//go:generate go run ./internal/mksysnum -deb=$LINUX_LIBC_DEV

// SyscallName returns the Linux name of system call nr on arch, or "".
func SyscallName(arch *arch.Arch, nr uint64) string {
	abi := abiFor(arch)
	if abi == nil {
		return ""
	}
	return abi.name(nr)
}

func (a *sysABI) name(nr uint64) string {
	if nr < uint64(len(a.names)) {
		return a.names[nr]
	}
	return ""
}

// syscall handles the system call the guest just made: it runs inside the
// engine's syscall (x86-64) or interrupt (AArch64) hook.
func (p *Process) syscall() {
	defer func() {
		if r := recover(); r != nil {
			p.lastErr = fmt.Errorf("emu: panic in system call handler: %v", r)
			p.stop(StopFault, 0, fmt.Sprint("internal error: ", r))
		}
	}()
	var v [7]uint64
	if err := p.Engine.ReadRegs(p.abi.sysRegs[:], v[:]); err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
		return
	}
	pc, err := p.Engine.PC()
	if err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
		return
	}
	p.sysPC = p.abi.insnPC(pc)
	// Linux takes the number's low 32 bits (x86-64 sign-extends them to
	// an int, AArch64 an unsigned int): a number the kernel does not know
	// (x86-64's x32 calls, with bit 30 set, included: x32 is not enabled),
	// is ENOSYS.
	nr, args := uint64(uint32(v[0])), [6]uint64(v[1:])
	if p.traceSyscall != nil {
		p.traceSyscall(nr, args)
	}
	name := p.abi.name(nr)
	h := handlers[name]
	if p.abi.clobber != nil {
		if err := p.abi.clobber(p, pc); err != nil {
			p.lastErr = err
			p.stop(StopFault, 0, err.Error())
			return
		}
	}
	t := p.thr.cur
	t.sysPC, t.sysNr, t.sysArg0 = p.sysPC, v[0], v[1]
	var ret uint64
	switch {
	case name == "" || (name == "arch_prctl" && p.Arch != arch.AMD64):
		ret = sysErr(eNOSYS)
	case h == nil:
		why := ""
		if name == "fork" || name == "vfork" {
			why = ": only threads (the flags of pthread_create) are emulated, not new processes"
		}
		p.sysStop(StopUnsupported, 0, fmt.Sprintf("unsupported system call %d (%s)%s", nr, name, why))
		return
	default:
		p.syncSharedIn()
		ret = h(p, &args)
		p.syncSharedOut()
	}
	p.inSyscall = true
	if p.exit != nil {
		return
	}
	if p.noResult {
		p.noResult = false
		return
	}
	if r := -int64(ret); r >= eRestartSys && r <= eRestartBlock && t.state == running {
		// Interrupted before it could block: the return to user mode
		// turns it into EINTR or a restart (deliverSignals).
		t.restarting = int(r)
		p.Engine.Stop()
	}
	if err := p.Engine.SetReg(p.abi.ret, ret); err != nil {
		p.lastErr = err
		p.stop(StopFault, 0, err.Error())
		return
	}
	// A deadline counts at every call: one can be slow (an mprotect among
	// thousands of regions costs Unicorn tens of ms), and an observer that
	// looks at the clock every few thousand records saw a run of them late
	// (verify --timeout 30s of such a program stopped after 66 s).
	if !p.deadline.IsZero() && !time.Now().Before(p.deadline) {
		p.stopWaiting()
	}
}

// sysStop ends the run at the current system call instruction.
func (p *Process) sysStop(reason StopReason, status int, detail string) {
	p.stopAt(reason, status, p.sysPC, detail)
}

// memCap ends the run because a mapping would exceed the memory cap.
func (p *Process) memCap(what string, size uint64) uint64 {
	p.sysStop(StopMemory, 0, fmt.Sprintf("guest memory cap of %d bytes reached: %s of %d bytes with %d in use (accessible mappings and file contents held)", p.vm.max, what, size, p.vm.used()))
	return sysErr(eNOMEM)
}

// regionCap stops the run where the emulator cannot take the memory regions
// a change of the guest's address space needs (emu.ErrRegionLimit): the
// guest would go on with ENOMEM where Linux gives none, a run unlike its
// own. It returns ENOMEM.
func (p *Process) regionCap(what string, addr, size uint64) uint64 {
	p.sysStop(StopMemory, 0, fmt.Sprintf("the emulator's limit on memory regions reached: %s of %d bytes at %#x with %d mappings (Unicorn holds about %d regions; each mapping, and each part of one with its own protection, is one)",
		what, size, addr, len(p.vm.vmas), p.Engine.RegionRoom()+p.Engine.Regions()))
	return sysErr(eNOMEM)
}

// Guest memory access for system calls.

// mapped reports whether the guest may read [addr, addr+n).
func (p *Process) mapped(addr, n uint64) bool { return p.accessible(addr, n, emu.ProtRead) }

// writable reports whether the guest may write [addr, addr+n).
func (p *Process) writable(addr, n uint64) bool { return p.accessible(addr, n, emu.ProtWrite) }

func (p *Process) accessible(addr, n uint64, need emu.Prot) bool {
	if n == 0 {
		return true
	}
	return addr+n >= addr && p.vm.allows(addr, addr+n, need)
}

func (p *Process) readGuest(addr, n uint64) ([]byte, bool) {
	if !p.mapped(addr, n) {
		return nil, false
	}
	b := make([]byte, n)
	if err := p.Engine.ReadMem(addr, b); err != nil {
		return nil, false
	}
	return b, true
}

func (p *Process) writeGuest(addr uint64, b []byte) bool {
	if !p.writable(addr, uint64(len(b))) {
		return false
	}
	return p.Engine.WriteMem(addr, b) == nil
}

func (p *Process) put64(addr uint64, vals ...uint64) bool {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return p.writeGuest(addr, b)
}

// pathMax is PATH_MAX: a path's bytes with the NUL that ends it.
const pathMax = 4096

// cstring reads a NUL-terminated string of at most 4096 bytes (PATH_MAX).
func (p *Process) cstring(addr uint64) (string, int) {
	s, ended, e := p.readCString(addr, pathMax)
	switch {
	case e != 0:
		return "", e
	case !ended:
		return "", eNAMETOOLONG
	}
	return s, 0
}

// cstringMax reads a string of at most max bytes, as strncpy_from_user:
// it ends at a NUL or after max bytes, whichever comes first.
func (p *Process) cstringMax(addr uint64, max int) (string, int) {
	s, _, e := p.readCString(addr, max)
	return s, e
}

// readCString reads the bytes at addr up to a NUL (ended) or max of them,
// in pieces that stay within a page, whose bytes are all accessible or
// none (EFAULT at the first that is not): one copy out of guest memory
// per piece, not per byte.
func (p *Process) readCString(addr uint64, max int) (s string, ended bool, errno int) {
	var out []byte
	var buf [256]byte
	for len(out) < max {
		n := min(uint64(len(buf)), emu.PageSize-addr%emu.PageSize, uint64(max-len(out)))
		if !p.mapped(addr, 1) || p.Engine.ReadMem(addr, buf[:n]) != nil {
			return "", false, eFAULT
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), true, 0
		}
		out = append(out, buf[:n]...)
		addr += n
	}
	return string(out), false, 0
}

// sysABI is what the Linux layer needs to know about one target.
type sysABI struct {
	sysRegs    [7]emu.RegID // the system call number, then its six arguments
	ret        emu.RegID    // the result register
	names      []string     // system call names by number (zsysnum_*.go)
	machine    string       // uname's machine
	platform   string       // AT_PLATFORM
	hwcap      func() uint64
	hwcap2     uint64
	stackTop   uint64 // the stack's top: TASK_SIZE
	mmapTop    uint64 // mmap hands out addresses below this
	pieBase    uint64 // where a static PIE is loaded (ELF_ET_DYN_BASE)
	oDirectory uint64 // O_DIRECTORY, which differs
	// insnPC returns the address of the system call instruction, given the
	// PC the hook sees.
	insnPC func(pc uint64) uint64
	// clobber sets the registers the system call instruction itself
	// changes (x86-64: rcx and r11), given the PC the hook sees.
	clobber func(p *Process, pc uint64) error
	// stat encodes the target's struct stat.
	stat func(statInfo) []byte
	// start sets the entry registers and installs the hooks.
	start     func(p *Process) error
	archPrctl func(p *Process, code, addr uint64) uint64
	// Signals: MINSIGSTKSZ, the frame (sigframe_*.go), the si_code of an
	// undefined instruction, and what a fault leaves in the thread for
	// the frame (trap number, error code, fault address).
	minSigStkSz  uint64
	sigFrameMax  uint64 // AT_MINSIGSTKSZ: the largest signal frame
	setupFrame   func(p *Process, t *thread, sig int, si *sigInfo, act sigAction) (bool, error)
	restoreFrame func(p *Process, t *thread) (bool, error)
	illCode      int32
	// restartSyscall is restart_syscall's number.
	restartSyscall uint64
	memFault       func(p *Process, f emu.Fault, prot bool)
	trapInfo       func(p *Process, trap int, pc uint64)
}

func abiFor(a *arch.Arch) *sysABI {
	switch a {
	case arch.AMD64:
		return amd64
	case arch.ARM64:
		return arm64
	}
	return nil
}
