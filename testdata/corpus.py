#!/usr/bin/env python3
"""Builds, runs and records the sframesim test corpus.

    corpus.py build     compile every program with the three toolchains, run
                        each binary, write the objdump goldens, manifest.json
                        and corpus.tar.xz (called by build-corpus.sh)
    corpus.py build PROGRAM...
                        the same for the named programs only: their entries,
                        binaries and goldens replace theirs in the manifest,
                        corpus/ and the archive, and every other binary stays
                        as it is (it must be extracted and match the manifest)
    corpus.py build --toolchain NAME [PROGRAM...]
                        the same for the binaries of toolchain NAME
                        (repeatable; bookworm, trixie, sid, clang23) only
    corpus.py check [--toolchain NAME]... [PROGRAM...]
                        rebuild (everything, or the named programs) and
                        compare each binary's sha256, exit status and stdout
                        with the manifest; writes nothing in testdata
    corpus.py verify    extract corpus.tar.xz into a scratch directory and
                        check every binary against the manifest's sha256
    corpus.py goldens   re-run each toolchain's objdump on the extracted
                        binaries (testdata/corpus) and diff against the
                        committed goldens (needs the chroots)

Toolchains (see README.md): the host (Debian 12 bookworm: gcc 12, binutils
2.40, SFrame V1) and the chroots $CHROOTS/trixie (gcc 14, binutils 2.44, V2)
and $CHROOTS/sid (gcc 16, binutils 2.47.50, V3), made by build-toolchains.sh,
and clang23 in the sid chroot (clang 23 and lld 23, V2, x86-64 only).
Everything is built below the same absolute path, STAGE, on the host and in
each chroot, with -ffile-prefix-map=STAGE=. so that no build path leaks into
the binaries.  Only the Python standard library is used.
"""
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
CORPUS = os.path.join(HERE, "corpus")
ARCHIVE = os.path.join(HERE, "corpus.tar.xz")
MANIFEST = os.path.join(CORPUS, "manifest.json")
CHROOTS = os.environ.get("CHROOTS", "/tmp/chroots")
STAGE = "/tmp/sframesim-corpus"  # same path on the host and in the chroots
JOBS = int(os.environ.get("JOBS", "0")) or os.cpu_count() or 2
ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LC_ALL": "C",
    "HOME": "/root",
}

# arch -> tool prefix
ARCHES = {"x86-64": "", "aarch64": "aarch64-linux-gnu-"}
OPTS = ["O0", "O2"]


class Toolchain(collections.namedtuple("Toolchain", "name vdir sframe root arches cc cxx cflags ldflags "
                                                    "programs as_version ld_version")):
    """A compiler and linker that build part of the corpus.

    name: the manifest's "toolchain"; vdir: its directory under corpus/;
    sframe: the SFrame version it writes; root: its chroot ("" = the host);
    arches: what it builds for; cc, cxx: the drivers (prefixed with the
    arch's tool prefix); cflags, ldflags: added to every compile and link;
    programs: what it builds (None: every program, nolibc and the PAuth
    variants); as_version, ld_version: commands whose first line names the
    assembler and the linker ("{p}" is the arch's tool prefix)."""

    def tool(self, arch, name):
        return tool(arch, name) if self.cc == "gcc" else name

    def driver(self, arch, lang):
        return self.tool(arch, self.cxx if lang == "c++" else self.cc)

    @property
    def suite(self):
        """The Debian suite whose libraries the binaries run with."""
        return os.path.basename(self.root) if self.root else "bookworm"


def gnu(name, vdir, sframe, root):
    return Toolchain(name, vdir, sframe, root, list(ARCHES), "gcc", "g++", [], [], None,
                     "{p}as --version", "{p}ld --version")


