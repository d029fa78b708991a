#!/usr/bin/env python3
"""Runs everything `make test` covers, after the one debug build, as jobs on a few parallel slots.

Why a scheduler: the suite is a few hundred end-to-end tests that mostly wait on sockets, plus
fuzzers, linters and Python suites against the real binary. Run one after another they took
about 25 minutes on 2 cores; side by side they fill the cores instead of waiting. Each XCTest
class is one job (one process of the test binary, so a class's shared fixtures stay shared),
longest first. A job marked `solo` (it measures CPU time, latency or throughput, or loads the
machine on purpose) runs with no other job beside it, so nothing it asserts depends on what the
rest of the suite happens to be doing. An `idle` job (a fuzz target's search: pure CPU, its own
time budget) runs in the solo jobs' shadow instead, at SCHED_IDLE: on the core they leave free,
yielding it at once when they want it.

Every job writes its own log under .build/test-logs/; a failed job's log tail is printed, every
job runs even after a failure, and the exit status is 0 only when all passed. Each job has a time
limit; a job past it is killed (its whole process group) and counts as failed.

    scripts/run-tests.py                 everything
    scripts/run-tests.py --build-tests   the test binary's build is a job too (the jobs that
                                         need only the server binary run while the tests compile)
    scripts/run-tests.py --build-server --build-tests
                                         and the server binary's build before it, with the fuzz
                                         targets' build in its shadow (`make test`)
    scripts/run-tests.py --only REGEX    just the jobs whose name matches (e.g. 'xctest:Posts')
    scripts/run-tests.py --list          the jobs, in the order they would start
    TEST_SLOTS=N                         parallel slots (default: 2 per core)
    TEST_TMPDIR=DIR                      where the jobs keep their data (default: a directory in
                                         /dev/shm when it has 4 GiB free; empty: $TMPDIR as is)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".build" / "test-logs"
XCTEST = ROOT / ".build" / "debug" / "TidingsPackageTests.xctest"
TIDINGS = ROOT / ".build" / "debug" / "tidings"
TIMINGS = ROOT / "Tests" / "timings.json"   # seconds per job from a measured run; orders the queue

# XCTest classes that must have the machine to themselves: they hold the server to a wall-clock
# bound of a few hundred milliseconds or less while it works (latency percentiles, "answered at
# once"), which CPU taken by a neighbouring job would stretch. CPU-time and memory assertions
# measure the server process's own use and run beside others.
SOLO_CLASSES = {
    "UnicodeWorkTests", "PostsAdoptionCostTests", "OFREPContextCostTests", "SizeBoundTests",
    "PostsLoadingTests", "ResumeAcrossInstancesTests", "HeadRefusalTests", "RefusedAtTheHeadTests",
    # /healthz p99 during an attack within a budget of a few times the p99 before it: beside three
    # other jobs it measured 32 ms against a 30.7 ms budget once (the attack's cost is the same).
    "StuckStreamsMemoryTests",
}


# Classes whose figures mean something only on a real disk: they print durable writes per second,
# and an fsync on tmpfs costs nothing. They keep the machine's own temporary directory.
ON_DISK_CLASSES = {"PostgresThroughputMeasurement"}
DISK_TMPDIR = os.environ.get("TMPDIR", "/tmp")


def scratch_directory() -> str | None:
    """The directory every job's temporary data goes to (TMPDIR): the SQLite files, PostgreSQL
    clusters and nginx prefixes the tests make. In memory when the machine has a tmpfs with room:
    on disk, each of the suite's thousands of fsyncs waited behind the builds' and linkers'
    writes, and under CI's load one statement took over 5 s, a PostgreSQL crash recovery's sync of
    its data directory 6 s, and tests waiting on them timed out. The server's own behaviour is the
    same (it still asks for every fsync); no test here is about power loss. None: leave TMPDIR."""
    chosen = os.environ.get("TEST_TMPDIR")
    if chosen is not None:
        return chosen or None
    base = "/dev/shm"
    try:
        free = os.statvfs(base)
        if free.f_bavail * free.f_frsize < (4 << 30) or not os.access(base, os.W_OK | os.X_OK):
            return None
        # A short name: PostgreSQL's socket path under it must stay within 107 bytes.
        path = tempfile.mkdtemp(prefix="t-", dir=base)
        os.chmod(path, 0o1777)   # like /tmp: the clusters belong to the `postgres` user when run as root
        return path
    except OSError:
        return None


def stop_leftover_clusters(scratch: str) -> None:
    """Shuts down (immediately) any PostgreSQL cluster still running from the scratch directory
    — a job killed at its time limit, or a run interrupted, whose watchdog has not stopped it yet —
    before the directory goes: without its data directory a postmaster would run on, unreachable."""
    pids: list[int] = []
    for pidfile in Path(scratch).glob("*/data/postmaster.pid"):
        try:
            pid = int(pidfile.read_text().split("\n", 1)[0])
            os.kill(pid, signal.SIGQUIT)
            pids.append(pid)
        except (OSError, ValueError):
            continue
    deadline = time.monotonic() + 10
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if Path(f"/proc/{p}").exists()]
        time.sleep(0.1)


@dataclass
class Job:
    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    solo: bool = False
    # Pure CPU work with a time budget of its own (a fuzz target's search), run at SCHED_IDLE in the
    # solo jobs' shadow: it takes only what they leave idle of the cores (one of two, mostly), and
    # gives it back at once when they want it. Run among the other jobs it took CPU from them.
    idle: bool = False
    # A solo job that keeps both cores busy on purpose: no idle job beside it (a fuzz input starved
    # for longer than libFuzzer's per-input timeout, 60 s, would be reported as a hang).
    exclusive: bool = False
    # Needs nothing a build makes (the fuzz targets' own build): it may start beside a solo job (the
    # server's build, which leaves a core idle a fifth of its time: module emission, serial chains
    # of modules, the link) at SCHED_IDLE, and goes on at normal priority when that job ends.
    background: bool = False
    weight: float = 1.0                               # share of a slot it takes (a job that mostly waits takes less)
    after: list[str] = field(default_factory=list)   # names of jobs that must have passed first
    limit: float = 1200.0                             # seconds before it is killed
    expected: float = 10.0
    # run state
    process: subprocess.Popen | None = None
    started: float = 0.0
    finished: float = 0.0
    cpu: float = 0.0                                  # CPU seconds of its process and the ones it waited for
    at_idle: bool = False                             # running at SCHED_IDLE (idle, or background beside a solo job)
    status: str = "waiting"                           # waiting, running, passed, failed, skipped


def xctest_classes() -> list[str]:
    """`Module.Class` of every XCTest class in the built test binary."""
    out = subprocess.run([str(XCTEST), "--list-tests"], capture_output=True, text=True, check=True).stdout
    classes: list[str] = []
    for line in out.splitlines():
        m = re.match(r"^(\w+\.\w+)/\w+$", line.strip())
        if m and m.group(1) not in classes:
            classes.append(m.group(1))
    return classes


def xctest_jobs() -> list[Job]:
    """One job per XCTest class of the built test binary."""
    result: list[Job] = []
    for cls in xctest_classes():
        short = cls.split(".", 1)[1]
        env = {"TMPDIR": DISK_TMPDIR} if short in ON_DISK_CLASSES else {}
        result.append(Job(f"xctest:{short}", [str(XCTEST), cls], env=env, solo=short in SOLO_CLASSES, limit=900))
    return result


# The build of the test binary as a job (`--build-tests`): it takes most of the slots (1.7 of 3: one
# short job fits beside it, and fills its serial phases — module emission, linking), and the XCTest
# jobs are made from the binary once it has passed.
BUILD_TESTS = "build-tests"
# The server binary's build as a job (`--build-server`): solo, first; everything but background
# jobs waits for it.
BUILD_SERVER = "build-server"


def jobs(debug_bin: str) -> list[Job]:
    """Every job that needs only the server binary (and the tools), not the test binary."""
    env_bin = {"TIDINGS_BIN": debug_bin}
    make = ["make", "--no-print-directory"]
    result: list[Job] = [
        # The fuzz targets build once (coverage-instrumented objects in .build/fuzz), then each
        # target runs for FUZZ_SECONDS (10) as its own job: in the suite they run their seeds and
        # a short search (a core each for the time: at 20 s the six took 2 minutes of CPU, an
        # eighth of the suite's), to keep `make test` within CI's 15 minutes; `make fuzz`
        # searches for 15 minutes a target.
        Job("fuzz-build", ["Fuzz/run.sh", "--build-only"], background=True, limit=1200),
        *[Job(f"fuzz:{t}", ["Fuzz/run.sh", "--run", t], env={"FUZZ_SECONDS": os.environ.get("FUZZ_SECONDS", "10")},
              after=["fuzz-build"], idle=True, limit=600) for t in fuzz_targets()],
        Job("lint", make + ["lint"], limit=600),
        Job("browser", make + ["browser-test"], env=env_bin, limit=900),
        Job("ofrep", make + ["ofrep-test"], env=env_bin, limit=600),
        Job("http", make + ["http-test"], env=env_bin, limit=900),
        # 8,000 streams through the shipped nginx: loads both cores on purpose.
        Job("deploy", make + ["deploy-test"], env=env_bin, solo=True, exclusive=True, limit=900),
        Job("runtime-libs", ["scripts/check-runtime-libs.sh", "--toolchain-ok", debug_bin, "Dockerfile"], limit=120),
        # Schemathesis mostly waits (on event streams it reads until their time limit): about a
        # fifth of a core each.
        Job("schemathesis:builtin", ["Tests/contract/run_schemathesis.sh"], env=env_bin, weight=0.3, limit=900),
        Job("schemathesis:bounded", ["Tests/contract/run_schemathesis.sh"],
            env={**env_bin, "PREFERENCES": "Tests/contract/preferences-bounded.json",
                 # What the declarations shape: the operations whose requests or answers carry
                 # preference values (the rest, things, posts, environments, health, are the
                 # same under any set and are run by schemathesis:builtin).
                 "PATHS": r"^/(environments/\{env\}/)?(preferences|apply|schedules|ofrep|export|history|events)"},
            weight=0.3, limit=900),
        Job("schemathesis:ofrep", ["Tests/contract/run_schemathesis.sh"],
            env={**env_bin, "SPEC": "Tests/contract/ofrep/openapi.yaml",
                 "CONFIG": "Tests/contract/ofrep/schemathesis.toml", "CREDENTIAL": "x-api-key"}, weight=0.3, limit=900),
    ]
    return result


def idle_priority() -> None:
    """In a job's process before it runs (an `idle` job): SCHED_IDLE, so it runs only on a core
    nothing else wants, and yields it at once when something does.

    And its session's autogroup at nice 19. Each job is a session of its own (for killing its
    whole group), and where the kernel groups sessions (`kernel.sched_autogroup_enabled`, on in
    Debian's kernels) the CPU is shared between the groups first: a SCHED_IDLE process yields only
    to others of its own group, so alone in one it took as much as any other job (a fuzz build
    beside the server build: 99 s of CPU in 109 s). At nice 19 its group weighs 15 against a
    normal group's 1,024."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    set_autogroup_nice(os.getpid(), 19)


def set_autogroup_nice(pid: int, nice: int) -> None:
    """The nice value of `pid`'s autogroup (every process of its session), where there are any."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")
    except OSError:
        pass   # no autogroups (the kernel's option off or absent): SCHED_IDLE is enough there


def normal_priority(group: int) -> None:
    """Every process of a process group back to SCHED_OTHER, and its session's autogroup to nice
    0 (a background job whose solo neighbour ended). Twice: a process forked during the first pass
    inherited SCHED_IDLE."""
    set_autogroup_nice(group, 0)
    for _ in range(2):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == group:
                    os.sched_setscheduler(int(entry.name), os.SCHED_OTHER, os.sched_param(0))
            except (OSError, ValueError, IndexError):
                continue


def fuzz_targets() -> list[str]:
    out = subprocess.run(["Fuzz/run.sh", "--list"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.split()


def machine_times() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far (/proc/stat), or zeros where there is none."""
    try:
        ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return (0, 0)
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)   # idle + iowait
    return (sum(ticks) - idle, sum(ticks))


