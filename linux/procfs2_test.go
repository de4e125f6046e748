//go:build cgo

package linux

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sframesim/sframesim/arch"
	"github.com/sframesim/sframesim/emu"
)

// readAll reads the file path whole (a read at a time, as cat does), or
// fails the test.
func (g *guest) readAll(path string) string {
	g.t.Helper()
	fd := g.open(path, gRDONLY, 0)
	if fd < 0 {
		g.t.Fatalf("open %s = %d", path, fd)
	}
	defer g.call("close", uint64(fd))
	var out []byte
	for {
		n := g.call("read", uint64(fd), g.buf, 4096)
		if n < 0 {
			g.t.Fatalf("read %s = %d", path, n)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, readGuestBytes(g.t, g.p, g.buf, uint64(n))...)
	}
}

// readlink returns where the link path points, or -errno as text.
func (g *guest) readlink(path string) string {
	g.t.Helper()
	n := g.call("readlinkat", atFDCWD64, g.path(2, path), g.buf, 4096)
	if n < 0 {
		return strconv.FormatInt(n, 10)
	}
	return string(readGuestBytes(g.t, g.p, g.buf, uint64(n)))
}

// procStatFields splits a stat line into its fields, the comm (between
// the parentheses, which may hold spaces) as one: 52 of them.
func procStatFields(t *testing.T, line string) []string {
	t.Helper()
	open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || close < open || !strings.HasSuffix(line, "\n") {
		t.Fatalf("stat line %q", line)
	}
	f := append([]string{strings.TrimSpace(line[:open]), line[open+1 : close]}, strings.Fields(line[close+1:])...)
	if len(f) != 52 {
		t.Fatalf("stat has %d fields, want 52: %q", len(f), line)
	}
	return f
}

// statField returns stat field n (1-based, as proc(5) numbers them) as a
// number.
func statField(t *testing.T, f []string, n int) int64 {
	t.Helper()
	v, err := strconv.ParseInt(f[n-1], 10, 64)
	if err != nil {
		if u, err := strconv.ParseUint(f[n-1], 10, 64); err == nil {
			return int64(u)
		}
		t.Fatalf("stat field %d %q: %v", n, f[n-1], err)
	}
	return v
}

