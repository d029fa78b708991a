#!/usr/bin/env bash
# Idle event streams: what each costs the server while nothing changes (issue 33), Tidings with
# its default heartbeat (15 s) beside bare C evhttp (no heartbeat, the floor) in the same run, and
# Centrifugo's published figures (10.9 KB + about 4 KB of kernel memory, 2.2 µs of CPU per second
# per idle connection, tuned; not run here).
#
#   Benchmarks/idle-streams.sh [TIDINGS_BIN]      (default .build/release/tidings)
#   BENCH_IDLE_STREAMS=15000  BENCH_IDLE_SECONDS=300
#
# Each server holds BENCH_IDLE_STREAMS streams of `GET /preferences/name/events` from
# `idle-streams` (Benchmarks/idle-streams.c, its own process and descriptors) for
# BENCH_IDLE_SECONDS after they are all open. Goals: CPU ≤ 1 µs per stream per second; RSS +
# kernel socket memory ≤ 0.3 × (10.9 KB + 4 KB) = 4.47 KB per stream. What is counted, and how
# the kernel's share is split between the two ends on this machine: Benchmarks/idle-streams.c.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TIDINGS_BIN=${1:-${BENCH_TIDINGS_BIN:-$ROOT/.build/release/tidings}}
STREAMS=${BENCH_IDLE_STREAMS:-15000}
SECONDS_HELD=${BENCH_IDLE_SECONDS:-300}
BIN="$ROOT/.build/bench"
mkdir -p "$BIN"
CFLAGS="-O2 $(pkg-config --cflags libevent 2>/dev/null || true)"
LIBS="$(pkg-config --libs libevent 2>/dev/null || echo -levent)"
gcc $CFLAGS -o "$BIN/idle-streams" "$ROOT/Benchmarks/idle-streams.c"
gcc $CFLAGS -o "$BIN/bare-evhttp" "$ROOT/Benchmarks/bare-evhttp.c" $LIBS -lz 2>/dev/null \
    || gcc $CFLAGS -o "$BIN/bare-evhttp" "$ROOT/Benchmarks/bare-evhttp.c" $LIBS

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-idle.XXXXXX")
PID=""
cleanup() { if [ -n "$PID" ]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT

start() {  # start LOG CMD...: runs a server, sets PID and PORT from its "listening on" line
    local log=$1; shift
    : >"$log"; "$@" > "$log" 2>&1 &
    PID=$!
    for _ in $(seq 1 100); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done
    PORT=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log" | head -n1)
    [ -n "$PORT" ] || { echo "server did not start:"; cat "$log"; exit 1; }
}
stop() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }
measure() {  # measure LABEL: idle-streams against the running server; sets RESULT
    echo "--- $1: $STREAMS idle streams for $SECONDS_HELD s"
    local out
    out=$("$BIN/idle-streams" -p "$PORT" -P "$PID" -n "$STREAMS" -d "$SECONDS_HELD" 2>&1) || true
    echo "$out"
    RESULT=$(echo "$out" | grep '^RESULT' || true)
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

start "$WORK/bare.log" "$BIN/bare-evhttp" 0
measure "bare C evhttp (no heartbeat)"
BARE=$RESULT
stop
start "$WORK/tidings.log" "$TIDINGS_BIN" --host 127.0.0.1 --port 0 --data-dir "$WORK/data" --log-level warning \
    --max-connections-per-client $((STREAMS + 1000))
measure "tidings (heartbeat every 15 s)"
TIDINGS=$RESULT
stop

kernel() {  # kernel bytes per stream: slabs measured + objects counted by size + socket buffers
    awk -v s="$(field "$1" slab_bytes_per_stream)" -v m="$(field "$1" slab_model_bytes_per_stream)" -v b="$(field "$1" sockbuf_bytes_per_stream)" \
        'BEGIN { printf "%.0f", (s > 0 ? s : 0) + (m > 0 ? m : 0) + (b > 0 ? b : 0) }'; }
kib() { awk -v r="$(field "$1" rss_kib_per_stream)" -v k="$(kernel "$1")" 'BEGIN { printf "%.2f", (r * 1024 + k) / 1000 }'; }
printf '\n%-30s %12s %14s %14s %12s\n' "idle stream, per stream" "CPU µs/s" "RSS KiB (end)" "kernel B" "total KB"
for row in "tidings|$TIDINGS" "bare C evhttp|$BARE"; do
    label=${row%%|*}; r=${row#*|}
    printf '%-30s %12s %14s %14s %12s\n' "$label" "$(field "$r" cpu_us_per_stream_s)" "$(field "$r" rss_kib_per_stream)" \
        "$(kernel "$r")" "$(kib "$r")"
done
printf '%-30s %12s %14s %14s %12s\n' "Centrifugo (published, tuned)" "2.2" "10.6" "~4000" "14.9"
echo "kernel B = slabs measured (TCP, sock_inode, epoll item; half of both ends) + file, dentry and epoll"
echo "wait entry at their object size + socket buffers (sockstat, half of both ends)."
echo "tidings' idle server (no stream): $(field "$TIDINGS" idle_cpu_ms_per_s) ms of CPU per second; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
t_cpu=$(field "$TIDINGS" cpu_us_per_stream_s); t_kb=$(kib "$TIDINGS")
echo "tidings ÷ Centrifugo: CPU $(awk -v a="$t_cpu" 'BEGIN { printf "%.2f", a / 2.2 }')×, memory $(awk -v a="$t_kb" 'BEGIN { printf "%.2f", a / 14.9 }')×"
echo "goals: CPU ≤ 1 µs/s: $(awk -v a="$t_cpu" 'BEGIN { print (a <= 1) ? "met" : "missed" }');" \
     "memory ≤ 4.47 KB: $(awk -v a="$t_kb" 'BEGIN { print (a <= 4.47) ? "met" : "missed" }')"
