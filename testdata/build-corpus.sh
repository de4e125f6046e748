#!/bin/bash
# Rebuilds the SFrame test corpus: corpus/manifest.json, the corpus/**/*.objdump
# goldens and corpus.tar.xz (see README.md).  Needs root and Debian's archive
# (for build-toolchains.sh on a fresh Debian 12); 2-3 min on 2 cores once the
# toolchains exist (about 2 min more to make them from scratch).
#
# Environment: CHROOTS (default /tmp/chroots), JOBS (default: number of CPUs),
# KEEP_STAGE=1 keeps the build trees under /tmp/sframesim-corpus (host and
# chroots), SKIP_TOOLCHAINS=1 skips the toolchain check.
set -euo pipefail
cd "$(dirname "$0")"
[ "$(id -u)" = 0 ] || { echo "build-corpus.sh: must run as root (chroot)" >&2; exit 1; }
export CHROOTS=${CHROOTS:-/tmp/chroots}

if [ -z "${SKIP_TOOLCHAINS:-}" ]; then
    # idempotent: only installs / debootstraps what is missing
    ./build-toolchains.sh
fi
for p in python3 xz-utils tar; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || {
        apt-get update -q >/dev/null; apt-get install -y -q "$p" >/dev/null; }
done

t0=$(date +%s)
/usr/bin/python3 ./corpus.py build
/usr/bin/python3 ./corpus.py verify
echo "corpus built in $(( $(date +%s) - t0 )) s"