// TestProcStat: /proc/self/stat and statm give the process's state as
// Linux's fields: pid, comm, state, the ids getppid, getpgrp and getsid
// answer, the CPU time times(2) gives, the thread count (which a clone
// raises, and /proc/self/task lists), the start on the boot clock, the
// sizes status shows, the stack pointer and argument strings the loader
// laid out; each thread has its own stat and comm.
func TestProcStat(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Args: []string{"my prog", "x"}, Env: []string{"A=1"}})
			f := procStatFields(t, g.readAll("/proc/self/stat"))
			num := func(n int) int64 { return statField(t, f, n) }
			expect(t, "pid", num(1), guestPID)
			if f[1] != g.p.comm(g.p.thr.cur) || f[2] != "R" {
				t.Errorf("comm %q state %q", f[1], f[2])
			}
			expect(t, "ppid", num(4), g.call("getppid"))
			expect(t, "pgrp", num(5), g.call("getpgid", 0))
			expect(t, "session", num(6), g.call("getsid", 0))
			expect(t, "tty_nr", num(7), 0)
			expect(t, "tpgid", num(8), -1)
			if r := g.call("times", g.buf); r < 0 {
				t.Fatalf("times = %d", r)
			}
			utime := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf, 8)) // tms_utime
			expect(t, "utime", num(14), int64(utime))
			expect(t, "priority", num(18), 20)
			expect(t, "num_threads", num(20), 1)
			expect(t, "starttime", num(22), 100000) // 1000 s after boot, at 100 Hz
			expect(t, "vsize", num(23), int64(g.p.vm.used()))
			expect(t, "rss", num(24), int64(g.p.vm.used()/emu.PageSize))
			expect(t, "startstack", num(28), int64(g.p.SP))
			expect(t, "exit_signal", num(38), 17)
			argv0 := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.p.SP+8, 8))
			expect(t, "arg_start", num(48), int64(argv0))
			expect(t, "arg_end", num(49), int64(argv0)+int64(len("my prog\x00x\x00")))
			expect(t, "env_start", num(50), num(49))
			expect(t, "env_end", num(51), num(50)+int64(len("A=1\x00")))
			if code := g.p.codeSpan(); num(26) != int64(code[0]) || num(27) <= num(26) {
				t.Errorf("startcode %d endcode %d", num(26), num(27))
			}
			// The same numbers as status's.
			status := g.readAll("/proc/self/status")
			if want := fmt.Sprintf("\nVmSize:\t%8d kB\n", num(23)/1024); !strings.Contains(status, want) {
				t.Errorf("status lacks %q:\n%s", want, status)
			}
			statm := strings.Fields(g.readAll("/proc/self/statm"))
			if len(statm) != 7 || statm[0] != f[23] || statm[1] != f[23] || statm[4] != "0" || statm[6] != "0" {
				t.Errorf("statm %q, stat's rss %s", statm, f[23])
			}

			// A thread: counted, listed, with its own stat and comm.
			tid := g.call("clone", threadFlags, g.buf+8192, 0, 0, 0)
			if tid != guestPID+1 {
				t.Fatalf("clone = %d", tid)
			}
			expect(t, "num_threads after clone", statField(t, procStatFields(t, g.readAll("/proc/self/stat")), 20), 2)
			if got := g.names("/proc/self/task"); !slices.Equal(got, []string{".", "..", "4242", "4243"}) {
				t.Errorf("/proc/self/task lists %q", got)
			}
			tf := procStatFields(t, g.readAll("/proc/self/task/4243/stat"))
			expect(t, "thread's pid", statField(t, tf, 1), 4243)
			expect(t, "thread's exit_signal", statField(t, tf, 38), -1)
			expect(t, "thread's num_threads", statField(t, tf, 20), 2)
			if !strings.Contains(g.readAll("/proc/self/task/4243/status"), "\nPid:\t4243\n") {
				t.Error("the thread's status is not its own")
			}
			// A name written to the thread's comm is its name (as
			// pthread_setname_np names another thread), not the process's.
			fd := g.open("/proc/self/task/4243/comm", gWRONLY, 0)
			expect(t, "write comm", g.write(fd, "worker-with-a-long-name"), 23)
			if got := g.readAll("/proc/self/task/4243/comm"); got != "worker-with-a-l\n" {
				t.Errorf("thread's comm %q", got)
			}
			if got := g.readAll("/proc/self/comm"); got != g.p.comm(g.p.thr.cur)+"\n" {
				t.Errorf("process's comm %q", got)
			}
			expect(t, "write stat", g.open("/proc/self/stat", gWRONLY, 0), -eACCES)
			g.p.thr.list[1].state = finished
			expect(t, "open the stat of an exited thread", g.open("/proc/self/task/4243/stat", gRDONLY, 0), -eNOENT)
			expect(t, "write to the comm of an exited thread", g.write(fd, "x"), -eSRCH)
		})
	}
}

// TestProcLimits: /proc/self/limits is Linux's table of the limits
// getrlimit reports, setrlimit's included.
func TestProcLimits(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			before := g.readAll("/proc/self/limits")
			lines := strings.Split(before, "\n")
			if len(lines) != 18 || lines[0] != "Limit                     Soft Limit           Hard Limit           Units     " ||
				lines[4] != "Max stack size            8388608              unlimited            bytes     " ||
				lines[14] != "Max nice priority         unlimited            unlimited            " {
				t.Errorf("limits:\n%s", before)
			}
			b := make([]byte, 16)
			binary.LittleEndian.PutUint64(b, 8)
			binary.LittleEndian.PutUint64(b[8:], 512)
			if err := g.p.Engine.WriteMem(g.buf, b); err != nil {
				t.Fatal(err)
			}
			expect(t, "setrlimit NOFILE", g.call("setrlimit", 7, g.buf), 0)
			after := g.readAll("/proc/self/limits")
			if want := "\nMax open files            8                    512                  files     \n"; !strings.Contains(after, want) {
				t.Errorf("after setrlimit, limits lacks %q:\n%s", want, after)
			}
		})
	}
}