# clang 23 writes SFrame V2 (PC-relative starts, FDEs not flagged sorted)
# with its integrated assembler, for x86-64 only; GNU ld cannot merge its
# sections and lld concatenates them, so it builds only programs of one
# source file, which lld links against sid's glibc (no SFrame of its own).
# -Dnoipa=noinline: clang has no noipa attribute (the sources' way of
# keeping functions apart under GCC) and would inline them all.
# See README.md, "A second producer: clang 23".
CLANG_PROGRAMS = ["recurse", "bigframe", "bigfunc", "vla", "realign", "cold", "except", "setjmp", "tailcall",
                  "pthreads"]
TOOLCHAINS = [
    gnu("bookworm", "v1", 1, ""),
    gnu("trixie", "v2", 2, CHROOTS + "/trixie"),
    gnu("sid", "v3", 3, CHROOTS + "/sid"),
    Toolchain("clang23", "clang23", 2, CHROOTS + "/sid", ["x86-64"], "clang-23", "clang++-23",
              ["-Wa,--allow-experimental-sframe", "-Dnoipa=noinline"], ["-fuse-ld=lld"], CLANG_PROGRAMS,
              "clang-23 -c -x assembler /dev/null -o /dev/null -Wa,--version",
              "clang-23 -fuse-ld=lld -Wl,--version"),
]
# Program flags only GCC knows (clang warns and ignores them).
GCC_ONLY_FLAGS = {"-freorder-blocks-and-partition"}

# name -> (sources under src/, language, extra compile flags, what it covers)
PROGRAMS = {
    "recurse": (["recurse.c"], "c", [], "recursion, callbacks through function pointers (also from qsort)"),
    "bigframe": (["bigframe.c"], "c", [], "frames > 255 B and > 64 KiB (2/4-byte FRE data words)"),
    "bigfunc": (["bigfunc.c"], "c", [], "functions > 255 B and > 64 KiB of code (ADDR2/ADDR4 FRE starts)"),
    "vla": (["vla.c"], "c", [], "FP-based CFA: VLA, alloca, no-omit-frame-pointer"),
    "realign": (["realign.c"], "c", [], "stack realignment; DRAP on x86-64"),
    "asm": (["asm.c", "asm.S"], "c", [], "hand-written CFI, .cfi_signal_frame, register-based CFA, PAC in asm"),
    "cold": (["cold.cc"], "c++", ["-freorder-blocks-and-partition"], ".cold partitions, exception from a cold path"),
    "except": (["except.cc"], "c++", [], "C++ exceptions through several frames, rethrow, cleanups"),
    "setjmp": (["setjmp.c"], "c", [], "setjmp/longjmp out of nested frames"),
    "tailcall": (["tailcall.c"], "c", [], "sibling/tail calls at -O2"),
    "many": (["many.c"], "c", [], "3000 small functions (lookup benchmark)"),
    "pthreads": (["pthreads.c"], "c", [], "POSIX threads: mutex, condvar turns, barrier, once, TLS, detached"),
    "stdthread": (["stdthread.cc"], "c++", [], "std::thread: exceptions in threads, promise, async, thread_local"),
    "files": (["files.c"], "c", [], "writes, reads back and removes files in /tmp and the working directory"),
    "signals": (["signals.c"], "c", [], "signal handlers: recursion, nesting, SIGSEGV + siglongjmp, sigaltstack, itimer, pthread_kill"),
}
# Variants left out to keep corpus.tar.xz small: many's DWARF and code are
# unique per build (~350 KB of xz each at -O2), so it is built only -O2 static.
ONLY = {"many": [("O2", "static")]}
NOLIBC_SOURCES = ["nolibc/start.S", "nolibc/main.c"]
NOLIBC_CFLAGS = ["-ffreestanding", "-fno-stack-protector", "-fno-tree-loop-distribute-patterns"]
NOLIBC_LDFLAGS = ["-nostdlib", "-static"]
PAUTH = {  # suffix -> flag (AArch64 only)
    "pac-standard": "-mbranch-protection=standard",
    "pac-bkey": "-mbranch-protection=pac-ret+b-key",
    "pac-leaf": "-mbranch-protection=pac-ret+leaf",
}
PAUTH_PROGRAM = "recurse"
# AArch64 CPU without FEAT_PAuth: the pauth binaries must print the same there
NO_PAUTH_CPU = "cortex-a57"
# AArch64 CPU per program (default: qemu's max): signals runs on a CPU
# without SVE, as the guest's HWCAP under sframesim says, so that glibc and
# the signal frames are the same (as linux/signals_test.go)
QEMU_CPU = {"signals": "cortex-a72"}

