//go:build cgo

package linux

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sframesim/sframesim/emu"
)

// Part of /proc and /sys, made from what the layer knows and never from the
// host's, which would describe sframesim. Below /proc/self (a link to
// /proc/PID, the guest's pid) the files maps (glibc's pthread_getattr_np
// reads it for the main thread's stack), cmdline, environ, comm, status,
// stat, statm, limits and auxv; the directory fd, a link per descriptor
// (devices.go opens them and readlink reads them), and the directory task,
// one directory per thread with that thread's comm, stat and status and the
// process's other files (/proc/thread-self links to the running thread's).
// And /proc/cpuinfo, meminfo, uptime, loadavg, stat and vmstat (cpuinfo.go:
// the emulated machine), and /sys/devices/system/cpu/online, possible and
// present (one CPU). /proc lists what is made; any other path below /proc and /sys stays
// ENOENT. A file is made when it is opened, and again at each read from its
// start, as Linux's seq_file makes it at each read from the start, so a
// program that keeps /proc/self/stat open and rereads it sees it change.
// Their stat is procfs's: size 0, the modes Linux gives (auxv and environ
// 0400, comm 0644: a write to it names the thread, as prctl(PR_SET_NAME)
// does, which is how glibc's pthread_setname_np names another thread).
//
// And, unless the user named the host's (or the sysroot has them),
// /etc/passwd and /etc/group with root and the guest's own user (uid and
// gid 1000, "user"), so getpwuid of the guest's uid finds it, as it does on
// any machine.

// etcFiles are the generated /etc files.
var etcFiles = map[string]string{
	"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"/etc/group":  "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n",
}

// procPID is the prefix of the process's own /proc directory by its pid.
var procPID = "/proc/" + strconv.Itoa(guestPID) + "/"

// procNode is what a path procfs.go makes names: a file, a directory or a
// symbolic link.
type procNode struct {
	// path is where it is, /proc/self and /proc/thread-self followed: a
	// directory's ".." is the parent of this path, as Linux takes ".."
	// physically.
	path  string
	mode  uint32 // st_mode
	nlink uint64
	// make makes a file's contents (false: the thread it describes has
	// exited since it was opened, ESRCH as on Linux).
	make func() ([]byte, bool)
	// list lists a directory's entries, but for "." and "..".
	list func() []string
	link string // a symbolic link's target
	comm int    // a comm file's thread: a write names it
}

func (n *procNode) isDir() bool  { return n.list != nil }
func (n *procNode) isLink() bool { return n.link != "" }

// procStat is the struct stat of a made file, directory or link:
// procfs's, size 0.
func (p *Process) procStat(n *procNode) statInfo {
	return statInfo{dev: 0x16, ino: p.inode("proc:" + n.path), nlink: n.nlink, mode: n.mode, uid: guestUID, gid: guestGID, blksize: 1024}
}

