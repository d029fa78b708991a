"""REDbot (PyPI `redbot`, "lint for HTTP") over every GET route of a running server: no note of
level BAD (REDbot's error level) on any of them (API.md "Caching and compression").

REDbot fetches each URL and runs its active checks on it: a conditional request with the
`ETag` (`If-None-Match` → 304), `If-Modified-Since`, a `Range` request, and content negotiation
(the same request with and without `Accept-Encoding: gzip`: `Vary`, distinct strong ETags, the
body decompressing to the identity one). Its text formatter shows a note's level only as a
terminal colour, so the notes are read from its Python API (redbot_notes.py) instead. Run with `make http-test`.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tidings_server import Server

HERE = Path(__file__).resolve().parent

# Every GET route (the event streams are checked by test_gzip_streams.py: REDbot waits for a
# response to end). `/things/YOLO` and `/posts/1` exist once the fixture made them.
ROUTES = ["/", "/openapi.yaml", "/healthz", "/readyz", "/metrics", "/preferences", "/preferences/schema",
          "/preferences/age", "/things", "/things/YOLO", "/posts", "/posts/1", "/sample/posts"]


@pytest.fixture(scope="module")
def server():
    running = Server()
    running.request("POST", "/things", {"thing": "yolo"})
    running.request("PUT", "/preferences/age", {"value": 6})
    status, _, body = running.request("GET", "/posts?wait=10")
    assert status == 200 and json.loads(body)["state"] == "loaded"
    yield running
    running.stop()


def redbot_notes(url):
    """Every note REDbot makes on `url` (see redbot_notes.py), in a process of its own."""
    result = subprocess.run([sys.executable, str(HERE / "redbot_notes.py"), url],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("route", ROUTES)
def test_no_error_level_notes(server, route):
    notes = redbot_notes(server.base + route)
    assert notes, "REDbot made no notes at all: it did not check"
    bad = [f"{note['name']}: {note['summary']}" for note in notes if note["level"] == "bad"]
    assert bad == [], f"{route}: " + "; ".join(bad)
