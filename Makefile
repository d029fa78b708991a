# Tidings — `make run` builds and starts the server; `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift
CONFIG ?= debug
APT_PACKAGES := libevent-dev libsqlite3-dev pkg-config
BIN_RELEASE := .build/release/tidings

.PHONY: run test build release deps bench clean

# Install the system packages the build needs, only when one is missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing) || exit 1; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	$(BIN_RELEASE)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build

# Benchmarks: builds the C tools and the release server (swift build -c release),
# then measures Tidings side by side with a bare C evhttp server. See Benchmarks/README.md.
BENCH_APT_PACKAGES := wrk gcc curl
.PHONY: bench-deps
bench-deps: deps
	@missing=""; for p in $(BENCH_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing) || exit 1; \
	fi

bench: bench-deps
	Benchmarks/run.sh
