#!/usr/bin/env bash
# Checks deploy/: the compose file parses and wires what the README promises (PostgreSQL, two
# Tidings on one TIDINGS_DATABASE_URL, nginx with deploy/nginx.conf as its template), and
# deploy/nginx.conf, rendered the way the nginx image renders it, passes `nginx -t`.
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
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
# The same substitution as the nginx image's envsubst step and Tests/TestFixtures/NginxBalancer.swift.
sed -e 's/${TIDINGS_UPSTREAM_A}/127.0.0.1:18081/g' \
    -e 's/${TIDINGS_UPSTREAM_B}/127.0.0.1:18082/g' \
    -e 's/${TIDINGS_LISTEN_PORT}/127.0.0.1:18080/g' deploy/nginx.conf >"$prefix/tidings.conf"
if grep -n '\${TIDINGS_[A-Z]' "$prefix/tidings.conf" >&2; then
  echo "deploy/nginx.conf: placeholders left after rendering" >&2
  exit 1
fi
user=""
[ "$(id -u)" = 0 ] && user="user root;"
cat >"$prefix/nginx.conf" <<CONF
$user
pid $prefix/nginx.pid;
error_log $prefix/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $prefix/client_body;
    proxy_temp_path $prefix/proxy;
    fastcgi_temp_path $prefix/fastcgi;
    uwsgi_temp_path $prefix/uwsgi;
    scgi_temp_path $prefix/scgi;
    include $prefix/tidings.conf;
}
CONF
"$NGINX" -t -q -p "$prefix" -c "$prefix/nginx.conf"
echo "deploy/nginx.conf: nginx -t OK"