// procFile is the file abs names, if it is one the layer makes (stat and
// access only ask whether it is there: nothing is made for them).
// follow: a symbolic link as the last component (/proc/self, /dev/fd) is
// followed. The descriptors' entries in /proc/self/fd are devices.go's
// (fdPath).
func (p *Process) procFile(abs string, follow bool) (procNode, bool) {
	if !strings.HasPrefix(abs, "/proc") && !strings.HasPrefix(abs, "/sys/") && !strings.HasPrefix(abs, "/etc/") && abs != "/dev/fd" {
		return procNode{}, false // most paths: nothing to compare
	}
	if !follow {
		if target, ok := p.procLink(abs); ok {
			return procNode{path: abs, mode: 0o120777, nlink: 1, link: target}, true
		}
	}
	abs = p.procCanon(abs)
	file := func(mode uint32, mk func() []byte) (procNode, bool) {
		return procNode{path: abs, mode: mode, nlink: 1, make: func() ([]byte, bool) { return mk(), true }}, true
	}
	if abs == "/proc" {
		return procNode{path: abs, mode: 0o040555, nlink: 3, list: p.procRootList}, true
	}
	if mk, ok := procMachineFiles[abs]; ok {
		return file(0o100444, func() []byte { return mk(p) })
	}
	switch abs {
	case "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/present":
		return file(0o100444, func() []byte { return []byte("0\n") })
	}
	if s, ok := etcFiles[abs]; ok {
		if _, e := p.lookup(abs, true); e == eNOENT {
			return file(0o100444, func() []byte { return []byte(s) })
		}
		return procNode{}, false
	}
	rest, ok := strings.CutPrefix(abs+"/", procPID)
	if !ok {
		return procNode{}, false
	}
	rest = strings.TrimSuffix(rest, "/")
	switch rest {
	case "":
		return procNode{path: abs, mode: 0o040555, nlink: 4, list: p.procPIDList}, true // task and fd
	case "fd":
		return procNode{path: abs, mode: 0o040500, nlink: 2, list: p.procFDList}, true
	case "task":
		return procNode{path: abs, mode: 0o040555, nlink: 2 + uint64(p.live()), list: p.procTaskList}, true
	case "exe":
		if follow {
			return procNode{}, false // the program: fsview.go's
		}
		return procNode{path: abs, mode: 0o120777, nlink: 1, link: realPath(p.Path)}, true
	case "cwd", "root":
		if follow {
			return procNode{}, false // the directory itself: not followed here
		}
		target := "/"
		if rest == "cwd" {
			target = p.cwd
			if n := p.ov.cwd; n != nil && n.nlink == 0 {
				target += " (deleted)" // as d_path names an unlinked dentry
			}
		}
		return procNode{path: abs, mode: 0o120777, nlink: 1, link: target}, true
	}
	tid, whole := guestPID, true
	if r, ok := strings.CutPrefix(rest, "task/"); ok {
		name, sub, _ := strings.Cut(r, "/")
		n, err := strconv.Atoi(name)
		if err != nil || strconv.Itoa(n) != name || p.thread(n) == nil {
			return procNode{}, false
		}
		if sub == "" {
			return procNode{path: abs, mode: 0o040555, nlink: 2, list: func() []string { return procFileNames }}, true
		}
		tid, whole, rest = n, false, sub
	}
	for _, f := range procPIDFiles {
		if f.name == rest {
			n := procNode{path: abs, mode: f.mode, nlink: 1, make: func() ([]byte, bool) {
				t := p.procThread(tid)
				if t == nil {
					return nil, false
				}
				return f.make(p, t, whole), true
			}}
			if f.name == "comm" {
				n.comm = tid
			}
			return n, true
		}
	}
	return procNode{}, false
}

// procLink returns the target of the symbolic link abs, if it is one of
// those procfs (and devtmpfs, for /dev/fd) has.
func (p *Process) procLink(abs string) (string, bool) {
	switch abs {
	case "/proc/self":
		return strconv.Itoa(guestPID), true
	case "/proc/thread-self":
		return fmt.Sprintf("%d/task/%d", guestPID, p.thr.cur.tid), true
	case "/dev/fd":
		return "/proc/self/fd", true
	}
	return "", false
}

// procCanon returns abs with a link of procLink's (/proc/self,
// /proc/thread-self, /dev/fd) at its start replaced by the directory it
// links to (/dev/fd's target starts with another).
func (p *Process) procCanon(abs string) string {
	for _, l := range [...]string{"/dev/fd", "/proc/self", "/proc/thread-self"} {
		if rest, ok := strings.CutPrefix(abs, l); ok && (rest == "" || rest[0] == '/') {
			target, _ := p.procLink(l)
			if !filepath.IsAbs(target) {
				target = "/proc/" + target
			}
			abs = target + rest
		}
	}
	return abs
}

// procThread is the thread a /proc file of tid describes, nil once it has
// exited. The process's files (tid guestPID, the main thread's) describe
// the running thread once the main thread is gone: its name and masks are
// no longer kept.
func (p *Process) procThread(tid int) *thread {
	if t := p.thread(tid); t != nil || tid != guestPID {
		return t
	}
	return p.thr.cur
}

// thread returns the thread tid, nil if there is none (or it has exited).
func (p *Process) thread(tid int) *thread {
	for _, t := range p.thr.list {
		if t.tid == tid && t.state != finished {
			return t
		}
	}
	return nil
}

