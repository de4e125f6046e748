#!/bin/bash
# Fetches GNU libsframe's headers and static library (Debian sid's
# libsframe-dev, binutils 2.47.x) for this machine's architecture into
# .deps/libsframe, for the differential test of sframe.Section.Lookup
# against libsframe's sframe_find_fre (sframe/libsframe_test.go, which
# builds sframe/testdata/libsframe/harness.c with the host's gcc). As
# scripts/fetch-sysroots.sh does: apt runs with private lists and cache under
# .deps/apt-libsframe and only downloads the .deb, which dpkg-deb unpacks in
# place; the system's apt sources and packages are not touched.
#
# libsframe.a needs nothing but libc (malloc, qsort, printf, ...), so it
# links with Debian 12's gcc and glibc although sid built it.
#
# Idempotent: an existing .deps/libsframe with its stamp is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(dpkg --print-architecture)
dest=.deps/libsframe
if [ -s "$dest/.version" ] && [ -f "$dest/usr/include/sframe-api.h" ] && [ -f "$dest/usr/include/libiberty/ansidecl.h" ]; then
	echo "libsframe: already in $dest ($(cat "$dest/.version"))"
	exit 0
fi
apt_dir=$PWD/.deps/apt-libsframe
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
echo "deb [arch=$arch] http://deb.debian.org/debian sid main" > "$apt_dir/etc/sources.list"
# sid's Release file may be served past its Valid-Until date: accept it;
# signatures are still checked.
opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root" -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
	-o "Acquire::Check-Valid-Until=false")
echo "libsframe: fetching libsframe-dev from sid for $arch"
apt-get "${opts[@]}" update -q >/dev/null
v=$(apt-cache "${opts[@]}" show "libsframe-dev:$arch" | sed -n 's/^Version: //p' | head -1)
[ -n "$v" ] || { echo "libsframe: sid has no libsframe-dev for $arch" >&2; exit 1; }
# sframe.h includes libiberty's ansidecl.h (sid's libsframe-dev since
# 2.47): its headers come from sid's libiberty-dev, into the same tree.
iv=$(apt-cache "${opts[@]}" show "libiberty-dev:$arch" | sed -n 's/^Version: //p' | head -1)
[ -n "$iv" ] || { echo "libsframe: sid has no libiberty-dev for $arch" >&2; exit 1; }
tmp=$(mktemp -d)
(cd "$tmp" && apt-get "${opts[@]}" download -q "libsframe-dev:$arch=$v" "libiberty-dev:$arch=$iv" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$tmp"/libsframe-dev_*.deb "$dest"
dpkg-deb -x "$tmp"/libiberty-dev_*.deb "$dest"
rm -rf "$tmp"
[ -f "$dest/usr/include/libiberty/ansidecl.h" ] || { echo "libsframe: no ansidecl.h in libiberty-dev $iv" >&2; exit 1; }
lib=$(find "$dest/usr/lib" -name libsframe.a | head -1)
[ -n "$lib" ] && [ -f "$dest/usr/include/sframe-api.h" ] || { echo "libsframe: no libsframe.a or sframe-api.h in libsframe-dev $v" >&2; exit 1; }
# One fixed path for the test: .deps/libsframe/lib/libsframe.a.
mkdir -p "$dest/lib"
ln -sf "../${lib#"$dest"/}" "$dest/lib/libsframe.a"
printf 'libsframe-dev %s, libiberty-dev %s\n' "$v" "$iv" > "$dest/.version"
echo "libsframe: libsframe-dev $v in $dest"
