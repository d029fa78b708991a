#!/usr/bin/env python3
"""Soak test: a bounded run of mixed load against the real (release) tidings binary.

Workers for the whole run: readers (GET of every resource), writers (PUT/PATCH/DELETE
preferences, POST/DELETE things), streams that open, read a little and close, slow readers
(a tiny receive window, reading nothing for seconds), resumes with Last-Event-ID, and a few
hostile clients (ambiguous framing, trickled heads). Measured from /proc: resident memory
after a warm-up and after the soak (must stay within 10%), open descriptors before and
after (must return to the baseline), and every status (no 5xx, ever).

    python3 Tests/soak/soak.py --binary .build/release/tidings --seconds 180
"""
import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--binary", required=True)
ap.add_argument("--seconds", type=float, default=180)
ap.add_argument("--warmup", type=float, default=30)
args = ap.parse_args()

data_dir = tempfile.mkdtemp(prefix="tidings-soak-")
server = subprocess.Popen([args.binary, "--port", "0", "--data-dir", data_dir, "--heartbeat", "1",
                           "--header-timeout", "2", "--log-level", "warning",
                           # History that fills during the warm-up, so what follows is steady state.
                           "--replay-buffer", "500"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = server.stdout.readline()
match = re.search(r":(\d+)\s*$", line.strip())
if not match:
    server.kill()
    sys.exit(f"tidings did not start: {line!r}")
PORT = int(match.group(1))
PID = server.pid

lock = threading.Lock()
stats = {"requests": 0, "5xx": [], "errors": 0, "streams": 0, "resumes": 0, "events": 0, "refused": 0}
stop = threading.Event()


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    return -1


def fd_count():
    return len(os.listdir(f"/proc/{PID}/fd"))


def count(key, value=1):
    with lock:
        if isinstance(stats[key], list):
            stats[key].append(value)
        else:
            stats[key] += value


class Client:
    """One keep-alive connection: request() sends and reads one reply (Content-Length)."""

    def __init__(self, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def reply(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body

    def request(self, method, target, body=None):
        data = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        payload = body.encode() if body is not None else b""
        if body is not None:
            data += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        self.sock.sendall(data.encode() + b"\r\n" + payload)
        status, headers, body = self.reply()
        count("requests")
        if status >= 500:
            count("5xx", f"{method} {target} -> {status}")
        return status, headers, body


def loop(worker):
    def run():
        while not stop.is_set():
            try:
                worker()
            except (OSError, ConnectionError, ValueError, IndexError):
                count("errors")
                time.sleep(0.05)
    return run


def reader():
    c = Client()
    try:
        for _ in range(50):
            if stop.is_set():
                break
            target = random.choice(["/healthz", "/readyz", "/preferences", "/preferences/name", "/things",
                                    "/preferences/age", "/posts", "/metrics"])
            c.request("GET", target)
    finally:
        c.close()


def writer():
    c = Client()
    try:
        for _ in range(20):
            if stop.is_set():
                break
            choice = random.random()
            if choice < 0.3:
                c.request("PUT", "/preferences/age", '{"value": %d}' % random.randint(0, 100))
            elif choice < 0.45:
                c.request("PUT", "/preferences/name", '{"value": "%s"}' % ("n" * random.choice([10, 100, 1000, 8000])))
            elif choice < 0.6:
                c.request("PATCH", "/preferences", '{"speed": %f, "readyForAction": %s}' %
                          (random.random(), random.choice(["true", "false"])))
            elif choice < 0.8:
                c.request("POST", "/things", '{"thing": "t%d"}' % random.randint(0, 300))
            elif choice < 0.95:
                c.request("DELETE", "/things/T%d" % random.randint(0, 300))
            else:
                c.request("DELETE", "/preferences/name")
    finally:
        c.close()


def stream(last_event_id=None, slow=False):
    sock = socket.socket()
    if slow:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", PORT))
    head = "GET /events?topics=preferences,things HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
    if last_event_id:
        head += f"Last-Event-ID: {last_event_id}\r\n"
    sock.sendall((head + "\r\n").encode())
    count("streams")
    if last_event_id:
        count("resumes")
    data = b""
    try:
        if slow:
            time.sleep(random.uniform(2, 6))   # reads nothing: the server must bound what it keeps
        deadline = time.time() + random.uniform(0.2, 3)
        while time.time() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    finally:
        sock.close()
    m = re.match(rb"HTTP/1.1 (\d+)", data)
    if m and int(m.group(1)) >= 500:
        count("5xx", f"stream -> {m.group(1).decode()}")
    ids = re.findall(rb"^id: (\d+)", data, re.M)
    count("events", len(ids))
    return ids[-1].decode() if ids else None


def streamer():
    last = stream()
    if last and not stop.is_set():
        stream(last_event_id=last)


def slow_reader():
    stream(slow=True)


def hostile():
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    try:
        if random.random() < 0.5:
            sock.sendall(b"PUT /preferences/age HTTP/1.1\r\nContent-Length: 13\r\nContent-Length: 60\r\n\r\n"
                         b'{"value": 7}\nDELETE /things/T1 HTTP/1.1\r\n\r\n')
        else:
            for byte in b"GET /healthz HTTP/1.1\r\nX-Slow: yes":
                sock.send(bytes([byte]))
                time.sleep(0.1)
                if stop.is_set():
                    break
        reply = sock.recv(4096)
        m = re.match(rb"HTTP/1.1 (\d+)", reply)
        if m:
            code = int(m.group(1))
            if code >= 500:
                count("5xx", f"hostile -> {code}")
            count("refused")
    except (OSError, socket.timeout):
        pass
    finally:
        sock.close()


def open_descriptors():
    out = []
    for fd in os.listdir(f"/proc/{PID}/fd"):
        try:
            out.append(os.readlink(f"/proc/{PID}/fd/{fd}"))
        except OSError:
            pass
    return sorted(out)


# The store opens its WAL files on the first write; the posts client (libcurl) holds
# descriptors only while a fetch runs. The baseline is taken after a write and a fetch.
setup = Client()
setup.request("PUT", "/preferences/age", '{"value": 1}')
setup.request("GET", "/posts?wait=5")
setup.request("GET", "/preferences")
setup.close()
time.sleep(0.5)
workers = ([reader] * 4) + ([writer] * 2) + ([streamer] * 4) + ([slow_reader] * 2) + [hostile]
threads = [threading.Thread(target=loop(w), daemon=True) for w in workers]
baseline_fds = fd_count()
baseline_list = open_descriptors()
start_rss = rss_kib()
started = time.time()
for t in threads:
    t.start()

time.sleep(args.warmup)
warm_rss, warm_fds = rss_kib(), fd_count()
print(f"after warm-up ({args.warmup:.0f}s): rss {warm_rss} KiB, fds {warm_fds}", flush=True)
time.sleep(max(0, args.seconds - args.warmup))
stop.set()
for t in threads:
    t.join(timeout=15)
loaded_for = time.time() - started

# Descriptors go back once every connection is closed (a deadline, not a sleep).
deadline = time.time() + 15
while fd_count() > baseline_fds and time.time() < deadline:
    time.sleep(0.1)
end_fds = fd_count()
end_list = open_descriptors()
end_rss = rss_kib()
if end_fds > baseline_fds:
    extra = list(end_list)
    for item in baseline_list:
        if item in extra:
            extra.remove(item)
    print("descriptors left open:", extra)
server.terminate()
code = server.wait(timeout=15)
shutil.rmtree(data_dir, ignore_errors=True)

growth = (end_rss - warm_rss) / warm_rss * 100
print(f"soak: {loaded_for:.0f}s, {stats['requests']} requests, {stats['streams']} streams "
      f"({stats['resumes']} resumes, {stats['events']} events read), {stats['refused']} hostile refusals, "
      f"{stats['errors']} client-side errors")
print(f"memory: start {start_rss} KiB, after warm-up {warm_rss} KiB, after soak {end_rss} KiB ({growth:+.1f}%)")
print(f"descriptors: baseline {baseline_fds}, after warm-up {warm_fds}, after soak {end_fds}")
print(f"5xx answers: {len(stats['5xx'])} {stats['5xx'][:5]}; exit status {code}")
failures = []
if stats["5xx"]:
    failures.append("5xx answers")
if growth > 10:
    failures.append(f"memory grew {growth:.1f}% after warm-up")
if end_fds > baseline_fds:
    failures.append(f"descriptors {end_fds} > baseline {baseline_fds}")
if code != 0:
    failures.append(f"exit status {code}")
if stats["requests"] < 100 or stats["streams"] < 10:
    failures.append("the load did not run")
if failures:
    sys.exit("SOAK FAILED: " + "; ".join(failures))
print("soak passed")