// procOpen opens the made file or directory n (at the path abs) with
// open's flags.
func (p *Process) procOpen(n procNode, abs string, flags uint64) uint64 {
	switch {
	case flags&(oCREAT|oEXCL) == oCREAT|oEXCL:
		return sysErr(eEXIST)
	case n.isLink():
		return sysErr(eLOOP) // O_NOFOLLOW
	case n.isDir() && (flags&oACCMODE != 0 || flags&oCREAT != 0):
		return sysErr(eISDIR)
	case n.isDir():
		f := &openFile{kind: fileDir, path: n.path, proc: &n, dirStat: p.procStat(&n)}
		f.ino = f.dirStat.ino
		fd, e := p.allocFD(0, f)
		if e != 0 {
			return sysErr(e)
		}
		return uint64(fd)
	case (flags&oACCMODE != 0 || flags&oTRUNC != 0) && n.comm == 0:
		return sysErr(eACCES) // r--r--r--, r--------: only comm is writable
	}
	if flags&p.abi.oDirectory != 0 {
		return sysErr(eNOTDIR)
	}
	f := &openFile{kind: fileRegular, path: abs, proc: &n, dirStat: p.procStat(&n), mode: n.mode, flags: flags & (oACCMODE | oNONBLOCK)}
	f.ino = f.dirStat.ino
	if flags&oACCMODE != oWRONLY {
		f.data, _ = n.make()
	}
	fd, e := p.allocFD(0, f)
	if e != 0 {
		return sysErr(e)
	}
	return uint64(fd)
}

// procRemake makes the made file f again, for a read from its start
// (false: its thread has exited).
func (p *Process) procRemake(f *openFile) bool {
	data, ok := f.proc.make()
	f.data = data
	return ok
}

// procCommWrite writes n bytes at addr to the comm file f: the thread's
// name becomes their first 15 bytes, up to a NUL (a newline is kept), as
// Linux's comm_write; all are taken.
func (p *Process) procCommWrite(f *openFile, addr, n uint64) uint64 {
	b, ok := p.readGuest(addr, min(n, commLen-1))
	switch {
	case !ok:
		return sysErr(eFAULT)
	case p.thread(f.proc.comm) == nil:
		return sysErr(eSRCH)
	}
	name, _, _ := strings.Cut(string(b), "\x00")
	t := p.thread(f.proc.comm)
	t.prctl.comm, t.prctl.named = name, true
	return n
}

// procRootList lists /proc: its files, ordered as procfs orders them (by
// length, then name), then self and thread-self, then the process.
func (p *Process) procRootList() []string {
	names := make([]string, 0, len(procMachineFiles)+3)
	for name := range procMachineFiles {
		names = append(names, strings.TrimPrefix(name, "/proc/"))
	}
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return append(names, "self", "thread-self", strconv.Itoa(guestPID))
}

// procFileNames are the files of /proc/PID/task/TID, in the order Linux
// lists them (tid_base_stuff).
var procFileNames = func() []string {
	var names []string
	for _, f := range procPIDFiles {
		names = append(names, f.name)
	}
	return names
}()

// procPIDList lists /proc/PID in the order Linux does (tgid_base_stuff).
func (p *Process) procPIDList() []string {
	return append(append([]string{"task", "fd"}, procFileNames...), "cwd", "root", "exe")
}

// procFDList lists /proc/self/fd: the open descriptors, in numeric order.
func (p *Process) procFDList() []string {
	fds := make([]int, 0, len(p.fds))
	for fd := range p.fds {
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = strconv.Itoa(fd)
	}
	return names
}

// procTaskList lists /proc/self/task: the threads, in tid order.
func (p *Process) procTaskList() []string {
	var names []string
	for _, t := range p.thr.list {
		if t.state != finished {
			names = append(names, strconv.Itoa(t.tid))
		}
	}
	return names
}

// procEntryStat is the stat of the entry path of a made directory: a
// descriptor's link (devices.go) or another made file or directory.
func (p *Process) procEntryStat(path string) statInfo {
	if fd, ok := fdPath(path); ok {
		if st, e := p.fdLinkStat(path, fd); e == 0 {
			return st
		}
	}
	n, _ := p.procFile(path, false)
	return p.procStat(&n)
}

// procPIDFile is a file of /proc/PID and of /proc/PID/task/TID: its name,
// mode and maker, which describes thread t (the main thread for
// /proc/PID, whole set: the process).
type procPIDFile struct {
	name string
	mode uint32
	make func(p *Process, t *thread, whole bool) []byte
}

