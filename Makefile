# Tidings — `make run` builds and starts the server; `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift
CONFIG ?= debug
APT_PACKAGES := libevent-dev libsqlite3-dev libcurl4-openssl-dev zlib1g-dev libbrotli-dev pkg-config
# What the tests start for real: a throwaway PostgreSQL cluster and nginx as the load balancer.
TEST_APT_PACKAGES := postgresql nginx prometheus
BIN_RELEASE := .build/release/tidings
# Every Python package a suite uses, pinned where the suite pins it.
TEST_PIP := selenium==4.38.0 pytest pyyaml "openapi-spec-validator>=0.7" openfeature-sdk==0.10.0 \
  openfeature-provider-ofrep==0.3.0 redbot==2.7.1 httpx-sse==0.4.3 httpx "schemathesis>=4.32,<5" \
  standardwebhooks==1.1.0

.PHONY: run test build release deps bench clean lint contract-test ofrep-test http-test

# Install the system packages the build needs, only when one is missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing) || exit 1; \
	fi

# The packages the tests run (PostgreSQL, nginx), only when one is missing.
.PHONY: test-deps
test-deps:
	@missing=""; for p in $(TEST_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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

# Everything, on one debug build: unit and end-to-end tests (real server, real sockets, real SQLite,
# PostgreSQL and nginx), the fuzz targets for 10 s each, the contract and container lint, the
# dashboard in a real browser, the OpenFeature SDK, REDbot, deploy/ as shipped under 8,000 streams,
# and schemathesis three times. scripts/run-tests.py runs these side by side (each XCTest class is
# a job; the ones that measure time, CPU or memory run alone) and prints each job's time; logs land
# in .build/test-logs/. The static release build the image ships is `make contract-test`.
# The server binary's build is the suite's first job, alone but for the fuzz targets' build, which
# runs in its shadow at SCHED_IDLE (on the core it leaves idle: module emission, serial chains of
# modules, the link) and at normal priority once it ends; then the test binary's build, and the
# jobs that need only the server (lint, the Python suites) fill the cores beside it.
# Without debug information (TEST_BUILD_FLAGS): DWARF is a third of the Swift compile's CPU (90 s
# against 58 s for TidingsAPI alone) and the suite never reads it — assertions and traps name their
# own file and line, and a crash's backtrace still names its functions. `-debug-info-format none`
# drops it for the C targets too (the two BoringSSL copies, swift-crypto's and swift-nio-ssl's, are
# 520 C++ files and about 230 s of the build's CPU). (The index store stays: it would save ~6% of a
# C++ file's compile, but XCTest's discovery on Linux reads it.) Both builds take the same flags, so
# the second reuses the first's objects. `make test TEST_BUILD_FLAGS=` keeps DWARF.
TEST_BUILD_FLAGS ?= -debug-info-format none
export TEST_BUILD_FLAGS
test: deps test-deps test-tools
	scripts/run-tests.py --build-server --build-tests

# The Python packages and browser the suites drive, installed once before the suites start side by side.
.PHONY: test-tools
test-tools:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v node >/dev/null; then \
	  echo "installing: chromium chromium-driver nodejs"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver nodejs) || exit 1; \
	fi
	@if ! python3 -c 'import sys, pytest, yaml, selenium, openapi_spec_validator, httpx, httpx_sse, standardwebhooks; from importlib.metadata import version as v; sys.exit(selenium.__version__ != "4.38.0" or v("openfeature-sdk") != "0.10.0" or v("openfeature-provider-ofrep") != "0.3.0" or v("redbot") != "2.7.1" or v("httpx-sse") != "0.4.3" or not v("schemathesis").startswith("4.") or v("standardwebhooks") != "1.1.0")' 2>/dev/null; then \
	  echo "installing: $(TEST_PIP)"; \
	  python3 -m pip install -q $(TEST_PIP) \
	    || python3 -m pip install -q --break-system-packages $(TEST_PIP) || exit 1; \
	fi

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

# OpenFeature from a real client (Tests/ofrep): the Python OpenFeature SDK with the OFREP provider
# from PyPI against the real server binary, and the served contract read back by PyYAML. TIDINGS_BIN
# (default .build/debug/tidings, rebuilt when not given). Installs the pinned packages when missing.
OFREP_PIP := openfeature-sdk==0.10.0 openfeature-provider-ofrep==0.3.0 pytest pyyaml "openapi-spec-validator>=0.7"
.PHONY: ofrep-test
ofrep-test: deps
	@if ! python3 -c 'import sys, pytest, yaml, openapi_spec_validator; from importlib.metadata import version as v; sys.exit(v("openfeature-sdk") != "0.10.0" or v("openfeature-provider-ofrep") != "0.3.0")' 2>/dev/null; then \
	  echo "installing: $(OFREP_PIP)"; \
	  python3 -m pip install -q $(OFREP_PIP) \
	    || python3 -m pip install -q --break-system-packages $(OFREP_PIP) || exit 1; \
	fi
	@if [ -z "$$TIDINGS_BIN" ]; then $(SWIFT) build --product tidings || exit 1; fi
	python3 -m pytest -v -p no:cacheprovider Tests/ofrep