# Why a function can have no FDE (used for the manifest's note).
# Known wrong FDEs: (toolchain, program) -> note.
KNOWN_WRONG = {
    ("bookworm", "asm"): "the V1 FDE of asm_regcfa_call is wrong: gas 2.40 ignores "
                         ".cfi_def_cfa_register to a non-SP/FP register (rbx / x19) and keeps "
                         "CFA = sp+16 while the CFA is really reg+16 (no warning)",
}
KNOWN_GAPS = {
    "drap": "DRAP (CFA = r10, then DW_CFA_def_cfa_expression)",
    "asm_fake_sigtramp": "CFA from a DWARF expression (.cfi_escape)",
    "asm_regcfa_call": "CFA based on a callee-saved register",
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(root, cmd, cwd=STAGE, check=True):
    """Runs shell command cmd in the toolchain environment (host or chroot)."""
    if root:
        argv = ["chroot", root, "/bin/sh", "-c", "cd %s && %s" % (shlex.quote(cwd), cmd)]
        p = subprocess.run(argv, env=ENV, capture_output=True, text=True)
    else:
        p = subprocess.run(["/bin/sh", "-c", cmd], cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("failed (%d) in %s: %s\n%s%s" % (p.returncode, root or "host", cmd, p.stdout, p.stderr))
    return p


def tool(arch, name):
    return ARCHES[arch] + name


class Group:
    """Objects compiled once with one flag set, linked into one or more binaries."""

    def __init__(self, tc, arch, name, sources, lang, cflags, links):
        self.tc, self.arch, self.name = tc, arch, name
        self.sources, self.lang, self.cflags = sources, lang, cflags
        self.links = links  # [(binary name, link kind, ldflags, extra manifest fields)]
        self.commands, self.stderr = [], ""

    @property
    def vdir(self):
        return self.tc.vdir

    @property
    def root(self):
        return self.tc.root

    def driver(self):
        return self.tc.driver(self.arch, self.lang)

    def cost(self):
        c = 1 + len(self.links)
        if "many.c" in self.sources:
            c += 100 if "-O2" in self.cflags else 20
        if "bigfunc.c" in self.sources:
            c += 10
        return c

    def build(self):
        objdir = "obj/%s/%s/%s" % (self.vdir, self.arch, self.name)
        sh(self.root, "mkdir -p %s" % objdir)
        objs = []
        for s in self.sources:
            drv = self.tc.driver(self.arch, "c++" if s.endswith(".cc") else "c")
            o = "%s/%s.o" % (objdir, os.path.basename(s))
            cmd = " ".join([drv] + self.cflags + ["-c", "src/" + s, "-o", o])
            self.run(cmd)
            objs.append(o)
        for bname, kind, ldflags, _ in self.links:
            out = "corpus/%s/%s/%s" % (self.vdir, self.arch, bname)
            cmd = " ".join([self.driver()] + self.cflags + ldflags + objs + ["-o", out])
            self.run(cmd)

    def run(self, cmd):
        self.commands.append(cmd)
        p = sh(self.root, cmd)
        self.stderr += p.stderr


def program(g):
    """The program a group builds (nolibc for the nolibc groups)."""
    return g.name.split("-")[0]


def base_cflags(opt):
    return ["-" + opt, "-g", "-Wa,--gsframe", "-ffile-prefix-map=%s=." % STAGE]


def groups():
    out = []
    for tc in TOOLCHAINS:
        ld = tc.ldflags + ["-Wl,--build-id=none"]
        for arch in tc.arches:
            for prog, (sources, lang, extra, _) in PROGRAMS.items():
                if tc.programs is not None and prog not in tc.programs:
                    continue
                if tc.cc != "gcc":
                    extra = [f for f in extra if f not in GCC_ONLY_FLAGS]
                for opt in OPTS:
                    links = [("%s-%s-static" % (prog, opt), "static", ["-static"] + ld, {}),
                             ("%s-%s-dynamic" % (prog, opt), "dynamic", ld, {})]
                    if prog in ONLY:
                        links = [l for l in links if (opt, l[1]) in ONLY[prog]]
                    if not links:
                        continue
                    out.append(Group(tc, arch, "%s-%s" % (prog, opt), sources, lang,
                                     base_cflags(opt) + tc.cflags + extra, links))
            if tc.programs is not None:
                continue
            for opt in OPTS:
                variants = [("", [])]
                if arch == "aarch64":
                    variants += [("-" + k, [v]) for k, v in PAUTH.items()]
                for suffix, flags in variants:
                    name = "nolibc-%s%s" % (opt, suffix)
                    out.append(Group(tc, arch, name, NOLIBC_SOURCES, "c",
                                     base_cflags(opt) + NOLIBC_CFLAGS + flags,
                                     [(name, "nolibc", NOLIBC_LDFLAGS + ld, {"pauth": flags[0]} if flags else {})]))
            if arch == "aarch64":
                sources, lang, extra, _ = PROGRAMS[PAUTH_PROGRAM]
                for opt in OPTS:
                    for k, v in PAUTH.items():
                        name = "%s-%s-static-%s" % (PAUTH_PROGRAM, opt, k)
                        out.append(Group(tc, arch, name, sources, lang, base_cflags(opt) + extra + [v],
                                         [(name, "static", ["-static"] + ld, {"pauth": v})]))
    return out


def first_line(root, cmd):
    return sh(root, cmd).stdout.splitlines()[0]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


SYM_RE = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\w+)\s+(\w+)\s+\w+\s+(\S+)\s*(.*)$")


def symbols(path):
    """(value, size, type, bind, ndx, name, file) for each .symtab entry; file
    is the name of the last STT_FILE symbol seen (for local symbols)."""
    p = subprocess.run(["readelf", "-sW", path], env=ENV, capture_output=True, text=True, check=True)
    out, cur, in_symtab = [], "", False
    for line in p.stdout.splitlines():
        if line.startswith("Symbol table"):
            in_symtab = "'.symtab'" in line
            continue
        m = SYM_RE.match(line)
        if not m or not in_symtab:
            continue
        val, size, typ, bind, ndx, name = m.groups()
        if typ == "FILE":
            cur = name
        out.append((int(val, 16), int(size), typ, bind, ndx, name, cur))
    return out


def own_functions(binary, objs, sources):
    """Functions of the binary that come from our own objects: its global
    functions, and the local ones after our sources' STT_FILE symbol that
    our objects define (lld puts the local symbols of objects without
    STT_FILE, as glibc's, after the last one it saw)."""
    globals_, locals_, files = set(), set(), {os.path.basename(s) for s in sources}
    for o in objs:
        for val, size, typ, bind, ndx, name, _ in symbols(o):
            if typ == "FUNC" and ndx != "UND":
                (locals_ if bind == "LOCAL" else globals_).add(name)
    funcs = []
    for val, size, typ, bind, ndx, name, f in symbols(binary):
        if typ != "FUNC" or ndx == "UND":
            continue
        if (bind != "LOCAL" and name in globals_) or (bind == "LOCAL" and f in files and name in locals_):
            funcs.append((val, size, name))
    return sorted(set(funcs))


FDE_RE = re.compile(r"func idx \[\d+\]: pc = (0x[0-9a-f]+), size = (\d+) bytes")


def parse_dump(text):
    fdes = [(int(a, 16), int(s)) for a, s in FDE_RE.findall(text)]
    nf = re.search(r"Num FDEs: (\d+)", text)
    nr = re.search(r"Num FREs: (\d+)", text)
    ver = re.search(r"Version: (\S+)", text)
    return fdes, (int(nf.group(1)) if nf else None), (int(nr.group(1)) if nr else None), (ver.group(1) if ver else None)


def run_binary(tc, arch, rel, kind, pauth):
    """Runs a binary natively, in its chroot or under qemu; returns
    (exit status, stdout, stderr, how)."""
    root = tc.root
    host_path = (root or "") + STAGE + "/corpus/" + rel
    if arch == "x86-64":
        if root and kind == "dynamic":
            argv, how = ["chroot", root, STAGE + "/corpus/" + rel], "chroot $CHROOTS/%s" % tc.suite
        else:
            argv, how = [host_path], "host"
    else:
        argv = ["qemu-aarch64"]
        if pauth:
            argv += ["-cpu", "max"]
        elif os.path.basename(rel).split("-")[0] in QEMU_CPU:
            argv += ["-cpu", QEMU_CPU[os.path.basename(rel).split("-")[0]]]
        how = " ".join(argv)
        if kind == "dynamic":
            argv += ["-L", (root or "") + "/usr/aarch64-linux-gnu"]
            how += " -L %s/usr/aarch64-linux-gnu" % ("$CHROOTS/" + tc.suite if root else "")
        argv = argv + [host_path]
    # in the stage (files writes below its working directory); chroot
    # runs in the chroot's /
    p = subprocess.run(argv, env=ENV, capture_output=True, timeout=120, cwd=(root or "") + STAGE)
    res = (p.returncode, p.stdout.decode("utf-8", "backslashreplace"),
           p.stderr.decode("utf-8", "backslashreplace"), how)
    if pauth:
        q = subprocess.run(["qemu-aarch64", "-cpu", NO_PAUTH_CPU, host_path], env=ENV, capture_output=True, timeout=120)
        if (q.returncode, q.stdout) != (p.returncode, p.stdout):
            raise RuntimeError("%s: output differs between -cpu max and -cpu %s" % (rel, NO_PAUTH_CPU))
    return res


def record(g, bname, kind, ldflags, extra, versions):
    tc, arch = g.tc, g.arch
    rel = "%s/%s/%s" % (g.vdir, arch, bname)
    stage_root = (g.root or "") + STAGE
    binpath = stage_root + "/corpus/" + rel
    status, out, err, how = run_binary(tc, arch, rel, kind, extra.get("pauth"))
    od = sh(g.root, "%s --sframe %s" % (tool(arch, "objdump"), rel), cwd=STAGE + "/corpus", check=False)
    with open(binpath + ".objdump", "w") as f:
        f.write(od.stdout)
    fdes, nfde, nfre, ver = parse_dump(od.stdout)
    objs = ["%s/obj/%s/%s/%s/%s.o" % (stage_root, g.vdir, arch, g.name, os.path.basename(s)) for s in g.sources]
    missing = []
    for val, size, name in own_functions(binpath, objs, g.sources):
        if not any(a <= val < a + s for a, s in fdes):
            missing.append(name)
    notes = []
    if ver is None:
        notes.append("objdump shows no SFrame section")
    if missing:
        why = sorted({"%s: %s" % (m, KNOWN_GAPS[m]) for m in missing if m in KNOWN_GAPS})
        notes.append("no SFrame FDE for %s" % ", ".join(missing) + (" (%s)" % "; ".join(why) if why else ""))
    drv_version, as_version, ld_version = versions[(tc.name, arch, g.driver())]
    e = {
        "path": rel,
        "source": "src/" + g.sources[-1] if len(g.sources) > 1 and g.sources[0].endswith(".S") else "src/" + g.sources[0],
        "sources": ["src/" + s for s in g.sources],
        "arch": arch,
        "toolchain": tc.name,
        "sframe_version": tc.sframe,
        "compiler": drv_version,
        "binutils": as_version,
        "linker": ld_version,
        "cflags": " ".join(g.cflags),
        "ldflags": " ".join(ldflags),
        "link": kind,
        "opt": "-" + next(f[1:] for f in g.cflags if re.fullmatch(r"-O\d", f)),
    }
    if extra.get("pauth"):
        e["pauth"] = extra["pauth"]
    e.update({
        "commands": [c for c in g.commands if "-c src/" in c] + [c for c in g.commands if c.endswith(" " + "corpus/" + rel)],
        "sha256": sha256(binpath),
        "size": os.path.getsize(binpath),
        "run": how,
        "exit_status": status,
        "stdout": out,
    })
    if err:
        e["stderr"] = err
    e["objdump_status"] = od.returncode
    if od.stderr:
        e["objdump_stderr"] = od.stderr
    e["num_fdes"] = nfde
    e["num_fres"] = nfre
    e["functions_without_fde"] = missing
    if g.stderr.strip():
        # gcc's temporary assembler file names are random
        e["build_stderr"] = re.sub(r"/tmp/cc[0-9A-Za-z]+\.s\b", "<gcc-tmp>.s", g.stderr)
    prog = program(g)
    if (tc.name, prog) in KNOWN_WRONG:
        notes.append(KNOWN_WRONG[(tc.name, prog)])
    if notes:
        e["note"] = "; ".join(notes)
    return e


def stage_setup(tcs):
    """Fresh STAGE trees (src/, obj/, corpus/) on the host and in each chroot
    of toolchains tcs."""
    for root in sorted({tc.root for tc in tcs}):
        top = (root or "") + STAGE
        if root and not os.path.isfile(root + "/.sframesim-toolchain"):
            sys.exit("missing chroot %s: run build-toolchains.sh" % root)
        shutil.rmtree(top, ignore_errors=True)
        shutil.copytree(SRC, top + "/src")
    for tc in tcs:
        for arch in tc.arches:
            os.makedirs("%s/corpus/%s/%s" % ((tc.root or "") + STAGE, tc.vdir, arch))


def check_generated():
    p = subprocess.run([sys.executable, os.path.join(SRC, "gen-many.py")], capture_output=True, text=True, check=True)
    with open(os.path.join(SRC, "many.c")) as f:
        if f.read() != p.stdout:
            sys.exit("src/many.c is not the output of src/gen-many.py: regenerate it")


def build(only=None, check=False, toolchains=None):
    """Builds everything, or the programs in only by the toolchains named in
    toolchains (default: all), into the stages and records them; check
    compares with the manifest instead of writing."""
    check_generated()
    gs = groups()
    if only:
        unknown = set(only) - {program(g) for g in gs}
        if unknown:
            sys.exit("unknown programs: %s" % ", ".join(sorted(unknown)))
    if toolchains:
        unknown = set(toolchains) - {tc.name for tc in TOOLCHAINS}
        if unknown:
            sys.exit("unknown toolchains: %s" % ", ".join(sorted(unknown)))

    def chosen(prog, tc):
        return (not only or prog in only) and (not toolchains or tc in toolchains)
    gs = [g for g in gs if chosen(program(g), g.tc.name)]
    partial = bool(only or toolchains)
    kept = []
    if partial and not check:
        kept = [e for e in load_manifest() if not chosen(program_of(e), e["toolchain"])]
        bad = [e["path"] for e in kept if not os.path.isfile(os.path.join(CORPUS, e["path"]))
               or sha256(os.path.join(CORPUS, e["path"])) != e["sha256"]]
        if bad:
            sys.exit("%d binaries in corpus/ do not match the manifest (make extract first), e.g. %s" % (len(bad), bad[0]))
    tcs = [tc for tc in TOOLCHAINS if any(g.tc == tc for g in gs)]
    stage_setup(tcs)
    versions = {}
    for tc in tcs:
        for arch in tc.arches:
            p = ARCHES[arch] if tc.cc == "gcc" else ""
            a = first_line(tc.root, tc.as_version.format(p=p))
            l = first_line(tc.root, tc.ld_version.format(p=p))
            for lang in ("c", "c++"):
                drv = tc.driver(arch, lang)
                versions[(tc.name, arch, drv)] = (first_line(tc.root, drv + " --version"), a, l)
    for k, v in sorted(versions.items()):
        log("%-8s %-7s %-22s %s | %s" % (k[0], k[1], k[2], v[0], v[1]))
    gs.sort(key=lambda g: -g.cost())
    nbin = sum(len(g.links) for g in gs)
    log("building %d binaries (%d compile groups) with %d jobs" % (nbin, len(gs), JOBS))
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        done = 0
        for f in concurrent.futures.as_completed([ex.submit(g.build) for g in gs]):
            f.result()
            done += 1
            if done % 50 == 0:
                log("  built %d/%d groups" % (done, len(gs)))
    log("running binaries and objdump")
    jobs = [(g,) + l for g in gs for l in g.links]
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        entries = list(ex.map(lambda j: record(j[0], j[1], j[2], j[3], j[4], versions), jobs))
    entries.sort(key=lambda e: e["path"])
    if check:
        status = compare(entries)
        remove_stages()
        return status
    # copy binaries and goldens into testdata/corpus
    if partial:
        for e in load_manifest():
            if chosen(program_of(e), e["toolchain"]):
                for f in (e["path"], e["path"] + ".objdump"):
                    if os.path.exists(os.path.join(CORPUS, f)):
                        os.remove(os.path.join(CORPUS, f))
    else:
        for tc in TOOLCHAINS:
            shutil.rmtree(os.path.join(CORPUS, tc.vdir), ignore_errors=True)
    for e in entries:
        tc = next(t for t in TOOLCHAINS if t.name == e["toolchain"])
        src = (tc.root or "") + STAGE + "/corpus/" + e["path"]
        dst = os.path.join(CORPUS, e["path"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        shutil.copyfile(src + ".objdump", dst + ".objdump")
        os.chmod(dst + ".objdump", 0o644)
    entries = sorted(kept + entries, key=lambda e: e["path"])
    with open(MANIFEST, "w") as f:
        f.write(json.dumps(entries, indent=2) + "\n")
    make_archive([e["path"] for e in entries])
    remove_stages()
    summary(entries)
    return 0


def program_of(e):
    """The program of a manifest entry (its binary name's first word)."""
    return os.path.basename(e["path"]).split("-")[0]


def remove_stages():
    if not os.environ.get("KEEP_STAGE"):
        for tc in TOOLCHAINS:
            shutil.rmtree((tc.root or "") + STAGE, ignore_errors=True)


def compare(entries):
    """Compares rebuilt entries with the manifest's; 1 if any differs."""
    old = {e["path"]: e for e in load_manifest()}
    bad = 0
    for e in entries:
        o = old.get(e["path"])
        if o is None:
            log("NEW      %s" % e["path"])
            bad += 1
            continue
        diff = [k for k in ("sha256", "exit_status", "stdout", "num_fdes", "num_fres", "compiler", "binutils")
                if e.get(k) != o.get(k)]
        if diff:
            log("DIFFERS  %s: %s" % (e["path"], ", ".join(diff)))
            bad += 1
    log("%d rebuilt binaries compared with the manifest, %d differ or are new" % (len(entries), bad))
    return 1 if bad else 0


def make_archive(paths):
    lst = "\0".join(sorted(paths)) + "\0"
    tmp = ARCHIVE + ".tmp"
    with open(tmp, "wb") as out:
        tar = subprocess.Popen(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
                                "--mode=u=rwx,go=rx", "--format=gnu", "-C", CORPUS, "--null", "-T", "-", "-cf", "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
        xz = subprocess.Popen(["xz", "-9e", "-T1", "-c"], stdin=tar.stdout, stdout=out)
        tar.stdout.close()
        tar.stdin.write(lst.encode())
        tar.stdin.close()
        if tar.wait() or xz.wait():
            sys.exit("tar/xz failed")
    os.replace(tmp, ARCHIVE)
    log("%s: %d bytes" % (ARCHIVE, os.path.getsize(ARCHIVE)))


def summary(entries):
    counts = {}
    for e in entries:
        k = (e["path"].split("/")[0], e["arch"], e["link"])
        counts[k] = counts.get(k, 0) + 1
    for k in sorted(counts):
        log("%-7s %-7s %-8s %d" % (k + (counts[k],)))
    log("total %d binaries, archive %d bytes" % (len(entries), os.path.getsize(ARCHIVE)))
    for e in entries:
        if e.get("note"):
            log("note %s: %s" % (e["path"], e["note"]))


def load_manifest():
    with open(MANIFEST) as f:
        return json.load(f)


def verify():
    entries = load_manifest()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["tar", "-xJf", ARCHIVE, "-C", d], check=True)
        found = set()
        for dp, _, fs in os.walk(d):
            for f in fs:
                found.add(os.path.relpath(os.path.join(dp, f), d))
        bad = 0
        for e in entries:
            p = os.path.join(d, e["path"])
            if not os.path.isfile(p) or sha256(p) != e["sha256"]:
                log("MISMATCH %s" % e["path"])
                bad += 1
            found.discard(e["path"])
        for f in sorted(found):
            log("not in manifest: %s" % f)
        for e in entries:
            if not os.path.isfile(os.path.join(CORPUS, e["path"] + ".objdump")):
                log("missing golden %s.objdump" % e["path"])
                bad += 1
    log("%d binaries checked, %d bad, %d extra" % (len(entries), bad, len(found)))
    return 1 if bad or found else 0


def goldens():
    """Re-runs objdump on testdata/corpus (extract first) and diffs against the goldens."""
    entries = load_manifest()
    bad = 0
    for tc in TOOLCHAINS:
        mine = [e for e in entries if e["toolchain"] == tc.name]
        if not mine:
            continue
        cwd = CORPUS
        if tc.root:  # copy the binaries into the chroot
            top = tc.root + STAGE + "-goldens"
            shutil.rmtree(top, ignore_errors=True)
            for e in mine:
                os.makedirs(os.path.dirname(top + "/" + e["path"]), exist_ok=True)
                shutil.copy2(os.path.join(CORPUS, e["path"]), top + "/" + e["path"])
            cwd = STAGE + "-goldens"
        for e in mine:
            od = sh(tc.root, "%s --sframe %s" % (tool(e["arch"], "objdump"), e["path"]), cwd=cwd, check=False)
            with open(os.path.join(CORPUS, e["path"] + ".objdump")) as f:
                want = f.read()
            if od.stdout != want or od.returncode != e["objdump_status"] or od.stderr != e.get("objdump_stderr", ""):
                log("DIFFERS %s" % e["path"])
                bad += 1
        if tc.root:
            shutil.rmtree(tc.root + STAGE + "-goldens", ignore_errors=True)
    log("%d goldens checked, %d differ" % (len(entries), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "build"
    args, tcs = sys.argv[2:], set()
    while len(args) >= 2 and args[0] == "--toolchain":
        tcs.add(args[1])
        args = args[2:]
    if cmd == "build":
        sys.exit(build(set(args), toolchains=tcs))
    elif cmd == "check":
        sys.exit(build(set(args), check=True, toolchains=tcs))
    elif cmd == "verify":
        sys.exit(verify())
    elif cmd == "goldens":
        sys.exit(goldens())
    else:
        sys.exit(__doc__)
