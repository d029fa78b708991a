"""deploy/ run as shipped (scripts/deploy_local.py): the compose file's two Tidings instances with
their own command and environment on the test PostgreSQL, nginx with the shipped main
configuration and the rendered template — then 8,000 event streams through nginx, from 200
client addresses (as 200 browsers would be, behind one proxy), with writes and reads through nginx
meanwhile: every stream receives every change in order, every write is acknowledged.

TIDINGS_BIN: the server binary (default .build/debug/tidings).
"""
import os
import re
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import deploy_local  # noqa: E402

BINARY = os.environ.get("TIDINGS_BIN", os.path.join(ROOT, ".build", "debug", "tidings"))


@pytest.fixture(scope="module")
def fanout():
    """Benchmarks/sse-fanout.c, the epoll stream client that checks order and completeness."""
    out = os.path.join(tempfile.mkdtemp(prefix="tidings-fanout-"), "sse-fanout")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", out, os.path.join(ROOT, "Benchmarks", "sse-fanout.c"), "-lz"], check=True)
    return out


@pytest.fixture(scope="module")
def deployment():
    deployed = deploy_local.Deployment(BINARY)
    yield deployed
    deployed.stop()


def result_fields(output):
    line = [l for l in output.splitlines() if l.startswith("RESULT ")][-1]
    return dict(item.split("=", 1) for item in line.split()[1:])


def test_the_shipped_deployment_holds_8000_streams_with_writes_answered(deployment, fanout):
    run = subprocess.run([fanout, "-p", str(deployment.nginx_port), "-n", "8000", "-m", "10", "-i", "200",
                          "-S", "200", "-k", "name", "-T", "120", "-W", "15", "-z", "/preferences/age"],
                         capture_output=True, text=True, timeout=300)
    print(run.stdout)
    fields = result_fields(run.stdout)
    assert fields["held"] == "8000", run.stdout
    assert fields["complete"] == "yes" and fields["in_order"] == "yes", run.stdout
    assert fields["received"] == fields["expected"] == "80000", run.stdout
    assert fields["puts_2xx"] == "10" and fields["puts_non2xx"] == "0", "every write through nginx acknowledged"
    assert int(fields["probe_n"]) > 0, "reads through nginx answered during the changes"
    assert re.search(r"probe: .* 0 lost", run.stdout), run.stdout
    assert run.returncode == 0
    nginx_log = open(deployment.nginx_log).read()
    assert "worker_connections are not enough" not in nginx_log
    assert "setrlimit" not in nginx_log, "worker_rlimit_nofile fits the compose file's ulimits"
    for name in deployment.tidings:
        log = open(deployment.logs[name]).read()
        assert "per-client limit" not in log, f"{name} refused nginx's clients: {log[-2000:]}"

