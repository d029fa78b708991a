#!/usr/bin/env bash
# Durable PUTs, 64 connections, alternated in one run: the binary before the history
# (BEFORE_BIN), the one with it (TIDINGS_BIN), and etcd's /v3/kv/put; ROUNDS rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${BEFORE_BIN:?set BEFORE_BIN to a tidings binary built before the history}
AFTER=${TIDINGS_BIN:-.build/release/tidings}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-history-compare.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
start() {  # start NAME BIN → URL in $URL
    : >"$WORK/$1.log"; "$2" --port 0 --data-dir "$WORK/$1" --feed-refresh 0 >"$WORK/$1.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 100); do grep -q "listening on" "$WORK/$1.log" && break; sleep 0.1; done
    URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/$1.log" | head -n1)
}
start before "$BEFORE"; BEFORE_URL=$URL
start after "$AFTER"; AFTER_URL=$URL
etcd --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:23790 --advertise-client-urls http://127.0.0.1:23790 \
     --listen-peer-urls http://127.0.0.1:23800 >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:23790/health >/dev/null && break; sleep 0.1; done
put() { wrk -t2 -c64 -d2s -s "$2" "$3" >/dev/null 2>&1 || true; echo "$1: $(wrk -t2 -c64 -d"${DURATION}s" -s "$2" "$3" | grep PUTRESULT)"; }
for round in $(seq 1 "$ROUNDS"); do
    echo "== round $round"
    put "before (no history)" Benchmarks/put.lua "$BEFORE_URL/preferences/name"
    put "with history       " Benchmarks/put.lua "$AFTER_URL/preferences/name"
    put "etcd /v3/kv/put    " Benchmarks/etcd-put.lua http://127.0.0.1:23790/v3/kv/put
done
