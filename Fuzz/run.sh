#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer) and runs each for FUZZ_SECONDS
# (default 60). The code under test is compiled with SwiftPM's fuzzer sanitizer (coverage
# instrumentation) into .build/fuzz; each harness in Fuzz/ is linked against those objects.
# A crash leaves its input in .build/fuzz/artifacts/ and fails the run; turn it into a test
# next to the unit tests of the code that crashed (e.g. Tests/EventHTTPTests/RequestFramingTests.swift).
#
#   Fuzz/run.sh                 build, then run every target for FUZZ_SECONDS each
#   Fuzz/run.sh --list          the target names
#   Fuzz/run.sh --build-only    build and link every target
#   Fuzz/run.sh --run NAME      run one built target (scripts/run-tests.py runs them side by side)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
BUILD=.build/fuzz
D=$BUILD/debug

# name → harness files (and any single source file it needs beyond the built modules)
declare -A HARNESS=(
  [body]="Fuzz/BodyFuzz.swift Sources/TidingsAPI/OpenFeature/OFREPBodyScan.swift Sources/TidingsAPI/OpenFeature/OFREPEvaluationBody.swift"
  [stream-query]="Fuzz/StreamQueryFuzz.swift Sources/TidingsAPI/Streams/ResumePoint.swift"
  [forwarded]="Fuzz/ForwardedFuzz.swift"
  [yaml]="Fuzz/YAMLFuzz.swift Sources/TidingsAPI/Contract/YAMLParser.swift Sources/TidingsAPI/Contract/YAMLNode.swift Sources/TidingsAPI/Contract/YAMLEmitter.swift Sources/TidingsAPI/Support/YAMLRules.swift"
  [framing]="Fuzz/FramingFuzz.swift Tests/EventHTTPTests/Support/FramingDriver.swift"
  [upstream-head]="Fuzz/UpstreamHeadFuzz.swift Sources/TidingsAPI/Posts/Upstream/CurlReceiver.swift Sources/TidingsAPI/Posts/Upstream/UpstreamOrigin.swift"
)
TARGETS=(body stream-query forwarded yaml framing upstream-head)

# A Swift target's objects are the ones its output-file-map names (an object of a source file
# since deleted stays in the build directory and would be linked too); C targets keep theirs in src/.
objects() {
  local target map
  for target in "$@"; do
    map="$D/$target.build/output-file-map.json"
    if [ -f "$map" ]; then
      python3 -c 'import json, sys; print("\n".join(sorted(e["object"] for e in json.load(open(sys.argv[1])).values() if "object" in e)))' "$map"
    else
      find "$D/$target.build" -maxdepth 2 -name "*.o" | sort
    fi
  done
}
link() { # name, harness files...
  local name=$1; shift
  swiftc -sanitize=fuzzer -parse-as-library -Onone -gline-tables-only -swift-version 6 \
    -I "$D/Modules" -I Sources/CLibevent -I Sources/CZlib -I Sources/CBrotli \
    -Xcc -fmodule-map-file="$D/COpenCombineHelpers.build/module.modulemap" \
    -Xcc -I.build/checkouts/OpenCombine/Sources/COpenCombineHelpers/include \
    -Xcc -fmodule-map-file="$BUILD/checkouts/Yams/Sources/CYaml/include/module.modulemap" \
    "$@" $(objects EventHTTP Observing TidingsModel HTTPTypes OpenCombine COpenCombineHelpers Logging Yams CYaml) \
    -levent -levent_pthreads -lz -lbrotlienc -lbrotlidec -lstdc++ -o "$BUILD/$name"
}
# Line tables only: a crash's stack still names files and lines, and the compile skips the full
# debug information (a third of a debug Swift compile's CPU). No index store: nothing reads it
# here (no test discovery), and writing it is about 6% of each compile.
FLAGS=(--build-path "$BUILD" --sanitize=fuzzer -Xswiftc -gline-tables-only --disable-index-store)
build() {
  swift build "${FLAGS[@]}" --target TidingsModel
  swift build "${FLAGS[@]}" --target EventHTTP
  swift build "${FLAGS[@]}" --target Yams  # the yaml target reads through Yams
  local name
  # shellcheck disable=SC2086
  for name in "${TARGETS[@]}"; do link "$name-fuzzer" ${HARNESS[$name]}; done
}

fuzz() { # name: runs it for SECONDS_EACH; a crash or leak fails
  local name=$1 corpus="$BUILD/corpus/$1"
  [ -n "${HARNESS[$name]:-}" ] || { echo "no fuzz target $name (Fuzz/run.sh --list)" >&2; return 2; }
  mkdir -p "$corpus" "$BUILD/artifacts"
  cp -n Fuzz/seeds/$name/* "$corpus/" 2>/dev/null || true
  echo "fuzzing $name for ${SECONDS_EACH}s"
  # -timeout: one input taking 60 s of wall-clock time is a hang. (At 5 s, two targets failed
  # together in a run on a machine with a load of 6, on inputs that take 0.1 s: a stalled machine,
  # not a slow input. In `make test` the searches run at idle priority beside the solo jobs, and a
  # solo job's burst on both cores stops them meanwhile.)
  if ! "$BUILD/$name-fuzzer" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=60 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$name-" "$corpus" 2>"$BUILD/$name.log"; then
    tail -40 "$BUILD/$name.log"
    return 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$BUILD/$name.log" || true
}

case "${1:-}" in
  --list) printf '%s\n' "${TARGETS[@]}" ;;
  --build-only) build ;;
  --run) fuzz "$2" ;;
  "")
    build
    status=0
    for name in "${TARGETS[@]}"; do fuzz "$name" || status=1; done
    exit $status ;;
  *) echo "usage: Fuzz/run.sh [--list | --build-only | --run NAME]" >&2; exit 2 ;;
esac
