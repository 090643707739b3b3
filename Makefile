# ScanTrack: every entry point does its own setup, so each works on a fresh machine.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
# zxing-cpp is built into the repo by scripts/build-zxing.sh; SwiftPM finds it through this path.
export PKG_CONFIG_PATH := $(CURDIR)/.cache/zxing/install/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

# The commit `--version` and scantrack_build_info name (Package.swift reads it): HEAD, with -dirty for
# uncommitted changes; given anew each run, so a build after a commit names the new one.
export SCANTRACK_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(if $(shell git status --porcelain 2>/dev/null),-dirty)

.PHONY: all deps build-deps build release dist corpus lint test tsan demo bench fuzz format clean deps-update

# Every build checks that a target imports only the modules it declares as dependencies. Release
# builds link the Swift runtime and Foundation statically (what `make dist` packages: the programs
# need only Debian's own libraries, nothing from the toolchain) with full RELRO (-z relro -z now),
# each program by name: a release build of every target would include the test helpers, which have
# no static runtime to link.
SWIFT_BUILD := swift build --explicit-target-dependency-import-check error
RELEASE_BUILD := $(SWIFT_BUILD) -c release --static-swift-stdlib -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
PROGRAMS := scan-agent scan-aggregator scanadmin
TOOLS := scan-synth scan-fake-camera scan-bench scan-bench-ingest

all: build

# Each target installs the Debian packages it needs and no more (scripts/install-deps.sh --list
# TARGET names them): building needs the libraries, the demo and the benchmarks the servers, the
# tests also the reference tools, the RTSP camera, Chromium and Prometheus. `make deps`: all.
deps:
	@scripts/install-deps.sh all
	@scripts/build-zxing.sh >/dev/null

# The Swift packages: Package.swift pins the direct ones exactly and scripts/deps/pins.txt lists
# every one the build resolves (make test fails on any other). This moves them to the newest
# versions their major versions allow, and says what moved; review, test and commit the two files.
deps-update: build-deps
	@scripts/deps/update.sh --apply

build-deps:
	@scripts/install-deps.sh build
	@scripts/build-zxing.sh >/dev/null

build: build-deps
	$(SWIFT_BUILD)

release: build-deps
	for program in $(PROGRAMS) $(TOOLS); do $(RELEASE_BUILD) --product $$program || exit 1; done

# Release tarballs and Debian packages of the three programs in dist/ (scripts/dist/build.sh):
# static Swift runtime, Depends from dpkg-shlibdeps, manual pages, systemd units, a scantrack user.
dist: build-deps
	@scripts/install-deps.sh dist
	for program in $(PROGRAMS); do $(RELEASE_BUILD) --product $$program || exit 1; done
	scripts/dist/build.sh --bin .build/release --out dist

corpus:
	@scripts/install-deps.sh corpus
	@scripts/corpus-gray.sh

# Unit and integration tests; integration tests run against the nats-server and PostgreSQL
# that scripts/with-servers.sh starts in run/test and stops afterwards, pass or fail. Every compiler
# warning is an error here (Package.swift reads the variable), not in a user's `make build`.
test: export SCANTRACK_WARNINGS_AS_ERRORS := 1
test: deps corpus lint
	$(SWIFT_BUILD) --build-tests
	@# Signals and lifetimes are checked on the release build too (what users run, and what make dist
	@# packages); the system tests run the release scan-agent (SCANTRACK_TEST_AGENT), the in-process
	@# tests the debug build.
	for program in $(PROGRAMS); do $(RELEASE_BUILD) --product $$program || exit 1; done
	@# The log is kept in .cache/test/test.log; its 20 slowest tests are printed at the end, pass or
	@# fail, so that the suite's time stays in view (scripts/slowest-tests.py). Each suite's `.timed`
	@# trait writes its tests' own run times to .cache/test/times.tsv (Swift Testing's "passed after"
	@# counts from when a test was scheduled, and it schedules nearly all at once).
	@mkdir -p .cache/test && rm -f .cache/test/times.tsv
	set -o pipefail; status=0; \
	  SCANTRACK_TEST_TIMES=$(CURDIR)/.cache/test/times.tsv SCANTRACK_TEST_AGENT=$(CURDIR)/.build/release/scan-agent \
	  scripts/with-servers.sh test swift test --skip-build 2>&1 \
	    | tee .cache/test/test.log || status=$$?; \
	  python3 scripts/slowest-tests.py .cache/test/test.log .cache/test/times.tsv 20; exit $$status

# The unit tests (no server needed: the pure modules, the runtimes, services, metrics) under
# ThreadSanitizer, built apart in .build-tsan (scripts/tsan.sh); a race fails it. CI runs it after
# make test.
tsan: build-deps
	scripts/tsan.sh

demo: build-deps
	@scripts/install-deps.sh demo
	$(SWIFT_BUILD)
	scripts/with-servers.sh demo scripts/demo.sh

bench: build-deps corpus
	@scripts/install-deps.sh bench
	for program in $(PROGRAMS) $(TOOLS); do $(RELEASE_BUILD) --product $$program || exit 1; done
	@# The report on stdout and in .cache/bench/report.md; its main figures drawn as SVG into
	@# docs/images/ (BENCHMARKS.md shows them; a test holds them equal to BENCHMARKS.md's tables).
	mkdir -p .cache/bench; set -o pipefail; scripts/with-servers.sh bench scripts/bench.sh | tee .cache/bench/report.md
	python3 scripts/bench/plot.py .cache/bench/report.md docs/images

# Every input reader under libFuzzer for FUZZ_SECONDS (60) each, from the committed seed corpus
# (scripts/fuzz/run.sh; FuzzCorpusTests replays that corpus in make test).
fuzz: build-deps
	scripts/fuzz/run.sh

format:
	swift format --in-place --recursive Sources Tests Package.swift

# Formatting and the style rules in .swift-format (120 columns, no force unwraps or try!), and the
# pure modules free of I/O (scripts/check-pure.sh); a violation fails `make test`, as a compiler
# warning does (SCANTRACK_WARNINGS_AS_ERRORS above).
lint:
	swift format lint --strict --recursive Sources Tests Package.swift
	scripts/check-pure.sh
	scripts/check-timed-suites.py

clean:
	@# PostgreSQL's data lives outside the clone (scripts/servers.sh): stop the servers, remove it too.
	@for dir in run/*/; do [ -d "$$dir" ] || continue; name=$$(basename "$$dir"); \
	  scripts/servers.sh stop "$$name" >/dev/null 2>&1; scripts/servers.sh remove-pg "$$name" >/dev/null 2>&1; done; true
	rm -rf .build .build-tsan .cache run dist
