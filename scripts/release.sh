#!/bin/bash
# Builds self-contained sframesim release tarballs (make release):
#
#   scripts/release.sh [ARCH...]     Debian/Go architectures, default: amd64
#
# into bin/release: sframesim-VERSION-linux-ARCH.tar.gz, each holding the
# directory sframesim-VERSION-linux-ARCH with the sframesim binary, README.md
# and libunicorn's copyright file, plus SHA256SUMS over the tarballs.
#
# Each binary links Debian trixie's static libunicorn 2.1.1 for its
# architecture (scripts/fetch-unicorn.sh ARCH) and nothing but glibc
# dynamically; the script checks that. Another architecture than this
# machine's needs Debian's cross compiler (gcc-aarch64-linux-gnu for arm64).
# arm64 is not a default: it builds, but is unchecked on arm64 hardware, and
# under qemu-user (7.2) its verify crashes in libunicorn's generated code
# while emu's own tests pass there.
# The build is of the commit checked out (HEAD), in a fresh clone of it:
# uncommitted changes are left out, and the go command can read the VCS
# information even when this checkout is a git worktree (a .git file, which
# it does not recognise). VERSION is what the go command stamps from git, as
# `sframesim version` prints it: the tag on HEAD, else a pseudo-version
# (v0.0.0-DATE-COMMIT). The build is -trimpath.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(amd64)
host_arch=$(dpkg --print-architecture)
out=bin/release

# The multiarch triplet of a Debian architecture (another than this
# machine's needs dpkg-dev).
triplet_of() {
	if command -v dpkg-architecture >/dev/null 2>&1; then
		dpkg-architecture -a "$1" -qDEB_HOST_MULTIARCH 2>/dev/null
	elif [ "$1" = "$host_arch" ]; then
		gcc -print-multiarch
	fi
}
cc_of() {
	if [ "$1" = "$host_arch" ]; then echo gcc; else echo "$(triplet_of "$1")-gcc"; fi
}
# Check every architecture's compiler before building any.
for arch in "${arches[@]}"; do
	triplet=$(triplet_of "$arch")
	[ -n "$triplet" ] || { echo "release: no multiarch triplet for $arch (apt-get install dpkg-dev)" >&2; exit 1; }
	cc=$(cc_of "$arch")
	command -v "$cc" >/dev/null 2>&1 || {
		echo "release: no $cc for linux/$arch: apt-get install gcc-${triplet//_/-} libc6-dev-$arch-cross (or make release RELEASE_ARCHES=$host_arch)" >&2
		exit 1
	}
done

rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mtime=$(git log -1 --format=%ct)
commit=$(git rev-parse HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "release: uncommitted changes are not in the release: it builds commit $commit" >&2
git clone -q --no-checkout . "$tmp/src"
git -C "$tmp/src" -c advice.detachedHead=false checkout -q "$commit"
for arch in "${arches[@]}"; do
	triplet=$(triplet_of "$arch")
	cc=$(cc_of "$arch")
	./scripts/fetch-unicorn.sh "$arch"
	bin=$tmp/$arch/sframesim
	# PKG_CONFIG_LIBDIR alone: this architecture's static libunicorn, never a
	# system one.
	echo "release: go build linux/$arch (CC=$cc) of $commit"
	(cd "$tmp/src" && CGO_ENABLED=1 GOOS=linux GOARCH="$arch" CC="$cc" \
		PKG_CONFIG_LIBDIR="$OLDPWD/.deps/unicorn/pkgconfig/$triplet" PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR= \
		go build -trimpath -buildvcs=true -o "$bin" ./cmd/sframesim)
	version=$(go version -m "$bin" | awk '$1 == "mod" { print $3; exit }')
	case "$version" in
		v*) ;;
		*) echo "release: no version stamped in $bin (got '$version')" >&2; exit 1 ;;
	esac
	# Nothing but glibc may remain dynamic.
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	for lib in $needed; do
		case "$lib" in
			libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | ld-linux*) ;;
			*) echo "release: linux/$arch binary needs $lib: not self-contained" >&2; exit 1 ;;
		esac
	done
	glibc=$(readelf -V -W "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)
	echo "release: linux/$arch $version: dynamic libraries: ${needed}(glibc; needs $glibc)"
	if [ "$arch" = "$host_arch" ]; then
		"$bin" verify >/dev/null 2>&1 || { echo "release: $bin verify failed" >&2; exit 1; }
		echo "release: linux/$arch sframesim verify (embedded sample): OK"
	fi
	name=sframesim-$version-linux-$arch
	mkdir -p "$tmp/$name"
	cp "$bin" "$tmp/src/README.md" "$tmp/$name/"
	cp .deps/unicorn/usr/share/doc/libunicorn-dev/copyright "$tmp/$name/libunicorn.copyright"
	# Reproducible: fixed order, owner and times (the commit's).
	tar -C "$tmp" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -cf - "$name" | gzip -9n > "$out/$name.tar.gz"
done
(cd "$out" && sha256sum -- *.tar.gz > SHA256SUMS)
echo "release: $out:"
(cd "$out" && ls -l && cat SHA256SUMS)