def tail(path: Path, lines: int = 60) -> str:
    try:
        return "".join(path.read_text(errors="replace").splitlines(keepends=True)[-lines:])
    except OSError:
        return "(no log)"


# Where a failed job's log says what failed: schemathesis' (and pytest's) FAILURES section, and
# XCTest's `error:` lines. A CI page may keep only the first lines of what a run printed, and a
# log's last lines are its summary and warnings, so these are printed before the tail.
FAILURE_SECTION = re.compile(r"^=+ (FAILURES|ERRORS) =+$")
SECTION_AFTER = re.compile(r"^=+ [^=]+ =+$")
XCTEST_ERROR = re.compile(r": error: |Fatal error|Test Case .* failed|Exited with (signal|unexpected)")


def failure_excerpt(path: Path, limit: int = 60) -> str:
    try:
        text = path.read_text(errors="replace").splitlines(keepends=True)
    except OSError:
        return ""
    picked: list[str] = []
    inside = False
    for line in text:
        bare = line.rstrip("\n")
        if SECTION_AFTER.match(bare):
            inside = bool(FAILURE_SECTION.match(bare))
        if inside or XCTEST_ERROR.search(bare):
            picked.append(line if len(line) <= 400 else line[:400] + " [...]\n")
        if len(picked) >= limit:
            picked.append("[... more in the log]\n")
            break
    return "".join(picked)


