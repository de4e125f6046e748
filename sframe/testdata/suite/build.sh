#!/bin/bash
# Rebuilds the SFrame test suite: the sources in src/ built by the three
# GNU toolchains (see ../../../testdata/README.md and the shared toolchain
# notes), into v1/ (host, Debian 12: gcc 12.2, binutils 2.40), v2/ (trixie
# chroot: gcc 14.2, binutils 2.44) and v3/ (sid chroot: gcc 16.2, binutils
# 2.47.50), each with x86-64/ and aarch64/. Every output gets its golden
# from that toolchain's own objdump: NAME.objdump (stdout of
# `objdump --sframe NAME`, run in the output directory) and a line
# "NAME STATUS" in objdump.status; NAME.objdump.stderr holds objdump's
# stderr when it printed any.
#
# Needs root (chroot) and the chroots of testdata/build-toolchains.sh
# (CHROOTS, default /tmp/chroots). Nothing is installed: the chroots and
# the host must already have gcc, g++, binutils and the aarch64 cross
# toolchain.
#
# v1/ and v2/ also get goldens from the newest objdump (sid's 2.47.50),
# which relocates every relocatable object's start fields and reads V2 (and
# fails on V1) in its own way: NAME.objdump-latest and objdump-latest.status,
# what `sframesim dump --style latest` must print.
#
# clang23/x86-64/ holds clang 23's objects (sid chroot: its integrated
# assembler with --gsframe --allow-experimental-sframe writes SFrame V2
# with PC-relative starts, FDEs not flagged sorted) and what lld 23 and
# GNU ld 2.47.50 make of them, with sid objdump's goldens.
#
# Usage: sframe/testdata/suite/build.sh [v1|v2|v3|clang23 ...]
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
chroots=${CHROOTS:-/tmp/chroots}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(v1 v2 v3)

# build TOOLCHAIN-VERSION ARCH: runs inside the toolchain's root, in
# /tmp/sfsuite (the same path everywhere, so the outputs do not depend on
# where the checkout is).
build_script='
set -eu
v=$1 arch=$2
cd /tmp/sfsuite
rm -rf out && mkdir out
if [ "$arch" = x86-64 ]; then
	cc=gcc cxx=g++ as=as ld=ld objcopy=objcopy objdump=objdump
	start=start-x86_64.s cfi=cfi-x86_64.s
else
	cc=aarch64-linux-gnu-gcc cxx=aarch64-linux-gnu-g++ as=aarch64-linux-gnu-as
	ld=aarch64-linux-gnu-ld objcopy=aarch64-linux-gnu-objcopy objdump=aarch64-linux-gnu-objdump
	start=start-aarch64.s cfi=cfi-aarch64.s
fi
sf=-Wa,--gsframe
cd src
o=../out
# Objects.
$cc -c -O2 $sf multi.c -o $o/multi-O2.o
$cc -c -O0 $sf multi.c -o $o/multi-O0.o
$cc -c -O2 -ffunction-sections $sf multi.c -o $o/multi-O2-fs.o
$cc -c -O2 -freorder-blocks-and-partition $sf cold.c -o $o/cold-O2.o
$cc -c -O2 -ffunction-sections -freorder-blocks-and-partition $sf cold.c -o $o/cold-O2-fs.o
$cxx -c -O2 $sf comdat.cc -o $o/comdat1.o
$cxx -c -O2 -DSECOND $sf comdat.cc -o $o/comdat2.o
$as --gsframe $cfi -o $o/cfi.o
$cc -c -O2 -fPIC $sf lib.c -o $o/lib.o
$as --gsframe $start -o $o/start.o
if [ "$arch" = x86-64 ]; then
	$cc -c -O2 $sf prog.c -o $o/prog.o
	$cc -c -O2 -fcf-protection $sf prog.c -o $o/prog-ibt.o
	if [ "$v" != v1 ]; then
		$as --scfi=experimental --gsframe scfi-x86_64.s -o $o/scfi.o
	fi
else
	$cc -c -O2 $sf prog.c -o $o/prog.o
	$cc -c -O2 -mbranch-protection=bti $sf prog.c -o $o/prog-bti.o
	$cc -c -O2 -mbranch-protection=standard $sf multi.c -o $o/multi-O2-pac.o
