#!/bin/sh
# Builds the jump-table test binaries from switch.c with the host's
# Debian 12 toolchains (gcc 12.2, binutils 2.40: SFrame V1). Linked
# without libc, never run: only analysed.
set -eu
cd "$(dirname "$0")"
flags="-O2 -nostdlib -static -Wa,--gsframe -Wl,-e,0 -Wl,--build-id=none"
gcc $flags -fpie switch.c -o switch-x86-64-pic
gcc $flags -fno-pie -no-pie switch.c -o switch-x86-64-nopic
aarch64-linux-gnu-gcc $flags switch.c -o switch-aarch64
