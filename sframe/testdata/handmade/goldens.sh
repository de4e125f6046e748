#!/bin/sh
# goldens.sh — regenerate the real-objdump goldens for sframe's hand-made
# SFrame sections (see README.md in this directory).
#
#   sudo sh sframe/testdata/handmade/goldens.sh [NAME...]
#
# For every NAME.sframe here (or only the NAMEs given) it wraps the raw
# section into a relocatable ELF object of the section's arch and byte order,
# as section ".sframe" (SHT_PROGBITS, alloc,load,readonly,data,contents) at
# virtual address Addr, and saves `objdump --sframe NAME.o` stdout verbatim
# as NAME.objdump. The binutils used follows what emits/reads that style:
#
#   V1                        -> the host, Debian 12 bookworm, binutils 2.40
#   V2 without flag 0x4       -> chroot $CHROOTS/trixie, binutils 2.44
#   V2 with PCREL (0x4), V3   -> chroot $CHROOTS/sid, binutils 2.47.50
#
# It also rebuilds s390x-real.elf from s390x-real.s with sid's s390x cross
# gas/ld (--gsframe) and saves its golden as s390x-real.elf.objdump (objdump
# run in the file's directory, so the banner names "s390x-real.elf").
#
# Needs: root (chroot), the chroots made by shared/tools/build-toolchains.sh,
# and the per-target binutils for the arches used (installed here if missing):
#   host:   binutils (x86-64), binutils-aarch64-linux-gnu
#   trixie: binutils, binutils-aarch64-linux-gnu
#   sid:    binutils, binutils-aarch64-linux-gnu, binutils-s390x-linux-gnu
# (Debian names a cross binutils' tools TRIPLET-objcopy / TRIPLET-objdump;
# binutils-multiarch would also do, but it diverts the chroot's own
# /usr/bin/objdump, which other users of the chroots rely on.)
#
# objdump's stderr and a non-zero exit status are reported on stderr and make
# the script exit 1 at the end; they never go into the .objdump files.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
CHROOTS=${CHROOTS:-/tmp/chroots}
FAILED=0

# addr NAME: the section's virtual address, the Addr of NAME in handmade()
# in sframe/handmade_test.go. Keep the two in step (for PCREL sections the
# dumped pc values depend on it, so handmade_golden_test.go catches a slip).
addr() {
	case $1 in
	v3-aarch64-be-pauth) echo 0x10000 ;;
	v2-aarch64-be) echo 0x20000 ;;
	v1-aarch64-be) echo 0x20000 ;;
	v2-amd64-pcrel) echo 0x402000 ;;
	v2-amd64-fp-flags) echo 0x3000 ;;
	v3-amd64-plt) echo 0x2000 ;;
	v3-amd64-flex) echo 0x5000 ;;
	v3-s390x) echo 0x8000 ;;
	v2-s390x) echo 0x8000 ;;
	*) echo "goldens.sh: no Addr known for $1; add it to addr()" >&2; return 1 ;;
	esac
}

byte() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }

# root SUITE: the filesystem root that suite's binutils run in.
root() {
	case $1 in
	host) echo "" ;;
	*) echo "$CHROOTS/$1" ;;
	esac
}

# run SUITE CMD: run a shell command on the host or inside a chroot.
run() {
	if [ "$1" = host ]; then
		sh -c "$2"
	else
		chroot "$(root "$1")" sh -c "$2"
	fi
}

# need SUITE PROGRAM PACKAGE: install PACKAGE in SUITE unless PROGRAM exists.
need() {
	if ! run "$1" "command -v $2 >/dev/null"; then
		echo "goldens.sh: installing $3 in $1" >&2
		run "$1" "DEBIAN_FRONTEND=noninteractive apt-get install -y $3 >/dev/null"
	fi
}

WORKS=""
# workdir SUITE: sets w to a scratch directory inside that root (the path as
# seen inside it). Not run in $(...): WORKS must reach cleanup.
workdir() {
	w=/tmp/sframe-goldens.$$
	mkdir -p "$(root "$1")$w"
	case " $WORKS " in *" $1 "*) ;; *) WORKS="$WORKS $1" ;; esac
}
cleanup() {
	for s in $WORKS; do rm -rf "$(root "$s")/tmp/sframe-goldens.$$"; done
}
trap cleanup EXIT

