//go:build cgo

package linux

import (
	"fmt"
	"strings"

	"github.com/sframesim/sframesim/arch"
)

// The files of /proc that describe the machine, made for the emulated
// one (procfs.go makes the process's): /proc/cpuinfo, one CPU as the
// emulated CPU describes itself, in the layout Linux 6.1 uses on the
// guest's architecture; /proc/meminfo, the memory cap as RAM, as sysinfo
// says, and /proc/vmstat its pages; /proc/uptime, /proc/loadavg and
// /proc/stat on the fake clock, no load. Each
// is the same for the same run: nothing of the host's shows.

// procMachineFiles make the files of /proc itself.
var procMachineFiles = map[string]func(*Process) []byte{
	"/proc/cpuinfo": (*Process).procCpuinfo,
	"/proc/meminfo": (*Process).procMeminfo,
	"/proc/uptime":  (*Process).procUptime,
	"/proc/loadavg": (*Process).procLoadavg,
	"/proc/stat":    (*Process).procSystemStat,
	"/proc/vmstat":  (*Process).procVmstat,
}

// procCpuinfo is /proc/cpuinfo: one CPU (as sched_getaffinity and
// /sys/devices/system/cpu/online say), processor 0.
func (p *Process) procCpuinfo() []byte {
	if p.Arch == arch.ARM64 {
		return []byte(arm64Cpuinfo())
	}
	return []byte(amd64Cpuinfo())
}

// The emulated AArch64 CPU's MIDR_EL1: QEMU's "max" CPU, implementer 0
// ("reserved for software use"), architecture 0xf (see the ID
// registers), part 'Q', variant and revision 0.
const arm64MIDR = 0x000f0510

// arm64HwcapNames are the names cpuinfo gives AT_HWCAP's bits, and
// arm64Hwcap2Names AT_HWCAP2's (arch/arm64/kernel/cpuinfo.c, 6.1).
var (
	arm64HwcapNames = [...]string{"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32",
		"atomics", "fphp", "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc",
		"dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512", "sve", "asimdfhm",
		"dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca", "pacg"}
	arm64Hwcap2Names = [...]string{"dcpodp", "sve2", "sveaes", "svepmull", "svebitperm", "svesha3", "svesm4", "flagm2",
		"frint", "svei8mm", "svef32mm", "svef64mm", "svebf16", "i8mm", "bf16", "dgh",
		"rng", "bti", "mte", "ecv", "afp", "rpres", "mte3", "sme",
		"smei16i64", "smef64f64", "smei8i32", "smef16f32", "smeb16f32", "smef32f32", "smefa64", "wfxt",
		"ebf16", "sveebf16"}
)

// arm64Cpuinfo is /proc/cpuinfo as arm64's c_show writes it: the features
// are AT_HWCAP's and AT_HWCAP2's (what the guest is told it may use, in
// bit order), BogoMIPS twice the counter's frequency in MHz (the delay
// loop is timer-based: 1 GHz, counters.go).
func arm64Cpuinfo() string {
	var b strings.Builder
	fmt.Fprintf(&b, "processor\t: 0\nBogoMIPS\t: %d.%02d\nFeatures\t:", 2*counterHz/1_000_000, 0)
	for i, name := range arm64HwcapNames {
		if arm64Hwcap&(1<<i) != 0 {
			b.WriteString(" " + name)
		}
	}
	for i, name := range arm64Hwcap2Names {
		if arm64.hwcap2&(1<<i) != 0 {
			b.WriteString(" " + name)
		}
	}
	fmt.Fprintf(&b, "\nCPU implementer\t: 0x%02x\nCPU architecture: 8\nCPU variant\t: 0x%x\nCPU part\t: 0x%03x\nCPU revision\t: %d\n\n",
		arm64MIDR>>24, arm64MIDR>>20&0xf, arm64MIDR>>4&0xfff, arm64MIDR&0xf)
	return b.String()
}

// amd64Flag is a word of x86 capability flags: the CPUID leaf, subleaf
// and register (0-3: EAX, EBX, ECX, EDX) it comes from, and the name
// cpuinfo gives each bit ("" for none shown).
type amd64Flag struct {
	leaf, sub uint32
	reg       int
	names     [32]string
}