# deploy/ as shipped (scripts/deploy_local.py): the compose file's two instances with their own
# command and environment on a throwaway PostgreSQL, nginx with the shipped main configuration and
# rendered template; 8,000 streams through nginx with writes meanwhile (Tests/deploy).
.PHONY: deploy-test
deploy-test: deps test-deps
	@python3 -c 'import pytest, yaml' 2>/dev/null || python3 -m pip install -q pytest pyyaml \
	  || python3 -m pip install -q --break-system-packages pytest pyyaml
	@if [ -z "$$TIDINGS_BIN" ]; then $(SWIFT) build --product tidings || exit 1; fi
	python3 -m pytest -v -p no:cacheprovider Tests/deploy
# HTTP as caches, proxies and browsers see it (Tests/http), against the real server binary
# (TIDINGS_BIN, default .build/debug/tidings, rebuilt when not given): REDbot over every GET route
# with no error-level note, and gzip event streams read by httpx-sse and Python's zlib event by
# event. Installs the pinned packages when missing.
HTTP_PIP := redbot==2.7.1 httpx-sse==0.4.3 httpx pytest
.PHONY: http-test
http-test: deps
	@if ! python3 -c 'import sys, pytest, httpx, httpx_sse; from importlib.metadata import version as v; sys.exit(v("redbot") != "2.7.1" or v("httpx-sse") != "0.4.3")' 2>/dev/null; then \
	  echo "installing: $(HTTP_PIP)"; \
	  python3 -m pip install -q $(HTTP_PIP) \
	    || python3 -m pip install -q --break-system-packages $(HTTP_PIP) || exit 1; \
	fi
	@if [ -z "$$TIDINGS_BIN" ]; then $(SWIFT) build --product tidings || exit 1; fi
	python3 -m pytest -v -p no:cacheprovider Tests/http

# Contract and container checks that need no server: the contract's fixed part
# (Sources/TidingsAPI/Contract/openapi.base.yaml) passes yamllint (scripts/yamllint.yaml),
# openapi.yaml is valid OpenAPI 3.1 (that it is what the server generates is held by an end-to-end
# test and scripts/write-openapi.sh --check; regenerate with scripts/write-openapi.sh),
# the Dockerfile passes hadolint and our container rules, the runtime-library check still detects a
# missing package, and deploy/ (the compose file parses, the nginx configuration passes nginx -t);
# the dashboard's HTML, CSS and JavaScript (scripts/lint-dashboard.sh, node --check for the script).
lint: test-deps
	@command -v openapi-spec-validator >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check 'openapi-spec-validator>=0.7'
	@command -v yamllint >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check 'yamllint>=1.35'
	@if ! command -v node >/dev/null; then \
	  echo "installing: nodejs"; \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs) || exit 1; \
	fi
	yamllint -c scripts/yamllint.yaml Sources/TidingsAPI/Contract/openapi.base.yaml
	openapi-spec-validator openapi.yaml
	scripts/check-public-docs.py
	scripts/lint-dashboard.sh
	scripts/lint-dockerfile.sh
	scripts/check-runtime-libs.sh --self-test
	scripts/check-deploy.sh

# The contract against the real server: a static-stdlib release build (as in the container), its
# shared libraries checked against the Dockerfile's runtime stage, then schemathesis against that
# binary on an ephemeral port, three times: the contract it serves for the built-in set and for a
# --preferences file with integer bounds and enums (every default check, no widened value types),
# and the published OFREP 0.3.0 spec (Tests/contract/ofrep). MAX_EXAMPLES=n and SEED=s pass through.
contract-test: deps
	$(SWIFT) build -c release --static-swift-stdlib --product tidings
	scripts/check-runtime-libs.sh $(BIN_RELEASE) Dockerfile
	TIDINGS_BIN=$(BIN_RELEASE) Tests/contract/run_schemathesis.sh
	TIDINGS_BIN=$(BIN_RELEASE) PREFERENCES=Tests/contract/preferences-bounded.json Tests/contract/run_schemathesis.sh
	TIDINGS_BIN=$(BIN_RELEASE) SPEC=Tests/contract/ofrep/openapi.yaml CONFIG=Tests/contract/ofrep/schemathesis.toml \
	  CREDENTIAL=x-api-key Tests/contract/run_schemathesis.sh

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

bench: bench-deps test-deps
	Benchmarks/run.sh
	Benchmarks/instances.sh
	Benchmarks/apply.sh
	Benchmarks/webhooks.sh
	Benchmarks/environments.sh

# libFuzzer over request framing, body decoding/validation and stream query/resume parsing
# (Fuzz/run.sh; `make test` runs each target for 10 s). FUZZ_SECONDS per target.
.PHONY: fuzz
fuzz: deps
	FUZZ_SECONDS=$${FUZZ_SECONDS:-900} Fuzz/run.sh

# Mixed load against the release binary for SOAK_SECONDS (default 180): reads, writes, streams
# opening and closing, slow readers, resumes; checks memory, descriptors and that no answer
# was a 5xx (Tests/soak/soak.py).
.PHONY: soak
soak: release
	python3 Tests/soak/soak.py --binary $(BIN_RELEASE) --seconds $${SOAK_SECONDS:-180}