// TestProcAuxv: /proc/self/auxv is the auxiliary vector on the stack,
// AT_NULL's pair included, even once the guest has overwritten it.
func TestProcAuxv(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Args: []string{"p", "a"}, Env: []string{"X=1", "Y=2"}})
			le := binary.LittleEndian
			at := g.p.SP + 8 + 8*(le.Uint64(readGuestBytes(t, g.p, g.p.SP, 8))+1) // past argc and argv
			for le.Uint64(readGuestBytes(t, g.p, at, 8)) != 0 {
				at += 8 // envp
			}
			at += 8
			start := at
			for le.Uint64(readGuestBytes(t, g.p, at, 8)) != AT_NULL {
				at += 16
			}
			stack := readGuestBytes(t, g.p, start, at+16-start)
			if got := g.readAll("/proc/self/auxv"); got != string(stack) {
				t.Errorf("auxv: %d bytes, the stack's %d:\n%x\n%x", len(got), len(stack), got, stack)
			}
			if err := g.p.Engine.WriteMem(start, make([]byte, len(stack))); err != nil {
				t.Fatal(err)
			}
			if got := g.readAll("/proc/self/auxv"); got != string(stack) {
				t.Error("auxv changed with the stack")
			}
		})
	}
}

// TestProcFD: /proc/self/fd (and /dev/fd) lists the open descriptors in
// numeric order as links, which readlink reads as Linux names them and
// lstat shows with the descriptor's access; a closed one leaves.
func TestProcFD(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{})
			null := g.open("/dev/null", gWRONLY, 0)
			file := g.open("/tmp/f", oCREAT|gRDWR, 0o644)
			expect(t, "pipe2", g.call("pipe2", g.buf, 0), 0)
			ends := readGuestBytes(t, g.p, g.buf, 8)
			r, w := int64(binary.LittleEndian.Uint32(ends)), int64(binary.LittleEndian.Uint32(ends[4:]))
			efd := g.call("eventfd2", 0, 0)
			mfd := g.call("memfd_create", g.path(3, "buf"), 0)
			expect(t, "dup2 to 12", g.call("dup2", uint64(null), 12), 12)
			want := []string{".", "..", "0", "1", "2"}
			// mfd+1: the listing's own.
			for _, fd := range []int64{null, file, r, w, efd, mfd, mfd + 1, 12} {
				want = append(want, strconv.FormatInt(fd, 10))
			}
			if got := g.names("/proc/self/fd"); !slices.Equal(got, want) {
				t.Errorf("/proc/self/fd lists %q, want %q", got, want)
			}
			if got := g.names("/dev/fd"); !slices.Equal(got, want) {
				t.Errorf("/dev/fd lists %q, want %q", got, want)
			}
			for fd, target := range map[int64]string{
				null: "/dev/null", file: "/tmp/f", r: "pipe:[", efd: "anon_inode:[eventfd]", mfd: "/memfd:buf (deleted)",
			} {
				if got := g.readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); !strings.HasPrefix(got, target) {
					t.Errorf("readlink fd %d = %q, want %q", fd, got, target)
				}
			}
			for fd, mode := range map[int64]int64{null: 0o120300, file: 0o120700, r: 0o120500, w: 0o120300} {
				if got, size, _ := g.stat(fmt.Sprintf("/proc/self/fd/%d", fd), false); got != mode || size != 64 {
					t.Errorf("lstat fd %d: mode %#o size %d, want %#o, 64", fd, got, size, mode)
				}
			}
			expect(t, "unlink", g.call("unlinkat", atFDCWD64, g.path(2, "/tmp/f"), 0), 0)
			if got := g.readlink(fmt.Sprintf("/proc/self/fd/%d", file)); got != "/tmp/f (deleted)" {
				t.Errorf("readlink of an unlinked file %q", got)
			}
			tmp := g.open("/tmp", oTMPFILE|g.p.abi.oDirectory|gRDWR, 0o600)
			expect(t, "fstat O_TMPFILE", g.call("fstat", uint64(tmp), g.buf), 0)
			ino := binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+8, 8))
			if got, want := g.readlink(fmt.Sprintf("/proc/self/fd/%d", tmp)), fmt.Sprintf("/tmp/#%d (deleted)", ino); got != want {
				t.Errorf("readlink of an O_TMPFILE file %q, want %q", got, want)
			}
			expect(t, "close", g.call("close", uint64(tmp)), 0)
			expect(t, "close", g.call("close", uint64(r)), 0)
			expect(t, "close", g.call("close", uint64(w)), 0)
			if got := g.names("/proc/self/fd"); slices.Contains(got, strconv.FormatInt(w, 10)) || !slices.Contains(got, strconv.FormatInt(r, 10)) {
				t.Errorf("fd %d closed, %d the listing's: %q", w, r, got)
			}
			// Relative to a descriptor of the directory, as ls -l reads it.
			dir := g.open("/proc/self/fd", gRDONLY|g.p.abi.oDirectory, 0)
			if got := g.call("readlinkat", uint64(dir), g.path(2, strconv.FormatInt(null, 10)), g.buf, 100); got != int64(len("/dev/null")) {
				t.Errorf("readlinkat(fd dir, %d) = %d", null, got)
			}
			if mode, _, _ := g.stat("/proc/self/fd", true); mode != 0o40500 {
				t.Errorf("stat /proc/self/fd: %#o", mode)
			}
			expect(t, "open fd dir for writing", g.open("/proc/self/fd", gWRONLY, 0), -eISDIR)
			expect(t, "read a directory", g.call("read", uint64(dir), g.buf, 10), -eISDIR)
			if mode, _, _ := g.stat("/proc/self/fd/..", true); mode != 0o40555 {
				t.Errorf("stat /proc/self/fd/..: %#o, want /proc/PID", mode)
			}
		})
	}
}

