#!/usr/bin/env bash
# History benchmark (Benchmarks/README.md "History"): on the release binary,
#  1. durable PUTs with history recorded, 64 connections (wrk + put.lua): acknowledged writes/s, p99;
#     etcd's /v3/kv/put (Debian etcd-server) the same way in the same run, when etcd is installed;
#  2. an as-of read of the whole configuration 100,000 changes back (GET /preferences?asOf=R and
#     /things?asOf=R), one connection: p50/p99;
#  3. bytes per change record on disk (SQLite's dbstat: the change table and its indexes).
#   TIDINGS_BIN (default .build/release/tidings)  DURATION (default 10)  BACK (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TIDINGS_BIN:-.build/release/tidings}
DURATION=${DURATION:-10}
BACK=${BACK:-100000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-history-bench.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

: >"$WORK/server.log"; "$BIN" --port 0 --data-dir "$WORK/data" --feed-refresh 0 >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$WORK/server.log" && break; sleep 0.1; done
URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/server.log" | head -n1)
echo "tidings at $URL"

wrk -t2 -c64 -d2s -s Benchmarks/put.lua "$URL/preferences/name" >/dev/null 2>&1 || true
echo "== durable PUT with history, 64 connections, ${DURATION}s"
wrk -t2 -c64 -d"${DURATION}s" -s Benchmarks/put.lua "$URL/preferences/name" | grep PUTRESULT

if command -v etcd >/dev/null; then
    etcd --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 \
         --listen-peer-urls http://127.0.0.1:23800 >"$WORK/etcd.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do curl -sf http://127.0.0.1:23790/health >/dev/null && break; sleep 0.1; done
    wrk -t2 -c64 -d2s -s Benchmarks/etcd-put.lua http://127.0.0.1:23790/v3/kv/put >/dev/null 2>&1 || true
    echo "== etcd /v3/kv/put, 64 connections, ${DURATION}s"
    wrk -t2 -c64 -d"${DURATION}s" -s Benchmarks/etcd-put.lua http://127.0.0.1:23790/v3/kv/put | grep PUTRESULT
    echo "== durable PUT with history again (alternated)"
    wrk -t2 -c64 -d"${DURATION}s" -s Benchmarks/put.lua "$URL/preferences/name" | grep PUTRESULT
fi

# Enough history that R - BACK exists, with things changes in it too.
current=$(curl -s -o /dev/null -w '%header{tidings-revision}' "$URL/healthz")
while [ "$current" -lt $((BACK + 2000)) ]; do
    wrk -t2 -c64 -d5s -s Benchmarks/put.lua "$URL/preferences/name" >/dev/null
    current=$(curl -s -o /dev/null -w '%header{tidings-revision}' "$URL/healthz")
done
for t in a b c; do curl -s -X POST "$URL/things" -d "{\"thing\":\"$t\"}" >/dev/null; done
current=$(curl -s -o /dev/null -w '%header{tidings-revision}' "$URL/healthz")
target=$((current - BACK))
echo "== as-of reads ${BACK} changes back (revision $target of $current), 1 connection, ${DURATION}s"
for path in "/preferences?asOf=$target" "/things?asOf=$target" "/preferences/name?asOf=$target"; do
    out=$(wrk -t1 -c1 -d"${DURATION}s" --latency "$URL$path")
    echo "$path: $(echo "$out" | awk '/Requests\/sec/ {print $2 " req/s"}') p50 $(echo "$out" | awk '$1=="50%" {print $2}') p99 $(echo "$out" | awk '$1=="99%" {print $2}')"
done

echo "== bytes per change record on disk"
kill -TERM "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null || true
sqlite3 "$WORK/data/tidings.sqlite" "
  SELECT 'records', COUNT(*) FROM change;
  SELECT 'change table+indexes bytes', SUM(pgsize) FROM dbstat WHERE name IN ('change','change_at','change_subject');
  SELECT 'checkpoint bytes', SUM(pgsize) FROM dbstat WHERE name = 'checkpoint';
  SELECT 'bytes per record (table+indexes)', ROUND(1.0 * (SELECT SUM(pgsize) FROM dbstat WHERE name IN ('change','change_at','change_subject')) / (SELECT COUNT(*) FROM change), 1);
  SELECT 'counted bytes per record (--history-bytes)', ROUND(1.0 * (SELECT historyBytes FROM meta) / (SELECT COUNT(*) FROM change), 1);" | tr '|' ' '