class Runner:
    def __init__(self, all_jobs: list[Job], slots: int, later=None):
        """`later`, when given, makes the jobs that can exist only once the build-tests job has
        passed (the XCTest classes are read from the binary it builds)."""
        self.jobs = all_jobs
        self.slots = slots
        self.later = later
        self.timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
        self.began = time.monotonic()
        self.machine = machine_times()
        self.order()

    def order(self) -> None:
        for job in self.jobs:
            job.expected = float(self.timings.get(job.name, job.expected))
        # The test build first (everything else waits on it or fills in beside it); then longest
        # chain first (a job's time plus the longest chain waiting on it), so the long ones don't
        # end up alone at the end; solo jobs last of all: they need an empty machine, and the end
        # of the queue empties it anyway (its last jobs are short). Held at the head of the queue,
        # a solo job left the slots idle until the longest job beside it ended (CI: 90 s).
        def chain(job: Job) -> float:
            return job.expected + max((chain(d) for d in self.jobs if job.name in d.after), default=0)
        first = {BUILD_SERVER: 0, BUILD_TESTS: 1}
        keys = {j.name: (first.get(j.name, 2), j.solo, -chain(j)) for j in self.jobs}
        self.jobs.sort(key=lambda j: keys[j.name])   # (list.sort empties the list meanwhile: keys first)

    def running(self) -> list[Job]:
        return [j for j in self.jobs if j.status == "running"]

    def ready(self, job: Job) -> bool | None:
        """True when its prerequisites passed, None when one failed (it will never run)."""
        for name in job.after:
            dep = next(j for j in self.jobs if j.name == name)
            if dep.status in ("failed", "skipped"):
                return None
            if dep.status != "passed":
                return False
        return True

    def start(self, job: Job, at_idle: bool = False) -> None:
        log = open(LOGS / f"{job.name.replace(':', '-')}.log", "wb")
        job.at_idle = job.idle or at_idle
        job.process = subprocess.Popen(job.command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env={**os.environ, **job.env},
                                       start_new_session=True, preexec_fn=idle_priority if job.at_idle else None)
        log.close()
        job.started = time.monotonic()
        job.status = "running"

    def finish(self, job: Job, status: str) -> None:
        job.finished = time.monotonic()
        job.status = status
        if job.solo:
            for other in self.running():
                if other.background and other.at_idle:
                    normal_priority(other.process.pid)
                    other.at_idle = False
        if job.name == BUILD_TESTS and status == "passed" and self.later:
            self.jobs += self.later()
            self.order()
        took = job.finished - job.started
        # When it ran, from the suite's start: enough to read the schedule back (what ran beside
        # what, where the slots idled) from a CI log.
        print(f"{'PASS' if status == 'passed' else 'FAIL'} {job.name} ({took:.0f} s, {job.cpu:.0f} s CPU, "
              f"+{job.started - self.began:.0f}–{job.finished - self.began:.0f} s)", flush=True)
        if status != "passed":
            log = LOGS / f"{job.name.replace(':', '-')}.log"
            excerpt = failure_excerpt(log)
            if excerpt:
                print(f"---- {log.relative_to(ROOT)} (what failed) ----\n{excerpt}", end="", flush=True)
            print(f"---- {log.relative_to(ROOT)} (last lines) ----\n{tail(log, 40 if excerpt else 60)}----",
                  flush=True)

    def reap(self, job: Job) -> int | None:
        """Its exit code once it has ended (None while it runs), noting the CPU time it used: its
        own and that of every process it waited for (the servers an XCTest class started)."""
        pid, status, usage = os.wait4(job.process.pid, os.WNOHANG)
        if pid == 0:
            return None
        job.process.returncode = os.waitstatus_to_exitcode(status)
        job.cpu = usage.ru_utime + usage.ru_stime
        return job.process.returncode

    def kill(self, job: Job) -> None:
        if job.process and job.process.poll() is None:
            try:
                os.killpg(job.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            job.process.wait()

    def run(self) -> int:
        began = self.began = time.monotonic()
        try:
            while True:
                for job in self.running():
                    code = self.reap(job)
                    if code is not None:
                        self.finish(job, "passed" if code == 0 else "failed")
                    elif time.monotonic() - job.started > job.limit:
                        self.kill(job)
                        print(f"{job.name}: killed after its limit of {job.limit:.0f} s", flush=True)
                        self.finish(job, "failed")
                waiting = [j for j in self.jobs if j.status == "waiting"]
                for job in waiting:
                    if self.ready(job) is None:
                        job.status = "skipped"
                        print(f"SKIP {job.name} (a job it needs failed)", flush=True)
                if not waiting and not self.running():
                    break
                self.fill()
                time.sleep(0.1)
        finally:
            for job in self.running():
                self.kill(job)
        return self.report(time.monotonic() - began)

    def fill(self) -> None:
        running = self.running()
        solo = next((j for j in running if j.solo), None)
        if solo:
            # Beside a solo job: one idle (or background) job at a time, in the cores it leaves idle.
            if not solo.exclusive and not any(j.at_idle for j in running):
                for job in [j for j in self.jobs if j.status == "waiting" and (j.idle or j.background)]:
                    if self.ready(job):
                        self.start(job, at_idle=True)
                        return
            return
        # Idle jobs wait for the solo jobs' turn while any solo job is still to run.
        solo_ahead = any(j.solo and j.status == "waiting" for j in self.jobs)
        for job in [j for j in self.jobs if j.status == "waiting"]:
            if job.idle and solo_ahead:
                continue
            if sum(j.weight for j in running) + job.weight > self.slots + 1e-9 or not self.ready(job):
                continue
            if job.solo:
                if any(not j.idle for j in running) or (job.exclusive and running):
                    return  # hold the queue until the machine is empty (but for idle jobs), then run it alone
                self.start(job)
                return
            self.start(job)
            running.append(job)

    def report(self, took: float) -> int:
        failed = [j.name for j in self.jobs if j.status != "passed"]
        # Merged into the last runs' times; copy it over Tests/timings.json to reorder the queue.
        path = LOGS / "timings.json"
        timings = json.loads(path.read_text()) if path.exists() else {}
        timings.update({j.name: round(j.finished - j.started, 1) for j in self.jobs if j.status == "passed"})
        path.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
        print(f"\n{len(self.jobs) - len(failed)} of {len(self.jobs)} jobs passed in {took / 60:.1f} min"
              f" on {self.slots} slots; logs in {LOGS.relative_to(ROOT)}/")
        # What the suite costs, beside what the machine could give it in that time: the jobs that
        # burn the most CPU are the ones to make cheaper.
        cpu = sorted(self.jobs, key=lambda j: -j.cpu)
        busy, total = (after - before for after, before in zip(machine_times(), self.machine))
        print(f"CPU: {sum(j.cpu for j in self.jobs):.0f} s of the {took * (os.cpu_count() or 1):.0f} s the "
              f"{os.cpu_count()} cores had (the machine was {100 * busy / max(total, 1):.0f}% busy, daemons such as "
              f"PostgreSQL and other users included); most: " + ", ".join(f"{j.name} {j.cpu:.0f} s" for j in cpu[:8]))
        if failed:
            print("failed: " + " ".join(failed))
        return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="run only the jobs whose name matches this regular expression")
    parser.add_argument("--list", action="store_true", help="list the jobs and exit")
    parser.add_argument("--build-tests", action="store_true",
                        help="build the test binary as a job (the server binary must be built already)")
    parser.add_argument("--build-server", action="store_true",
                        help="build the server binary as the first job (with --build-tests)")
    args = parser.parse_args()
    if args.build_server and not args.build_tests:
        parser.error("--build-server goes with --build-tests")
    if not (TIDINGS.exists() or args.build_server) or not (args.build_tests or XCTEST.exists()):
        print("run-tests: build first (swift build --build-tests)", file=sys.stderr)
        return 2
    LOGS.mkdir(parents=True, exist_ok=True)

    def choose(candidates: list[Job], pool: list[Job]) -> list[Job]:
        if not args.only:
            return candidates
        chosen = [j for j in candidates if re.search(args.only, j.name)]
        names = {j.name for j in chosen}
        for j in chosen:  # bring what they need along
            for dep in j.after:
                if dep not in names:
                    chosen.append(next(d for d in pool if d.name == dep))
                    names.add(dep)
        return chosen

    later = None
    if args.build_tests:
        # The same flags as the server binary's build (TEST_BUILD_FLAGS, from the Makefile), so the
        # objects it made are reused and the server binary is not linked again under running jobs.
        flags = shlex.split(os.environ.get("TEST_BUILD_FLAGS", ""))
        build = Job(BUILD_TESTS, ["swift", "build", "--build-tests", *flags], weight=1.7, limit=2400, expected=300)
        others = jobs(str(TIDINGS))
        for job in others:
            if job.solo:   # a solo job waits for an empty machine: after the build, not before it
                job.after.append(BUILD_TESTS)
        if args.build_server:
            server = Job(BUILD_SERVER, ["swift", "build", "--product", "tidings", *flags], solo=True,
                         limit=2400, expected=420)
            build.after.append(BUILD_SERVER)
            for job in others:
                if not job.background:
                    job.after.append(BUILD_SERVER)
            others = [server] + others
        all_jobs = [build] + choose(others, [build] + others)
        # Once built, its classes (a class the regex names, or every one).
        later = lambda: choose(xctest_jobs(), [])
    else:
        pool = jobs(str(TIDINGS)) + xctest_jobs()
        all_jobs = choose(pool, pool)
    # Two per core: most jobs mostly wait (on servers, sockets, PostgreSQL, time limits). Measured
    # on two cores at three slots, the suite's jobs used about half of the CPU time the cores had.
    slots = int(os.environ.get("TEST_SLOTS", 2 * (os.cpu_count() or 1)))
    runner = Runner(all_jobs, slots, later)
    if args.list:
        for j in runner.jobs:
            print(f"{j.name}{' (solo)' if j.solo else ''}{' (idle)' if j.idle else ''}{' after ' + ','.join(j.after) if j.after else ''}"
                  f"  ~{j.expected:.0f} s")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    scratch = scratch_directory()
    if scratch:
        os.environ["TMPDIR"] = scratch
        print(f"run-tests: the jobs' temporary data goes to {scratch}", flush=True)
    try:
        return runner.run()
    finally:
        if scratch and scratch != os.environ.get("TEST_TMPDIR"):
            stop_leftover_clusters(scratch)
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