// TestProcMachine: /proc/cpuinfo describes one CPU, the emulated one, as
// Linux writes it on its architecture (the features AT_HWCAP or CPUID
// give); meminfo the memory cap and what sysinfo says is free; uptime and
// loadavg the fake clock, no load.
func TestProcMachine(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{MaxMem: 256 << 20})
			cpu := g.readAll("/proc/cpuinfo")
			if strings.Count(cpu, "processor\t: ") != 1 || !strings.HasPrefix(cpu, "processor\t: 0\n") || !strings.HasSuffix(cpu, "\n\n") {
				t.Errorf("cpuinfo is not one CPU:\n%s", cpu)
			}
			if a == arch.ARM64 {
				want := "processor\t: 0\nBogoMIPS\t: 2000.00\n" +
					"Features\t: fp asimd aes pmull sha1 sha2 crc32 atomics fphp asimdhp asimdrdm lrcpc dcpop asimddp paca pacg\n" +
					"CPU implementer\t: 0x00\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0x051\nCPU revision\t: 0\n\n"
				if cpu != want {
					t.Errorf("cpuinfo:\n%s\nwant:\n%s", cpu, want)
				}
			} else {
				var keys []string
				for _, l := range strings.Split(strings.TrimSpace(cpu), "\n") {
					k, _, _ := strings.Cut(l, ":")
					keys = append(keys, strings.TrimRight(k, "\t"))
				}
				want := []string{"processor", "vendor_id", "cpu family", "model", "model name", "stepping", "cpu MHz", "cache size",
					"physical id", "siblings", "core id", "cpu cores", "apicid", "initial apicid", "fpu", "fpu_exception", "cpuid level", "wp",
					"flags", "bugs", "bogomips", "TLB size", "clflush size", "cache_alignment", "address sizes", "power management"}
				if !slices.Equal(keys, want) {
					t.Errorf("cpuinfo's lines %q, want %q", keys, want)
				}
				_, flags, _ := strings.Cut(cpu, "\nflags\t\t: ")
				flags, _, _ = strings.Cut(flags, "\n")
				set := strings.Fields(flags)
				hwcap := amd64Hwcap()
				for i, name := range amd64Flags[0].names { // CPUID 1's EDX: AT_HWCAP
					if name != "" && slices.Contains(set, name) != (hwcap&(1<<i) != 0) {
						t.Errorf("flag %s listed %v, AT_HWCAP %#x", name, slices.Contains(set, name), hwcap)
					}
				}
				for _, name := range []string{"fpu", "tsc", "cx8", "cmov", "mmx", "fxsr", "sse", "sse2", "syscall", "nx", "lm"} {
					if !slices.Contains(set, name) {
						t.Errorf("x86-64 without %s: %q", name, flags)
					}
				}
			}

			mem := g.readAll("/proc/meminfo")
			expect(t, "sysinfo", g.call("sysinfo", g.buf), 0)
			info := readGuestBytes(t, g.p, g.buf, 112)
			total, free := binary.LittleEndian.Uint64(info[32:]), binary.LittleEndian.Uint64(info[40:])
			for _, want := range []string{
				fmt.Sprintf("MemTotal:       %8d kB\n", total/1024),
				fmt.Sprintf("\nMemFree:        %8d kB\n", free/1024),
				fmt.Sprintf("\nMemAvailable:   %8d kB\n", free/1024),
				"\nSwapTotal:             0 kB\n",
			} {
				if !strings.Contains(mem, want) {
					t.Errorf("meminfo lacks %q:\n%s", want, mem)
				}
			}
			if total != 256<<20 {
				t.Errorf("sysinfo's RAM %d, want the cap", total)
			}
			if got := g.readAll("/proc/uptime"); got != "1000.00 1000.00\n" {
				t.Errorf("uptime %q", got)
			}
			if got := g.readAll("/proc/loadavg"); got != "0.00 0.00 0.00 1/1 4242\n" {
				t.Errorf("loadavg %q", got)
			}
			// 1000 s up, all idle; booted 1000 s before the real-time
			// clock's start, 2025-01-01.
			want := "cpu  0 0 0 100000 0 0 0 0 0 0\ncpu0 0 0 0 100000 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime 1735688600\n" +
				"processes 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
			if got := g.readAll("/proc/stat"); got != want {
				t.Errorf("/proc/stat:\n%s\nwant:\n%s", got, want)
			}
			vm := g.readAll("/proc/vmstat")
			for _, want := range []string{fmt.Sprintf("nr_free_pages %d\n", free/4096), "\npswpin 0\n", "\npgmajfault 0\n"} {
				if !strings.Contains(vm, want) {
					t.Errorf("vmstat lacks %q:\n%s", want, vm)
				}
			}
			// A thread made: a fork, and two threads that can run.
			g.call("clone", threadFlags, g.buf+8192, 0, 0, 0)
			st := g.readAll("/proc/stat")
			if !strings.Contains(st, "\nprocesses 2\nprocs_running 2\n") || !strings.Contains(st, "\nbtime 1735688600\n") {
				t.Errorf("/proc/stat after a thread was made and ran:\n%s", st)
			}
		})
	}
}