// procPIDFiles are in the order Linux lists them.
var procPIDFiles = []procPIDFile{
	{"environ", 0o100400, func(p *Process, _ *thread, _ bool) []byte { return p.procEnviron() }},
	{"auxv", 0o100400, func(p *Process, _ *thread, _ bool) []byte { return p.auxv }},
	{"status", 0o100444, (*Process).procStatus},
	{"limits", 0o100444, func(p *Process, _ *thread, _ bool) []byte { return p.procLimits() }},
	{"comm", 0o100644, func(p *Process, t *thread, _ bool) []byte { return []byte(p.comm(t) + "\n") }},
	{"cmdline", 0o100444, func(p *Process, _ *thread, _ bool) []byte { return p.procCmdline() }},
	{"stat", 0o100444, (*Process).procStatLine},
	{"statm", 0o100444, func(p *Process, _ *thread, _ bool) []byte { return p.procStatm() }},
	{"maps", 0o100444, func(p *Process, _ *thread, _ bool) []byte { return p.procMaps() }},
}

// procCmdline is /proc/self/cmdline: argv, each string NUL-terminated.
func (p *Process) procCmdline() []byte {
	args := p.cfg.Args
	if len(args) == 0 {
		args = []string{p.Path}
	}
	return []byte(strings.Join(args, "\x00") + "\x00")
}

// procEnviron is /proc/self/environ: the environment, as cmdline.
func (p *Process) procEnviron() []byte {
	if len(p.cfg.Env) == 0 {
		return nil
	}
	return []byte(strings.Join(p.cfg.Env, "\x00") + "\x00")
}

// procMaps is /proc/self/maps: the mappings in address order, with their
// protections, file offsets and names (anonymous memory unnamed).
func (p *Process) procMaps() []byte {
	var b strings.Builder
	for _, v := range p.vm.vmas {
		perm := []byte("---p")
		if v.prot&emu.ProtRead != 0 {
			perm[0] = 'r'
		}
		if v.prot&emu.ProtWrite != 0 {
			perm[1] = 'w'
		}
		if v.prot&emu.ProtExec != 0 {
			perm[2] = 'x'
		}
		if v.node != nil {
			perm[3] = 's'
		}
		name := v.name
		var ino uint64
		switch {
		case name == "[anon]":
			name = ""
		case v.file != nil:
			ino = p.inode(v.file.host)
		case v.node != nil:
			ino = v.node.ino
		case strings.HasPrefix(name, "PT_LOAD["):
			for _, im := range p.images {
				if v.start >= im.start && v.start < im.end {
					name = absPath(im.path)
					ino = p.inode(absPath(im.path))
				}
			}
		}
		line := fmt.Sprintf("%08x-%08x %s %08x %s %d", v.start, v.end, perm, v.off, devField(ino), ino)
		if name != "" {
			line = fmt.Sprintf("%-73s%s", line+" ", name)
		}
		b.WriteString(line + "\n")
	}
	return []byte(b.String())
}

// realPath is path absolute with its links resolved, as the kernel
// names a file it opened (/proc/self/exe of a program run through a
// link is the link's target).
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(absPath(path)); err == nil {
		return r
	}
	return absPath(path)
}

// absPath is path made absolute (as it is, if that fails).
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// devField is a maps line's device: the view's for a file, none for
// anonymous memory.
func devField(ino uint64) string {
	if ino == 0 {
		return "00:00"
	}
	return "08:01"
}

// procSignals returns what status and stat show of the signals: thread
// t's pending and blocked sets, the process's pending set and the signals
// it ignores and catches.
func (p *Process) procSignals(t *thread) (pending, blocked, shared, ign, cgt uint64) {
	for sig := 1; sig <= nsig; sig++ {
		switch h := p.sig.act[sig].handler; {
		case h == sigIGN:
			ign |= sigmask(sig)
		case h != sigDFL:
			cgt |= sigmask(sig)
		}
	}
	return t.sig.pending.set, t.sig.mask, p.sig.shared.set, ign, cgt
}

// procStatus is /proc/self/status's common lines, of thread t (the main
// thread for /proc/self/status: its name and signal masks, as on Linux).
func (p *Process) procStatus(t *thread, whole bool) []byte {
	rss := p.vm.used() / 1024
	peak := p.vm.maxUsed() / 1024
	sigPnd, blk, shdPnd, ign, cgt := p.procSignals(t)
	return []byte(fmt.Sprintf("Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"+
		"Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t%d\nGroups:\t\n"+
		"VmPeak:\t%8d kB\nVmSize:\t%8d kB\nVmHWM:\t%8d kB\nVmRSS:\t%8d kB\nThreads:\t%d\n"+
		"SigQ:\t0/%d\nSigPnd:\t%016x\nShdPnd:\t%016x\nSigBlk:\t%016x\nSigIgn:\t%016x\nSigCgt:\t%016x\n"+
		"Cpus_allowed:\t1\nCpus_allowed_list:\t0\n",
		p.comm(t), p.ov.umask, p.procState(t, whole).long(), guestPID, procPIDOf(t, whole), 1,
		guestUID, guestUID, guestUID, guestUID, guestGID, guestGID, guestGID, guestGID, fdLimit,
		peak, rss, peak, rss, p.live(),
		sigPendingLimit, sigPnd, shdPnd, blk, ign, cgt))
}

