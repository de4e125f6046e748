#!/bin/bash
# (Copy of the project's shared tools/build-toolchains.sh, kept here so that
#  'make corpus' in testdata/ works on a fresh Debian 12 as root; this copy
#  also installs clang-23 and lld-23 in sid.)
# Sets up the three cross toolchains used to build the SFrame test corpus:
#   bookworm (the host)       gcc 12.2 / binutils 2.40   -> emits SFrame V1
#   trixie   (chroot)         gcc 14.2 / binutils 2.44   -> emits SFrame V2
#   sid      (chroot)         gcc 16.2 / binutils 2.47.50 snapshot -> emits SFrame V3
#                             clang 23 / lld 23 (x86-64 only)     -> emits SFrame V2
# each for x86-64 (native gcc) and AArch64 (aarch64-linux-gnu-gcc), Linux/glibc.
#
# Idempotent: a chroot whose marker file lists the same packages is left alone;
# a half-made chroot (interrupted debootstrap) is removed and made again.
# Needs root and Debian's archive (deb.debian.org); nothing else.
# From scratch: ~2 min and ~2 GB for both chroots (see corpus-notes.md).
#
# Environment:
#   CHROOTS  where the chroots go          (default /tmp/chroots)
#   SUITES   which chroots to make         (default "trixie sid")
#   MIRROR   Debian mirror                 (default http://deb.debian.org/debian)
#   KEEP_DEBS=1  keep downloaded .debs in the chroots' apt cache
set -euo pipefail

CHROOTS=${CHROOTS:-/tmp/chroots}
SUITES=${SUITES:-trixie sid}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PKGS="gcc g++ binutils libc6-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross"
# Extras: binutils-doc has the SFrame spec of that binutils (sframe-spec.info);
# sid also has libsframe-dev (sframe.h / sframe-api.h / libsframe.a for V3)
# and clang 23 with lld 23 (the corpus's clang23 toolchain: SFrame V2 from
# clang's integrated assembler, x86-64 only).
extra_pkgs() { case $1 in sid|unstable|forky|testing) echo "binutils-doc libsframe-dev clang-23 lld-23" ;; *) echo "binutils-doc" ;; esac; }
HOST_PKGS="debootstrap qemu-user gcc g++ binutils gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross binutils-doc binutils-dev"

[ "$(id -u)" = 0 ] || { echo "must run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
t0=$(date +%s)

# --- host (bookworm) -------------------------------------------------------
missing=""
for p in $HOST_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "host: installing$missing"
    apt-get update -q >/dev/null
    apt-get install -y -q $missing >/dev/null
fi
echo "host: $(gcc --version | head -1) / $(as --version | head -1)"

# --- chroots ---------------------------------------------------------------
cleanup() {
    for suite in $SUITES; do
        if mountpoint -q "$CHROOTS/$suite/proc" 2>/dev/null; then umount "$CHROOTS/$suite/proc" || true; fi
    done
}
trap cleanup EXIT

for suite in $SUITES; do
    root=$CHROOTS/$suite
    marker=$root/.sframesim-toolchain
    EXTRA_PKGS=$(extra_pkgs "$suite")
    want="packages: $PKGS $EXTRA_PKGS"
    if [ -f "$marker" ] && grep -qxF "$want" "$marker"; then
        echo "$suite: already set up ($root)"
        continue
    fi
    ts=$(date +%s)
    if [ ! -x "$root/usr/bin/apt-get" ] || [ -e "$root/debootstrap" ]; then
        # absent, or an interrupted debootstrap (it leaves $root/debootstrap behind)
        rm -rf "$root"
        mkdir -p "$CHROOTS"
        echo "$suite: debootstrap --variant=minbase $suite $root $MIRROR"
        debootstrap --variant=minbase "$suite" "$root" "$MIRROR" > "$CHROOTS/debootstrap-$suite.log" 2>&1 \
            || { echo "$suite: debootstrap failed, see $CHROOTS/debootstrap-$suite.log" >&2; exit 1; }
        echo "$suite: base system in $(( $(date +%s) - ts )) s"
    fi
    # Debian's archive as served here can carry an expired Release file (sid's
    # was 'invalid since 15d'): apt in the chroot must not check Valid-Until.
    cat > "$root/etc/apt/apt.conf.d/99sframesim" <<'EOF'
Acquire::Check-Valid-Until "false";
APT::Install-Recommends "false";
Dpkg::Use-Pty "0";
EOF
    echo "deb $MIRROR $suite main" > "$root/etc/apt/sources.list"
    mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"   # for maintainer scripts
    ti=$(date +%s)
    chroot "$root" apt-get update -q > "$CHROOTS/apt-$suite.log" 2>&1
    chroot "$root" apt-get install -y -q $PKGS $EXTRA_PKGS >> "$CHROOTS/apt-$suite.log" 2>&1 \
        || { echo "$suite: apt-get install failed, see $CHROOTS/apt-$suite.log" >&2; exit 1; }
    [ -n "${KEEP_DEBS:-}" ] || chroot "$root" apt-get clean
    umount "$root/proc"
    echo "$suite: packages in $(( $(date +%s) - ti )) s"
    {
        echo "$want"
        chroot "$root" sh -c 'gcc --version | head -1; as --version | head -1;
            aarch64-linux-gnu-gcc --version | head -1; aarch64-linux-gnu-as --version | head -1'
    } > "$marker"
    echo "$suite: ready in $(( $(date +%s) - ts )) s, $(du -sh "$root" | cut -f1)"
done

for suite in $SUITES; do
    echo "== $suite: $(chroot "$CHROOTS/$suite" sh -c 'gcc --version | head -1; echo " / "; as --version | head -1; echo " / "; aarch64-linux-gnu-gcc --version | head -1' | tr -d '\n')"
done
echo "total $(( $(date +%s) - t0 )) s"
