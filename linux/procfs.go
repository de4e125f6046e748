//go:build cgo

package linux

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sframesim/sframesim/emu"
)

// A few of /proc's files about the process itself, made when opened from
// what the layer knows (nothing of the host's): /proc/self/maps (glibc's
// pthread_getattr_np reads it for the main thread's stack), cmdline,
// environ, comm and status, the same under /proc/PID; and
// /sys/devices/system/cpu/online and possible (one CPU). Any other path
// below /proc and /sys stays ENOENT. And, unless the user named the
// host's (or the sysroot has them), /etc/passwd and /etc/group with root
// and the guest's own user (uid and gid 1000, "user"), so getpwuid of
// the guest's uid finds it, as it does on any machine.

// etcFiles are the generated /etc files.
var etcFiles = map[string]string{
	"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"/etc/group":  "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n",
}

// procPID is the prefix of the process's own /proc directory by its pid.
var procPID = "/proc/" + strconv.Itoa(guestPID) + "/"

// procFile returns what makes the generated file abs, if it is one (stat
// and access only ask whether it is there: nothing is made for them).
func (p *Process) procFile(abs string) (func() []byte, bool) {
	rest, ok := strings.CutPrefix(abs, "/proc/self/")
	if !ok {
		rest, ok = strings.CutPrefix(abs, procPID)
	}
	if !ok {
		switch abs {
		case "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/present":
			return func() []byte { return []byte("0\n") }, true
		}
		if s, ok := etcFiles[abs]; ok {
			if _, e := p.lookup(abs, true); e == eNOENT {
				return func() []byte { return []byte(s) }, true
			}
		}
		return nil, false
	}
	switch rest {
	case "maps":
		return p.procMaps, true
	case "cmdline":
		return p.procCmdline, true
	case "environ":
		return p.procEnviron, true
	case "comm":
		return func() []byte { return []byte(p.comm(p.thr.cur) + "\n") }, true
	case "status":
		return p.procStatus, true
	}
	return nil, false
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

// procStat is the struct stat of a generated file: procfs's, size 0.
func procStat(ino uint64) statInfo {
	return statInfo{dev: 0x16, ino: ino, nlink: 1, mode: 0o100444, uid: guestUID, gid: guestGID, blksize: 1024}
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

// procStatus is /proc/self/status's common lines.
func (p *Process) procStatus() []byte {
	rss := p.vm.used() / 1024
	peak := p.vm.maxUsed() / 1024
	var sigPnd, shdPnd, blk uint64
	if t := p.thr.cur; t != nil {
		sigPnd, blk = t.sig.pending.set, t.sig.mask
	}
	shdPnd = p.sig.shared.set
	var ign, cgt uint64
	for sig := 1; sig <= nsig; sig++ {
		switch h := p.sig.act[sig].handler; {
		case h == sigIGN:
			ign |= sigmask(sig)
		case h != sigDFL:
			cgt |= sigmask(sig)
		}
	}
	return []byte(fmt.Sprintf("Name:\t%s\nUmask:\t%04o\nState:\tR (running)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"+
		"Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nFDSize:\t%d\nGroups:\t\n"+
		"VmPeak:\t%8d kB\nVmSize:\t%8d kB\nVmHWM:\t%8d kB\nVmRSS:\t%8d kB\nThreads:\t%d\n"+
		"SigQ:\t0/%d\nSigPnd:\t%016x\nShdPnd:\t%016x\nSigBlk:\t%016x\nSigIgn:\t%016x\nSigCgt:\t%016x\n"+
		"Cpus_allowed:\t1\nCpus_allowed_list:\t0\n",
		p.comm(p.thr.cur), p.ov.umask, guestPID, guestPID, 1,
		guestUID, guestUID, guestUID, guestUID, guestGID, guestGID, guestGID, guestGID, fdLimit,
		peak, rss, peak, rss, p.live(),
		sigPendingLimit, sigPnd, shdPnd, blk, ign, cgt))
}
