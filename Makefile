# sframesim — see README.md.
#
#   make build    bin/sframesim
#   make env      the environment for running go by hand: eval "$(make env)"
#   make release  bin/release: self-contained tarballs and SHA256SUMS
#   make test     vet, staticcheck and every test (the README's test command)
#   make bench    benchmarks, 5 runs each, for medians
#   make fuzz     each fuzz target for FUZZTIME (default 5m)
#   make corpus-verify    verify every committed corpus binary against testdata/expect.json,
#                         and the real-world corpus against testdata/realworld/expect.json
#   make corpus-merge     merge the reports of corpus-verify shards (CORPUS_SHARDS=DIR)
#   make corpus-equivalence  corpus-verify, then both corpora again with --exact: the reports must be identical
#   make corpus-baseline  rewrite both expectations files from what the corpora show now
#   make bench-corpus     1 vs 2 corpus workers
#   make bench-threads    verify throughput: the same work in 1 thread vs 4
#   make bench-long       a long lua run verified, run plainly and under qemu-user: speed ratios, RSS
#   make race     every test under the race detector, package by package
#   make corpus   rebuild the cross-toolchain test corpus (root; see testdata/README.md)

GO          ?= go
# Go from PATH, else from where setup.sh also finds it (/usr/local/go/bin,
# where Go's own tarball goes): make test works in a shell whose PATH
# lacks it.
ifeq ($(shell command -v go 2>/dev/null),)
export PATH := /usr/local/go/bin:$(PATH)
endif
# Debian's Go defaults to GOTOOLCHAIN=local; let it fetch the toolchain go.mod
# names through the module proxy.
export GOTOOLCHAIN ?= auto
STATICCHECK_VERSION ?= v0.8.2
BIN         := bin/sframesim
FUZZTIME    ?= 5m
BENCHCOUNT  ?= 5


.PHONY: deps env release
.PHONY: all build test vet staticcheck unit bench bench-libsframe fuzz corpus testdata clean corpus-verify corpus-equivalence corpus-merge corpus-baseline bench-corpus bench-threads bench-long race pgo

all: build

build: deps
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/sframesim

# libunicorn (emu's `#cgo pkg-config: unicorn`): a system one >= 2.1 if
# pkg-config finds one, else the static one scripts/fetch-unicorn.sh put into
# .deps/unicorn for this machine's multiarch triplet (the README's default;
# Debian 12's own is 2.0.1, too old). `eval "$$(make env)"` sets up a shell
# for running go by hand.
UNICORN_MIN    := 2.1
TRIPLET        := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
UNICORN_PC_DIR := $(CURDIR)/.deps/unicorn/pkgconfig/$(TRIPLET)
SYSTEM_UNICORN := $(shell pkg-config --atleast-version=$(UNICORN_MIN) unicorn 2>/dev/null && pkg-config --modversion unicorn)
ifeq ($(SYSTEM_UNICORN),)
export PKG_CONFIG_PATH := $(UNICORN_PC_DIR)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
endif

deps:
ifeq ($(SYSTEM_UNICORN),)
	@test -f $(UNICORN_PC_DIR)/unicorn.pc || { echo "no libunicorn >= $(UNICORN_MIN): run ./setup.sh (or scripts/fetch-unicorn.sh)" >&2; exit 1; }
endif

# For running go by hand: eval "$$(make env)".
env:
ifeq ($(SYSTEM_UNICORN),)
	@test -f $(UNICORN_PC_DIR)/unicorn.pc || { echo "no libunicorn >= $(UNICORN_MIN): run ./setup.sh (or scripts/fetch-unicorn.sh)" >&2; exit 1; }
	@echo "export PKG_CONFIG_PATH='$(PKG_CONFIG_PATH)'"
else
	@echo "# libunicorn $(SYSTEM_UNICORN) from pkg-config: nothing to set"
endif
	@echo "export GOTOOLCHAIN=$(GOTOOLCHAIN)"

# Self-contained sframesim for linux/amd64 in bin/release: tarball and
# SHA256SUMS (scripts/release.sh). RELEASE_ARCHES="amd64 arm64" adds an
# unchecked linux/arm64 build (needs gcc-aarch64-linux-gnu).
RELEASE_ARCHES ?= amd64
release:
	scripts/release.sh $(RELEASE_ARCHES)