// TestProcFiles: the made files and directories stat as procfs's
// (regular files of size 0 with Linux's modes, directories, the links
// /proc/self and /proc/thread-self), fstat of one open too; /proc lists
// what is made; a file is made again when read from its start; and two
// runs make the same bytes.
func TestProcFiles(t *testing.T) {
	for _, a := range testArches {
		t.Run(a.Name, func(t *testing.T) {
			g := newGuest(t, a, Config{Args: []string{"prog"}})
			for path, mode := range map[string]int64{
				"/proc/self/stat": 0o100444, "/proc/self/auxv": 0o100400, "/proc/self/environ": 0o100400,
				"/proc/self/comm": 0o100644, "/proc/cpuinfo": 0o100444, "/proc/4242/limits": 0o100444,
				"/proc": 0o40555, "/proc/self": 0o40555, "/proc/self/task": 0o40555, "/proc/thread-self/stat": 0o100444,
			} {
				if got, size, _ := g.stat(path, true); got != mode || size != 0 {
					t.Errorf("stat %s: mode %#o size %d, want %#o, 0", path, got, size, mode)
				}
			}
			for _, path := range []string{"/proc/self", "/proc/thread-self"} {
				if mode, _, _ := g.stat(path, false); mode != 0o120777 {
					t.Errorf("lstat %s: %#o", path, mode)
				}
			}
			if got := g.readlink("/proc/self"); got != "4242" {
				t.Errorf("readlink /proc/self = %q", got)
			}
			if got := g.readlink("/proc/thread-self"); got != "4242/task/4242" {
				t.Errorf("readlink /proc/thread-self = %q", got)
			}
			if got := g.names("/proc"); !slices.Equal(got, []string{".", "..", "stat", "uptime", "vmstat", "cpuinfo", "loadavg", "meminfo", "self", "thread-self", "4242"}) {
				t.Errorf("/proc lists %q", got)
			}
			if got := g.names("/proc/self"); !slices.Equal(got, []string{".", "..", "task", "fd", "environ", "auxv", "status", "limits",
				"comm", "cmdline", "stat", "statm", "maps", "cwd", "root", "exe"}) {
				t.Errorf("/proc/self lists %q", got)
			}
			expect(t, "chdir", g.call("chdir", g.path(2, "/tmp")), 0)
			if got := g.readlink("/proc/self/cwd"); got != "/tmp" {
				t.Errorf("readlink /proc/self/cwd = %q, want the working directory", got)
			}
			if got := g.readlink("/proc/self/root"); got != "/" {
				t.Errorf("readlink /proc/self/root = %q", got)
			}
			fd := g.open("/proc/self/status", gRDONLY, 0)
			expect(t, "fstat", g.call("fstat", uint64(fd), g.buf), 0)
			if mode, size := g.fstatMode(), binary.LittleEndian.Uint64(readGuestBytes(t, g.p, g.buf+48, 8)); mode != 0o100444 || size != 0 {
				t.Errorf("fstat of an open /proc file: mode %#o size %d", mode, size)
			}
			expect(t, "SEEK_END", g.call("lseek", uint64(fd), 0, 2), -eINVAL)
			expect(t, "mmap", g.call("mmap", 0, 4096, 1, 2, uint64(fd), 0), -eNODEV)
			before := g.pread(fd, 0, 4096)
			if m := g.call("mmap", 0, 64<<20, 3, 0x22, ^uint64(0), 0); m < 0 {
				t.Fatalf("mmap = %d", m)
			}
			if after := g.pread(fd, 0, 4096); after == before || !strings.Contains(after, fmt.Sprintf("\nVmSize:\t%8d kB\n", g.p.vm.used()/1024)) {
				t.Errorf("status read again from its start is not made again:\n%s", after)
			}
			expect(t, "chdir /proc/self", g.call("chdir", g.path(2, "/proc/self")), 0)
			if got := g.cwd(); got != "/proc/4242" {
				t.Errorf("getcwd in /proc/self: %q", got)
			}
			if got := g.readAll("limits"); !strings.HasPrefix(got, "Limit ") {
				t.Errorf("limits, relative to /proc/self: %q", got)
			}
			expect(t, "not made", g.open("/proc/self/mounts", gRDONLY, 0), -eNOENT)
			expect(t, "no such thread", g.open("/proc/self/task/4300/stat", gRDONLY, 0), -eNOENT)
			expect(t, "another pid", g.open("/proc/1/stat", gRDONLY, 0), -eNOENT)
		})
	}
	// Two runs: the same bytes.
	for _, a := range testArches {
		var runs [2]map[string]string
		for i := range runs {
			g := newGuest(t, a, Config{Args: []string{"prog"}})
			g.call("clone", threadFlags, g.buf+8192, 0, 0, 0)
			runs[i] = map[string]string{}
			for _, path := range []string{"/proc/cpuinfo", "/proc/meminfo", "/proc/uptime", "/proc/loadavg", "/proc/self/stat",
				"/proc/self/statm", "/proc/self/status", "/proc/self/limits", "/proc/self/auxv", "/proc/self/maps", "/proc/self/task/4243/stat"} {
				// The program is in a directory of its own each time.
				runs[i][path] = strings.ReplaceAll(g.readAll(path), absPath(g.p.Path), "PROG")
			}
		}
		for path, s := range runs[0] {
			if runs[1][path] != s {
				t.Errorf("%s: %s differs between two runs:\n%q\n%q", a.Name, path, s, runs[1][path])
			}
		}
	}
}

// fstatMode is the st_mode of the struct stat at g.buf.
func (g *guest) fstatMode() int64 {
	b := readGuestBytes(g.t, g.p, g.buf, 32)
	if g.p.abi == abiFor(arch.AMD64) {
		return int64(binary.LittleEndian.Uint32(b[24:]))
	}
	return int64(binary.LittleEndian.Uint32(b[16:]))
}
