#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer) and runs each for FUZZ_SECONDS
# (default 60). The code under test is compiled with SwiftPM's fuzzer sanitizer (coverage
# instrumentation) into .build/fuzz; each harness in Fuzz/ is linked against those objects.
# A crash leaves its input in .build/fuzz/artifacts/ and fails the run; turn it into a test
# next to the unit tests of the code that crashed (e.g. Tests/EventHTTPTests/RequestFramingTests.swift).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
BUILD=.build/fuzz
D=$BUILD/debug
swift build --build-path "$BUILD" --sanitize=fuzzer --target TidingsModel
swift build --build-path "$BUILD" --sanitize=fuzzer --target EventHTTP

objects() { for target in "$@"; do ls "$D/$target.build/"*.o; done; }
link() { # name, harness files...
  local name=$1; shift
  swiftc -sanitize=fuzzer -parse-as-library -Onone -g -swift-version 6 \
    -I "$D/Modules" -I Sources/CLibevent -I Sources/CZlib -I Sources/CBrotli \
    -Xcc -fmodule-map-file="$D/COpenCombineHelpers.build/module.modulemap" \
    -Xcc -I.build/checkouts/OpenCombine/Sources/COpenCombineHelpers/include \
    "$@" $(objects EventHTTP Observing TidingsModel HTTPTypes OpenCombine COpenCombineHelpers Logging) \
    -levent -levent_pthreads -lz -lbrotlienc -lbrotlidec -lstdc++ -o "$BUILD/$name"
}
link body-fuzzer Fuzz/BodyFuzz.swift
link stream-query-fuzzer Fuzz/StreamQueryFuzz.swift Sources/TidingsAPI/Streams/ResumePoint.swift
link forwarded-fuzzer Fuzz/ForwardedFuzz.swift
link framing-fuzzer Fuzz/FramingFuzz.swift Tests/EventHTTPTests/Support/FramingDriver.swift

mkdir -p "$BUILD/artifacts"
status=0
for name in body stream-query forwarded framing; do
  corpus="$BUILD/corpus/$name"
  mkdir -p "$corpus"
  cp -n Fuzz/seeds/$name/* "$corpus/" 2>/dev/null || true
  echo "fuzzing $name for ${SECONDS_EACH}s"
  if ! "$BUILD/$name-fuzzer" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$name-" "$corpus" 2>"$BUILD/$name.log"; then
    tail -40 "$BUILD/$name.log"
    status=1
  else
    grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$BUILD/$name.log" || true
  fi
done
exit $status
