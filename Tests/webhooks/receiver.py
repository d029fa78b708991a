#!/usr/bin/env python3
"""A webhook receiver for the tests (Tests/EndToEndTests/WebhooksTests.swift): it checks every
delivery's signature with the Standard Webhooks reference library (`standardwebhooks` from
PyPI), records it, and answers as the test scripts it.

    receiver.py SECRET            prints "receiver listening on PORT" once it accepts

- `POST /hook/<name>`: a delivery. Answered by the next entry of the hook's script (a status
  such as 500 or 410, or "hang": never answer), else 200. Every attempt is recorded with whether
  its signature verified, its headers, body, status answered, and start and end times.
- `POST /control/<name>` `{"script": [500, "hang", 200, ...], "delay": seconds}`: sets the
  hook's script (consumed one entry per delivery) and how long a 2xx answer waits.
- `GET /deliveries`: every attempt recorded so far, as JSON, plus `maxInFlight` per hook (the
  most deliveries of one hook that were ever open at the same time).
"""
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

lock = threading.Lock()
attempts: list[dict] = []
scripts: dict[str, list] = {}
delays: dict[str, float] = {}
in_flight: dict[str, int] = {}
max_in_flight: dict[str, int] = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _json(self, status: int, value) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        if self.path == "/deliveries":
            with lock:
                self._json(200, {"attempts": attempts, "maxInFlight": max_in_flight, "inFlight": in_flight})
        else:
            self._json(404, {"detail": "no such path"})

    def do_POST(self):
        body = self._body()
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "control":
            control = json.loads(body or b"{}")
            with lock:
                scripts[parts[1]] = list(control.get("script", []))
                delays[parts[1]] = float(control.get("delay", 0))
            return self._json(200, {"ok": True})
        if len(parts) != 2 or parts[0] != "hook":
            return self._json(404, {"detail": "no such path"})
        hook = parts[1]
        started = time.time()
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = {"hook": hook, "id": headers.get("webhook-id"), "timestamp": headers.get("webhook-timestamp"),
                  "signature": headers.get("webhook-signature"), "contentType": headers.get("content-type"),
                  "start": started}
        try:
            Webhook(SECRET).verify(body, headers)
            record["verified"] = True
        except Exception as error:  # noqa: BLE001 - any failure is what the test asserts on
            record["verified"] = False
            record["verifyError"] = repr(error)
        try:
            record["payload"] = json.loads(body)
        except ValueError:
            record["payload"] = None
        with lock:
            script = scripts.get(hook, [])
            action = script.pop(0) if script else 200
            delay = delays.get(hook, 0.0)
            in_flight[hook] = in_flight.get(hook, 0) + 1
            max_in_flight[hook] = max(max_in_flight.get(hook, 0), in_flight[hook])
        try:
            if action == "hang":
                record["answered"] = None
                with lock:
                    attempts.append(record)
                # Held until the sender gives up and closes the connection.
                self.connection.settimeout(0.1)
                deadline = time.time() + 3600
                while time.time() < deadline:
                    try:
                        if self.connection.recv(1, socket.MSG_PEEK) == b"":
                            break
                    except socket.timeout:
                        continue
                    except OSError:
                        break
                record["closedBySender"] = time.time()
                self.close_connection = True
                return
            status = int(action)
            if 200 <= status < 300 and delay:
                time.sleep(delay)
            record["answered"] = status
            record["end"] = time.time()
            with lock:
                attempts.append(record)
            self._json(status, {"received": record["id"]})
        finally:
            with lock:
                in_flight[hook] -= 1


if __name__ == "__main__":
    SECRET = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"receiver listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
