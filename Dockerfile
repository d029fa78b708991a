# syntax=docker/dockerfile:1
# Tidings container image: build with the official Swift 6 image on Debian 12 (bookworm), run on
# debian:bookworm-slim with only the runtime libraries the binary links (checked against `ldd` by
# scripts/check-runtime-libs.sh; linted by scripts/lint-dockerfile.sh).
#
#   docker build -t tidings .
#   docker run --ulimit nofile=20000:20000 -p 8080:8080 -v tidings-data:/data tidings
#
# Every event stream is a descriptor: --ulimit nofile sets how many the server may hold (it keeps
# 90% of them for streams, --max-streams, and the rest for requests). Docker's usual default
# (1,048,576 on most engines, 1,024 on some) is what it gets without the flag.

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- build ------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build
# Headers and pkg-config files for the C libraries the package links (CLibevent, CZlib, CBrotli,
# GRDB's SQLite).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libevent-dev libsqlite3-dev libcurl4-openssl-dev zlib1g-dev libbrotli-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Package.swift pins every dependency to an exact version, so no Package.resolved is needed.
# Tests and Benchmarks are copied because the manifest declares targets in them.
COPY Package.swift ./
COPY Sources ./Sources
COPY Benchmarks ./Benchmarks
COPY Tests ./Tests
# The Swift runtime and Foundation are linked statically; what stays dynamic is libc, libevent,
# SQLite and Foundation's system dependencies (listed in the runtime stage). The dashboard's files
# are SwiftPM resources in a bundle directory that the binary reads at start-up from beside itself.
# The image ships the binary stripped (about a third smaller); its debug info stays in this stage
# as /out/tidings.debug (`docker build --target build`), linked by a GNU debuglink for gdb.
RUN swift build -c release --static-swift-stdlib --product tidings \
 && bin="$(swift build -c release --show-bin-path)" \
 && install -D -m 0755 "$bin/tidings" /out/tidings \
 && objcopy --only-keep-debug /out/tidings /out/tidings.debug \
 && strip --strip-debug --strip-unneeded /out/tidings \
 && objcopy --add-gnu-debuglink=/out/tidings.debug /out/tidings \
 && cp -R "$bin/Tidings_TidingsAPI.resources" /out/

# ---- runtime ----------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime
# RUNTIME-PACKAGES-BEGIN (scripts/check-runtime-libs.sh reads this list)
#   libevent-2.1-7, libevent-pthreads-2.1-7  evhttp server and its pthreads glue
#   libsqlite3-0                             the embedded store (GRDB)
#   zlib1g                                   gzip answers and event streams (already in the base image)
#   libbrotli1                               br answers
#   libcurl4                                 the upstream feed's client (CCurl); no libxml2:
#                                            nothing linked needs it (it would pull ICU, ~38 MB)
#   libstdc++6                               the C++ runtime the static Swift runtime loads (libxml2
#                                            used to bring it in through ICU)
#   tzdata, ca-certificates                  time zones and TLS roots for https feeds
#   curl                                     the HEALTHCHECK probe
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libevent-2.1-7 libevent-pthreads-2.1-7 libsqlite3-0 zlib1g libbrotli1 libcurl4 libstdc++6 tzdata ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
# RUNTIME-PACKAGES-END

# A fixed, unprivileged user that owns the data volume and a home of its own: Foundation keeps
# its caches under HOME, which must not be the data volume (they would be backed up and shared
# with it).
RUN groupadd --system --gid 10001 tidings \
 && useradd --system --uid 10001 --gid tidings --home-dir /home/tidings --create-home --shell /usr/sbin/nologin tidings \
 && mkdir -p /data \
 && chown tidings:tidings /data

COPY --from=build /out/tidings /usr/local/bin/tidings
# Next to the binary, where it looks for the bundle (a missing one stops it at start-up).
COPY --from=build /out/Tidings_TidingsAPI.resources /usr/local/bin/Tidings_TidingsAPI.resources

ENV TIDINGS_HOST=0.0.0.0 \
    TIDINGS_PORT=8080 \
    TIDINGS_DATA_DIR=/data \
    HOME=/home/tidings \
    XDG_CACHE_HOME=/home/tidings/.cache
VOLUME ["/data"]
EXPOSE 8080
USER 10001:10001

HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["curl", "--fail", "--silent", "--show-error", "--max-time", "2", "-o", "/dev/null", "http://127.0.0.1:8080/healthz"]

# Exec form: the server is PID 1's only process, so SIGTERM from `docker stop` reaches it directly
# and it drains (readyz 503, streams ended, writes durable) and exits 0.
ENTRYPOINT ["/usr/local/bin/tidings"]