test: vet staticcheck unit

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	"$$(command -v staticcheck || echo $$($(GO) env GOPATH)/bin/staticcheck)" ./...

unit: deps testdata
	$(GO) test -count=1 -timeout 30m ./...

bench: testdata
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) ./...

# Each FuzzLoad input starts an emulator (milliseconds): minimizing every new
# interesting input (mutated programs of tens of KiB) for the default 60 s
# would leave almost no time to fuzz.
fuzz: testdata
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./sframe
	$(GO) test -run '^$$' -fuzz '^FuzzELF$$' -fuzztime $(FUZZTIME) ./sframe
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./linux

# Unpack the committed corpus binaries (tests also do this on first use).
testdata:
	$(MAKE) -C testdata extract

corpus:
	$(MAKE) -C testdata corpus

# Verify the whole committed corpus and the real-world corpus
# (testdata/realworld) in parallel (what .ci/run does after the
# tests): fails on a new problem, on a known one that went away, and on a
# wrong exit status or output. Reports: bin/corpus.json, bin/corpus.xml,
# bin/realworld.json, bin/realworld.xml
# (JUnit). CORPUS_FLAGS adds flags, e.g. --shard 1/2 or -j 1.
# Dynamic binaries: bookworm's use the host's libraries (emu's defaults),
# trixie's and sid's the sysroots scripts/fetch-sysroots.sh fetches (clang23's:
# sid's, the glibc lld linked them against).
CORPUS_FLAGS ?=
CORPUS_SYSROOTS := $(foreach s,trixie sid,--sysroot-for $(s)/x86-64=.deps/sysroots/$(s)-amd64 --sysroot-for $(s)/aarch64=.deps/sysroots/$(s)-arm64) \
	--sysroot-for clang23/x86-64=.deps/sysroots/sid-amd64
# Both corpora run, whatever the first one's outcome; the target fails if
# either does.
corpus-verify: build testdata
	@status=0; \
	$(BIN) corpus --expect testdata/expect.json --json bin/corpus.json --junit bin/corpus.xml $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/corpus/manifest.json || status=$$?; \
	$(BIN) corpus --expect testdata/realworld/expect.json --json bin/realworld.json --junit bin/realworld.xml $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/realworld/manifest.json || status=$$?; \
	exit $$status

# Merge the reports of corpus-verify run in shards (--shard i/n in
# CORPUS_FLAGS, or SFRAMESIM_SHARD_INDEX and SFRAMESIM_SHARD_COUNT in the
# environment: see docs/ci): CORPUS_SHARDS is a directory with one directory
# per shard holding its corpus.json and realworld.json. Writes bin/corpus.json,
# bin/corpus.xml, bin/realworld.json and bin/realworld.xml as an unsharded
# corpus-verify does; fails as it would, or if a shard is missing.
CORPUS_SHARDS ?= shards
corpus-merge: build
	@status=0; \
	$(BIN) corpus merge --expect testdata/expect.json --json bin/corpus.json --junit bin/corpus.xml $(CORPUS_SHARDS)/*/corpus.json || status=$$?; \
	$(BIN) corpus merge --expect testdata/realworld/expect.json --json bin/realworld.json --junit bin/realworld.xml $(CORPUS_SHARDS)/*/realworld.json || status=$$?; \
	exit $$status

# 1 vs 2 corpus workers: throughput and their ratio (quote medians).
bench-corpus: testdata
	$(GO) test -run '^$$' -bench 'Workers|Speedup' -count $(BENCHCOUNT) ./corpus

# verify's throughput on the same work done by 1 thread and split over 4
# (linux/testdata/src/threadwork.c), side by side, and their ratio (quote
# medians; issue 13 wants the ratio at 0.8 or more).
bench-threads: testdata
	$(GO) test -run '^$$' -bench 'VerifyThreads' -count $(BENCHCOUNT) ./verify

