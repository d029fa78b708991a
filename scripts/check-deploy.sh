#!/usr/bin/env bash
# Checks deploy/: the compose file parses and wires what the README promises (PostgreSQL, two
# Tidings on one TIDINGS_DATABASE_URL trusting nginx's fixed address as their proxy, descriptor
# limits, nginx with deploy/nginx-main.conf as its main configuration and deploy/nginx.conf as its
# template), and what nginx would run, rendered the way the nginx image renders it, passes `nginx -t`.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -c 'import yaml' 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check pyyaml \
  || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages pyyaml
python3 - <<'PY'
import sys, yaml
with open("deploy/docker-compose.yml") as f:
    compose = yaml.safe_load(f)
services = compose.get("services", {})
problems = []
for name in ("postgres", "tidings-a", "tidings-b", "nginx"):
    if name not in services:
        problems.append(f"service {name} missing")
urls = set()
for name in ("tidings-a", "tidings-b"):
    service = services.get(name, {})
    url = (service.get("environment") or {}).get("TIDINGS_DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        problems.append(f"{name}: TIDINGS_DATABASE_URL is not a postgres:// URL")
    urls.add(url)
    if "0.0.0.0" not in (service.get("command") or []):
        problems.append(f"{name}: does not listen on 0.0.0.0")
if len(urls) != 1:
    problems.append("the two instances do not share one database URL")
if not str(services.get("postgres", {}).get("image", "")).startswith("postgres:15"):
    problems.append("postgres is not postgres:15")
volumes = services.get("nginx", {}).get("volumes") or []
if not any(str(v).startswith("./nginx.conf:/etc/nginx/templates/") for v in volumes):
    problems.append("nginx does not use ./nginx.conf as its template")
if not any(str(v).startswith("./nginx-main.conf:/etc/nginx/nginx.conf") for v in volumes):
    problems.append("nginx does not use ./nginx-main.conf as its main configuration")
for name in ("tidings-a", "tidings-b", "nginx"):
    nofile = (services.get(name, {}).get("ulimits") or {}).get("nofile")
    if not nofile:
        problems.append(f"{name}: no ulimits: nofile (each stream is a descriptor)")
nginx_networks = services.get("nginx", {}).get("networks") or {}
addresses = [n.get("ipv4_address") for n in nginx_networks.values() if isinstance(n, dict)] if isinstance(nginx_networks, dict) else []
for name in ("tidings-a", "tidings-b"):
    command = [str(c) for c in services.get(name, {}).get("command") or []]
    trusted = [command[i + 1] for i, c in enumerate(command[:-1]) if c == "--trusted-proxy"]
    if not trusted or not all(t in addresses for t in trusted):
        problems.append(f"{name}: --trusted-proxy does not name nginx's fixed address")
for p in problems:
    print(f"deploy/docker-compose.yml: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print("deploy/docker-compose.yml: OK")
PY

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "check-deploy: nginx not installed (make test installs it)" >&2
  exit 1
fi
# The shipped main configuration and the template rendered as the nginx image renders them
# (scripts/deploy_local.py, the same code the deployment test runs), then `nginx -t`.
python3 scripts/deploy_local.py check
