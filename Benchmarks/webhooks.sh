#!/usr/bin/env bash
# Webhooks off the write path (issue 32, `make bench`): the durable write rate and its p99 with
# 0, 1 and 4 hooks configured (goal: within 10% of none), each hook delivering every change to a
# receiver on loopback that verifies every signature (Tests/webhooks/receiver.py); then the
# delivery lag — a change's commit time (`at`) to its arrival at the receiver — p50/p99 for paced
# writes with one hook.
#
#   BENCH_TIDINGS_BIN=PATH   the server (default .build/release/tidings)
#   BENCH_DURATION=10        seconds per wrk run     BENCH_CONNECTIONS=64  wrk connections
#   BENCH_LAG_WRITES=200     paced writes for the lag (at BENCH_LAG_RATE=20 per second)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN=${BENCH_TIDINGS_BIN:-$ROOT/.build/release/tidings}
DURATION=${BENCH_DURATION:-10}
CONNS=${BENCH_CONNECTIONS:-64}
LAG_WRITES=${BENCH_LAG_WRITES:-200}
LAG_RATE=${BENCH_LAG_RATE:-20}
[ -x "$BIN" ] || { echo "webhooks bench: no server binary at $BIN (swift build -c release)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-webhooks-bench.XXXXXX")
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

SECRET="whsec_$(head -c 32 /dev/urandom | base64)"
: >"$WORK/receiver.log"; python3 Tests/webhooks/receiver.py "$SECRET" >"$WORK/receiver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$WORK/receiver.log" && break; sleep 0.1; done
RECEIVER_PORT=$(sed -n 's/^receiver listening on //p' "$WORK/receiver.log")

hooks_file() {   # hooks_file N → a --webhooks file with N hooks h1..hN
    python3 - "$1" "$RECEIVER_PORT" "$SECRET" <<'PY'
import json, sys
n, port, secret = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print(json.dumps([{"name": f"h{i}", "url": f"http://127.0.0.1:{port}/hook/h{i}", "secret": secret} for i in range(1, n + 1)]))
PY
}

start_server() {   # start_server N → sets PORT
    local n=$1 dir="$WORK/data-$1"
    hooks_file "$n" >"$WORK/hooks-$n.json"
    local args=(--port 0 --data-dir "$dir" --log-level warning)
    [ "$n" -gt 0 ] && args+=(--webhooks "$WORK/hooks-$n.json" --webhook-allow-private)
    : >"$WORK/server-$n.out"; "$BIN" "${args[@]}" >"$WORK/server-$n.out" 2>"$WORK/server-$n.log" &
    SERVER_PID=$!
    PIDS+=($SERVER_PID)
    for _ in $(seq 1 200); do grep -q "listening on" "$WORK/server-$n.out" && break; sleep 0.05; done
    PORT=$(sed -n 's#^tidings listening on http://[^:]*:\([0-9]*\).*#\1#p' "$WORK/server-$n.out")
}

backlog() {   # the sum of every hook's backlog
    curl -sf "http://127.0.0.1:$PORT/webhooks" | python3 -c 'import json,sys; print(sum(h["backlog"] for h in json.load(sys.stdin)["webhooks"]))'
}

echo "== webhooks: durable writes (wrk -c$CONNS -d${DURATION}s PUT /preferences/name) with 0, 1, 4 hooks"
declare -A RATE P99
for n in 0 1 4; do
    start_server "$n"
    wrk -t2 -c"$CONNS" -d2s -s Benchmarks/put.lua "http://127.0.0.1:$PORT/preferences/name" >/dev/null 2>&1 || true
    out=$(wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency -s Benchmarks/put.lua "http://127.0.0.1:$PORT/preferences/name" 2>&1)
    RATE[$n]=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    P99[$n]=$(echo "$out" | awk '$1 == "99%" {print $2}')
    drain=""
    if [ "$n" -gt 0 ]; then
        started=$(date +%s.%N)
        left=$(backlog)
        echo "   $n hook(s): backlog after the run: $left records"
        for _ in $(seq 1 600); do [ "$(backlog)" = "0" ] && break; sleep 0.5; done
        drain=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
        drain=", backlog drained in ${drain} s"
    fi
    echo "   $n hook(s): ${RATE[$n]} writes/s, p99 ${P99[$n]}$drain"
    kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
done
python3 - "${RATE[0]}" "${RATE[1]}" "${RATE[4]}" <<'PY'
import sys
base, one, four = map(float, sys.argv[1:])
print(f"   write rate vs none: 1 hook {one / base * 100:.0f}%, 4 hooks {four / base * 100:.0f}% (goal: at least 90%)")
PY

echo "== webhooks: delivery lag, $LAG_WRITES writes at $LAG_RATE/s, one hook"
start_server 1
curl -sf -X POST "http://127.0.0.1:$RECEIVER_PORT/control/h1" -d '{"script": []}' >/dev/null
before=$(curl -sf "http://127.0.0.1:$RECEIVER_PORT/deliveries" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["attempts"]))')
python3 - "$PORT" "$LAG_WRITES" "$LAG_RATE" <<'PY'
import http.client, json, sys, time
port, count, rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
for i in range(count):
    connection.request("PUT", "/preferences/age", body=json.dumps({"value": i % 100 + 1000 * (i // 100)}),
                       headers={"Content-Type": "application/json"})
    connection.getresponse().read()
    time.sleep(1 / rate)
PY
for _ in $(seq 1 100); do [ "$(backlog)" = "0" ] && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$RECEIVER_PORT/deliveries" | python3 -c '
import datetime, json, sys
skip = int(sys.argv[1])
attempts = [a for a in json.load(sys.stdin)["attempts"][skip:] if a["hook"] == "h1" and a.get("answered") == 200]
lags = sorted(a["start"] - datetime.datetime.fromisoformat(a["payload"]["data"]["at"].replace("Z", "+00:00")).timestamp() for a in attempts)
unverified = sum(1 for a in attempts if not a["verified"])
pick = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] * 1000
print(f"   {len(lags)} deliveries ({unverified} unverified): lag p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {lags[-1] * 1000:.1f} ms")
' "$before"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