# cmd/sframesim/default.pgo, the CPU profile Go builds sframesim with
# (profile-guided optimization, 4-5% less CPU for verify): verify of the
# real-world lua (fib(27) and a sort) and SQLite (a 60 000-row CTE), both
# architectures, merged. Regenerate it after large changes to verify's Go
# code; a stale profile only optimizes less.
PGO_LUA = local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end \
	local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 10007 end table.sort(t) print(fib(27), t[1], t[\#t])
pgo: build testdata
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	sed 's/300000/60000/' linux/testdata/bench/cte.sql > "$$d/cte.sql"; \
	for a in x86-64 aarch64; do \
		SFRAMESIM_CPUPROFILE="$$d/lua-$$a.pprof" bin/sframesim verify testdata/realworld/v3/$$a/lua-static -- -e '$(PGO_LUA)' > /dev/null; \
		SFRAMESIM_CPUPROFILE="$$d/sqlite-$$a.pprof" bin/sframesim verify testdata/realworld/v3/$$a/sqlite3-static < "$$d/cte.sql" > /dev/null; \
	done; \
	$(GO) tool pprof -proto "$$d"/*.pprof > cmd/sframesim/default.pgo; \
	echo "pgo: cmd/sframesim/default.pgo ($$(wc -c < cmd/sframesim/default.pgo) bytes); rebuild (make build) to use it"

# verify vs run vs qemu-user on one long program per architecture (the
# real-world lua computing fib(LONGFIB)): verified instructions per CPU
# second, the CPU-time ratios and each one's peak RSS (needs qemu-user;
# LONGFIB=31 for ~10^9 instructions).
LONGFIB ?= 25
bench-long: testdata
	$(GO) test -run '^$$' -bench 'Long' -benchtime 1x -count $(BENCHCOUNT) -timeout 3h ./verify -long.fib $(LONGFIB)

# Every test under the race detector, one package at a time, with -short
# (only cmd/sframesim has it). Slow: on the loaded 2-core machine linux
# took 8 min, sframe 7, tui 3, the rest 3; verify well over an hour (its
# fault-injection tests), so not part of .ci/run.
race: deps testdata
	@set -e; for p in $$($(GO) list ./...); do $(GO) test -race -short -count=1 -timeout 4h $$p; done

# The batched fast path against --exact (every instruction handed to the
# checker before it runs) on both whole corpora: every binary's report
# must be the same but for timings. Several times slower than corpus-verify.
corpus-equivalence: corpus-verify
	@status=0; \
	$(BIN) corpus --exact --progress none --expect testdata/expect.json --json bin/corpus-exact.json $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/corpus/manifest.json || status=$$?; \
	$(BIN) corpus --exact --progress none --expect testdata/realworld/expect.json --json bin/realworld-exact.json $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/realworld/manifest.json || status=$$?; \
	scripts/compare-corpus-reports.py bin/corpus.json bin/corpus-exact.json || status=1; \
	scripts/compare-corpus-reports.py bin/realworld.json bin/realworld-exact.json || status=1; \
	exit $$status

# Record what the corpus shows now as the expected outcomes (reasons of
# entries that still hold are kept; new entries need one by hand).
corpus-baseline: build testdata
	$(BIN) corpus --expect testdata/expect.json --update $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/corpus/manifest.json
	$(BIN) corpus --expect testdata/realworld/expect.json --update $(CORPUS_SYSROOTS) $(CORPUS_FLAGS) testdata/realworld/manifest.json

clean:
	rm -rf bin
	$(MAKE) -C testdata clean

# GNU libsframe's sframe_find_fre on BenchmarkLookup/V3's section and PCs
# (needs the sid chroot: testdata/build-toolchains.sh).
SID ?= /tmp/chroots/sid
bench-libsframe: testdata
	mkdir -p $(SID)/tmp/sframesim-lsb
	$(GO) run bench/libsframe/gen.go testdata/corpus/v3/x86-64/many-O2-static $(SID)/tmp/sframesim-lsb
	cp bench/libsframe/lookup.c $(SID)/tmp/sframesim-lsb/
	chroot $(SID) sh -c 'dpkg -s libiberty-dev >/dev/null 2>&1 || apt-get install -y -q libiberty-dev >/dev/null; \
		cd /tmp/sframesim-lsb && gcc -O2 -I/usr/include/libiberty lookup.c -o lookup -l:libsframe.a && ./lookup section.bin pcs.bin'
