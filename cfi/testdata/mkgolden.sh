#!/bin/sh
# Writes the golden `readelf --debug-dump=frames-interp` output of the
# corpus binaries cfi's TestReadelf compares with (run from the
# repository root after `make testdata`). Made with GNU readelf 2.40
# (Debian 12); its frames-interp table is the same in 2.44 and 2.47.
# The static binaries' tables (glibc's CFI: remember/restore_state,
# expressions, signal frames) are gzipped.
set -eu
out=cfi/testdata
for f in v1/x86-64/realign-O2-dynamic v2/x86-64/asm-O0-dynamic v3/x86-64/except-O2-dynamic \
	v3/x86-64/asm-O2-dynamic v1/aarch64/recurse-O2-dynamic v2/aarch64/nolibc-O2-pac-standard \
	v3/aarch64/nolibc-O2-pac-bkey v3/aarch64/asm-O2-dynamic v1/aarch64/except-O2-dynamic; do
	readelf --debug-dump=frames-interp "testdata/corpus/$f" > "$out/$(echo "$f" | tr / _).wF"
done
for f in v1/x86-64/recurse-O2-static v3/aarch64/recurse-O2-static-pac-bkey; do
	readelf --debug-dump=frames-interp "testdata/corpus/$f" | gzip -9n > "$out/$(echo "$f" | tr / _).wF.gz"
done
