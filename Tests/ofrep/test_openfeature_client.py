"""A real OpenFeature client against the real `tidings` server (openapi.yaml "OpenFeature").

The Python OpenFeature SDK (`openfeature-sdk==0.10.0`) with the OFREP provider from PyPI
(`openfeature-provider-ofrep==0.3.0`). That provider evaluates one flag per call with
`POST /ofrep/v1/evaluate/flags/{key}` and keeps no cache (it does not use the bulk endpoint or the
event stream), so a value written with `PUT` is what the next evaluation returns.

The server binary is `TIDINGS_BIN` (default `.build/debug/tidings` under the repository root);
each server runs on `--port 0` with a fresh `--data-dir` and is stopped with SIGTERM, also when
a test fails. Run with `make ofrep-test`.
"""
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import urllib.request
import uuid
from pathlib import Path

import pytest
from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import Reason

REPOSITORY = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("TIDINGS_BIN", REPOSITORY / ".build/debug/tidings"))

BUILT_IN = {
    "should_show_hello_world": ("boolean", False),
    "onboardingCompleted": ("boolean", False),
    "promptedForProVersion": ("boolean", False),
    "name": ("string", "fat"),
    "age": ("integer", 5),
    "readyForAction": ("boolean", False),
    "speed": ("number", 0.0),
    "numberOfItems": ("integer", 0),
}


class Server:
    """`tidings --port 0` in a temporary data directory; `base` is its URL."""

    def __init__(self, *arguments):
        self.directory = tempfile.TemporaryDirectory(prefix="tidings-ofrep-")
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
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=12)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.directory.cleanup()


@pytest.fixture
def server():
    running = Server()
    yield running
    running.stop()


def client_for(base, headers=None):
    """A client bound to its own provider (a fresh domain), so tests do not share one."""
    domain = "tidings-" + uuid.uuid4().hex
    provider = OFREPProvider(base, headers_factory=(lambda: dict(headers)) if headers else None)
    api.set_provider(provider, domain)
    return api.get_client(domain)


def details(client, key, kind, default):
    resolve = {
        "boolean": client.get_boolean_details,
        "integer": client.get_integer_details,
        "number": client.get_float_details,
        "string": client.get_string_details,
    }[kind]
    return resolve(key, default, EvaluationContext(targeting_key="user-1", attributes={"plan": "pro"}))


# Code defaults that differ from every declared default, so a fallback cannot pass for a value.
FALLBACK = {"boolean": True, "integer": -1, "number": -1.5, "string": "<fallback>"}


def test_every_built_in_preference_resolves_with_its_type_reason_and_variant(server):
    client = client_for(server.base)
    status, schema = server.request("GET", "/preferences/schema")
    assert status == 200
    assert {key: (entry["type"], entry["default"]) for key, entry in schema.items()} == BUILT_IN
    for key, (kind, default) in BUILT_IN.items():
        result = details(client, key, kind, FALLBACK[kind])
        assert result.error_code is None, (key, result.error_message)
        assert result.value == default and type(result.value) is type(default), key
        assert result.reason == Reason.STATIC, key
        assert result.variant == "default", key
        assert result.flag_metadata == {"revision": 0, "type": kind}, key


def test_the_declared_type_is_what_the_client_sees(server):
    client = client_for(server.base)
    # A number preference holding a whole number is still a float to the client...
    server.request("PUT", "/preferences/speed", {"value": 2})
    speed = client.get_float_details("speed", -1.5)
    assert speed.error_code is None and speed.value == 2.0 and isinstance(speed.value, float)
    # ...and an integer preference is not a float, nor a number one an integer.
    assert client.get_float_details("age", -1.5).error_code == ErrorCode.TYPE_MISMATCH
    assert client.get_integer_details("speed", -1).error_code == ErrorCode.TYPE_MISMATCH
    assert client.get_string_details("age", "x").error_code == ErrorCode.TYPE_MISMATCH


def test_unknown_key_is_flag_not_found_and_the_code_default_is_used(server):
    client = client_for(server.base)
    result = client.get_boolean_details("colour", True)
    assert result.error_code == ErrorCode.FLAG_NOT_FOUND
    assert result.reason == Reason.ERROR
    assert result.value is True
    assert "colour" in (result.error_message or "")


def test_a_put_is_seen_by_the_next_evaluation(server):
    client = client_for(server.base)
    assert client.get_integer_value("age", -1) == 5
    status, record = server.request("PUT", "/preferences/age", {"value": 6})
    assert status == 200 and record["revision"] == 1
    result = client.get_integer_details("age", -1)
    assert (result.value, result.variant, result.flag_metadata["revision"]) == (6, "set", 1)
    server.request("PUT", "/preferences/name", {"value": "tidings"})
    assert client.get_string_value("name", "<fallback>") == "tidings"
    server.request("DELETE", "/preferences/age")
    result = client.get_integer_details("age", -1)
    assert (result.value, result.variant, result.flag_metadata["revision"]) == (5, "default", 3)


def test_it_works_with_a_read_token_as_bearer_or_x_api_key():
    secured = Server("--read-token", "r3ad-token", "--api-token", "wr1te-token")
    try:
        for headers in ({"Authorization": "Bearer r3ad-token"}, {"X-API-Key": "r3ad-token"}, {"X-API-Key": "wr1te-token"}):
            result = client_for(secured.base, headers).get_integer_details("age", -1)
            assert (result.error_code, result.value, result.reason) == (None, 5, Reason.STATIC), headers
        for headers in (None, {"X-API-Key": "wrong"}):
            result = client_for(secured.base, headers).get_integer_details("age", -1)
            assert result.error_code == ErrorCode.GENERAL and result.value == -1, headers
            assert result.error_message == "unauthorized", headers
    finally:
        secured.stop()


def test_an_object_preference_is_an_object_flag():
    """OpenFeature's object evaluation (the provider conformance suite's object scenarios): the
    declared object comes back as a structure, typed members intact, and a non-object flag asked
    for as an object is a type mismatch."""
    directory = tempfile.TemporaryDirectory(prefix="tidings-ofrep-prefs-")
    path = Path(directory.name) / "prefs.json"
    path.write_text(json.dumps({
        "theme": {"type": "object", "default": {"color": "red", "size": 3, "ratio": 0.5},
                  "properties": {"color": {"type": "string"}, "size": {"type": "integer"}, "ratio": {"type": "number"}},
                  "required": ["color"]},
        "age": {"type": "integer", "default": 5},
    }))
    secured = Server("--preferences", str(path))
    try:
        client = client_for(secured.base)
        result = client.get_object_details("theme", {"fallback": True})
        assert result.error_code is None, result.error_message
        assert result.value == {"color": "red", "size": 3, "ratio": 0.5}
        assert (result.reason, result.variant, result.flag_metadata) == (Reason.STATIC, "default", {"revision": 0, "type": "object"})
        status, _ = secured.request("PUT", "/preferences/theme", {"value": {"color": "blue", "size": 4, "ratio": 1}})
        assert status == 200
        result = client.get_object_details("theme", {"fallback": True})
        assert result.value == {"color": "blue", "size": 4, "ratio": 1.0} and isinstance(result.value["ratio"], float)
        assert isinstance(result.value["size"], int) and result.variant == "set"
        assert client.get_object_details("age", {"fallback": True}).error_code == ErrorCode.TYPE_MISMATCH
        assert client.get_string_details("theme", "x").error_code == ErrorCode.TYPE_MISMATCH
    finally:
        secured.stop()
        directory.cleanup()
