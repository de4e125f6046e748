#!/bin/bash
# Fetches libunicorn-dev 2.1.1 (static libunicorn.a + headers) from Debian
# trixie into .deps/unicorn, without touching the system's apt sources or
# packages: apt runs with private lists and cache under .deps/apt and only
# downloads the .deb, which dpkg-deb unpacks in place.
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
if [ -f "$stamp" ] && grep -q "^$want_version" "$stamp" && [ -f "$dest/usr/lib/x86_64-linux-gnu/libunicorn.a" ]; then
	echo "unicorn: $(cat "$stamp") already in $dest"
	exit 0
fi
apt_dir=$PWD/.deps/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
echo "deb http://deb.debian.org/debian trixie main" > "$apt_dir/etc/sources.list"
# A mirror or proxy may serve a suite's Release file after its Valid-Until
# date: accept it; signatures are still checked.
opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root"
	-o "Acquire::Check-Valid-Until=false")
echo "unicorn: fetching libunicorn-dev from Debian trixie"
apt-get "${opts[@]}" update -q >/dev/null
version=$(apt-cache "${opts[@]}" show libunicorn-dev | sed -n 's/^Version: //p' | head -1)
case "$version" in
	"$want_version"*) ;;
	*) echo "unicorn: trixie offers libunicorn-dev $version, not $want_version" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${opts[@]}" download -q "libunicorn-dev=$version" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$tmp"/libunicorn-dev_*.deb "$dest"
[ -f "$dest/usr/lib/x86_64-linux-gnu/libunicorn.a" ] || { echo "unicorn: no libunicorn.a in the package" >&2; exit 1; }
echo "$version" > "$stamp"
echo "unicorn: libunicorn-dev $version in $dest"
