# beamthrottle: thin wrappers over go commands. `make run` and `make test` are
# all a new user needs; see README.md.

GO       ?= go
PKGS     := ./...
# Pure-Go packages and the transform's own package are tested with the race
# detector: the transform's DoFn runs calls that outlive a firing, a worker's
# call board and its permit pool on goroutines of their own. The other Beam
# pipeline packages run on Prism without it (the race detector slows Prism,
# and builds Beam a second time), and the transform's package is not tested
# a second time without it.
RACE_PKGS := ./transforms/adaptive/... ./transforms/throttle ./transforms/throttle/quota/... ./internal/firing/... ./clientcall/... ./testserver/... ./cmd/quotaserver/...
NORACE_PKGS = $$($(GO) list $(PKGS) | grep -v '/transforms/throttle$$')
BENCHTIME ?= 1s

.PHONY: all build test test-deps bench gobench sim simsweep matrix livebench quotabench load soak fuzz lint fmt vet staticcheck vuln run template-binary clean

all: build

build:
	$(GO) build $(PKGS)

# What the tests need beyond Go, installed from Debian's packages when missing.
test-deps:
	./scripts/install-test-deps

# The test suite, after the linters (gofmt, vet, staticcheck), so that CI
# keeps them green: RACE_PKGS with the race detector, then every other
# package built as the Flex Template's static binary is (CGO_ENABLED=0,
# -trimpath, through the environment), so that the tests that build binaries
# reuse the packages already compiled for the tests.
test: test-deps lint
	$(GO) test -race -count=1 $(RACE_PKGS)
	CGO_ENABLED=0 GOFLAGS="$$($(GO) env GOFLAGS) -trimpath" $(GO) test -count=1 $(NORACE_PKGS)

# Every benchmark: Go benchmarks, the simulator and its seed sweep, and the real-time runs.
bench: gobench sim simsweep matrix livebench quotabench

gobench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)

# Real-time runs of both throttle modes against the quota server:
# docs/live/results.md. LIVE_SCENARIOS=gcra-600 (comma-separated names) runs only those
# and rewrites the page with the other rows kept; LIVE_DURATION is how long the
# streaming runs' source emits.
LIVE_DURATION ?= 30s
LIVE_SCENARIOS ?=
livebench:
	$(GO) run ./cmd/livebench -duration $(LIVE_DURATION) -scenarios '$(LIVE_SCENARIOS)' -out docs/live

# The shared quota for real: three beamthrottle
# processes share one quota in Redis or Envoy's rate-limit service, beside the
# adaptive throttle alone, with a competitor, and with the quota's service
# killed or slow, against a token bucket; then against a strict limiter (a
# GCRA with no burst) with Redis slots, local slots, Envoy and none; and a
# high-priority and a low-priority process sharing a Redis quota with and
# without --quota_high_share; and eight processes with no shared quota
# against a window that advertises what is left of it, in each header
# family: docs/quota/results.md and its plots.
# QUOTA_SCENARIOS=strict, advertised or priority (or a comma-separated list
# of names) runs only those and keeps the other rows.
QUOTA_SCENARIOS ?=
quotabench:
	$(GO) run ./cmd/quotabench -out docs/quota -scenarios '$(QUOTA_SCENARIOS)'

# 1,000,000 elements through the pipeline, streamed at LOAD_RATE per second; LOAD_RATE=0 is the bounded
# run as fast as it goes (memory grows with the input). The report is appended to docs/load/results.md.
LOAD_RATE ?= 2500
load:
	$(GO) run ./cmd/loadtest -mode load -elements 1000000 -load_rate $(LOAD_RATE)

# A 10-minute streaming soak at twice the quota (make test runs a 1-minute one).
SOAK_DURATION ?= 10m
soak:
	$(GO) run ./cmd/loadtest -mode soak -duration $(SOAK_DURATION)

# The deterministic throttling simulator: tables on stdout, docs/sim/results.md and plots.
sim:
	$(GO) run ./cmd/simulate -out docs/sim

# The crossed grid in the simulator, every capability at once (latency ×
# limiter × headers × workers): docs/sim/crossed.md. TestCrossedGrid pins it.
matrix:
	$(GO) run ./cmd/simulate -crossed -out docs/sim

# The simulator's suite over SIM_SEEDS seeds: median and worst case per metric, docs/sim/sweep.md.
SIM_SEEDS ?= 20
simsweep:
	$(GO) run ./cmd/simulate -sweep $(SIM_SEEDS) -out docs/sim

# Longer fuzzing runs (make test runs only the seed corpora).
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./transforms/adaptive:FuzzProbability \
	./transforms/throttle:FuzzRecordUnmarshal ./transforms/throttle:FuzzRecordMarshal \
	./clientcall:FuzzParseRetryAfter ./clientcall:FuzzHTTPAnswer \
	./pipeline:FuzzMessageToElement ./pipeline:FuzzDeadLetterAttributes \
	./pipeline:FuzzFormatRecord ./pipeline:FuzzFormatResult
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg)"; \
		$(GO) test -run='^$$' -fuzz="^$$fn$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) tool staticcheck $(PKGS)

# Known-vulnerability scan; needs network access to the vulnerability database.
vuln:
	$(GO) tool govulncheck ./...

# The demo. The build is a step of its own so that a first run, which downloads
# the modules and compiles Beam, says what it is doing.
LOCAL_BIN := bin/local/beamthrottle
run:
	@echo "building $(LOCAL_BIN) (the first time: a few minutes, for module downloads and compilation)..."
	$(GO) build -o $(LOCAL_BIN) ./cmd/beamthrottle
	./$(LOCAL_BIN) --demo

# The static linux/amd64 binary of the Dataflow Flex Template (templates/Dockerfile builds the same).
template-binary:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -o bin/beamthrottle ./cmd/beamthrottle

clean:
	rm -rf out bin
	$(GO) clean -testcache
