#!/usr/bin/env python3
"""Runs deploy/ as shipped on this machine, without a container engine.

What docker compose would start from deploy/docker-compose.yml, started by hand:
- PostgreSQL: a throwaway cluster (initdb as the `postgres` user; PostgreSQL refuses root) with the
  user, password and database the compose file's postgres service names;
- each Tidings service: the given binary with the compose file's own `command` and `environment`
  and its `ulimits: nofile`;
- nginx: the compose file's volumes into nginx's configuration directory exactly as the official
  image does it — the main configuration mounted at /etc/nginx/nginx.conf is used as it is, and
  each /etc/nginx/templates/*.template is rendered into conf.d/ with the image's envsubst rule
  (only variables defined in the environment are replaced) — run as the image runs it
  (`nginx -g 'daemon off;'`).

Only what names the container network is mapped to this machine: service names and container
ports become loopback addresses and free ports, nginx's fixed address (ipv4_address, which the
instances trust as their proxy) becomes 127.0.0.1, the address nginx connects from here. Nothing
else of the shipped files changes.

Used by Tests/deploy (the end-to-end test of the deployment), scripts/check-deploy.sh (renders and
`nginx -t`) and Benchmarks/deploy-bench.py. As a command:
    scripts/deploy_local.py check                      # render + nginx -t
    scripts/deploy_local.py up TIDINGS_BIN             # start everything, print ports, wait for ^C
"""
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEPLOY = os.path.join(ROOT, "deploy")
COMPOSE = os.path.join(DEPLOY, "docker-compose.yml")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PG_BIN = "/usr/lib/postgresql/15/bin"


def load_compose(path=COMPOSE):
    import yaml
    with open(path) as f:
        return yaml.safe_load(f)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


