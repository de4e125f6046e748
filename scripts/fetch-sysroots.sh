#!/bin/bash
# Fetches the shared libraries that dynamically linked corpus programs built
# by newer toolchains need at run time — Debian's libc6, libgcc-s1 and
# libstdc++6 of trixie and sid, for amd64 and arm64 — into
# .deps/sysroots/<suite>-<arch>, without touching the system's apt sources or
# packages: apt runs with private lists and cache under .deps/apt-sysroots and
# only downloads the .debs, which dpkg-deb unpacks in place (as
# scripts/fetch-unicorn.sh does for libunicorn).
#
# Each sysroot gets the merged-/usr symlinks (lib -> usr/lib, lib64 ->
# usr/lib64) that Debian's base-files would provide, so the program
# interpreter named by PT_INTERP (/lib64/ld-linux-x86-64.so.2,
# /lib/ld-linux-aarch64.so.1) and ld.so's default search directories
# resolve inside it. sframesim opens these files read-only (--sysroot).
#
# bookworm-built programs use the host's own libraries (/ for x86-64) and
# Debian 12's cross libraries in /usr/aarch64-linux-gnu (libc6-arm64-cross,
# libstdc++6-arm64-cross, installed by setup.sh).
#
# Usage: scripts/fetch-sysroots.sh [SUITE-ARCH...]   (default: all four)
# Idempotent: a sysroot whose stamp lists the same package versions is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trixie-amd64 trixie-arm64 sid-amd64 sid-arm64)
pkgs=(libc6 libgcc-s1 libstdc++6)

for t in "${targets[@]}"; do
	suite=${t%-*}
	arch=${t#*-}
	case "$suite/$arch" in
		trixie/amd64 | trixie/arm64 | sid/amd64 | sid/arm64) ;;
		*) echo "sysroots: unknown target $t (want trixie|sid - amd64|arm64)" >&2; exit 1 ;;
	esac
	dest=.deps/sysroots/$t
	apt_dir=$PWD/.deps/apt-sysroots/$t
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
	echo "deb [arch=$arch] http://deb.debian.org/debian $suite main" > "$apt_dir/etc/sources.list"
	# A mirror or proxy may serve a suite's Release file after its Valid-Until
	# date (sid's expires within days): accept it; signatures are still checked.
	opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root" -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
		-o "Acquire::Check-Valid-Until=false")
	# The package lists are fetched again only when a sysroot is missing:
	# a complete one is kept even when the suite has moved on.
	if [ -f "$dest/.versions" ] && [ -e "$dest/lib/" ] && [ -s "$dest/.versions" ]; then
		echo "sysroots: $t already in $dest ($(tr '\n' ' ' < "$dest/.versions"))"
		continue
	fi
	echo "sysroots: fetching ${pkgs[*]} for $t"
	apt-get "${opts[@]}" update -q >/dev/null
	tmp=$(mktemp -d)
	versions=""
	for p in "${pkgs[@]}"; do
		v=$(apt-cache "${opts[@]}" show "$p:$arch" | sed -n 's/^Version: //p' | head -1)
		[ -n "$v" ] || { echo "sysroots: $suite has no $p for $arch" >&2; rm -rf "$tmp"; exit 1; }
		(cd "$tmp" && apt-get "${opts[@]}" download -q "$p:$arch=$v" >/dev/null)
		versions="$versions$p $v"$'\n'
	done
	rm -rf "$dest"
	mkdir -p "$dest"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$dest"
	done
	rm -rf "$tmp"
	# Merged /usr: what base-files and usrmerge would add.
	for d in lib lib64; do
		if [ -d "$dest/usr/$d" ] && [ ! -e "$dest/$d" ]; then
			ln -s "usr/$d" "$dest/$d"
		fi
	done
	case $arch in
		amd64) interp=lib64/ld-linux-x86-64.so.2 ;;
		arm64) interp=lib/ld-linux-aarch64.so.1 ;;
	esac
	[ -e "$dest/$interp" ] || { echo "sysroots: $t: no /$interp after unpacking" >&2; exit 1; }
	printf '%s' "$versions" > "$dest/.versions"
	echo "sysroots: $t in $dest ($(tr '\n' ' ' < "$dest/.versions"))"
done
