#!/usr/bin/env bash
# Several instances (README, "Several instances"): acknowledged writes/s with 64 clients through
# one instance on SQLite and on PostgreSQL, and propagation — 1,000 streams on instance B,
# changes written through instance A on one PostgreSQL — p99 from the write's send to the event
# on B, with B's CPU per delivered event. Called by `make bench` after run.sh.
#
# Environment (optional): BENCH_DURATION=10 (s per wrk run), BENCH_CONNECTIONS=64,
# BENCH_PROPAGATION_STREAMS=1000, BENCH_CHANGES=50, BENCH_INTERVAL_MS=100,
# BENCH_TIDINGS_BIN (default .build/release/tidings, built by run.sh). All load comes from
# 127.0.0.1, so the per-client connection cap is raised above the stream count.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DURATION=${BENCH_DURATION:-10}
CONNS=${BENCH_CONNECTIONS:-64}
STREAMS=${BENCH_PROPAGATION_STREAMS:-1000}
CHANGES=${BENCH_CHANGES:-50}
INTERVAL=${BENCH_INTERVAL_MS:-100}
TIDINGS=${BENCH_TIDINGS_BIN:-$ROOT/.build/release/tidings}
PGBIN=/usr/lib/postgresql/15/bin
BIN="$ROOT/.build/bench"
mkdir -p "$BIN"
gcc -O2 -Wall -Wextra -pthread -o "$BIN/sse-fanout" Benchmarks/sse-fanout.c
[ -x "$TIDINGS" ] || swift build -c release --static-swift-stdlib --product tidings
[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 is not installed (apt-get install postgresql)"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-instances.XXXXXX")
PIDS=()
RUNAS=()
if [ "$(id -u)" = 0 ]; then RUNAS=(runuser -u postgres --); fi
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -d "$WORK/pg/data" ] && "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start NAME ARGS... : starts tidings, sets PORT and PID once it is ready.
start() {
    local name=$1; shift
    : >"$WORK/$name.out"; "$TIDINGS" --port 0 --log-level warning --max-connections-per-client 30000 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PID=$!
    PIDS+=("$PID")
    PORT=""
    for _ in $(seq 1 300); do
        PORT=$(sed -nE 's#.*listening on http://[^ ]*:([0-9]+).*#\1#p' "$WORK/$name.out" | head -n1)
        [ -n "$PORT" ] && break
        kill -0 "$PID" 2>/dev/null || { echo "$name exited:"; cat "$WORK/$name.err"; exit 1; }
        sleep 0.1
    done
    [ -n "$PORT" ] || { echo "$name did not start"; exit 1; }
    for _ in $(seq 1 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && return 0
        sleep 0.1
    done
}

# writes LABEL PORT : 64 clients of durable PUTs for DURATION seconds
writes() {
    local out line
    wrk -t2 -c"$CONNS" -d2s -s Benchmarks/put.lua "http://127.0.0.1:$2/preferences/name" >/dev/null 2>&1 || true
    out=$(wrk -t2 -c"$CONNS" -d"${DURATION}s" -s Benchmarks/put.lua "http://127.0.0.1:$2/preferences/name" 2>&1)
    line=$(echo "$out" | grep '^PUTRESULT' || true)
    printf '  %-34s %8.0f acknowledged writes/s (p50 %s ms, p99 %s ms, %s not 2xx)\n' "$1" \
        "$(kv "$line" acked_per_s)" "$(kv "$line" p50_ms)" "$(kv "$line" p99_ms)" "$(kv "$line" non2xx)"
}

echo "==== several instances ($(nproc) cores; load average $(cut -d' ' -f1 /proc/loadavg) at start) ===="
start sqlite --data-dir "$WORK/sqlite"
writes "SQLite, one instance, $CONNS clients:" "$PORT"

chmod 755 "$WORK"   # the postgres user must reach its directory inside
mkdir -p "$WORK/pg"
[ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
PGPORT=$(free_port)
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -A trust -U postgres >/dev/null
"${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w \
    -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=50" start >/dev/null
"${RUNAS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U postgres tidings
URL="postgres://postgres@127.0.0.1:$PGPORT/tidings"
start a --database-url "$URL"; A_PORT=$PORT
start b --database-url "$URL"; B_PORT=$PORT; B_PID=$PID
writes "PostgreSQL, through A, $CONNS clients:" "$A_PORT"

out=$("$BIN/sse-fanout" -p "$B_PORT" -w "$A_PORT" -P "$B_PID" -n "$STREAMS" -m "$CHANGES" -i "$INTERVAL" 2>&1) || true
line=$(echo "$out" | grep '^RESULT' | tail -n1)
echo "$out" | grep -v '^RESULT' | sed 's/^/  /' | tail -n 12
printf '  propagation A → B, %s streams on B: p50 %s ms, p99 %s ms, max %s ms (goal p99 <= 50 ms); complete=%s\n' \
    "$STREAMS" "$(kv "$line" p50_ms)" "$(kv "$line" p99_ms)" "$(kv "$line" max_ms)" "$(kv "$line" complete)"
