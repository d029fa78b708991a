#!/usr/bin/env bash
# Checks that the Dockerfile's runtime stage installs every Debian package whose shared libraries
# the release binary loads: `ldd BINARY` → library paths → `dpkg -S` → owning packages, each of
# which must be in the RUNTIME-PACKAGES block of the Dockerfile, a dependency of a package there,
# or part of every Debian base image (Priority: required). A library no package owns (e.g. a Swift
# toolchain .so when --static-swift-stdlib was not used) is an error too.
#
#   scripts/check-runtime-libs.sh [BINARY] [DOCKERFILE]   default .build/release/tidings Dockerfile
#   scripts/check-runtime-libs.sh --self-test             shows the check fails when a package is missing
#   scripts/check-runtime-libs.sh --toolchain-ok BINARY [DOCKERFILE]
#       for a binary linked against the toolchain's shared Swift runtime (the debug build `make test`
#       builds): the toolchain's own libraries are skipped, as --static-swift-stdlib links them into
#       the image's binary, and every system library they load is checked like the binary's own
#       (ldd lists them). The release and debug builds load the same system libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLCHAIN=""   # set by --toolchain-ok: libraries under it are skipped

runtime_packages() { # the package names of the apt-get install inside the RUNTIME-PACKAGES block
  sed -n '/RUNTIME-PACKAGES-BEGIN/,/RUNTIME-PACKAGES-END/p' "$1" \
    | sed -n '/apt-get install/,/rm -rf/p' | tr '\\' ' ' | tr -s ' \t' '\n' \
    | grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vxE 'apt-get|install|update|rm|y|--no-install-recommends|debian_frontend=noninteractive' \
    | grep -v '^-' | sort -u
}

depends_closure() { # installed packages reachable from the arguments through Depends/Pre-Depends
  local -A seen=()
  local queue=("$@") p deps d
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}; queue=("${queue[@]:1}")
    p=${p%%:*}
    [ -n "${seen[$p]:-}" ] && continue
    seen[$p]=1
    echo "$p"
    deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "$p" 2>/dev/null || true)
    for d in $(printf '%s' "$deps" | tr ',|' '\n\n' | sed 's/([^)]*)//g; s/:any//g; s/^ *//; s/ *$//' | grep -v '^$'); do
      [ -z "${seen[$d]:-}" ] && queue+=("$d")
    done
  done
}

owner_of() { # the Debian package owning a library path (tries the merged-/usr aliases too)
  local path=$1 real cand
  real=$(readlink -f "$path")
  for cand in "$path" "$real" "/usr$path" "/usr$real" "${path#/usr}" "${real#/usr}"; do
    [ -n "$cand" ] || continue
    if out=$(dpkg -S "$cand" 2>/dev/null); then
      printf '%s\n' "$out" | head -n1 | cut -d: -f1
      return 0
    fi
  done
  return 1
}

check() { # BINARY DOCKERFILE
  local bin=$1 dockerfile=$2 status=0
  [ -x "$bin" ] || { echo "check-runtime-libs: no binary at $bin (build it: swift build -c release --static-swift-stdlib)" >&2; return 2; }
  local listed allowed
  listed=$(runtime_packages "$dockerfile")
  [ -n "$listed" ] || { echo "check-runtime-libs: no RUNTIME-PACKAGES block with an apt-get install in $dockerfile" >&2; return 1; }
  # shellcheck disable=SC2086
  allowed=$( { depends_closure $listed; dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2=="required"{print $1}'; } | sort -u)
  local libs
  libs=$(ldd "$bin" | awk '/=>/ && $3 ~ /^\// {print $3} /^\s*\/[^ ]+ \(/ {print $1}' | sort -u)
  local lib pkg needed=""
  for lib in $libs; do
    if [ -n "$TOOLCHAIN" ] && [[ "$(readlink -f "$lib")" == "$TOOLCHAIN"/* ]]; then continue; fi
    if ! pkg=$(owner_of "$lib"); then
      echo "check-runtime-libs: $lib belongs to no Debian package: link it statically or ship it" >&2
      status=1; continue
    fi
    needed="$needed $pkg"
    if ! grep -qxF "${pkg%%:*}" <<<"$allowed"; then
      echo "check-runtime-libs: $bin needs $lib from package ${pkg%%:*}, which the runtime stage does not install" >&2
      status=1
    fi
  done
  echo "check-runtime-libs: binary needs packages:$(tr ' ' '\n' <<<"$needed" | sed 's/:.*//' | sort -u | tr '\n' ' ')"
  echo "check-runtime-libs: runtime stage installs: $(tr '\n' ' ' <<<"$listed")"
  [ "$status" -eq 0 ] && echo "check-runtime-libs: OK"
  return "$status"
}

if [ "${1:-}" = "--self-test" ]; then
  # /usr/bin/curl needs libcurl4; a Dockerfile whose runtime block lacks it must fail, one with it must pass.
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  printf 'FROM x\n# RUNTIME-PACKAGES-BEGIN\nRUN apt-get update && apt-get install -y --no-install-recommends libcurl4 && rm -rf /var/lib/apt/lists/*\n# RUNTIME-PACKAGES-END\n' >"$tmp/good"
  printf 'FROM x\n# RUNTIME-PACKAGES-BEGIN\nRUN apt-get update && apt-get install -y --no-install-recommends tzdata && rm -rf /var/lib/apt/lists/*\n# RUNTIME-PACKAGES-END\n' >"$tmp/bad"
  ok=0
  check /usr/bin/curl "$tmp/good" >/dev/null 2>&1 || { echo "self-test: complete list rejected" >&2; ok=1; }
  if check /usr/bin/curl "$tmp/bad" >/dev/null 2>&1; then echo "self-test: missing libcurl4 not detected" >&2; ok=1; fi
  [ "$ok" -eq 0 ] && echo "check-runtime-libs self-test: 2 passed, 0 failed"
  exit "$ok"
fi

if [ "${1:-}" = "--toolchain-ok" ]; then
  shift
  TOOLCHAIN=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
  [ -n "${1:-}" ] || { echo "check-runtime-libs: --toolchain-ok needs a BINARY" >&2; exit 2; }
fi
check "${1:-.build/release/tidings}" "${2:-Dockerfile}"
