#!/usr/bin/env bash
# Instructions per request, repeatable on a busy machine: runs a server under
# `valgrind --tool=callgrind` with instrumentation off, switches it on, sends exactly N keep-alive
# GETs (fixed-get.c), dumps, and prints the total instructions / N and the top functions.
#
#   Benchmarks/callgrind.sh tidings|bare PATH [N]      (N = 2000; PATH e.g. /preferences/name)
#
# FIXED_POST_BODY=FILE (and FIXED_POST_VARY=1) are passed to fixed-get.c: POST that file (a new body each request).
# Env: CALLGRIND_BIN (tidings binary, default .build/release/tidings), CALLGRIND_OUT (directory
# for callgrind.out files, default .build/bench/callgrind), CALLGRIND_TOP (functions listed, 30).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WHO=${1:?tidings or bare}; PATH_=${2:?path}; N=${3:-2000}
BIN=$ROOT/.build/bench
OUT=${CALLGRIND_OUT:-$BIN/callgrind}
TIDINGS_BIN=${CALLGRIND_BIN:-$ROOT/.build/release/tidings}
mkdir -p "$BIN" "$OUT"
gcc -O2 -Wall -Wextra -o "$BIN/fixed-get" Benchmarks/fixed-get.c
# shellcheck disable=SC2046
gcc -O2 -g -Wall -Wextra -o "$BIN/bare-evhttp" Benchmarks/bare-evhttp.c $(pkg-config --cflags --libs libevent)
WORK=$(mktemp -d)
# valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: profile a copy without
# debug information (the symbol table stays, so functions keep their names).
if [ "$WHO" = tidings ]; then
    strip --strip-debug -o "$WORK/tidings" "$TIDINGS_BIN"
    # The binary looks for its resource bundles (the dashboard's) next to itself.
    for bundle in "$(dirname "$TIDINGS_BIN")"/*.resources; do
        [ -e "$bundle" ] && cp -r "$bundle" "$WORK/"
    done
    TIDINGS_BIN=$WORK/tidings
fi
trap 'kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
FILE=$OUT/callgrind.out.$WHO.$(echo "$PATH_" | tr -c 'a-zA-Z0-9\n' '_').$$
case $WHO in
    bare) CMD=("$BIN/bare-evhttp" 0) ;;
    tidings) CMD=("$TIDINGS_BIN" --port 0 --data-dir "$WORK/data" --log-level warning) ;;
    *) echo "tidings or bare" >&2; exit 2 ;;
esac
: >"$WORK/out"; valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$FILE" "${CMD[@]}" >"$WORK/out" 2>"$WORK/err" &
PID=$!
PORT=""
for _ in $(seq 600); do
    PORT=$(sed -nE 's#.*listening on http://[^ ]*:([0-9]+).*#\1#p' "$WORK/out" | head -n1)
    [ -n "$PORT" ] && break
    sleep 0.1
done
[ -n "$PORT" ] || { echo "no listening line"; cat "$WORK/out" "$WORK/err"; exit 1; }
# Warm-up (first-request allocations, caches), then count exactly N requests.
"$BIN/fixed-get" "$PORT" "$PATH_" 200 >/dev/null
sleep 0.5
callgrind_control -i on "$PID" >/dev/null
"$BIN/fixed-get" "$PORT" "$PATH_" "$N"
callgrind_control -i off "$PID" >/dev/null
callgrind_control -d "$PID" >/dev/null
sleep 0.5
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
DUMP=$FILE.1   # the dump taken above (the file without a suffix is the empty rest)
TOTAL=$(callgrind_annotate "$DUMP" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
echo "$WHO $PATH_: $TOTAL instructions for $N requests = $((TOTAL / N)) per request ($DUMP)"
callgrind_annotate --inclusive=no "$DUMP" 2>/dev/null | sed -n "/file:function/,\$p" | head -n "$((${CALLGRIND_TOP:-30} + 2))" || true
