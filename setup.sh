#!/bin/bash
# Sets up sframesim on a fresh Debian 12 (bookworm) machine, as root, and runs
# it on the sample binary embedded in it: dump, validate, and the main job,
# verify. Idempotent: a second run only rebuilds.
#
# Installs from Debian's archive: build tools (gcc, make, git, pkg-config),
# tar, xz-utils, tmux; Go (golang-go) from bookworm-backports when no Go >= 1.21
# is on PATH; unless pkg-config finds a libunicorn >= 2.1 on the system,
# libunicorn-dev 2.1.1 from trixie, unpacked into .deps/ (scripts/fetch-unicorn.sh:
# downloaded only, no system package is replaced); trixie's and sid's libc6,
# libgcc-s1 and libstdc++6 for amd64 and arm64 into .deps/sysroots
# (scripts/fetch-sysroots.sh, the same way); sid's libsframe-dev (headers and
# static library, for the differential test against libsframe) into
# .deps/libsframe (scripts/fetch-libsframe.sh, the same way).
# go.mod names the exact toolchain, which the go command fetches through the Go
# module proxy (the Makefile sets GOTOOLCHAIN=auto, as Debian's Go defaults to
# local). Nothing else is downloaded.
#
# --deps-only: install what is missing and build, but do not run the sample
# (what .ci/run uses before the tests).
set -euo pipefail
cd "$(dirname "$0")"
deps_only=""
[ "${1:-}" = "--deps-only" ] && deps_only=1

[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root (it installs Debian packages)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
export PATH="/usr/local/go/bin:$PATH:/root/go/bin"

# The arm64 cross libraries are the default AArch64 sysroot
# (/usr/aarch64-linux-gnu) of dynamically linked programs.
PKGS="ca-certificates git make gcc libc6-dev pkg-config tar xz-utils tmux libc6-arm64-cross libgcc-s1-arm64-cross libstdc++6-arm64-cross"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends $missing >/dev/null
fi

# Go: any go >= 1.21 can fetch the toolchain go.mod asks for.
go_ok() {
	command -v go >/dev/null 2>&1 || return 1
	local v
	# Asked outside the module: go.mod's newer go line would make an old go
	# refuse to answer.
	v=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
	[ -n "$v" ] && [ "$v" -ge 21 ]
}
if ! go_ok; then
	echo "setup: installing Go from bookworm-backports"
	. /etc/os-release
	echo "deb http://deb.debian.org/debian ${VERSION_CODENAME}-backports main" > /etc/apt/sources.list.d/sframesim-backports.list
	apt-get update -q >/dev/null
	# golang-go puts /usr/bin/go on PATH for later shells (make test).
	apt-get install -y -q --no-install-recommends -t "${VERSION_CODENAME}-backports" golang-go >/dev/null
	go_ok || { echo "setup: no usable Go after installing golang-go from backports" >&2; exit 1; }
fi
# Debian's Go defaults to GOTOOLCHAIN=local; auto fetches the toolchain go.mod
# names through the Go module proxy.
export GOTOOLCHAIN=auto
echo "setup: $(go version)"

# libunicorn >= 2.1: the system's if pkg-config finds one (the Makefile then
# uses it), else 2.1.1 (static) from Debian trixie, into .deps/unicorn
# (Debian 12's own libunicorn is 2.0.1: too old).
if pkg-config --atleast-version=2.1 unicorn 2>/dev/null; then
	echo "setup: libunicorn $(pkg-config --modversion unicorn) from pkg-config"
else
	./scripts/fetch-unicorn.sh
fi
# trixie's and sid's libc6/libgcc-s1/libstdc++6 (amd64, arm64), into
# .deps/sysroots: the sysroots of the corpus's newer dynamic programs.
./scripts/fetch-sysroots.sh
# sid's libsframe-dev into .deps/libsframe: make test builds its harness.
./scripts/fetch-libsframe.sh
make build
make testdata
[ -n "$deps_only" ] && exit 0
echo
echo "setup: bin/sframesim is ready. Running it on its embedded sample binary:"
echo "\$ bin/sframesim dump"
bin/sframesim dump
echo "\$ bin/sframesim validate"
bin/sframesim validate
echo "\$ bin/sframesim verify"
bin/sframesim verify
echo
echo "setup: next, step through the sample in a terminal UI (bin/sframesim step), verify"
echo "your own binary (bin/sframesim verify BINARY), or the whole test corpus (make corpus-verify)."
echo "make test runs every test; to run go by hand (go test ./emu), first: eval \"\$(make env)\""
