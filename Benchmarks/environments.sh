#!/usr/bin/env bash
# What an environment costs (API.md "Environments", issue 31), on SQLite:
#  - memory: the server's RSS with `default` only, then with ENV_COUNT more (each a copy of
#    default with every key set and 100 things), per environment;
#  - writes: PUT rate and latency on `default` against the same on `staging` (wrk, put.lua);
#  - reads: GET /preferences unprefixed against /environments/staging/preferences.
# BENCH_TIDINGS_BIN (default .build/release/tidings), ENV_COUNT=63, BENCH_DURATION=5,
# BENCH_CONNECTIONS=16. Prints numbers; it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BENCH_TIDINGS_BIN:-.build/release/tidings}
COUNT=${ENV_COUNT:-63}
DURATION=${BENCH_DURATION:-5}
CONNS=${BENCH_CONNECTIONS:-16}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-envbench.XXXXXX")
PID=""
cleanup() { if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT
: >"$WORK/log"
: >"$WORK/log"; "$BIN" --port 0 --data-dir "$WORK/data" --feed-refresh 0 --log-level warning --max-environments 64 >"$WORK/log" 2>&1 &
PID=$!
URL=""
for _ in $(seq 1 600); do
  URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/log" | head -n1)
  [ -n "$URL" ] && break; sleep 0.1
done
[ -n "$URL" ] || { cat "$WORK/log"; exit 1; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }
put() { curl -sf -o /dev/null -X PUT "$URL$1" -H 'Content-Type: application/json' -d "$2"; }

# default with every built-in key set and 100 things, so a copy holds real values.
put /preferences/name '{"value":"bench"}'; put /preferences/age '{"value":42}'; put /preferences/speed '{"value":1.5}'
curl -sf -o /dev/null -X PUT "$URL/things" -H 'Content-Type: application/json' \
  -d "$(python3 -c 'import json; print(json.dumps({"things": [f"T{i}" for i in range(100)]}))')"
for _ in 1 2 3; do curl -sf -o /dev/null "$URL/preferences"; done
base=$(rss)
start=$(date +%s.%N)
for i in $(seq 1 "$COUNT"); do
  name=$([ "$i" = 1 ] && echo staging || echo "env$i")
  curl -sf -o /dev/null -X PUT "$URL/environments/$name" -H 'Content-Type: application/json' -d '{"copyFrom":"default"}'
  curl -sf -o /dev/null "$URL/environments/$name/preferences"
done
created=$(echo "$(date +%s.%N) - $start" | bc)
after=$(rss)
printf 'memory: RSS %d KiB with default only, %d KiB with %d more environments: %.1f KiB per environment\n' \
  "$base" "$after" "$COUNT" "$(echo "($after - $base) / $COUNT" | bc -l)"
printf 'create: %d copies of default (values and 100 things each) in %.2f s, %.1f ms each\n' \
  "$COUNT" "$created" "$(echo "$created * 1000 / $COUNT" | bc -l)"

run() {  # LABEL URL [wrk args]
  local label=$1 url=$2; shift 2
  wrk -t1 -c"$CONNS" -d1s "$@" "$url" >/dev/null 2>&1 || true
  local out; out=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "$@" "$url" 2>&1)
  local line; line=$(echo "$out" | grep -E '^PUTRESULT' || true)
  if [ -n "$line" ]; then printf '%-40s %s\n' "$label" "${line#PUTRESULT }"
  else printf '%-40s %s req/s, p99 %s\n' "$label" "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" "$(echo "$out" | awk '$1 == "99%" {print $2}')"
  fi
}
run "PUT /preferences/name (default)" "$URL/preferences/name" -s Benchmarks/put.lua
run "PUT /environments/staging/preferences/name" "$URL/environments/staging/preferences/name" -s Benchmarks/put.lua
run "GET /preferences (default)" "$URL/preferences"
run "GET /environments/staging/preferences" "$URL/environments/staging/preferences"