fi
cd $o
# ld -r: several objects merged, COMDAT duplicates discarded.
$ld -r multi-O2.o cold-O2.o comdat1.o comdat2.o cfi.o -o relocatable.o
$ld -r multi-O2-fs.o cold-O2-fs.o comdat1.o comdat2.o -o relocatable-fs.o
# x32: 64-bit objects converted (gas emits no SFrame for x32 itself).
if [ "$arch" = x86-64 ]; then
	$objcopy -O elf32-x86-64 multi-O2.o x32-multi-O2.o
	$objcopy -O elf32-x86-64 cfi.o x32-cfi.o
	$objcopy -O elf32-x86-64 relocatable.o x32-relocatable.o
fi
# Links: -nostdlib programs, small (no separate code segment, no build id).
lf="-nostdlib -Wl,-z,max-page-size=0x1000 -Wl,-z,common-page-size=0x1000 -Wl,-z,noseparate-code -Wl,--build-id=none -Wl,--hash-style=gnu"
$cc -shared $lf lib.o -o liblib.so
$cc -static -no-pie $lf start.o prog.o lib.o multi-O2.o cold-O2.o comdat1.o comdat2.o cfi.o -o static
$cc -no-pie $lf start.o prog.o multi-O2.o -L. -llib -Wl,-z,lazy -o plt-lazy
$cc -no-pie $lf start.o prog.o multi-O2.o -L. -llib -Wl,-z,now -o plt-now
$cc -pie $lf start.o prog.o -L. -llib -Wl,-z,lazy -o plt-pie
if [ "$arch" = x86-64 ]; then
	$cc -no-pie $lf start.o prog-ibt.o -L. -llib -Wl,-z,ibtplt -Wl,-z,lazy -o plt-ibt
	$cc -no-pie $lf start.o prog-ibt.o -L. -llib -Wl,-z,ibtplt -Wl,-z,now -o plt-ibt-now
else
	$cc -no-pie $lf start.o prog-bti.o -L. -llib -Wl,-z,force-bti -Wl,-z,lazy -o plt-bti
	$cc -no-pie $lf start.o prog-bti.o -L. -llib -Wl,-z,force-bti -Wl,-z,now -o plt-bti-now
fi
# ld --discard-sframe (2.47.50 on): a zero-byte .sframe.
if $ld --help | grep -q -- --discard-sframe; then
	$ld -r --discard-sframe multi-O2.o cold-O2.o -o discard-r.o
	$cc -static -no-pie $lf -Wl,--discard-sframe start.o prog.o lib.o multi-O2.o -o discard-static
fi
rm -f lib.o start.o prog.o prog-ibt.o prog-bti.o
# Goldens.
: > objdump.status
for f in $(ls | LC_ALL=C sort); do
	case $f in *.status | *.objdump | *.stderr) continue ;; esac
	set +e
	$objdump --sframe $f > $f.objdump 2> $f.objdump.stderr
	echo "$f $?" >> objdump.status
	set -e
	[ -s $f.objdump.stderr ] || rm -f $f.objdump.stderr
done
'

