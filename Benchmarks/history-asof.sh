#!/usr/bin/env bash
# As-of 100,000 changes back, idle and under 16 concurrent writers (release binary, SQLite).
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
: >"$WORK/log"; .build/release/tidings --port 0 --data-dir "$WORK/data" --feed-refresh 0 >"$WORK/log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do grep -q "listening on" "$WORK/log" && break; sleep 0.1; done
URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$WORK/log" | head -n1)
timeout 40 wrk -t2 -c64 -d30s -s Benchmarks/put.lua "$URL/preferences/name" | grep PUTRESULT
cur=$(curl -s -o /dev/null -w '%header{tidings-revision}' "$URL/healthz"); target=$((cur - 100000))
echo "revision $cur target $target"
if [ "$target" -gt 0 ]; then
  echo "idle: $(timeout 20 wrk -t1 -c1 -d8s --latency "$URL/preferences?asOf=$target" | awk '$1=="50%"||$1=="99%" {printf "%s %s ", $1, $2}')"
  timeout 20 wrk -t1 -c16 -d10s -s Benchmarks/put.lua "$URL/preferences/name" > "$WORK/put.out" &
  W=$!
  sleep 1
  echo "with 16 writers: $(timeout 20 wrk -t1 -c1 -d8s --latency "$URL/preferences?asOf=$target" | awk '$1=="50%"||$1=="99%" {printf "%s %s ", $1, $2}')"
  wait $W
  grep PUTRESULT "$WORK/put.out"
fi
kill $PID; rm -rf "$WORK"; uptime
