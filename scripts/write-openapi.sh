#!/usr/bin/env bash
# The repository's openapi.yaml is the contract the server generates for the built-in preference set
# (Sources/TidingsAPI/Contract). This script starts the server binary on an ephemeral port, fetches
# GET /openapi.yaml and writes it to openapi.yaml; with --check it exits 1 when they differ instead.
#   scripts/write-openapi.sh [--check]      TIDINGS_BIN (default .build/debug/tidings, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TIDINGS_BIN:-.build/debug/tidings}
if [ ! -x "$BIN" ]; then swift build --product tidings >&2; fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-openapi.XXXXXX")
PID=""
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
: >"$WORK/log"   # before the server: the first look below must find a file (pipefail)
"$BIN" --host 127.0.0.1 --port 0 --data-dir "$WORK/data" >"$WORK/log" 2>&1 &
PID=$!
BASE=""
for _ in $(seq 1 300); do
  BASE=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/log" | head -n1)
  [ -n "$BASE" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$WORK/log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$BASE" ] || { echo "write-openapi: the server did not start" >&2; cat "$WORK/log" >&2; exit 1; }
curl -sf "${BASE%/}/openapi.yaml" -o "$WORK/openapi.yaml"
kill -TERM "$PID"; wait "$PID" || true; PID=""

if [ "${1:-}" = "--check" ]; then
  if ! cmp -s "$WORK/openapi.yaml" openapi.yaml; then
    echo "write-openapi: openapi.yaml differs from what the server serves; run scripts/write-openapi.sh" >&2
    diff -u openapi.yaml "$WORK/openapi.yaml" | head -n 40 >&2 || true
    exit 1
  fi
else
  cp "$WORK/openapi.yaml" openapi.yaml
  echo "openapi.yaml written from $BIN" >&2
fi
