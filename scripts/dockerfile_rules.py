#!/usr/bin/env python3
"""Checks the Tidings Dockerfile against the rules the container must keep.

Usage: dockerfile_rules.py [Dockerfile]      exit 1 and list every broken rule
       dockerfile_rules.py --self-test       prove each rule fires on a Dockerfile that breaks it
"""
import re
import sys


def instructions(text):
    """(keyword, arguments) per instruction, with line continuations joined and comments dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        keyword, _, args = buf.partition(" ")
        out.append((keyword.upper(), args.strip()))
        buf = ""
    return out


def check(text):
    errors = []
    ins = instructions(text)
    args = {}
    for kw, a in ins:
        if kw == "ARG" and "=" in a:
            name, _, value = a.partition("=")
            args[name.strip()] = value.strip()
    stages = [i for i, (kw, _) in enumerate(ins) if kw == "FROM"]
    if len(stages) < 2:
        errors.append("not multi-stage: need a build stage and a runtime stage")
    for i in stages:
        image = ins[i][1].split()[0]
        image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), image)
        if image.startswith("$"):
            errors.append(f"FROM {image}: ARG without a default")
            continue
        if image != "scratch" and ":" not in image.split("/")[-1] and "@" not in image:
            errors.append(f"FROM {image}: untagged image")
        if image.endswith(":latest"):
            errors.append(f"FROM {image}: 'latest' tag")
    final = ins[stages[-1]:] if stages else ins
    final_kw = [kw for kw, _ in final]

    users = [a for kw, a in final if kw == "USER"]
    if not users:
        errors.append("runtime stage has no USER (would run as root)")
    elif users[-1].split(":")[0] in ("root", "0"):
        errors.append("runtime stage runs as root")
    hc = [a for kw, a in final if kw == "HEALTHCHECK"]
    if not hc or hc[-1].upper().startswith("NONE"):
        errors.append("no HEALTHCHECK in the runtime stage")
    elif "/healthz" not in hc[-1]:
        errors.append("HEALTHCHECK does not probe /healthz")
    if "EXPOSE" not in final_kw:
        errors.append("no EXPOSE in the runtime stage")
    if "VOLUME" not in final_kw:
        errors.append("no VOLUME in the runtime stage")
    env = " ".join(a for kw, a in final if kw == "ENV")
    if not re.search(r"\bTIDINGS_HOST=0\.0\.0\.0\b", env):
        errors.append("runtime stage does not set TIDINGS_HOST=0.0.0.0")
    if not re.search(r"\bTIDINGS_DATA_DIR=/\S+", env):
        errors.append("runtime stage does not set TIDINGS_DATA_DIR")
    entry = [a for kw, a in final if kw == "ENTRYPOINT"]
    if not entry:
        errors.append("no ENTRYPOINT in the runtime stage")
    elif not entry[-1].startswith("["):
        errors.append("ENTRYPOINT is in shell form: SIGTERM would go to /bin/sh, not the server")
    elif re.match(r'\[\s*"(/bin/)?(ba)?sh"', entry[-1]):
        errors.append("ENTRYPOINT runs a shell: SIGTERM would go to the shell, not the server")
    for kw, a in final:
        if kw == "CMD" and not a.startswith("["):
            errors.append("CMD is in shell form")
    data_dir = re.search(r"\bTIDINGS_DATA_DIR=(/\S+)", env)
    home = re.search(r"\bHOME=(/\S+)", env)
    if not home:
        errors.append("runtime stage does not set HOME (Foundation's caches would land in the user's home)")
    elif data_dir and (home.group(1) + "/").startswith(data_dir.group(1).rstrip("/") + "/"):
        errors.append("HOME is inside the data volume: caches would land in it")
    build_runs = " ".join(a for kw, a in ins[:stages[-1]] if kw == "RUN")
    if not re.search(r"\bstrip\b|objcopy\s+--strip|--only-keep-debug", build_runs):
        errors.append("the binary is not stripped (its debug info doubles the image)")
    runtime_runs = " ".join(a for kw, a in final if kw == "RUN")
    if re.search(r"\blibxml2\b", runtime_runs):
        errors.append("libxml2 in the runtime stage: no linked library needs it (it pulls ICU, ~38 MB)")
    for kw, a in ins:
        if kw == "RUN" and re.search(r"apt-get\s+(-\S+\s+)*install", a):
            if "rm -rf /var/lib/apt/lists" not in a:
                errors.append(f"apt-get install without cleaning /var/lib/apt/lists in the same RUN: {a[:60]}...")
            if "apt-get update" not in a:
                errors.append(f"apt-get install without apt-get update in the same RUN: {a[:60]}...")
            if " -y" not in a and "--yes" not in a:
                errors.append(f"apt-get install without -y: {a[:60]}...")
    return errors


GOOD = """ARG B=swift:6.3-bookworm
FROM ${B} AS build
RUN apt-get update && apt-get install -y x && rm -rf /var/lib/apt/lists/*
RUN strip /out/tidings
FROM debian:bookworm-slim
ENV TIDINGS_HOST=0.0.0.0 TIDINGS_DATA_DIR=/data HOME=/home/tidings
VOLUME ["/data"]
EXPOSE 8080
USER 10001:10001
HEALTHCHECK CMD ["curl", "-f", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/tidings"]
"""

BROKEN = {
    "not multi-stage": GOOD.replace("FROM ${B} AS build\n", ""),
    "runs as root": GOOD.replace("USER 10001:10001", "USER root"),
    "no USER": GOOD.replace("USER 10001:10001\n", ""),
    "no HEALTHCHECK": GOOD.replace('HEALTHCHECK CMD ["curl", "-f", "http://127.0.0.1:8080/healthz"]\n', ""),
    "does not probe /healthz": GOOD.replace("/healthz", "/"),
    "no EXPOSE": GOOD.replace("EXPOSE 8080\n", ""),
    "no VOLUME": GOOD.replace('VOLUME ["/data"]\n', ""),
    "TIDINGS_HOST": GOOD.replace("TIDINGS_HOST=0.0.0.0 ", ""),
    "shell form": GOOD.replace('ENTRYPOINT ["/usr/local/bin/tidings"]', "ENTRYPOINT /usr/local/bin/tidings"),
    "runs a shell": GOOD.replace('ENTRYPOINT ["/usr/local/bin/tidings"]', 'ENTRYPOINT ["/bin/sh", "-c", "tidings"]'),
    "'latest' tag": GOOD.replace("debian:bookworm-slim", "debian:latest"),
    "untagged": GOOD.replace("debian:bookworm-slim", "debian"),
    "cleaning /var/lib/apt/lists": GOOD.replace(" && rm -rf /var/lib/apt/lists/*", ""),
    "does not set HOME": GOOD.replace(" HOME=/home/tidings", ""),
    "HOME is inside the data volume": GOOD.replace("HOME=/home/tidings", "HOME=/data"),
    "not stripped": GOOD.replace("RUN strip /out/tidings\n", ""),
    "libxml2": GOOD.replace('VOLUME ["/data"]', 'RUN apt-get update && apt-get install -y libxml2 && rm -rf /var/lib/apt/lists/*\nVOLUME ["/data"]'),
}


def self_test():
    failures = []
    if check(GOOD):
        failures.append(f"good Dockerfile rejected: {check(GOOD)}")
    for expected, text in BROKEN.items():
        errs = check(text)
        if not any(expected in e for e in errs):
            failures.append(f"rule '{expected}' did not fire (got {errs})")
    for f in failures:
        print(f"dockerfile-rules self-test: {f}", file=sys.stderr)
    print(f"dockerfile-rules self-test: {len(BROKEN) + 1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    path = sys.argv[1] if len(sys.argv) > 1 else "Dockerfile"
    errs = check(open(path, encoding="utf-8").read())
    for e in errs:
        print(f"{path}: {e}", file=sys.stderr)
    if not errs:
        print(f"{path}: container rules OK")
    sys.exit(1 if errs else 0)
