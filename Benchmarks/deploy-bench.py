#!/usr/bin/env python3
"""8,000 event streams and 10 changes: through the shipped nginx to two instances (deploy/ as
shipped, scripts/deploy_local.py) against one instance directly, in the same run. Prints delivery
p50/p99 (sse-fanout), the CPU each process spent during the change phase, and server CPU per
delivered event.

    Benchmarks/deploy-bench.py [TIDINGS_BIN] [STREAMS] [CHANGES]   (default .build/release/tidings 8000 10)
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import deploy_local  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except OSError:
        return 0.0


def fanout(binary, port, streams, changes, pids, extra=()):
    """Runs sse-fanout; CPU of `pids` (name → pid) from the end of the opening phase to the end."""
    process = subprocess.Popen([binary, "-p", str(port), "-n", str(streams), "-m", str(changes), "-i", "200",
                                "-S", "200", "-T", "120", "-W", "3", *extra],
                               stdout=subprocess.PIPE, text=True)
    before, output = None, []
    for line in process.stdout:
        output.append(line)
        if line.startswith("open:"):
            before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    process.wait()
    after = {name: cpu_seconds(pid) for name, pid in pids.items()}
    spent = {name: after[name] - (before or after)[name] for name in pids}
    text = "".join(output)
    result = dict(item.split("=", 1) for item in [l for l in output if l.startswith("RESULT")][-1].split()[1:])
    return text, result, spent


def report(label, result, spent, tidings_names):
    received = int(result["received"])
    server = sum(spent[name] for name in tidings_names)
    proxy = sum(seconds for name, seconds in spent.items() if name.startswith("nginx"))
    print(f"{label}: {result['held']} streams, {received}/{result['expected']} events, in order {result['in_order']}, "
          f"complete {result['complete']}; delivery p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, max {result['max_ms']} ms")
    print(f"    CPU in the change phase: Tidings {server:.2f} s ({1e6 * server / max(1, received):.1f} µs per delivered event)"
          + (f", nginx {proxy:.2f} s ({1e6 * proxy / max(1, received):.1f} µs per event)" if proxy else ""))
    for name, seconds in sorted(spent.items()):
        print(f"      {name}: {seconds:.2f} s")


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "tidings"))
    streams = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    changes = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    work = tempfile.mkdtemp(prefix="tidings-deploy-bench-")
    tool = os.path.join(work, "sse-fanout")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", tool, os.path.join(ROOT, "Benchmarks", "sse-fanout.c"), "-lz"], check=True)
    try:
        deployment = deploy_local.Deployment(binary)
        try:
            pids = {name: pid for name, pid in deployment.pids().items() if name != "nginx"}
            for index, worker in enumerate(deployment.nginx_worker_pids()):
                pids[f"nginx worker {index}"] = worker
            _, result, spent = fanout(tool, deployment.nginx_port, streams, changes, pids)
            report(f"through nginx to two instances", result, spent, deployment.tidings)
            # The same load on one instance directly (instance B, nginx idle).
            direct = {"tidings-b": deployment.pids()["tidings-b"]}
            _, result, spent = fanout(tool, deployment.ports["tidings-b"], streams, changes, direct)
            report(f"one instance directly      ", result, spent, ["tidings-b"])
        finally:
            deployment.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