# clang 23 (x86-64 only). lld concatenates the inputs' .sframe sections
# and GNU ld 2.47.50 refuses V2 input ("unexpected SFrame format version
# 2 ... SFrame section ignored"), so only a link with exactly one input
# section (the others assembled without --gsframe) is valid.
clang_script='
set -eu
cd /tmp/sfsuite
rm -rf out && mkdir out
cc="clang-23 -Wa,--gsframe -Wa,--allow-experimental-sframe" cxx="clang++-23 -Wa,--gsframe -Wa,--allow-experimental-sframe"
cd src
o=../out
$cc -c -O2 multi.c -o $o/multi-O2.o
$cc -c -O0 multi.c -o $o/multi-O0.o
$cc -c -O2 -ffunction-sections multi.c -o $o/multi-O2-fs.o
$cc -c -O2 cold.c -o $o/cold-O2.o
$cxx -c -O2 comdat.cc -o $o/comdat1.o
$cxx -c -O2 -DSECOND comdat.cc -o $o/comdat2.o
$cc -c cfi-x86_64.s -o $o/cfi.o
$cc -c -O2 lib.c -o $o/lib.o
$cc -c start-x86_64.s -o $o/start.o
$cc -c -O2 prog.c -o $o/prog.o
clang-23 -c start-x86_64.s -o $o/start-nosf.o
clang-23 -c -O2 prog.c -o $o/prog-nosf.o
cd $o
ld.lld-23 -r multi-O2.o -o lld-r.o
ld -r multi-O2.o -o bfd-r.o 2> bfd-r.o.ld-stderr
lf="-nostdlib -static -Wl,--build-id=none"
clang-23 -fuse-ld=lld $lf start-nosf.o prog-nosf.o lib.o -o lld-static
clang-23 -fuse-ld=lld $lf start.o prog.o lib.o multi-O2.o -o lld-concat
clang-23 $lf start-nosf.o prog-nosf.o lib.o -o bfd-static 2> bfd-static.ld-stderr
rm -f lib.o start.o prog.o start-nosf.o prog-nosf.o
: > objdump.status
for f in $(ls | LC_ALL=C sort); do
	case $f in *.status | *.objdump | *.stderr | *.ld-stderr) continue ;; esac
	set +e
	objdump --sframe $f > $f.objdump 2> $f.objdump.stderr
	echo "$f $?" >> objdump.status
	set -e
	[ -s $f.objdump.stderr ] || rm -f $f.objdump.stderr
done
'

for v in "${versions[@]}"; do
	if [ "$v" = clang23 ]; then
		work=$chroots/sid/tmp/sfsuite
		rm -rf "$work" && mkdir -p "$work"
		cp -r src "$work/src"
		chroot "$chroots/sid" bash -c "$clang_script"
		rm -rf clang23/x86-64 && mkdir -p clang23/x86-64
		cp "$work"/out/* clang23/x86-64/
		rm -rf "$work"
		echo "build.sh: clang23/x86-64: $(ls clang23/x86-64 | grep -cv -e '\.objdump' -e '\.status' -e '\.ld-stderr') files"
		continue
	fi
	case $v in
		v1) root=/ ;;
		v2) root=$chroots/trixie ;;
		v3) root=$chroots/sid ;;
		*) echo "build.sh: unknown toolchain $v (want v1, v2 or v3)" >&2; exit 1 ;;
	esac
	for arch in x86-64 aarch64; do
		work=$root/tmp/sfsuite
		rm -rf "$work" && mkdir -p "$work"
		cp -r src "$work/src"
		if [ "$root" = / ]; then
			bash -c "$build_script" build "$v" "$arch"
		else
			chroot "$root" bash -c "$build_script" build "$v" "$arch"
		fi
		rm -rf "$v/$arch" && mkdir -p "$v/$arch"
		cp "$work"/out/* "$v/$arch/"
		rm -rf "$work"
		echo "build.sh: $v/$arch: $(ls "$v/$arch" | grep -cv -e '\.objdump' -e '\.status') files"
	done
done

# Newest objdump's view of the older toolchains' outputs.
latest_script='
set -eu
cd /tmp/sfsuite-latest
for arch in x86-64 aarch64; do
	objdump=objdump
	[ $arch = aarch64 ] && objdump=aarch64-linux-gnu-objdump
	(
	cd $arch
	: > objdump-latest.status
	for f in $(ls | LC_ALL=C sort); do
		case $f in *.status | *.objdump* | *.stderr) continue ;; esac
		set +e
		$objdump --sframe $f > $f.objdump-latest 2> $f.objdump-latest.stderr
		echo "$f $?" >> objdump-latest.status
		set -e
		[ -s $f.objdump-latest.stderr ] || rm -f $f.objdump-latest.stderr
	done
	)
done
'
for v in "${versions[@]}"; do
	[ "$v" = v3 ] || [ "$v" = clang23 ] && continue
	work=$chroots/sid/tmp/sfsuite-latest
	rm -rf "$work" && mkdir -p "$work"
	cp -r "$v"/* "$work/"
	chroot "$chroots/sid" bash -c "$latest_script"
	for arch in x86-64 aarch64; do
		rm -f "$v/$arch"/*.objdump-latest* "$v/$arch"/objdump-latest.status
		cp "$work/$arch"/*.objdump-latest* "$work/$arch"/objdump-latest.status "$v/$arch/"
	done
	rm -rf "$work"
	echo "build.sh: $v: goldens of the newest objdump"
done
