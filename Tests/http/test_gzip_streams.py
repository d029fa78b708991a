"""Gzip event streams read by real clients (API.md "Caching and compression"): `httpx` with
`httpx-sse` (httpx sends `Accept-Encoding: gzip` and decodes as bytes arrive), and Python's own
`zlib` fed the raw body of an `http.client` response, event by event — each event must decode
from the bytes received so far, before the next change is even written. Run with
`make http-test`.
"""
import http.client
import json
import zlib

import httpx
import pytest
from httpx_sse import connect_sse

from tidings_server import Server


@pytest.fixture
def server():
    running = Server()
    yield running
    running.stop()


def put(server, key, value):
    status, _, body = server.request("PUT", f"/preferences/{key}", {"value": value})
    assert status == 200
    return json.loads(body)["revision"]


def events_of(source):
    """The stream's events (httpx-sse also yields the opening `retry:` block, with no data)."""
    return (event for event in source.iter_sse() if event.data)


def test_httpx_sse_reads_a_gzip_stream_event_by_event(server):
    with httpx.Client(timeout=10) as client:
        with connect_sse(client, "GET", server.base + "/preferences/age/events") as source:
            assert source.response.headers["content-encoding"] == "gzip"
            assert source.response.headers["vary"] == "Accept-Encoding"
            events = events_of(source)
            snapshot = next(events)
            assert (snapshot.event, snapshot.id, json.loads(snapshot.data)["value"]) == ("preference", "0", 5)
            for value in range(1, 11):
                revision = put(server, "age", value)
                event = next(events)
                assert event.id == str(revision)
                assert json.loads(event.data) == {"key": "age", "revision": revision, "value": value}


def test_httpx_sse_resumes_a_gzip_stream_with_last_event_id(server):
    revisions = [put(server, "age", value) for value in (1, 2, 3)]
    put(server, "name", "elsewhere")   # not covered by the age stream
    with httpx.Client(timeout=10) as client:
        with connect_sse(client, "GET", server.base + "/preferences/age/events",
                         headers={"Last-Event-ID": str(revisions[0])}) as source:
            assert source.response.headers["content-encoding"] == "gzip"
            events = events_of(source)
            replay = [next(events) for _ in range(2)]
            assert [event.id for event in replay] == [str(r) for r in revisions[1:]]
            live = put(server, "age", 9)
            assert next(events).id == str(live)


def test_python_zlib_decodes_each_event_before_the_next_is_written_and_the_member_ends_cleanly(server):
    host, port = server.base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("GET", "/events?topics=preferences", headers={"Accept-Encoding": "gzip"})
    response = connection.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Encoding") == "gzip"
    decoder = zlib.decompressobj(wbits=31)   # a gzip member
    text = ""

    def next_block():
        """The next SSE block, decoding only what has arrived so far."""
        nonlocal text
        while "\n\n" not in text:
            data = response.read1(65536)
            assert data, "the stream ended"
            text += decoder.decompress(data).decode()
        block, text = text.split("\n\n", 1)
        return block

    blocks = [next_block() for _ in range(9)]   # retry: and one event per preference
    assert blocks[0].startswith("retry: ")
    assert all("event: preference" in block for block in blocks[1:])
    for value in range(1, 6):
        revision = put(server, "age", value)
        block = next_block()
        assert f"id: {revision}\n" in block and f'"value":{value}' in block
    # SIGTERM ends the stream cleanly: final block and trailer, which zlib checks (CRC-32, length).
    server.stop()
    while not decoder.eof:
        data = response.read1(65536)
        if not data:
            break
        text += decoder.decompress(data).decode()
    assert decoder.eof, "the gzip member was not ended"
    assert decoder.unused_data == b""
