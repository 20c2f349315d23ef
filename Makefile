# beamthrottle: thin wrappers over go commands. `make run` and `make test` are
# all a new user needs; see README.md.

GO       ?= go
PKGS     := ./...
# Pure-Go packages are tested with the race detector; Beam pipeline packages
# run on Prism without it (the race detector slows Prism ~10x).
RACE_PKGS := ./transforms/adaptive/... ./clientcall/... ./testserver/... ./cmd/quotaserver/...
BENCHTIME ?= 1s

.PHONY: all build test test-race bench lint fmt vet staticcheck run clean

all: build

build:
	$(GO) build $(PKGS)

test:
	$(GO) test -race -count=1 $(RACE_PKGS)
	$(GO) test -count=1 $(PKGS)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) tool staticcheck $(PKGS)

run:
	$(GO) run ./cmd/beamthrottle --demo

clean:
	rm -rf out bin
	$(GO) clean -testcache