// taskState is a thread's state as /proc shows it.
type taskState byte

const (
	taskRunning  taskState = 'R'
	taskSleeping taskState = 'S' // blocked in a futex, a sleep or a read: interruptible
	taskZombie   taskState = 'Z' // the main thread once it has exited, while others run
)

// long is the state as status writes it.
func (s taskState) long() string {
	switch s {
	case taskSleeping:
		return "S (sleeping)"
	case taskZombie:
		return "Z (zombie)"
	}
	return "R (running)"
}

// procState is thread t's state; for the process's files (whole) the
// main thread's, a zombie once it has exited while others run on.
func (p *Process) procState(t *thread, whole bool) taskState {
	switch {
	case whole && p.thread(guestPID) == nil, t.state == finished:
		return taskZombie
	case t.state == blocked:
		return taskSleeping
	}
	return taskRunning
}

// threadInsns returns the instructions thread t has executed: its count,
// which the running thread's gets at the end of its slice, and for the
// running thread the slice so far (what the process executed less the
// other threads').
func (p *Process) threadInsns(t *thread) uint64 {
	if t != p.thr.cur {
		return t.insns
	}
	others := p.thr.exitedInsns
	for _, x := range p.thr.exited {
		others += x.Insns
	}
	for _, x := range p.thr.list {
		if x != t {
			others += x.insns
		}
	}
	all := p.Engine.Executed()
	return all - min(others, all)
}

