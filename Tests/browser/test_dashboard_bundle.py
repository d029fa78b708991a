"""The dashboard's resource bundle: the server reads index.html, dashboard.css and dashboard.js
from the SwiftPM bundle beside its executable at start-up (Sources/TidingsAPI/Dashboard).

No browser: a copy of the server binary in a fresh directory, with and without the bundle beside
it, started from an unrelated working directory. Without the bundle it must refuse to start with
a message naming it (not fail at the first request); with it, `GET /` serves the assembled page.
"""
import re
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

# The one way to find the binary under test (TIDINGS_BIN or the debug build), shared with the
# browser tests; pytest puts this directory on the import path.
from test_dashboard import server_binary

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = "Tidings_TidingsAPI.resources"
RESOURCES = ROOT / "Sources" / "TidingsAPI" / "Dashboard" / "Resources"
LISTENING = re.compile(r"tidings listening on (http://\S+)")


@pytest.fixture
def place():
    """A fresh directory holding a copy of the binary (and, when asked, of its bundle), and
    another one to run it from."""
    tmp = Path(tempfile.mkdtemp(prefix="tidings-bundle-"))

    def make(with_bundle):
        binary = server_binary()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        shutil.copy2(binary, bin_dir / "tidings")
        if with_bundle:
            bundle = binary.parent / BUNDLE
            assert bundle.is_dir(), f"{bundle} missing: SwiftPM puts it beside the binary"
            shutil.copytree(bundle, bin_dir / BUNDLE)
        cwd = tmp / "elsewhere"
        cwd.mkdir()
        return bin_dir / "tidings", cwd, tmp / "data"

    yield make
    shutil.rmtree(tmp, ignore_errors=True)


def test_a_missing_bundle_stops_the_server_at_start_up(place):
    binary, cwd, data = place(with_bundle=False)
    proc = subprocess.run([str(binary), "--port", "0", "--data-dir", str(data)], cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert proc.returncode != 0, proc.stdout
    assert BUNDLE in proc.stdout and "missing" in proc.stdout, proc.stdout
    assert not LISTENING.search(proc.stdout), "it must not listen without its page"


def test_the_bundle_beside_the_binary_serves_the_assembled_page(place):
    binary, cwd, data = place(with_bundle=True)
    proc = subprocess.Popen([str(binary), "--port", "0", "--data-dir", str(data)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    try:
        url, seen = None, []
        for line in proc.stdout:  # ends when the process exits
            seen.append(line)
            m = LISTENING.search(line)
            if m:
                url = m.group(1).rstrip("/")
                break
        assert url, "server exited before listening:\n" + "".join(seen)
        with urllib.request.urlopen(url + "/", timeout=10) as res:
            assert res.status == 200
            html = res.read().decode("utf-8")
        # The files' contents, inlined in place of the link and the script element.
        css = (RESOURCES / "dashboard.css").read_text(encoding="utf-8")
        js = (RESOURCES / "dashboard.js").read_text(encoding="utf-8")
        assert f"<style>\n{css}</style>" in html
        assert f"<script>\n{js}</script>" in html
        assert 'href="dashboard.css"' not in html and 'src="dashboard.js"' not in html
        assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0
