#!/usr/bin/env bash
# POST /apply of a document naming 1,000 keys (API.md "Changes as code"): how long one apply
# takes and how many revisions it takes, on SQLite, with a --preferences file of 1,000 integers.
# Each round sets every key to a new value (1,000 changes), then applies the same document again
# (no change, no revision). BENCH_TIDINGS_BIN (default .build/release/tidings), APPLY_ROUNDS=5.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BENCH_TIDINGS_BIN:-.build/release/tidings}
ROUNDS=${APPLY_ROUNDS:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-apply.XXXXXX")
PID=""
cleanup() { if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
json.dump({f"key{i:04d}": {"type": "integer", "default": 0} for i in range(1000)}, open(f"{work}/prefs.json", "w"))
for r in range(1, 3):
    json.dump({"preferences": {f"key{i:04d}": r for i in range(1000)}}, open(f"{work}/doc{r}.json", "w"))
PY
: >"$WORK/log"; "$BIN" --port 0 --data-dir "$WORK/data" --feed-refresh 0 --preferences "$WORK/prefs.json" --log-level warning >"$WORK/log" 2>&1 &
PID=$!
URL=""
for _ in $(seq 1 600); do
  URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/log" | head -n1)
  [ -n "$URL" ] && break; sleep 0.1
done
[ -n "$URL" ] || { cat "$WORK/log"; exit 1; }
revision() { curl -s -o /dev/null -w '%header{tidings-revision}' "$URL/healthz"; }
apply() { curl -s -o /dev/null -w '%{http_code} %{time_total}' -X POST "$URL/apply" -H 'Content-Type: application/json' --data-binary @"$WORK/doc$1.json"; }
for round in $(seq 1 "$ROUNDS"); do
  doc=$(( (round % 2) + 1 ))
  before=$(revision); read -r status seconds <<< "$(apply $doc)"; after=$(revision)
  read -r status2 seconds2 <<< "$(apply $doc)"; again=$(revision)
  printf 'apply 1000 keys: %s in %4.0f ms, %d revisions; same again: %s in %4.0f ms, %d revisions\n' \
    "$status" "$(echo "$seconds * 1000" | bc)" $((after - before)) "$status2" "$(echo "$seconds2 * 1000" | bc)" $((again - after))
done
