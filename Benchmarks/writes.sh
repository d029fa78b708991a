#!/usr/bin/env bash
# Durable writes against etcd 3.4 (issue 33, parts 3 and 4): in ONE run, ROUNDS alternated
# rounds of 64 clients of durable PUTs with history recorded, each round measuring in turn
#   sqlite  Tidings on SQLite (WAL, synchronous=FULL);
#   pg      Tidings on a throwaway PostgreSQL 15 cluster (defaults: fsync=on,
#           synchronous_commit=on), one instance on a database of its own;
#   pg2     two Tidings instances on one database, CONNS/2 clients each (their sum), so both
#           contend for the revision row;
#   etcd    etcd's /v3/kv/put (its defaults: it fsyncs every commit);
# and prints each one's acknowledged writes/s and p99 beside etcd's from the same round, with
# the ratios. The machine is shared: read the same-round ratios, not the absolute numbers.
#
# For PostgreSQL it also says where the time goes, from the server's own counters over the
# measured seconds: commit-function calls (= group-commit batches), writes per batch, WAL
# flushes (fsyncs) per batch, the function's mean time, and what the Tidings backends were
# waiting for (pg_stat_activity sampled every 20 ms). For SQLite: the WAL file's size after the
# run and how the write tail looks.
#
# Usage: Benchmarks/writes.sh [TIDINGS_BIN]   (default .build/release/tidings)
# Environment: ROUNDS=3, DURATION=10 (s per measurement, after a 2 s warm-up), CONNS=64,
#   BEFORE_BIN (a build to compare with: also measured on SQLite and PostgreSQL, one instance and
#   two, in every round),
#   WRITES_STORES="sqlite pg pg2 etcd" (which to measure), WRITES_LIMIT (s, the whole run's
#   bound; default from the rounds), TIDINGS_ARGS (extra flags for every instance of TIDINGS_BIN),
#   BEFORE_ARGS (extra flags for BEFORE_BIN's instances: e.g. the same binary with
#   BEFORE_ARGS="--database-commit-lanes 1" against TIDINGS_ARGS="--database-commit-lanes 2").
# Ends with a RESULT line per store and round (parsed by Benchmarks/run.sh, part w).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TIDINGS=${1:-${TIDINGS_BIN:-$ROOT/.build/release/tidings}}
BEFORE=${BEFORE_BIN:-}   # optional: another build, measured on SQLite and PostgreSQL in the same rounds
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNS=${CONNS:-64}
STORES=" ${WRITES_STORES:-sqlite pg pg2 etcd} "
LIMIT=${WRITES_LIMIT:-$((90 + ROUNDS * 6 * (DURATION + 12)))}
read -r -a EXTRA <<< "${TIDINGS_ARGS:-}"
read -r -a BEFORE_EXTRA <<< "${BEFORE_ARGS:-}"
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$TIDINGS" ] || { echo "no tidings binary at $TIDINGS (swift build -c release --static-swift-stdlib --product tidings)"; exit 1; }
[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 is not installed (apt-get install postgresql-15)"; exit 1; }
command -v etcd >/dev/null || { echo "etcd is not installed (apt-get install etcd-server)"; exit 1; }
command -v wrk >/dev/null || { echo "wrk is not installed"; exit 1; }
has() { case "$STORES" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-writes.XXXXXX")
PIDS=()
RUNAS=()
[ "$(id -u)" = 0 ] && RUNAS=(runuser -u postgres --)
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -d "$WORK/pg/data" ] && "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM
# The whole run is bounded: past LIMIT seconds the watchdog ends it (and the trap cleans up).
( trap 'kill "$s" 2>/dev/null; exit 0' TERM
  sleep "$LIMIT" & s=$!
  wait "$s" && { echo "writes.sh: over its ${LIMIT} s bound, stopping" >&2; kill -TERM $$; } ) &
PIDS+=($!)

kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
# cpu_ticks PID... : user + system clock ticks the processes used so far (every thread's;
# a process gone counts 0). On 2 shared cores the CPU a write costs is what decides the rate.
cpu_ticks() {
    local pid total=0 f
    for pid in "$@"; do
        f=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
        f=${f##*) }   # the fields after the command name
        read -r -a a <<< "$f"
        total=$((total + a[11] + a[12]))
    done
    echo "$total"
}
# pg_pids : the PostgreSQL cluster's processes (the postmaster and its children).
pg_pids() {
    local pm
    pm=$(head -n1 "$WORK/pg/data/postmaster.pid" 2>/dev/null) || return 0
    echo "$pm" $(ps -o pid= --ppid "$pm")
}
# cpu_per_write TICKS WRITES : microseconds of CPU per acknowledged write.
cpu_per_write() { awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else printf "n/a" }'; }

# start NAME ARGS... : a Tidings instance; sets PORT once it answers /readyz (and PIDOF[NAME]).
declare -A PIDOF=()
start() {
    local name=$1 pid; shift
    : >"$WORK/$name.out"   # exists before the loop below reads it (the child opens it later)
    "$TIDINGS" --port 0 --log-level warning --feed-refresh 0 ${EXTRA[@]+"${EXTRA[@]}"} "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" &
    pid=$!
    PIDS+=("$pid")
    PIDOF[$name]=$pid
    PORT=""
    for _ in $(seq 1 300); do
        PORT=$(sed -nE 's#.*listening on http://[^ ]*:([0-9]+).*#\1#p' "$WORK/$name.out" | head -n1)
        [ -n "$PORT" ] && break
        kill -0 "$pid" 2>/dev/null || { echo "$name exited:"; cat "$WORK/$name.err"; exit 1; }
        sleep 0.1
    done
    [ -n "$PORT" ] || { echo "$name did not start"; exit 1; }
    for _ in $(seq 1 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    echo "$name never became ready"; exit 1
}

# load SCRIPT URL CONNS SECONDS : one wrk run; prints its PUTRESULT line.
load() {
    timeout $(($4 + 30)) wrk -t2 -c"$3" -d"$4s" -s "$1" "$2" 2>&1 | grep '^PUTRESULT' || echo "PUTRESULT acked=0 acked_per_s=0 p99_ms=0 failed=1"
}

# ---- PostgreSQL: one throwaway cluster, two databases ----
psql_() { "${RUNAS[@]}" "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -XAtq "$@"; }
if has pg || has pg2; then
    chmod 755 "$WORK"   # the postgres user must reach its directory inside
    mkdir -p "$WORK/pg"
    [ "$(id -u)" = 0 ] && chown postgres "$WORK/pg"
    PGPORT=$(free_port)
    "${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -A trust -U postgres >/dev/null
    # Durable as shipped (fsync, synchronous_commit on); only counters are switched on.
    "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w \
        -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=50 -c track_functions=pl" \
        start >/dev/null
    for db in single pair pair0; do "${RUNAS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U postgres "$db"; done
fi

# pg_counters DB : "calls total_ms wal_sync wal_write xact" now (calls of the commit functions:
# tidings_commit_v3, or tidings_set_batch_v1 for a batch of plain sets; one per batch).
pg_counters() {
    psql_ -d "$1" -F' ' -c "SELECT COALESCE((SELECT sum(calls) FROM pg_stat_user_functions WHERE funcname ~ '^tidings_(commit|set_batch)_v'), 0),
        COALESCE((SELECT sum(total_time) FROM pg_stat_user_functions WHERE funcname ~ '^tidings_(commit|set_batch)_v'), 0),
        w.wal_sync, w.wal_write, (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())
        FROM pg_stat_wal w"
}
# pg_waits DB SECONDS : what the database's other client backends wait on, sampled every
# 20 ms by one session (a loop inside the server, so sampling costs no process per sample).
pg_waits() {
    psql_ -d "$1" -c "DO \$\$ DECLARE stop timestamptz := clock_timestamp() + interval '$2 seconds'; found_rows bigint; BEGIN
        CREATE TEMP TABLE w (e text);
        WHILE clock_timestamp() < stop LOOP
            PERFORM pg_stat_clear_snapshot();
            INSERT INTO w SELECT COALESCE(wait_event_type || ':' || wait_event, 'running') FROM pg_stat_activity
             WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state = 'active';
            GET DIAGNOSTICS found_rows = ROW_COUNT;
            IF found_rows = 0 THEN INSERT INTO w VALUES ('none active'); END IF;
            PERFORM pg_sleep(0.02);
        END LOOP;
        RAISE NOTICE 'WAITS %', (SELECT string_agg(e || ' ' || n, ', ' ORDER BY n DESC)
            FROM (SELECT e, count(*) n FROM w GROUP BY e ORDER BY n DESC LIMIT 6) q);
    END \$\$" 2>&1 | sed -n 's/.*WAITS //p'
}
# pg_where DB BEFORE AFTER ACKED WAITS : the line saying where the time went.
pg_where() {
    local calls ms syncs writes
    local c0 t0 s0 w0 c1 t1 s1 w1
    read -r c0 t0 s0 w0 _ <<< "$2"; read -r c1 t1 s1 w1 _ <<< "$3"
    calls=$((c1 - c0)); syncs=$((s1 - s0)); writes=$((w1 - w0))
    ms=$(awk -v a="$t0" -v b="$t1" -v n="$calls" 'BEGIN { printf "%.2f", (n > 0 ? (b - a) / n : 0) }')
    printf '      where: %s batches, %s writes/batch, %s WAL fsyncs/batch (%s WAL writes), %s ms in the commit function per batch\n' \
        "$calls" "$(ratio "$4" "$calls")" "$(ratio "$syncs" "$calls")" "$writes" "$ms"
    printf '      backends waiting (samples): %s\n' "${5:-none}"
}

# pg_cpu TIDINGS_TICKS PG_TICKS ACKED : the CPU a write cost, Tidings' and the cluster's (every
# PostgreSQL process: backends, WAL writer, the sampling session above).
pg_cpu() {
    printf '      CPU per write: %s µs (Tidings %s + PostgreSQL %s)\n' "$(cpu_per_write $(($1 + $2)) "$3")" \
        "$(cpu_per_write "$1" "$3")" "$(cpu_per_write "$2" "$3")"
}

# start_with BIN NAME ARGS... : as start, with another binary (BEFORE_BIN).
start_with() {
    local saved=$TIDINGS saved_extra=("${EXTRA[@]+"${EXTRA[@]}"}")
    TIDINGS=$1; shift
    EXTRA=("${BEFORE_EXTRA[@]+"${BEFORE_EXTRA[@]}"}")
    start "$@"
    TIDINGS=$saved; EXTRA=("${saved_extra[@]+"${saved_extra[@]}"}")
}

declare -A PORTS=()
if has sqlite; then start sqlite --data-dir "$WORK/sqlite"; PORTS[sqlite]=$PORT; fi
if has pg; then start pg --database-url "postgres://postgres@127.0.0.1:$PGPORT/single"; PORTS[pg]=$PORT; fi
if has pg2; then
    start a --database-url "postgres://postgres@127.0.0.1:$PGPORT/pair"; PORTS[a]=$PORT
    start b --database-url "postgres://postgres@127.0.0.1:$PGPORT/pair"; PORTS[b]=$PORT
fi
if [ -n "$BEFORE" ]; then
    if has sqlite; then start_with "$BEFORE" sqlite0 --data-dir "$WORK/sqlite0"; PORTS[sqlite0]=$PORT; fi
    if has pg; then
        "${RUNAS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U postgres before
        start_with "$BEFORE" pg0 --database-url "postgres://postgres@127.0.0.1:$PGPORT/before"; PORTS[pg0]=$PORT
    fi
    if has pg2; then
        start_with "$BEFORE" a0 --database-url "postgres://postgres@127.0.0.1:$PGPORT/pair0"; PORTS[a0]=$PORT
        start_with "$BEFORE" b0 --database-url "postgres://postgres@127.0.0.1:$PGPORT/pair0"; PORTS[b0]=$PORT
    fi
fi
ETCD_PORT=$(free_port); ETCD_PEER=$(free_port)
etcd --data-dir "$WORK/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
     --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
     --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
     --initial-cluster "default=http://127.0.0.1:$ETCD_PEER" >"$WORK/etcd.log" 2>&1 &
ETCD_PID=$!
PIDS+=("$ETCD_PID")
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null || { echo "etcd did not start:"; tail -5 "$WORK/etcd.log"; exit 1; }

PUT=Benchmarks/put.lua
declare -A RATE=() P99=()
row() {  # row KEY LABEL LINE : prints and records one measurement
    RATE[$1]=$(kv "$3" acked_per_s); P99[$1]=$(kv "$3" p99_ms)
    printf '  %-34s %8.0f/s  p50 %7s ms  p99 %7s ms  (%s not 2xx)\n' "$2" "${RATE[$1]}" "$(kv "$3" p50_ms)" "${P99[$1]}" "$(kv "$3" non2xx)"
}
# sqlite_run KEY LABEL DIR
sqlite_run() {
    local url="http://127.0.0.1:${PORTS[$1]}/preferences/name" line tk0 tk1
    load "$PUT" "$url" "$CONNS" 2 >/dev/null
    tk0=$(cpu_ticks "${PIDOF[$1]}")
    line=$(load "$PUT" "$url" "$CONNS" "$DURATION")
    tk1=$(cpu_ticks "${PIDOF[$1]}")
    row "$1" "$2" "$line"
    printf '      CPU per write: %s µs (Tidings)\n' "$(cpu_per_write $((tk1 - tk0)) "$(kv "$line" acked)")"
    printf '      WAL file after the run: %s KiB\n' "$(( $(stat -c %s "$WORK/$3/tidings.sqlite-wal" 2>/dev/null || echo 0) / 1024 ))"
}
# pg_run KEY LABEL DB
pg_run() {
    local url="http://127.0.0.1:${PORTS[$1]}/preferences/name" line before after waiter tk0 tk1 p0 p1 pgs
    load "$PUT" "$url" "$CONNS" 2 >/dev/null
    before=$(pg_counters "$3")
    pg_waits "$3" "$DURATION" >"$WORK/waits" &
    waiter=$!
    pgs=$(pg_pids)
    tk0=$(cpu_ticks "${PIDOF[$1]}"); p0=$(cpu_ticks $pgs)
    line=$(load "$PUT" "$url" "$CONNS" "$DURATION")
    tk1=$(cpu_ticks "${PIDOF[$1]}"); p1=$(cpu_ticks $pgs)
    wait "$waiter" 2>/dev/null || true
    after=$(pg_counters "$3")
    row "$1" "$2" "$line"
    pg_where "$3" "$before" "$after" "$(kv "$line" acked)" "$(cat "$WORK/waits")"
    pg_cpu "$((tk1 - tk0))" "$((p1 - p0))" "$(kv "$line" acked)"
}
# pg2_run KEY A B DB LABEL : two instances A and B on database DB, CONNS/2 clients each (their sum).
pg2_run() {
    local key=$1 ia=$2 ib=$3 db=$4 label=$5
    local half=$((CONNS / 2)) before after waiter la linea lineb tk0 tk1 p0 p1 pgs
    load "$PUT" "http://127.0.0.1:${PORTS[$ia]}/preferences/name" "$half" 2 >/dev/null &
    la=$!
    load "$PUT" "http://127.0.0.1:${PORTS[$ib]}/preferences/name" "$half" 2 >/dev/null
    wait "$la" 2>/dev/null || true
    before=$(pg_counters "$db")
    pg_waits "$db" "$DURATION" >"$WORK/waits" &
    waiter=$!
    pgs=$(pg_pids)
    tk0=$(cpu_ticks "${PIDOF[$ia]}" "${PIDOF[$ib]}"); p0=$(cpu_ticks $pgs)
    load "$PUT" "http://127.0.0.1:${PORTS[$ia]}/preferences/name" "$half" "$DURATION" >"$WORK/a.line" &
    la=$!
    lineb=$(load "$PUT" "http://127.0.0.1:${PORTS[$ib]}/preferences/name" "$half" "$DURATION")
    wait "$la" 2>/dev/null || true
    tk1=$(cpu_ticks "${PIDOF[$ia]}" "${PIDOF[$ib]}"); p1=$(cpu_ticks $pgs)
    wait "$waiter" 2>/dev/null || true
    after=$(pg_counters "$db")
    linea=$(cat "$WORK/a.line")
    RATE[$key]=$(awk -v a="$(kv "$linea" acked_per_s)" -v b="$(kv "$lineb" acked_per_s)" 'BEGIN { printf "%.1f", a + b }')
    P99[$key]=$(awk -v a="$(kv "$linea" p99_ms)" -v b="$(kv "$lineb" p99_ms)" 'BEGIN { printf "%.2f", (a > b ? a : b) }')
    printf '  %-34s %8.0f/s  p99 %7s ms  (A %.0f/s p99 %s ms, B %.0f/s p99 %s ms; %s + %s not 2xx)\n' "$label" \
        "${RATE[$key]}" "${P99[$key]}" "$(kv "$linea" acked_per_s)" "$(kv "$linea" p99_ms)" \
        "$(kv "$lineb" acked_per_s)" "$(kv "$lineb" p99_ms)" "$(kv "$linea" non2xx)" "$(kv "$lineb" non2xx)"
    pg_where "$db" "$before" "$after" "$(( $(kv "$linea" acked) + $(kv "$lineb" acked) ))" "$(cat "$WORK/waits")"
    pg_cpu "$((tk1 - tk0))" "$((p1 - p0))" "$(( $(kv "$linea" acked) + $(kv "$lineb" acked) ))"
}
etcd_run() {
    local url="http://127.0.0.1:$ETCD_PORT/v3/kv/put"
    local line tk0 tk1
    load Benchmarks/etcd-put.lua "$url" "$CONNS" 2 >/dev/null
    tk0=$(cpu_ticks "$ETCD_PID")
    line=$(load Benchmarks/etcd-put.lua "$url" "$CONNS" "$DURATION")
    tk1=$(cpu_ticks "$ETCD_PID")
    row etcd "etcd /v3/kv/put" "$line"
    printf '      CPU per write: %s µs (etcd)\n' "$(cpu_per_write $((tk1 - tk0)) "$(kv "$line" acked)")"
}

echo "==== durable writes against etcd $(etcd --version | sed -n 's/^etcd Version: //p'): $CONNS clients, ${DURATION} s after a 2 s warm-up, $ROUNDS rounds ===="
echo "  $(nproc) cores; $(uptime | sed 's/.*load/load/')${BEFORE:+; before = $BEFORE ${BEFORE_ARGS:-}}${TIDINGS_ARGS:+; flags of the build measured: $TIDINGS_ARGS}"
KEYS=()
for round in $(seq 1 "$ROUNDS"); do
    echo "== round $round ($(uptime | sed 's/.*load average: /load /'))"
    RATE=(); P99=()
    # With BEFORE_BIN, the two builds take turns going first (odd rounds: before first).
    if [ $((round % 2)) = 1 ] && [ -n "${PORTS[sqlite0]:-}" ]; then sqlite_run sqlite0 "Tidings, SQLite (before)" sqlite0; fi
    if has sqlite; then sqlite_run sqlite "Tidings, SQLite" sqlite; fi
    if [ $((round % 2)) = 0 ] && [ -n "${PORTS[sqlite0]:-}" ]; then sqlite_run sqlite0 "Tidings, SQLite (before)" sqlite0; fi
    if [ $((round % 2)) = 1 ] && [ -n "${PORTS[pg0]:-}" ]; then pg_run pg0 "Tidings, PostgreSQL (before)" before; fi
    if has pg; then pg_run pg "Tidings, PostgreSQL" single; fi
    if [ $((round % 2)) = 0 ] && [ -n "${PORTS[pg0]:-}" ]; then pg_run pg0 "Tidings, PostgreSQL (before)" before; fi
    if [ $((round % 2)) = 1 ] && [ -n "${PORTS[a0]:-}" ]; then pg2_run pg20 a0 b0 pair0 "Tidings, PostgreSQL, A + B (before)"; fi
    if has pg2; then pg2_run pg2 a b pair "Tidings, PostgreSQL, A + B"; fi
    if [ $((round % 2)) = 0 ] && [ -n "${PORTS[a0]:-}" ]; then pg2_run pg20 a0 b0 pair0 "Tidings, PostgreSQL, A + B (before)"; fi
    if has etcd; then etcd_run; fi
    for store in sqlite0 sqlite pg0 pg pg20 pg2; do
        [ -n "${RATE[$store]:-}" ] || continue
        if has etcd; then
            rr=$(ratio "${RATE[$store]}" "${RATE[etcd]}"); pr=$(ratio "${P99[$store]}" "${P99[etcd]}")
            printf '  %-7s ÷ etcd: %s× the rate, %s× the p99 (rate goal >= 1, p99 goal <= 1)\n' "$store" "$rr" "$pr"
        else
            rr=n/a; pr=n/a
        fi
        KEYS+=("RESULT round=$round store=$store acked_per_s=${RATE[$store]} p99_ms=${P99[$store]} etcd_acked_per_s=${RATE[etcd]:-0} etcd_p99_ms=${P99[etcd]:-0} rate_ratio=$rr p99_ratio=$pr")
    done
done
printf '%s\n' "${KEYS[@]}"