// procStatLine is /proc/self/stat (whole: the process, its threads' times
// added) and /proc/self/task/TID/stat (the thread t), the fields Linux's
// do_task_stat writes: no page faults, all time user time (the
// instructions executed, as times(2) counts them), no terminal (tty_nr 0,
// tpgid -1), the sizes status shows (vsize in bytes, rss in pages), and
// the program's code, data, brk, stack, argument and environment
// addresses as the loader laid them out.
func (p *Process) procStatLine(t *thread, whole bool) []byte {
	state := p.procState(t, whole)
	cpu := p.threadInsns(t)
	// A thread (CLONE_THREAD) signals no parent when it exits, and has
	// forked without exec (PF_FORKNOEXEC).
	exitSignal, flags := -1, pfRandomize|pfForkNoExec
	if whole || t.tid == guestPID {
		exitSignal, flags = 17, pfRandomize // SIGCHLD, to the parent
	}
	if whole {
		c, _ := p.now(2) // CLOCK_PROCESS_CPUTIME_ID: every thread's
		cpu = uint64(c)
	}
	// wchan: 1 for a blocked thread, as Linux gives it since 5.16 (no
	// symbol), and 0 for a process of more than one thread.
	wchan := 0
	if state == taskSleeping && (!whole || p.live() < 2) {
		wchan = 1
	}
	pending, blocked, _, ign, cgt := p.procSignals(t)
	const low = 0x7fffffff // the obsolete signal fields: the first 31 signals
	rssLim, _ := p.rlimit(5)
	code, data := p.codeSpan(), p.dataSpan()
	fields := []any{
		procPIDOf(t, whole), "(" + p.comm(t) + ")", string(rune(state)), 1, guestPID, guestPID, 0, -1, // pid to tpgid
		flags, 0, 0, 0, 0, // flags, minflt, cminflt, majflt, cmajflt
		cpu / (1e9 / clockTicks), 0, 0, 0, // utime, stime, cutime, cstime
		20 + t.nice, t.nice, p.live(), 0, // priority, nice, num_threads, itrealvalue
		uint64(t.start) / (1e9 / clockTicks), p.vm.used(), p.vm.used() / emu.PageSize, rssLim,
		code[0], code[1], p.SP, 0, 0, // startcode, endcode, startstack, kstkesp, kstkeip
		pending & low, blocked & low, ign & low, cgt & low,
		wchan, 0, 0, exitSignal, 0, 0, t.policy, 0, 0, 0, // wchan to cguest_time
		data[0], data[1], p.brkStart, p.argSpan[0], p.argSpan[1], p.argSpan[1], p.argSpan[2], 0, // start_data to exit_code
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, f)
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// Task flags: PF_RANDOMIZE, which Linux sets at exec unless the
// personality has ADDR_NO_RANDOMIZE (the guest's has not), and
// PF_FORKNOEXEC.
const (
	pfRandomize  = 0x400000
	pfForkNoExec = 0x40
)

// procPIDOf is the pid the files of thread t show: the process's for its
// own (whole), t's tid for the thread's.
func procPIDOf(t *thread, whole bool) int {
	if whole {
		return guestPID
	}
	return t.tid
}

// codeSpan is the program's code, as Linux's load_elf_binary records it:
// from the lowest executable segment to the end of the file's part of the
// highest.
func (p *Process) codeSpan() [2]uint64 {
	lo, hi := ^uint64(0), uint64(0)
	for _, s := range p.ELF.Progs {
		if s.Type == elf.PT_LOAD && s.Flags&elf.PF_X != 0 {
			lo, hi = min(lo, s.Vaddr), max(hi, s.Vaddr+s.Filesz)
		}
	}
	if hi == 0 {
		return [2]uint64{}
	}
	return [2]uint64{p.Base + lo, p.Base + hi}
}

// dataSpan is the program's data as load_elf_binary records it: from the
// highest segment's start to the end of the file's part of all of them.
func (p *Process) dataSpan() [2]uint64 {
	var lo, hi uint64
	for _, s := range p.ELF.Progs {
		if s.Type == elf.PT_LOAD {
			lo, hi = max(lo, s.Vaddr), max(hi, s.Vaddr+s.Filesz)
		}
	}
	return [2]uint64{p.Base + lo, p.Base + hi}
}

// procStatm is /proc/self/statm, in pages: the size and resident set
// status shows, the part of it backed by files or shared, the program's
// code, and the private writable memory (data, heap and stack); lib and
// dt are always 0.
func (p *Process) procStatm() []byte {
	var shared, data uint64
	for _, v := range p.vm.vmas {
		if v.prot == 0 {
			continue // PROT_NONE: not in the size status shows
		}
		n := (v.end - v.start) / emu.PageSize
		share := v.node != nil || v.shared
		if share || v.file != nil || strings.HasPrefix(v.name, "PT_LOAD[") {
			shared += n
		}
		if v.prot&emu.ProtWrite != 0 && !share {
			data += n
		}
	}
	code := p.codeSpan()
	text := (pageUp(code[1]) - code[0]&^(emu.PageSize-1)) / emu.PageSize
	size := p.vm.used() / emu.PageSize
	return []byte(fmt.Sprintf("%d %d %d %d 0 %d 0\n", size, size, min(shared, size), text, data))
}

// rlimitNames are the rows of /proc/self/limits: each resource's name and
// unit, in RLIMIT order.
var rlimitNames = [16][2]string{
	{"Max cpu time", "seconds"}, {"Max file size", "bytes"}, {"Max data size", "bytes"},
	{"Max stack size", "bytes"}, {"Max core file size", "bytes"}, {"Max resident set", "bytes"},
	{"Max processes", "processes"}, {"Max open files", "files"}, {"Max locked memory", "bytes"},
	{"Max address space", "bytes"}, {"Max file locks", "locks"}, {"Max pending signals", "signals"},
	{"Max msgqueue size", "bytes"}, {"Max nice priority", ""}, {"Max realtime priority", ""},
	{"Max realtime timeout", "us"},
}

// procLimits is /proc/self/limits: the table proc_pid_limits writes, of
// the limits getrlimit reports.
func (p *Process) procLimits() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units")
	limit := func(v uint64) string {
		if v == ^uint64(0) {
			return "unlimited"
		}
		return strconv.FormatUint(v, 10)
	}
	for res, row := range rlimitNames {
		cur, max := p.rlimit(uint64(res))
		fmt.Fprintf(&b, "%-25s %-20s %-20s ", row[0], limit(cur), limit(max))
		if row[1] != "" {
			fmt.Fprintf(&b, "%-10s", row[1])
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// auxvBytes is the auxiliary vector words as /proc/self/auxv holds them:
// the pairs up to AT_NULL's, native-endian.
func auxvBytes(words []uint64) []byte {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}