golden() {
	name=$1
	in=$HERE/$name.sframe
	magic0=$(byte "$in" 0)
	ver=$(byte "$in" 2)
	flags=$(byte "$in" 3)
	abi=$(byte "$in" 4)
	case $ver in
	1) suite=host ;;
	2) if [ $((flags & 4)) -ne 0 ]; then suite=sid; else suite=trixie; fi ;;
	3) suite=sid ;;
	*) echo "goldens.sh: $name: unknown SFrame version $ver" >&2; return 1 ;;
	esac
	# ABI ids (SFrame header byte 4): 1 AArch64 BE, 2 AArch64 LE,
	# 3 AMD64 LE, 4 s390x BE.
	case $abi in
	1) tp=aarch64-linux-gnu-; fmt=elf64-bigaarch64; arch=aarch64; pkg=binutils-aarch64-linux-gnu ;;
	2) tp=aarch64-linux-gnu-; fmt=elf64-littleaarch64; arch=aarch64; pkg=binutils-aarch64-linux-gnu ;;
	3) tp=; fmt=elf64-x86-64; arch=i386:x86-64; pkg=binutils ;;
	4) tp=s390x-linux-gnu-; fmt=elf64-s390; arch=s390:64-bit; pkg=binutils-s390x-linux-gnu ;;
	*) echo "goldens.sh: $name: unknown ABI $abi" >&2; return 1 ;;
	esac
	# The preamble magic 0xdee2 is stored in the section's byte order.
	case $abi:$magic0 in
	1:222 | 4:222 | 2:226 | 3:226) ;;
	*) echo "goldens.sh: $name: magic byte order does not match ABI $abi" >&2; return 1 ;;
	esac
	a=$(addr "$name")
	need $suite ${tp}objdump $pkg
	workdir $suite
	cp "$in" "$(root $suite)$w/$name.sframe"
	# -I binary makes one section ".data" holding the file; --change-section-
	# address names the input section, --rename-section sets the output one.
	run $suite "cd $w && ${tp}objcopy -I binary -O $fmt -B $arch \
		--rename-section .data=.sframe,alloc,load,readonly,data,contents \
		--change-section-address .data=$a $name.sframe $name.o"
	vma=$(run $suite "cd $w && ${tp}objdump -h $name.o" | awk '$2 == ".sframe" { print $4 }')
	if [ $((0x$vma)) -ne $((a)) ]; then
		echo "goldens.sh: $name: .sframe VMA 0x$vma, want $a" >&2
		return 1
	fi
	dump $suite "$w" "${tp}objdump" "$name.o" "$HERE/$name.objdump"
}

# dump SUITE DIR OBJDUMP FILE OUT: `OBJDUMP --sframe FILE` run in DIR; stdout
# to OUT, stderr and exit status reported.
dump() {
	ver=$(run $1 "$3 --version" | head -1)
	rc=0
	run $1 "cd $2 && $3 --sframe $4 >$4.out 2>$4.err" || rc=$?
	cp "$(root $1)$2/$4.out" "$5"
	err=$(cat "$(root $1)$2/$4.err")
	echo "$(basename "$5"): $1, $ver, exit $rc"
	if [ $rc -ne 0 ] || [ -n "$err" ]; then
		echo "goldens.sh: $4: objdump exit $rc, stderr: $err" >&2
		FAILED=1
	fi
}

# The bonus real binary: s390x gas --gsframe + ld, binutils 2.47.50 (sid).
real_s390x() {
	need sid s390x-linux-gnu-as binutils-s390x-linux-gnu
	workdir sid
	cp "$HERE/s390x-real.s" "$(root sid)$w/"
	run sid "cd $w && s390x-linux-gnu-as --gsframe -o s390x-real.o s390x-real.s &&
		s390x-linux-gnu-ld -e func -o s390x-real.elf s390x-real.o"
	cp "$(root sid)$w/s390x-real.elf" "$HERE/s390x-real.elf"
	dump sid "$w" s390x-linux-gnu-objdump s390x-real.elf "$HERE/s390x-real.elf.objdump"
}

if [ $# -eq 0 ]; then
	for f in "$HERE"/*.sframe; do
		n=$(basename "$f" .sframe)
		set -- "$@" "$n"
	done
	set -- "$@" s390x-real
fi
for n in "$@"; do
	if [ "$n" = s390x-real ]; then
		real_s390x
	else
		golden "$n"
	fi
done
exit $FAILED