// amd64Flags are the capability words taken from CPUID, in the order of
// Linux's (arch/x86/include/asm/cpufeatures.h, 6.1), which is the order
// cpuinfo's flags are in. The words Linux makes up itself (its own
// synthetic flags: rep_good, nopl, constant_tsc, …) are left out: they
// say what the kernel decided, not what the CPU has.
var amd64Flags = []amd64Flag{
	{1, 0, 3, [32]string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep", "mtrr", "pge", "mca", "cmov",
		"pat", "pse36", "pn", "clflush", "", "dts", "acpi", "mmx", "fxsr", "sse", "sse2", "ss", "ht", "tm", "ia64", "pbe"}},
	{0x80000001, 0, 3, [32]string{11: "syscall", 19: "mp", 20: "nx", 22: "mmxext", 25: "fxsr_opt", 26: "pdpe1gb", 27: "rdtscp", 29: "lm", 30: "3dnowext", 31: "3dnow"}},
	{1, 0, 2, [32]string{"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est", "tm2", "ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm",
		"", "pcid", "dca", "sse4_1", "sse4_2", "x2apic", "movbe", "popcnt", "tsc_deadline_timer", "aes", "xsave", "", "avx", "f16c", "rdrand", "hypervisor"}},
	{0x80000001, 0, 2, [32]string{"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm", "sse4a", "misalignsse", "3dnowprefetch", "osvw", "ibs", "xop", "skinit", "wdt", "", "lwp",
		"fma4", "tce", "", "nodeid_msr", "", "tbm", "topoext", "perfctr_core", "perfctr_nb", "", "bpext", "ptsc", "perfctr_llc", "mwaitx"}},
	{7, 0, 1, [32]string{"fsgsbase", "tsc_adjust", "sgx", "bmi1", "hle", "avx2", "", "smep", "bmi2", "erms", "invpcid", "rtm", "cqm", "", "mpx", "rdt_a",
		"avx512f", "avx512dq", "rdseed", "adx", "smap", "avx512ifma", "", "clflushopt", "clwb", "intel_pt", "avx512pf", "avx512er", "avx512cd", "sha_ni", "avx512bw", "avx512vl"}},
	{0xd, 1, 0, [32]string{"xsaveopt", "xsavec", "xgetbv1", "xsaves", "xfd"}},
	{7, 1, 0, [32]string{4: "avx_vnni", 5: "avx512_bf16"}},
	{0x80000008, 0, 1, [32]string{0: "clzero", 1: "irperf", 2: "xsaveerptr", 4: "rdpru", 9: "wbnoinvd"}},
	{6, 0, 0, [32]string{0: "dtherm", 1: "ida", 2: "arat", 4: "pln", 6: "pts", 7: "hwp", 8: "hwp_notify", 9: "hwp_act_window", 10: "hwp_epp", 11: "hwp_pkg_req", 19: "hfi"}},
	{7, 0, 2, [32]string{1: "avx512vbmi", 2: "umip", 3: "pku", 4: "ospke", 5: "waitpkg", 6: "avx512_vbmi2", 8: "gfni", 9: "vaes", 10: "vpclmulqdq", 11: "avx512_vnni",
		12: "avx512_bitalg", 13: "tme", 14: "avx512_vpopcntdq", 16: "la57", 22: "rdpid", 24: "bus_lock_detect", 25: "cldemote", 27: "movdiri", 28: "movdir64b", 29: "enqcmd", 30: "sgx_lc"}},
	{7, 0, 3, [32]string{2: "avx512_4vnniw", 3: "avx512_4fmaps", 4: "fsrm", 8: "avx512_vp2intersect", 10: "md_clear", 14: "serialize", 16: "tsxldtrk", 18: "pconfig",
		19: "arch_lbr", 20: "ibt", 22: "amx_bf16", 23: "avx512_fp16", 24: "amx_tile", 25: "amx_int8", 28: "flush_l1d", 29: "arch_capabilities"}},
}

// amd64PowerNames are the names cpuinfo's "power management" gives CPUID
// 0x80000007's EDX bits ("" for one shown as nothing).
var amd64PowerNames = [...]string{"ts", "fid", "vid", "ttp", "tm", "stc", "100mhzsteps", "hwpstate", "", "cpb", "eff_freq_ro", "proc_feedback", "acc_power"}

