#!/bin/bash
# Fetches libunicorn-dev 2.1.1 (static libunicorn.a + headers) from Debian
# trixie into .deps/unicorn, without touching the system's apt sources or
# packages: apt runs with private lists and cache under .deps/apt and only
# downloads the .deb, which dpkg-deb unpacks in place.
#
#   scripts/fetch-unicorn.sh          for this machine's architecture
#   scripts/fetch-unicorn.sh arm64    for another Debian architecture (a
#                                     cross build: make release)
#
# The library lands in .deps/unicorn/usr/lib/TRIPLET/libunicorn.a, TRIPLET
# being the architecture's multiarch triplet (x86_64-linux-gnu,
# aarch64-linux-gnu); architectures share the headers. For each, a pkg-config
# file .deps/unicorn/pkgconfig/TRIPLET/unicorn.pc links that static library
# (`#cgo pkg-config: unicorn` in emu): the Makefile puts its directory on
# PKG_CONFIG_PATH (`make env` prints the line for running go by hand).
#
# Why trixie's 2.1.1: bookworm's 2.0.1 has a store slowdown (~25x on real
# code), and sid's 2.1.4 static library crashed in a test harness here.
# The static library links and runs on bookworm (it needs only libc, libm,
# libpthread).
set -euo pipefail
cd "$(dirname "$0")/.."
want_version="2.1.1"
dest=.deps/unicorn
stamp=$dest/.version

host_arch=$(dpkg --print-architecture)
arch=${1:-$host_arch}
# The multiarch triplet Debian installs the architecture's libraries under.
if command -v dpkg-architecture >/dev/null 2>&1; then
	triplet=$(dpkg-architecture -a "$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
elif [ "$arch" = "$host_arch" ]; then
	triplet=$(gcc -print-multiarch)
else
	echo "unicorn: need dpkg-architecture (apt-get install dpkg-dev) for the triplet of $arch" >&2
	exit 1
fi
[ -n "$triplet" ] || { echo "unicorn: no multiarch triplet for $arch" >&2; exit 1; }
lib=$dest/usr/lib/$triplet/libunicorn.a

if [ -f "$stamp" ] && grep -q "^$want_version" "$stamp" && [ -f "$lib" ]; then
	echo "unicorn: $(cat "$stamp") ($arch) already in $dest"
else
	apt_dir=$PWD/.deps/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
	echo "deb http://deb.debian.org/debian trixie main" > "$apt_dir/etc/sources.list"
	# A mirror or proxy may serve a suite's Release file after its Valid-Until
	# date: accept it; signatures are still checked.
	opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root"
		-o "Acquire::Check-Valid-Until=false"
		-o "APT::Architectures::=$arch")
	echo "unicorn: fetching libunicorn-dev:$arch from Debian trixie"
	apt-get "${opts[@]}" update -q >/dev/null
	version=$(apt-cache "${opts[@]}" show "libunicorn-dev:$arch" | sed -n 's/^Version: //p' | head -1)
	case "$version" in
		"$want_version"*) ;;
		*) echo "unicorn: trixie offers libunicorn-dev $version, not $want_version" >&2; exit 1 ;;
	esac
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get "${opts[@]}" download -q "libunicorn-dev:$arch=$version" >/dev/null)
	# Another upstream version goes, all architectures: they share headers.
	grep -q "^$want_version" "$stamp" 2>/dev/null || rm -rf "$dest"
	mkdir -p "$dest"
	dpkg-deb -x "$tmp"/libunicorn-dev_*.deb "$dest"
	[ -f "$lib" ] || { echo "unicorn: no $lib in the package" >&2; exit 1; }
	echo "$version" > "$stamp"
	echo "unicorn: libunicorn-dev $version ($arch) in $dest"
fi

# The pkg-config file of the static library. ${pcfiledir} keeps it right
# wherever the checkout is.
pc_dir=$dest/pkgconfig/$triplet
upstream=$(sed 's/^[0-9]*://; s/-[^-]*$//' "$stamp")
mkdir -p "$pc_dir"
cat > "$pc_dir/unicorn.pc.tmp" <<EOF
# Written by scripts/fetch-unicorn.sh: Debian trixie's static libunicorn
# $upstream ($arch), linked into the program whole.
prefix=\${pcfiledir}/../../usr
libdir=\${prefix}/lib/$triplet
includedir=\${prefix}/include

Name: unicorn
Description: Unicorn emulator engine (static, from Debian trixie's libunicorn-dev)
Version: $upstream
Libs: \${libdir}/libunicorn.a -lpthread -lm
Cflags: -I\${includedir}
EOF
mv "$pc_dir/unicorn.pc.tmp" "$pc_dir/unicorn.pc"
echo "unicorn: pkg-config file $pc_dir/unicorn.pc"
