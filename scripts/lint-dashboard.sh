#!/usr/bin/env bash
# Checks the dashboard's source files (Sources/TidingsAPI/Dashboard/Resources), which the server
# inlines into one page at start-up: the JavaScript parses (node --check), the HTML is well formed
# (every element closed and nested, ids unique, the two placeholders the server replaces present
# once, nothing loaded from another origin, no inline script or style left behind), every id the
# script looks up with $("…") exists, and the CSS braces balance. Needs node (the Makefile's
# `lint` installs nodejs when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=Sources/TidingsAPI/Dashboard/Resources

node --check "$dir/dashboard.js"
echo "node --check: $dir/dashboard.js OK"

python3 - "$dir" <<'PY'
import re, sys
from html.parser import HTMLParser
from pathlib import Path

root = Path(sys.argv[1])
html = (root / "index.html").read_text(encoding="utf-8")
js = (root / "dashboard.js").read_text(encoding="utf-8")
css = (root / "dashboard.css").read_text(encoding="utf-8")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PLACEHOLDERS = ['<link rel="stylesheet" href="dashboard.css">', '<script src="dashboard.js"></script>']
errors = []

class Check(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.inline = [], set(), None

    def where(self):
        return f"index.html:{self.getpos()[0]}"

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                errors.append(f"{self.where()}: duplicate id {a['id']!r}")
            self.ids.add(a["id"])
        for name in ("src", "href", "action"):
            if re.match(r"\s*(https?:)?//", a.get(name) or "", re.I):
                errors.append(f"{self.where()}: {name}={a[name]!r} loads from another origin")
        if tag in ("script", "style"):
            self.inline = tag
        if tag not in VOID:
            self.stack.append((tag, self.where()))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            errors.append(f"{self.where()}: </{tag}> closes a void element")
        elif not self.stack or self.stack[-1][0] != tag:
            open_ = self.stack[-1] if self.stack else None
            errors.append(f"{self.where()}: </{tag}> does not close {open_}")
        else:
            self.stack.pop()
        self.inline = None

    def handle_data(self, data):
        if self.inline and data.strip():
            errors.append(f"{self.where()}: inline <{self.inline}> content belongs in dashboard.{'js' if self.inline == 'script' else 'css'}")

check = Check()
check.feed(html)
check.close()
for tag, where in check.stack:
    errors.append(f"{where}: <{tag}> is never closed")
if not html.lstrip().lower().startswith("<!doctype html>"):
    errors.append("index.html: does not start with <!doctype html>")
for p in PLACEHOLDERS:
    if html.count(p) != 1:
        errors.append(f"index.html: {p} must occur exactly once (the server replaces it), found {html.count(p)}")
for tag, text in (("script", js), ("style", css)):
    if re.search(rf"</{tag}", text, re.I):
        errors.append(f"dashboard.{'js' if tag == 'script' else 'css'}: contains </{tag}, which would end the inlined element")
for ident in sorted(set(re.findall(r'\$\("([^"]+)"\)', js)) - check.ids):
    errors.append(f"dashboard.js: $({ident!r}) names no element of index.html")
depth = 0
for ch in re.sub(r'/\*.*?\*/|"[^"\n]*"|\'[^\'\n]*\'', "", css, flags=re.S):
    depth += {"{": 1, "}": -1}.get(ch, 0)
    if depth < 0:
        break
if depth != 0:
    errors.append(f"dashboard.css: unbalanced braces ({depth:+d})")

for e in errors:
    print(e, file=sys.stderr)
if errors:
    sys.exit(1)
print(f"dashboard: index.html ({len(check.ids)} ids), dashboard.css OK")
PY