// amd64Cpuinfo is /proc/cpuinfo as x86's show_cpuinfo writes it, from
// what CPUID says on the emulated CPU: vendor, family, model and stepping
// as Linux decodes them, the brand string, caches and TLB as Linux reads
// them for an AMD CPU (CPUID 0x80000005 and 0x80000006), the flags. The
// clock is the guest's: 1 GHz (an instruction a nanosecond, the TSC's
// rate: counters.go), so cpu MHz is 1000.000 and bogomips 2000.00. No
// bugs: the emulated CPU does not speculate.
func amd64Cpuinfo() string {
	cpuid := func(leaf, sub uint32) [4]uint32 {
		v, _ := amd64CPUID(leaf, sub)
		return v
	}
	l0, l1, ext := cpuid(0, 0), cpuid(1, 0), cpuid(0x80000000, 0)[0]
	word := func(v uint32) string {
		return string([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	vendor := strings.TrimRight(word(l0[1])+word(l0[3])+word(l0[2]), "\x00")
	family, model, stepping := l1[0]>>8&0xf, l1[0]>>4&0xf, l1[0]&0xf
	if family == 0xf {
		family += l1[0] >> 20 & 0xff
	}
	if family >= 6 {
		model += (l1[0] >> 16 & 0xf) << 4
	}
	name := "unknown"
	if ext >= 0x80000004 {
		var s string
		for leaf := uint32(0x80000002); leaf <= 0x80000004; leaf++ {
			for _, r := range cpuid(leaf, 0) {
				s += word(r)
			}
		}
		s, _, _ = strings.Cut(s, "\x00")
		if s = strings.TrimSpace(s); s != "" {
			name = s
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\nmodel name\t: %s\nstepping\t: %d\n",
		vendor, family, model, name, stepping)
	if l1[3]&(1<<4) != 0 { // TSC
		b.WriteString("cpu MHz\t\t: 1000.000\n")
	}
	var cache, tlb uint32
	if ext >= 0x80000005 {
		l := cpuid(0x80000005, 0)
		cache = l[2]>>24 + l[3]>>24
	}
	if ext >= 0x80000006 {
		l := cpuid(0x80000006, 0)
		cache, tlb = l[2]>>16, l[1]>>16&0xfff+l[1]&0xfff
	}
	if cache != 0 {
		fmt.Fprintf(&b, "cache size\t: %d KB\n", cache)
	}
	apic := l1[1] >> 24
	fmt.Fprintf(&b, "physical id\t: 0\nsiblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1\napicid\t\t: %d\ninitial apicid\t: %d\n", apic, apic)
	fmt.Fprintf(&b, "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: %d\nwp\t\t: yes\nflags\t\t:", l0[0])
	for _, w := range amd64Flags {
		top := l0[0] // the highest leaf of its range
		if w.leaf >= 0x80000000 {
			top = ext
		}
		if w.leaf > top {
			continue
		}
		v := cpuid(w.leaf, w.sub)[w.reg]
		for i, name := range w.names {
			if name != "" && v&(1<<i) != 0 {
				b.WriteString(" " + name)
			}
		}
	}
	b.WriteString("\nbugs\t\t:\nbogomips\t: 2000.00\n")
	if tlb != 0 {
		fmt.Fprintf(&b, "TLB size\t: %d 4K pages\n", tlb)
	}
	clflush := uint32(64)
	if l1[3]&(1<<19) != 0 { // CLFLUSH
		clflush = (l1[1] >> 8 & 0xff) * 8
	}
	phys, virt := uint32(36), uint32(48)
	if ext >= 0x80000008 {
		a := cpuid(0x80000008, 0)[0]
		phys, virt = a&0xff, a>>8&0xff
	}
	fmt.Fprintf(&b, "clflush size\t: %d\ncache_alignment\t: %d\naddress sizes\t: %d bits physical, %d bits virtual\npower management:", clflush, clflush, phys, virt)
	if ext >= 0x80000007 {
		power := cpuid(0x80000007, 0)[3]
		for i := 0; i < 32; i++ {
			switch {
			case power&(1<<i) == 0:
			case i >= len(amd64PowerNames):
				fmt.Fprintf(&b, " [%d]", i)
			case amd64PowerNames[i] != "":
				b.WriteString(" " + amd64PowerNames[i])
			}
		}
	}
	b.WriteString("\n\n")
	return b.String()
}

// procMeminfo is /proc/meminfo: the lines every Linux 6.1 writes (those of
// optional features, such as huge pages, left out), RAM as sysinfo gives
// it (the memory cap), free what the guest has not taken of it, which is
// all available; what it holds is its anonymous memory; no swap, no page
// cache, no kernel memory. CommitLimit is half of RAM, as the default
// overcommit ratio (50) makes it without swap.
func (p *Process) procMeminfo() []byte {
	total := p.ramTotal()
	free := total - min(total, p.vm.used())
	used := total - free
	var b strings.Builder
	for _, l := range []struct {
		name string
		v    uint64
	}{
		{"MemTotal", total}, {"MemFree", free}, {"MemAvailable", free}, {"Buffers", 0}, {"Cached", 0}, {"SwapCached", 0},
		{"Active", used}, {"Inactive", 0}, {"Active(anon)", used}, {"Inactive(anon)", 0}, {"Active(file)", 0}, {"Inactive(file)", 0},
		{"Unevictable", 0}, {"Mlocked", 0}, {"SwapTotal", 0}, {"SwapFree", 0}, {"Dirty", 0}, {"Writeback", 0},
		{"AnonPages", used}, {"Mapped", 0}, {"Shmem", 0}, {"KReclaimable", 0}, {"Slab", 0}, {"SReclaimable", 0}, {"SUnreclaim", 0},
		{"KernelStack", 0}, {"PageTables", 0}, {"NFS_Unstable", 0}, {"Bounce", 0}, {"WritebackTmp", 0},
		{"CommitLimit", total / 2}, {"Committed_AS", used}, {"VmallocTotal", 0}, {"VmallocUsed", 0}, {"VmallocChunk", 0}, {"Percpu", 0},
	} {
		fmt.Fprintf(&b, "%-16s%8d kB\n", l.name+":", l.v/1024)
	}
	return []byte(b.String())
}

// procUptime is /proc/uptime: the boot-time clock, and the time the one
// CPU was idle (before the process started, and while it slept), in
// seconds with hundredths.
func (p *Process) procUptime() []byte {
	up, _ := p.now(7) // CLOCK_BOOTTIME
	idle := up - int64(p.Engine.Executed())
	const cs = 1e9 / 100
	return []byte(fmt.Sprintf("%d.%02d %d.%02d\n", up/1e9, up%1e9/cs, idle/1e9, idle%1e9/cs))
}

// procLoadavg is /proc/loadavg: no load (as sysinfo says), the threads
// that can run (the one reading among them) of all, and the last tid
// given.
func (p *Process) procLoadavg() []byte {
	runnable := 0
	for _, t := range p.thr.list {
		if t.state == running {
			runnable++
		}
	}
	return []byte(fmt.Sprintf("0.00 0.00 0.00 %d/%d %d\n", runnable, p.live(), p.thr.nextTID-1))
}

// userHZ is the unit of the times /proc/stat gives (USER_HZ, clock_t).
const userHZ = 100

// procSystemStat is /proc/stat as Linux 6.1's show_stat writes it, for the one
// CPU: the process's instructions as user time (a nanosecond each, as the
// fake clock counts them), the rest of the boot-time clock as idle; no
// interrupts; the thread switches the scheduler made as context
// switches; btime, when the boot-time clock started on the real-time
// one (ps -o stime and uptime need it), the same in every run; every
// thread made (the first included) as forks, as Linux counts them; the
// threads that can run, none blocked on I/O.
func (p *Process) procSystemStat() []byte {
	up, _ := p.now(7) // CLOCK_BOOTTIME
	real, _ := p.now(0)
	user := int64(p.Engine.Executed())
	idle := up - user
	const tick = 1e9 / userHZ
	cpu := fmt.Sprintf(" %d 0 0 %d 0 0 0 0 0 0\n", user/tick, idle/tick)
	runnable := 0
	for _, t := range p.thr.list {
		if t.state == running {
			runnable++
		}
	}
	return []byte(fmt.Sprintf("cpu %scpu0%sintr 0\nctxt %d\nbtime %d\nprocesses %d\nprocs_running %d\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
		cpu, cpu, p.thr.switches, (real-up)/1e9, p.thr.nextTID-guestPID, runnable))
}

// procVmstat is /proc/vmstat: the counters of Linux 6.1's that describe
// this machine, in its order, as pages (meminfo's, 4096 bytes each): the
// guest's memory is anonymous and active; nothing was paged in or out,
// swapped or faulted from a disk. A kernel has more counters; readers
// (vmstat, free's -w) take those missing as zero.
func (p *Process) procVmstat() []byte {
	total := p.ramTotal()
	used := min(total, p.vm.used())
	var b strings.Builder
	for _, l := range []struct {
		name string
		v    uint64
	}{
		{"nr_free_pages", (total - used) / 4096}, {"nr_inactive_anon", 0}, {"nr_active_anon", used / 4096},
		{"nr_inactive_file", 0}, {"nr_active_file", 0}, {"nr_unevictable", 0}, {"nr_anon_pages", used / 4096},
		{"nr_mapped", 0}, {"nr_file_pages", 0}, {"nr_dirty", 0}, {"nr_writeback", 0}, {"nr_shmem", 0},
		{"pgpgin", 0}, {"pgpgout", 0}, {"pswpin", 0}, {"pswpout", 0}, {"pgfault", 0}, {"pgmajfault", 0},
	} {
		fmt.Fprintf(&b, "%s %d\n", l.name, l.v)
	}
	return []byte(b.String())
}
