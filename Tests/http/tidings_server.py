"""The real `tidings` binary for the HTTP suites: `--port 0`, a fresh `--data-dir`, SIGTERM at the end.

The binary is `TIDINGS_BIN` (default `.build/debug/tidings` under the repository root).
"""
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import urllib.request
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("TIDINGS_BIN", REPOSITORY / ".build/debug/tidings"))


class Server:
    """`tidings --port 0` in a temporary data directory; `base` is its URL."""

    def __init__(self, *arguments):
        self.directory = tempfile.TemporaryDirectory(prefix="tidings-http-")
        self.process = subprocess.Popen(
            [str(BINARY), "--host", "127.0.0.1", "--port", "0", "--data-dir", self.directory.name, *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True).start()
        self.base = None
        while self.base is None:
            try:
                line = lines.get(timeout=15)
            except queue.Empty:
                self.stop()
                raise RuntimeError("tidings printed no listening line within 15 s")
            if line.startswith("tidings listening on "):
                self.base = line.split()[3].rstrip("/")

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes) of one request on its own connection."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=12)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.directory.cleanup()
