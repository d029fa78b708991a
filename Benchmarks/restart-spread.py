#!/usr/bin/env python3
"""How the clients of a restarted instance come back: deploy/ as shipped (scripts/deploy_local.py),
N event streams through nginx from 200 client addresses, writes through nginx every 400 ms, and
instance A stopped (SIGTERM) and started again on its port. Every stream ends on A with its own
jittered `retry:`, waits that long, reconnects through nginx with `Last-Event-ID` and lands on
whichever instance nginx picks. Prints how the reconnects spread over time, how many resumed with
a replay (no `reset`), and whether any stream missed or repeated an acknowledged write.

    Benchmarks/restart-spread.py [TIDINGS_BIN] [STREAMS]     (default .build/release/tidings, 8000)
"""
import asyncio
import collections
import json
import os
import signal
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import deploy_local  # noqa: E402


class Stream:
    def __init__(self, index):
        self.index = index
        self.source = f"127.0.0.{2 + index % 200}"
        self.last_id = None
        self.retry_ms = 3000
        self.values = []          # (id, value) of every preference event after the snapshot
        self.ended_at = None
        self.reconnected_at = []
        self.resets = 0
        self.connects = 0


async def run_stream(stream, port, stop, ready):
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(stream.source, 0))
        except OSError:
            await asyncio.sleep(0.2)
            continue
        headers = "Accept: text/event-stream\r\n"
        if stream.last_id is not None:
            headers += f"Last-Event-ID: {stream.last_id}\r\n"
        # HTTP/1.0: nginx answers close-delimited, so the body is the event stream itself.
        writer.write(f"GET /preferences/name/events HTTP/1.0\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
        stream.connects += 1
        if stream.connects > 1:
            stream.reconnected_at.append(time.monotonic())
        event = {}
        first = stream.connects == 1
        try:
            status = await reader.readline()
            if b" 200 " not in status:
                raise ConnectionError(status)
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            while True:
                line = await reader.readline()
                if not line:
                    break
                line = line.rstrip(b"\n")
                if not line:
                    if "data" in event:
                        if event.get("event") == "reset":
                            stream.resets += 1
                        elif event.get("event") == "preference":
                            value = json.loads(event["data"])["value"]
                            if first:
                                first = False          # the opening snapshot
                                ready.release()
                            else:
                                stream.values.append((int(event["id"]), value))
                        if "id" in event:
                            stream.last_id = event["id"]
                    event = {}
                    continue
                if line.startswith(b":"):
                    continue
                field, _, value = line.decode().partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "retry":
                    stream.retry_ms = int(value)
                else:
                    event[field] = value
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
        stream.ended_at = time.monotonic()
        if stop.is_set():
            return
        await asyncio.sleep(stream.retry_ms / 1000)


def put(port, value):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/preferences/name", method="PUT",
                                     data=json.dumps({"value": value}).encode(),
                                     headers={"Content-Type": "application/json", "Host": "127.0.0.1"})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return json.loads(reply.read())["revision"]
    except Exception:
        return None


async def main(binary, count):
    deployment = deploy_local.Deployment(binary)
    loop = asyncio.get_running_loop()
    try:
        port = deployment.nginx_port
        stop = asyncio.Event()
        ready = asyncio.Semaphore(0)
        streams = [Stream(i) for i in range(count)]
        tasks = []
        for stream in streams:
            tasks.append(asyncio.create_task(run_stream(stream, port, stop, ready)))
            if len(tasks) % 500 == 0:
                await asyncio.sleep(0.05)
        for _ in range(count):
            await asyncio.wait_for(ready.acquire(), 120)
        print(f"{count} streams open through nginx (instances {deployment.ports})", flush=True)
        acked = []

        async def writer(seconds):
            end = time.monotonic() + seconds
            i = 0
            while time.monotonic() < end:
                revision = await loop.run_in_executor(None, put, port, f"w{i}")
                if revision is not None:
                    acked.append((revision, f"w{i}"))
                i += 1
                await asyncio.sleep(0.4)

        writing = asyncio.create_task(writer(14))
        await asyncio.sleep(2)
        t0 = time.monotonic()
        old_port = deployment.ports["tidings-a"]
        code = await loop.run_in_executor(None, deployment.stop_instance, "tidings-a")
        stopped = time.monotonic() - t0
        await asyncio.sleep(1)
        await loop.run_in_executor(None, lambda: deployment.start_instance("tidings-a", port=old_port))
        restarted = time.monotonic() - t0
        await writing
        await asyncio.sleep(6)
        stop.set()
        for task in tasks:
            task.cancel()

        moved = [s for s in streams if s.reconnected_at]
        times = sorted(s.reconnected_at[0] - t0 for s in moved)
        print(f"instance A: SIGTERM → exit {code} after {stopped:.2f} s; started again at {restarted:.2f} s")
        print(f"streams that reconnected: {len(moved)} of {count}")
        if times:
            buckets = collections.Counter(int(t / 0.5) for t in times)
            print("reconnects per 500 ms after the SIGTERM:")
            for b in range(0, max(buckets) + 1):
                print(f"  {b * 0.5:4.1f}–{b * 0.5 + 0.5:4.1f} s  {buckets.get(b, 0):5d}  {'#' * (buckets.get(b, 0) * 60 // max(buckets.values()))}")
            peak = max(buckets.values())
            print(f"spread: first {times[0]:.2f} s, median {times[len(times) // 2]:.2f} s, last {times[-1]:.2f} s; "
                  f"busiest 500 ms took {peak} ({100 * peak / len(times):.0f}%)")
        resets = sum(s.resets for s in streams)
        expected = [value for _, value in sorted(acked)]
        complete = sum(1 for s in streams if [v for _, v in s.values] == expected)
        duplicates = sum(1 for s in streams if len({i for i, _ in s.values}) != len(s.values))
        print(f"acknowledged writes: {len(acked)}; streams with every one, in order, no gap, no duplicate: "
              f"{complete} of {count}; resets: {resets}; streams with a duplicate: {duplicates}")
        print(f"RESULT streams={count} reconnected={len(moved)} complete={complete} resets={resets} "
              f"first_s={times[0] if times else 0:.2f} last_s={times[-1] if times else 0:.2f}")
    finally:
        deployment.stop()


if __name__ == "__main__":
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "tidings"))
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(binary, count))