def accepting(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def nofile_limit(service):
    """The compose service's `ulimits: nofile` (soft, hard), capped at this machine's hard limit."""
    limits = (service.get("ulimits") or {}).get("nofile")
    if limits is None:
        return None
    if isinstance(limits, int):
        soft = hard = limits
    else:
        soft, hard = int(limits["soft"]), int(limits["hard"])
    machine_hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return min(soft, machine_hard), min(hard, machine_hard)


def _limited(limits):
    def apply():
        os.setsid()
        if limits:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    return apply


def envsubst(template, env):
    """The nginx image's 20-envsubst-on-templates.sh: `envsubst "$defined_envs"`, i.e. replace
    $NAME and ${NAME} for every NAME defined in the environment, leave everything else."""
    def replace(match):
        name = match.group(1) or match.group(2)
        return env[name] if name in env else match.group(0)
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", replace, template)


class Postgres:
    """A throwaway cluster with the compose file's user, password and database."""

    def __init__(self, workdir, compose):
        env = compose["services"]["postgres"].get("environment") or {}
        self.user = env.get("POSTGRES_USER", "postgres")
        self.password = env.get("POSTGRES_PASSWORD", "")
        self.database = env.get("POSTGRES_DB", self.user)
        self.dir = os.path.join(workdir, "pg")
        os.makedirs(self.dir)
        shutil.chown(workdir, "postgres")
        shutil.chown(self.dir, "postgres")
        self.port = free_port()
        run_as = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        subprocess.run(run_as + [f"{PG_BIN}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U", "postgres"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        subprocess.run(run_as + [f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w",
                                 "-o", f"-p {self.port} -k {self.dir} -c max_connections=200 -c listen_addresses=127.0.0.1",
                                 "start"], check=True, stdout=subprocess.DEVNULL)
        self._run_as = run_as
        sql = (f"CREATE ROLE \"{self.user}\" LOGIN PASSWORD '{self.password}';"
               f"CREATE DATABASE \"{self.database}\" OWNER \"{self.user}\";")
        for statement in sql.split(";"):
            if statement:
                subprocess.run(run_as + ["psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                                         "-v", "ON_ERROR_STOP=1", "-q", "-c", statement], check=True)

    def stop(self):
        subprocess.run(self._run_as + [f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Deployment:
    """deploy/ started as shipped (see the module's doc). `stop()` ends everything."""

    def __init__(self, binary, workdir=None, compose_path=COMPOSE, postgres=True):
        self.compose = load_compose(compose_path)
        self.services = self.compose["services"]
        self.workdir = workdir or tempfile.mkdtemp(prefix="tidings-deploy-")
        self.processes = {}
        self.logs = {}
        self.binary = binary
        self.postgres = None
        self.ports = {}
        try:
            if postgres:
                self.postgres = Postgres(self.workdir, self.compose)
            self.tidings = [name for name, s in self.services.items()
                            if s.get("image", "").startswith("tidings") or "build" in s]
            for name in self.tidings:
                self.start_instance(name)
            self.nginx_port = free_port()
            self.start_nginx()
        except BaseException:
            self.stop()
            raise

    # --- the map from the compose network to this machine ---

    def nginx_addresses(self):
        networks = self.services["nginx"].get("networks") or {}
        if isinstance(networks, list):
            return []
        return [n.get("ipv4_address") for n in networks.values() if isinstance(n, dict) and n.get("ipv4_address")]

    def map_value(self, text, container_port=None, own_port=None):
        """A value of the compose file with its network names mapped to this machine."""
        for address in self.nginx_addresses():
            text = text.replace(address, "127.0.0.1")
        if self.postgres:
            text = re.sub(r"@postgres:5432/", f"@127.0.0.1:{self.postgres.port}/", text)
        for name, port in self.ports.items():
            text = re.sub(rf"\b{re.escape(name)}:8080\b", f"127.0.0.1:{port}", text)
        return text

    def instance_arguments(self, name, port=None):
        command = [str(c) for c in (self.services[name].get("command") or [])]
        arguments = []
        index = 0
        while index < len(command):
            value = command[index]
            if value == "--port" and index + 1 < len(command):
                # Port 0: the instance picks a free one and prints it (a port chosen here could
                # be taken meanwhile, say as the local end of a connection to PostgreSQL).
                arguments += ["--port", str(port or 0)]
                index += 2
                continue
            arguments.append(self.map_value(value))
            index += 1
        return arguments

    def instance_environment(self, name):
        env = dict(os.environ)
        for key, value in (self.services[name].get("environment") or {}).items():
            env[key] = self.map_value(str(value))
        # The image's ENV (Dockerfile): its data directory, here a directory of our own.
        env["TIDINGS_DATA_DIR"] = os.path.join(self.workdir, f"data-{name}")
        env.pop("TIDINGS_PORT", None)
        return env

    # --- starting ---

    def start_instance(self, name, port=None):
        """Starts (or restarts, on `port`) one Tidings service."""
        log = open(os.path.join(self.workdir, f"{name}.log"), "ab")
        self.logs[name] = log.name
        process = subprocess.Popen([self.binary] + self.instance_arguments(name, port), env=self.instance_environment(name),
                                   stdout=log, stderr=subprocess.STDOUT,
                                   preexec_fn=_limited(nofile_limit(self.services[name])))
        self.processes[name] = process

        already = os.path.getsize(log.name)

        def listening():
            with open(log.name, errors="replace") as f:
                f.seek(already)
                found = re.search(r"tidings listening on http://[^\s]*:(\d+)", f.read())
            if found:
                self.ports[name] = int(found.group(1))
            return process.poll() is not None or found is not None
        wait_until(listening, 30, f"{name} to listen")
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited: {open(log.name).read()}")

    def stop_instance(self, name, sig=signal.SIGTERM, timeout=15):
        process = self.processes.get(name)
        if process and process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode if process else None

    def render_nginx(self):
        """The nginx configuration directory as the image builds it; returns the main file."""
        prefix = os.path.join(self.workdir, "nginx")
        os.makedirs(os.path.join(prefix, "conf.d"), exist_ok=True)
        service = self.services["nginx"]
        env = {"NGINX_VERSION": "1.27"}  # what the image itself defines, beside the service's own
        for key, value in (service.get("environment") or {}).items():
            value = str(value)
            if key == "TIDINGS_LISTEN_PORT":
                value = f"127.0.0.1:{self.nginx_port}"
            env[key] = self.map_value(value)
        main = None
        for volume in service.get("volumes") or []:
            source, target = str(volume).split(":")[:2]
            source = os.path.normpath(os.path.join(DEPLOY, source))
            if target == "/etc/nginx/nginx.conf":
                main = os.path.join(prefix, "nginx.conf")
                shutil.copyfile(source, main)
            elif target.startswith("/etc/nginx/templates/") and target.endswith(".template"):
                output = os.path.join(prefix, "conf.d", os.path.basename(target)[: -len(".template")])
                with open(source) as f, open(output, "w") as out:
                    out.write(envsubst(f.read(), env))
        if main is None:
            raise RuntimeError("deploy/docker-compose.yml mounts no main configuration at /etc/nginx/nginx.conf")
        shutil.copyfile("/etc/nginx/mime.types", os.path.join(prefix, "mime.types"))
        return prefix, main

    def start_nginx(self):
        prefix, main = self.render_nginx()
        self.nginx_log = os.path.join(self.workdir, "nginx.log")
        log = open(self.nginx_log, "wb")
        # As the image runs it (`nginx -g 'daemon off;'`); the pid file goes to our directory.
        self.processes["nginx"] = subprocess.Popen(
            [NGINX, "-p", prefix + "/", "-c", main, "-g", f"daemon off; pid {prefix}/nginx.pid;"],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=_limited(nofile_limit(self.services["nginx"])))
        process = self.processes["nginx"]
        wait_until(lambda: process.poll() is not None or accepting(self.nginx_port), 15, "nginx to listen")
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited: {open(self.nginx_log).read()}")
        wait_until(lambda: self.ready(), 30, "/readyz through nginx")

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.nginx_port}/readyz", timeout=2) as reply:
                return reply.status == 200
        except Exception:
            return False

    def pids(self):
        return {name: p.pid for name, p in self.processes.items() if p.poll() is None}

    def nginx_worker_pids(self):
        master = self.processes["nginx"].pid
        out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    def stop(self):
        for name, process in list(self.processes.items()):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.postgres:
            self.postgres.stop()


def check():
    """Renders deploy/ as the image does and runs `nginx -t` on it (no instance needed)."""
    workdir = tempfile.mkdtemp(prefix="tidings-deploy-check-")
    try:
        deployment = Deployment.__new__(Deployment)
        deployment.compose = load_compose()
        deployment.services = deployment.compose["services"]
        deployment.workdir = workdir
        deployment.postgres = None
        deployment.tidings = [n for n, s in deployment.services.items() if "tidings" in str(s.get("image", ""))]
        deployment.ports = {n: 18081 + i for i, n in enumerate(deployment.tidings)}
        deployment.nginx_port = 18080
        prefix, main = deployment.render_nginx()
        leftover = [line for line in open(os.path.join(prefix, "conf.d", "tidings.conf")) if re.search(r"\$\{TIDINGS_[A-Z]", line)]
        if leftover:
            print("deploy/nginx.conf: placeholders left after rendering:", *leftover, sep="\n", file=sys.stderr)
            return 1
        result = subprocess.run([NGINX, "-t", "-q", "-p", prefix + "/", "-c", main, "-g", f"pid {prefix}/nginx.pid;"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(result.stderr, file=sys.stderr)
            return 1
        print("deploy/: nginx -t OK on the shipped main configuration and the rendered template")
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "check":
        sys.exit(check())
    if len(sys.argv) >= 3 and sys.argv[1] == "up":
        deployment = Deployment(os.path.abspath(sys.argv[2]))
        print(f"nginx on http://127.0.0.1:{deployment.nginx_port}; instances {deployment.ports}; "
              f"logs in {deployment.workdir}", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
        finally:
            deployment.stop()
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
