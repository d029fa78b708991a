#!/usr/bin/env bash
# Contract test: starts the real `tidings` binary on an ephemeral loopback port with a fresh data
# directory and both tokens set, validates the contract it serves (GET /openapi.yaml, generated
# from its declarations), and runs schemathesis (4.x, every default check, all phases: examples,
# coverage, fuzzing, stateful) against it. Event-stream operations are included, each request
# bounded to 1 s / 5 events by Tests/contract/schemathesis.toml.
#
#   TIDINGS_BIN      server binary (default .build/debug/tidings)
#   PREFERENCES      a --preferences file for the server (default: the built-in set)
#   SPEC             the document to test against (default: the served /openapi.yaml), e.g. the
#                    published OFREP spec Tests/contract/ofrep/openapi.yaml
#   CONFIG           schemathesis configuration (default Tests/contract/schemathesis.toml)
#   CREDENTIAL       how schemathesis sends the api token: `bearer` (Authorization, default) or
#                    `x-api-key` (OFREP's header)
#   MAX_EXAMPLES     test cases per operation and phase (default 10)
#   PATHS            only the operations whose path matches this regex (default: all)
#   SEED             schemathesis seed, for reproducing a run (default: random)
#   CONTRACT_REPORT  directory for the JUnit report and server log (default: a temp dir)
#
# Exit status: 0 only when the spec is valid, every check passed and the server stopped cleanly
# (exit 0 within 10 s of SIGTERM, as openapi.yaml requires).
set -euo pipefail
cd "$(dirname "$0")/../.."

SPEC=${SPEC:-served}
CONFIG=${CONFIG:-Tests/contract/schemathesis.toml}
PREFERENCES=${PREFERENCES:-}
TIDINGS_BIN=${TIDINGS_BIN:-.build/debug/tidings}
MAX_EXAMPLES=${MAX_EXAMPLES:-10}
SCHEMATHESIS_REQ='schemathesis>=4.32,<5'
VALIDATOR_REQ='openapi-spec-validator>=0.7'

log() { printf 'contract: %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------------
if ! command -v schemathesis >/dev/null 2>&1 || ! schemathesis --version 2>/dev/null | grep -q ' 4\.'; then
  log "installing $SCHEMATHESIS_REQ"
  python3 -m pip install --quiet --disable-pip-version-check "$SCHEMATHESIS_REQ"
fi
if ! command -v openapi-spec-validator >/dev/null 2>&1; then
  log "installing $VALIDATOR_REQ"
  python3 -m pip install --quiet --disable-pip-version-check "$VALIDATOR_REQ"
fi
hash -r
log "$(schemathesis --version)"

# --- server ------------------------------------------------------------------------------------
if [ ! -x "$TIDINGS_BIN" ]; then
  log "no server binary at $TIDINGS_BIN (build it first: swift build --product tidings)"
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidings-contract.XXXXXX")
REPORT=$(realpath -m "${CONTRACT_REPORT:-$WORK/report}")
mkdir -p "$REPORT"
SERVER_LOG=$REPORT/server.log
API_TOKEN=contract-api-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
READ_TOKEN=contract-read-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -z "${CONTRACT_REPORT:-}" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Tokens go through the environment, not argv, so they do not show in `ps`.
SERVER_ARGS=(--host 127.0.0.1 --port 0 --data-dir "$WORK/data")
# The log exists before the server starts: the background job opens it only when it is scheduled,
# and the first look for the listening line below must not find no file (pipefail: a failed sed
# ended the script, seen twice under load at the suite's start).
: >"$SERVER_LOG"
[ -n "$PREFERENCES" ] && SERVER_ARGS+=(--preferences "$PWD/$PREFERENCES")
TIDINGS_API_TOKEN=$API_TOKEN TIDINGS_READ_TOKEN=$READ_TOKEN \
  "$TIDINGS_BIN" "${SERVER_ARGS[@]}" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

BASE_URL=""
for _ in $(seq 1 300); do
  BASE_URL=$(sed -n 's#^tidings listening on \(http://[^ ]*\).*#\1#p' "$SERVER_LOG" | head -n1)
  [ -n "$BASE_URL" ] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "server exited before listening:"; cat "$SERVER_LOG" >&2; exit 1
  fi
  sleep 0.1
done
if [ -z "$BASE_URL" ]; then log "server printed no 'tidings listening on' line within 30 s"; cat "$SERVER_LOG" >&2; exit 1; fi
BASE_URL=${BASE_URL%/}
log "server at $BASE_URL (pid $SERVER_PID)"

for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE_URL/readyz")" = 200 ] && break
  sleep 0.1
done

# --- the contract under test ----------------------------------------------------------------------
if [ "$SPEC" = served ]; then
  # The contract this server serves, generated from its declarations: valid OpenAPI 3.1 first.
  curl -sf -H "Authorization: Bearer $READ_TOKEN" "$BASE_URL/openapi.yaml" -o "$WORK/openapi.yaml"
  openapi-spec-validator "$WORK/openapi.yaml"
  SPEC_PATH=$WORK/openapi.yaml
else
  SPEC_PATH=$PWD/$SPEC
fi
log "testing ${PREFERENCES:-the built-in set} against ${SPEC}"

# --- schemathesis --------------------------------------------------------------------------------
case "${CREDENTIAL:-bearer}" in
  bearer) CREDENTIAL_HEADER="Authorization: Bearer $API_TOKEN" ;;
  x-api-key) CREDENTIAL_HEADER="X-API-Key: $API_TOKEN" ;;
  *) log "CREDENTIAL must be bearer or x-api-key"; exit 1 ;;
esac
ARGS=(
  --config-file "$PWD/$CONFIG" --no-color
  run "$SPEC_PATH"
  --url "$BASE_URL"
  --header "$CREDENTIAL_HEADER"
  --max-examples "$MAX_EXAMPLES"
  --report junit --report-dir "$REPORT"
)
[ -n "${SEED:-}" ] && ARGS+=(--seed "$SEED")
[ -n "${PATHS:-}" ] && ARGS+=(--include-path-regex "$PATHS")

log "schemathesis ${ARGS[*]/$API_TOKEN/<api-token>}"
status=0
# Run from the temp dir: schemathesis keeps its replay data in ./.schemathesis, which must not land
# in the repository.
(cd "$WORK" && schemathesis "${ARGS[@]}") || status=$?

# --- shutdown: SIGTERM must end the server with status 0 within 10 s ----------------------------
kill -TERM "$SERVER_PID"
stopped=""
for _ in $(seq 1 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then stopped=yes; break; fi
  sleep 0.1
done
if [ -z "$stopped" ]; then
  log "server did not exit within 10 s of SIGTERM"; [ "$status" -eq 0 ] && status=1
else
  server_status=0; wait "$SERVER_PID" || server_status=$?
  SERVER_PID=""
  if [ "$server_status" -ne 0 ]; then log "server exited with status $server_status after SIGTERM"; [ "$status" -eq 0 ] && status=1; fi
fi

if [ "$status" -ne 0 ]; then
  log "FAILED (status $status); server log: $SERVER_LOG"
  [ -z "${CONTRACT_REPORT:-}" ] && { log "last server log lines:"; tail -n 40 "$SERVER_LOG" >&2; }
else
  log "passed"
fi
exit "$status"
