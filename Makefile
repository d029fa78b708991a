# Tidings — `make run` builds and starts the server; `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift
CONFIG ?= debug
APT_PACKAGES := libevent-dev libsqlite3-dev libcurl4-openssl-dev pkg-config
BIN_RELEASE := .build/release/tidings

.PHONY: run test build release deps bench clean lint contract-test

# Install the system packages the build needs, only when one is missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing) || exit 1; \
	fi

build: deps
	$(SWIFT) build

# Static Swift runtime, as in the container image (and shared with contract-test's build).
release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product tidings

run: release
	$(BIN_RELEASE)

# Everything: unit and end-to-end tests (real server, real sockets, real SQLite), the contract
# and container lint, the dashboard in a real browser, and schemathesis against the release binary.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	FUZZ_SECONDS=60 Fuzz/run.sh
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory browser-test TIDINGS_BIN=$(CURDIR)/.build/debug/tidings
	$(MAKE) --no-print-directory contract-test

clean:
	rm -rf .build

# Browser test of the dashboard (Tests/browser): headless Debian chromium driven by selenium
# against the real server binary (TIDINGS_BIN, default .build/debug/tidings). Installs what is
# missing first. Screenshots land in .build/artifacts/.
.PHONY: browser-test
browser-test: deps
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  echo "installing: chromium chromium-driver"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver) || exit 1; \
	fi
	@if ! python3 -c 'import sys, pytest, selenium; sys.exit(selenium.__version__ != "4.38.0")' 2>/dev/null; then \
	  echo "installing: selenium==4.38.0 pytest"; \
	  python3 -m pip install -q selenium==4.38.0 pytest \
	    || python3 -m pip install -q --break-system-packages selenium==4.38.0 pytest || exit 1; \
	fi
	@# Without TIDINGS_BIN, (re)build the debug server so the page under test is the current one.
	@if [ -z "$$TIDINGS_BIN" ]; then $(SWIFT) build --product tidings || exit 1; fi
	python3 -m pytest -v -p no:cacheprovider Tests/browser

# Contract and container checks that need no server: openapi.yaml is valid OpenAPI 3.1, the
# embedded copy in Sources/TidingsAPI/Contract is current, the Dockerfile passes hadolint and our
# container rules, and the runtime-library check still detects a missing package.
lint:
	@command -v openapi-spec-validator >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check 'openapi-spec-validator>=0.7'
	openapi-spec-validator openapi.yaml
	scripts/embed-openapi.sh --check
	scripts/lint-dockerfile.sh
	scripts/check-runtime-libs.sh --self-test

# The contract against the real server: a static-stdlib release build (as in the container), its
# shared libraries checked against the Dockerfile's runtime stage, then schemathesis (every default
# check) against that binary on an ephemeral port. MAX_EXAMPLES=n and SEED=s pass through.
contract-test: deps
	$(SWIFT) build -c release --static-swift-stdlib --product tidings
	scripts/check-runtime-libs.sh $(BIN_RELEASE) Dockerfile
	TIDINGS_BIN=$(BIN_RELEASE) Tests/contract/run_schemathesis.sh

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

# libFuzzer over request framing, body decoding/validation and stream query/resume parsing
# (Fuzz/run.sh; `make test` runs each target for a minute). FUZZ_SECONDS per target.
.PHONY: fuzz
fuzz: deps
	FUZZ_SECONDS=$${FUZZ_SECONDS:-900} Fuzz/run.sh

# Mixed load against the release binary for SOAK_SECONDS (default 180): reads, writes, streams
# opening and closing, slow readers, resumes; checks memory, descriptors and that no answer
# was a 5xx (Tests/soak/soak.py).
.PHONY: soak
soak: release
	python3 Tests/soak/soak.py --binary $(BIN_RELEASE) --seconds $${SOAK_SECONDS:-180}
