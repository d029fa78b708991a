#!/usr/bin/env python3
"""What streams of one environment cost when another one changes (issue 31, "Performance").

Starts the server (BENCH_TIDINGS_BIN, default .build/release/tidings) on SQLite with `staging`
created, then measures the server's CPU time (/proc/PID/stat, user + system) over CHANGES PUTs of
`name`, sent one after another:
  (a) in staging, with no stream open (the writes' own cost);
  (b) in staging, with STREAMS streams open on default's `name` (what default's streams cost
      when another environment changes: the goal is nothing more than (a));
  (c) in default, with those STREAMS streams following (the cost of delivering to them).
The streams are read by this process (epoll), so the server never waits on a full socket.
STREAMS=2000 CHANGES=50. Prints numbers; asserts nothing.
"""
import http.client
import json
import os
import re
import selectors
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BENCH_TIDINGS_BIN", os.path.join(ROOT, ".build/release/tidings"))
STREAMS = int(os.environ.get("STREAMS", "2000"))
CHANGES = int(os.environ.get("CHANGES", "50"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main():
    work = tempfile.mkdtemp(prefix="tidings-envstreams-")
    log = open(os.path.join(work, "log"), "w+")
    server = subprocess.Popen([BIN, "--port", "0", "--data-dir", os.path.join(work, "data"), "--feed-refresh", "0",
                               "--log-level", "warning", "--max-connections-per-client", str(STREAMS + 100)], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(600):
            log.seek(0)
            match = re.search(r"tidings listening on http://127\.0\.0\.1:(\d+)", log.read())
            if match:
                port = int(match.group(1))
                break
            time.sleep(0.1)
        if port is None:
            sys.exit("the server did not start")
        writer = None

        def request(method, path, body=None):
            nonlocal writer
            if writer is None:
                writer = http.client.HTTPConnection("127.0.0.1", port)
            writer.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json"})
            answer = writer.getresponse()
            answer.read()
            return answer.status

        assert request("PUT", "/environments/staging") == 201
        selector = selectors.DefaultSelector()
        received = [0]

        def drain(timeout):
            for key, _ in selector.select(timeout):
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                received[0] += data.count(b"\nevent: preference")

        def changes(path, label, streams_open):
            nonlocal writer
            writer = None   # a fresh connection: the last one may have idled out
            before, start = cpu_seconds(server.pid), time.monotonic()
            for i in range(CHANGES):
                assert request("PUT", path, {"value": f"{label}-{i}"}) == 200
                drain(0)
            wall = time.monotonic() - start
            cpu = cpu_seconds(server.pid) - before
            print(f"{label}: {CHANGES} PUTs with {streams_open} default streams open: server CPU {cpu * 1000:.0f} ms "
                  f"({cpu / CHANGES * 1000:.2f} ms per change), {wall:.2f} s wall")
            return cpu

        changes("/environments/staging/preferences/name", "(a) staging, no streams", 0)
        for _ in range(STREAMS):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(f"GET /events?topics=preferences&keys=name HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Accept: text/event-stream\r\n\r\n".encode())
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + 60
        while received[0] < STREAMS and time.monotonic() < deadline:
            drain(0.5)
        print(f"{received[0]} of {STREAMS} default streams open (snapshot received)")
        time.sleep(1)
        received[0] = 0
        other = changes("/environments/staging/preferences/name", "(b) staging", STREAMS)
        drain(0.5)
        leaked = received[0]
        same = changes("/preferences/name", "(c) default", STREAMS)
        deadline = time.monotonic() + 30
        while received[0] < leaked + STREAMS * CHANGES and time.monotonic() < deadline:
            drain(0.5)
        delivered = received[0] - leaked
        print(f"events default's streams got from staging's changes: {leaked}; from default's: {delivered} "
              f"of {STREAMS * CHANGES}")
        if delivered:
            print(f"server CPU per delivered event: {same / delivered * 1e6:.1f} µs "
                  f"((c) minus (b) per event: {(same - other) / delivered * 1e6:.1f} µs)")
    finally:
        server.terminate()
        server.wait(15)


def spread():
    """ENVS>1: STREAMS streams spread over ENVS environments (default and ENVS-1 created ones), CHANGES
    changes in one of them, INTERVAL_MS apart; ENVS=1: all streams and changes in default. Prints the
    server's CPU per delivered event and the delivery latency (PUT sent → event read) p50/p99."""
    envs = int(os.environ.get("ENVS", "8"))
    interval = float(os.environ.get("INTERVAL_MS", "100")) / 1000
    work = tempfile.mkdtemp(prefix="tidings-envspread-")
    log = open(os.path.join(work, "log"), "w+")
    server = subprocess.Popen([BIN, "--port", "0", "--data-dir", os.path.join(work, "data"), "--feed-refresh", "0",
                               "--log-level", "warning", "--max-connections-per-client", str(STREAMS + 100)],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(600):
            log.seek(0)
            match = re.search(r"tidings listening on http://127\.0\.0\.1:(\d+)", log.read())
            if match:
                port = int(match.group(1))
                break
            time.sleep(0.1)
        names = ["default"] + [f"e{i}" for i in range(1, envs)]
        writer = http.client.HTTPConnection("127.0.0.1", port)
        for name in names[1:]:
            writer.request("PUT", f"/environments/{name}")
            writer.getresponse().read()
        target = names[-1]
        prefix = "" if target == "default" else f"/environments/{target}"
        selector = selectors.DefaultSelector()
        buffers = {}
        for i in range(STREAMS):
            name = names[i % envs]
            path = ("" if name == "default" else f"/environments/{name}") + "/events?topics=preferences&keys=name"
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
            buffers[sock] = b""
        sent, latencies, snapshots = {}, [], [0]
        value = re.compile(rb'"value":"run-(\d+)"')

        def drain(timeout):
            for key, _ in selector.select(timeout):
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                now = time.monotonic()
                text = buffers[key.fileobj] + data
                cut = text.rfind(b"\n\n")
                whole, buffers[key.fileobj] = (text[:cut], text[cut:]) if cut >= 0 else (b"", text)
                for match in value.finditer(whole):
                    latencies.append(now - sent[int(match.group(1))])
                snapshots[0] += whole.count(b"event: preference") - len(value.findall(whole))

        deadline = time.monotonic() + 60
        while snapshots[0] < STREAMS and time.monotonic() < deadline:
            drain(0.5)
        time.sleep(1)
        following = STREAMS // envs + (1 if (envs - 1) < STREAMS % envs else 0)
        before = cpu_seconds(server.pid)
        for i in range(CHANGES):
            sent[i] = time.monotonic()
            writer.request("PUT", prefix + "/preferences/name", body=json.dumps({"value": f"run-{i}"}),
                           headers={"Content-Type": "application/json"})
            writer.getresponse().read()
            end = time.monotonic() + interval
            while time.monotonic() < end:
                drain(max(0, end - time.monotonic()))
        deadline = time.monotonic() + 30
        while len(latencies) < following * CHANGES and time.monotonic() < deadline:
            drain(0.5)
        cpu = cpu_seconds(server.pid) - before
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
        print(f"{STREAMS} streams over {envs} environment(s), {CHANGES} changes in {target} ({following} streams follow it): "
              f"{len(latencies)} of {following * CHANGES} events delivered; server CPU {cpu * 1000:.0f} ms, "
              f"{cpu / max(1, len(latencies)) * 1e6:.1f} µs per delivered event; latency p50 {pick(0.5):.1f} ms, "
              f"p99 {pick(0.99):.1f} ms")
    finally:
        server.terminate()
        server.wait(15)


if __name__ == "__main__":
    spread() if os.environ.get("ENVS") else main()
