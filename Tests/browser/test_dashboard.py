"""Browser test of the dashboard (`GET /`) against the real `tidings` server.

Runs Debian's chromium + chromium-driver headless through selenium. The server binary comes from
`TIDINGS_BIN` (default `.build/debug/tidings`, relative to the repository root); each test starts
its own server on `--port 0` with a fresh `--data-dir`. Run with `make browser-test`.

Every wait is an explicit WebDriverWait on a condition; nothing sleeps and hopes.
"""
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".build" / "artifacts"
LISTENING = re.compile(r"tidings listening on (http://\S+)")

BUILT_IN = {  # API.md's built-in preference set: key -> (type, default)
    "should_show_hello_world": ("boolean", False),
    "onboardingCompleted": ("boolean", False),
    "promptedForProVersion": ("boolean", False),
    "name": ("string", "fat"),
    "age": ("integer", 5),
    "readyForAction": ("boolean", False),
    "speed": ("number", 0),
    "numberOfItems": ("integer", 0),
}


# ---------------------------------------------------------------- the real server

def server_binary():
    path = Path(os.environ.get("TIDINGS_BIN", ".build/debug/tidings"))
    if not path.is_absolute():
        path = ROOT / path
    if not os.access(path, os.X_OK):
        pytest.fail(f"server binary {path} not found: build it (swift build) or set TIDINGS_BIN")
    return path


class Server:
    """One `tidings` process; can be stopped and started again on the same port and data dir."""

    def __init__(self, data_dir, extra_args=()):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.port = 0
        self.url = None
        self.proc = None
        self.log = Path(data_dir).parent / "server.log"

    def start(self, timeout=30):
        args = [str(server_binary()), "--port", str(self.port), "--data-dir", str(self.data_dir),
                *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        lines = queue.Queue()

        def pump(proc=self.proc):  # tee the output to a log file and hand lines to start()
            with open(self.log, "a") as log:
                log.write("$ " + " ".join(args) + "\n")
                for line in proc.stdout:
                    log.write(line)
                    log.flush()
                    lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                self.stop()
                pytest.fail(f"server did not print its address within {timeout}s (log below)")
            if line is None:
                pytest.fail(f"server exited with {self.proc.wait()} before listening (log below)")
            m = LISTENING.search(line)
            if m:
                self.url = m.group(1).rstrip("/")
                self.port = int(self.url.rsplit(":", 1)[1])
                return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail("server did not exit within 15 s of SIGTERM")
            assert code == 0, f"server exited with status {code} after SIGTERM"
        self.proc = None

    def log_tail(self, n=40):
        try:
            return "".join(self.log.read_text(errors="replace").splitlines(True)[-n:])
        except OSError:
            return ""


@pytest.fixture
def make_server():
    servers, dirs = [], []

    def make(*extra_args):
        tmp = Path(tempfile.mkdtemp(prefix="tidings-browser-"))
        dirs.append(tmp)
        server = Server(tmp / "data", extra_args).start()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.stop()
        tail = s.log_tail()
        if tail:
            print(f"--- server log ({s.log}) ---\n{tail}")  # shown by pytest when the test fails
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def server(make_server):
    return make_server()


def http(server, method, path, body=None, token=None):
    """One request with urllib; returns (status, parsed JSON or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.url + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            status, raw = res.status, res.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, None


class Feed:
    """A tiny upstream feed the test controls: what it answers, and when (a gate)."""

    def __init__(self):
        self.status = 200
        self.posts = []
        self.gate = threading.Event()
        self.gate.set()
        self.requests = 0
        feed = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                feed.requests += 1
                feed.gate.wait(20)
                body = json.dumps(feed.posts if feed.status == 200 else {"oops": True}).encode()
                self.send_response(feed.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/posts"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.gate.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def feed():
    f = Feed()
    yield f
    f.close()


# ---------------------------------------------------------------- the browser

def _chromium_path(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    pytest.fail(f"none of {names} installed (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def driver():
    opts = webdriver.ChromeOptions()
    opts.binary_location = _chromium_path("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1000", "--disable-background-timer-throttling",
                "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=opts, service=Service(_chromium_path("chromedriver")))
    # Record every EventSource a page creates, so tests can see how many streams it holds open.
    d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        (() => {
          const Native = window.EventSource, made = [];
          window.__streams = made;
          function Recorded(url, init) { const es = new Native(url, init); made.push(es); return es; }
          Recorded.prototype = Native.prototype;
          Object.assign(Recorded, { CONNECTING: 0, OPEN: 1, CLOSED: 2 });
          window.EventSource = Recorded;
        })();"""})
    yield d
    d.quit()


@pytest.fixture
def browser(driver, request):
    """The module's browser, reduced to one window afterwards, with a screenshot per test."""
    yield driver
    try:
        (ARTIFACTS / "browser").mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "browser" / f"{request.node.name}.png"))
        for entry in driver.get_log("browser"):
            print("console:", entry.get("level"), entry.get("message"))
    except Exception as err:  # diagnostics only
        print("no diagnostics:", err)
    handles = driver.window_handles
    for h in handles[1:]:
        driver.switch_to.window(h)
        driver.close()
    driver.switch_to.window(handles[0])
    driver.get("about:blank")


def wait(d, cond, timeout=10.0, message=""):
    def safe(drv):
        try:
            return cond(drv)
        except StaleElementReferenceException:
            return False
    return WebDriverWait(d, timeout, poll_frequency=0.05).until(safe, message)


def page_state(d):
    """Everything the page shows, read in one script (no stale elements)."""
    return d.execute_script("""
        const q = (s) => Array.from(document.querySelectorAll(s));
        const prefs = {};
        for (const row of q('[data-pref]')) {
          const c = row.querySelector('[data-pref-control]');
          prefs[row.dataset.pref] = {
            type: row.dataset.type, typeKnown: row.dataset.typeKnown === 'true',
            value: JSON.parse(row.dataset.value),
            inputType: c.type, step: c.getAttribute('step'),
            shown: c.type === 'checkbox' ? c.checked : c.value,
            error: row.querySelector('[data-pref-error]').textContent };
        }
        const vis = (id) => { const e = document.getElementById(id); return !!e && !e.hidden && e.offsetParent !== null; };
        return {
          connection: document.getElementById('connection-state').dataset.state,
          prefs,
          things: q('#things-list [data-thing]').map(li => li.querySelector('.thing-text').textContent),
          emptyHint: vis('things-empty') ? document.getElementById('things-empty').textContent : null,
          thingError: document.getElementById('thing-error').textContent,
          thingErrorStatus: document.getElementById('thing-error').dataset.status || null,
          postsState: document.getElementById('posts-state').dataset.state,
          postsText: document.getElementById('posts-state').textContent,
          posts: q('#posts-list .post').map(p => [p.querySelector('h3').textContent, p.querySelector('p').textContent]),
          tokenPanel: vis('token-panel'),
          streams: (window.__streams || []).filter(es => es.readyState !== 2).map(es => es.url),
        };
    """)


def open_dashboard(d, server, live=True):
    d.get(server.url + "/")
    if live:
        wait_live(d)


def wait_live(d, timeout=15):
    wait(d, lambda d: page_state(d)["connection"] == "live", timeout, "stream never went live")


def wait_pref(d, key, value, timeout=5.0):
    """Until the page shows `value` for `key` (both the stream value and the control)."""
    def shown(d):
        p = page_state(d)["prefs"].get(key)
        if not p or p["value"] != value or type(p["value"]) is not type(value):
            return False
        return p["shown"] == (value if isinstance(value, bool) else str(value))
    wait(d, shown, timeout, f"page never showed {key} = {value!r}")


def wait_things(d, things, timeout=5.0):
    wait(d, lambda d: page_state(d)["things"] == things, timeout, f"page never showed things {things}")


def wait_ready(d, timeout=15.0):
    """Live, all built-in preferences with their types resolved, posts loaded."""
    wait_live(d, timeout)
    wait(d, lambda d: all(p["typeKnown"] for p in page_state(d)["prefs"].values())
         and set(page_state(d)["prefs"]) >= set(BUILT_IN), timeout, "preferences never complete")
    wait(d, lambda d: page_state(d)["postsState"] == "loaded", timeout, "posts never loaded")


def type_over(box, text):
    """Select what the field holds and type over it, then Enter, as a person would.
    (WebDriver's clear() would also fire a `change` of its own for the empty field.)"""
    box.click()
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(text, Keys.ENTER)


def add_thing(d, text):
    type_over(d.find_element(By.ID, "thing-input"), text)


def set_input(d, key, text):
    type_over(d.find_element(By.CSS_SELECTOR, f'[data-pref-control="{key}"]'), text)


def toggle(d, key):
    d.find_element(By.CSS_SELECTOR, f'[data-pref-control="{key}"]').click()


# ---------------------------------------------------------------- tests

def test_first_load_shows_preferences_empty_hint_and_sample_posts(server, browser):
    req = urllib.request.Request(server.url + "/")
    with urllib.request.urlopen(req, timeout=10) as res:
        assert res.status == 200
        assert res.headers.get("Content-Type", "").replace(" ", "").lower() == "text/html;charset=utf-8"
        html = res.read().decode("utf-8")
    # Self-contained: nothing loaded from anywhere else (works offline, no CDN).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I)
    assert "@import" not in html and "<link rel=\"stylesheet\"" not in html

    open_dashboard(browser, server)
    wait_ready(browser)
    state = page_state(browser)
    # One multiplexed stream carries everything.
    assert len(state["streams"]) == 1, state["streams"]
    stream = urllib.parse.urlsplit(state["streams"][0])
    assert stream.path == "/events"
    assert set(urllib.parse.parse_qs(stream.query)["topics"][0].split(",")) == {"preferences", "things", "posts"}
    assert set(state["prefs"]) == set(BUILT_IN)
    for key, (typ, default) in BUILT_IN.items():
        p = state["prefs"][key]
        assert p["type"] == typ, key
        assert p["value"] == default and type(p["value"]) is type(default), key
        want_input = {"boolean": "checkbox", "string": "text"}.get(typ, "number")
        assert p["inputType"] == want_input, key
        if typ == "integer":
            assert p["step"] == "1", key
        if typ == "number":
            assert p["step"] == "any", key
        assert p["shown"] == (default if typ == "boolean" else str(default)), key
    assert state["things"] == []
    assert state["emptyHint"] == "Add acronyms you learn"
    status, sample = http(server, "GET", "/sample/posts")
    assert status == 200 and isinstance(sample, list) and sample, "the server's sample feed is empty"
    assert state["posts"] == [[str(p["title"]), str(p["body"])] for p in sample]
    assert state["postsText"].startswith("Loaded")


def metric(server, sample):
    """The value of one `/metrics` sample (`name` or `name{labels}`), 0 when absent."""
    with urllib.request.urlopen(server.url + "/metrics", timeout=10) as res:
        for line in res.read().decode().splitlines():
            if line.startswith(sample + " "):
                return float(line.split()[-1])
    return 0


def test_preference_changes_flow_both_ways(server, browser):
    open_dashboard(browser, server)
    wait_ready(browser)

    # A change made with an HTTP PUT (as with curl) shows within 1 s, as plain text (escaped).
    status, _ = http(server, "PUT", "/preferences/name", {"value": "Ada <b>&amp;</b>"})
    assert status == 200
    wait_pref(browser, "name", "Ada <b>&amp;</b>", timeout=1.0)
    assert http(server, "PUT", "/preferences/age", {"value": 42})[0] == 200
    wait_pref(browser, "age", 42, timeout=1.0)
    assert http(server, "PUT", "/preferences/readyForAction", {"value": True})[0] == 200
    wait_pref(browser, "readyForAction", True, timeout=1.0)
    # Chromium asks for its EventSource with Accept-Encoding: gzip: the page's stream is gzip,
    # and those changes reached it as the shared deflated events (API.md "Caching and compression").
    assert metric(server, "tidings_gzip_streams_opened_total") >= 1
    assert metric(server, "tidings_stream_gzip_deliveries_total") >= 3

    # A toggle clicked on the page is what the next GET /preferences returns.
    toggle(browser, "onboardingCompleted")
    wait(browser, lambda d: http(server, "GET", "/preferences")[1]["onboardingCompleted"] is True,
         5, "clicked toggle never reached the server")
    wait_pref(browser, "onboardingCompleted", True)
    toggle(browser, "readyForAction")
    wait(browser, lambda d: http(server, "GET", "/preferences")[1]["readyForAction"] is False,
         5, "second toggle never reached the server")

    # Two quick clicks mean "on, then off again": the page ends where the person left it.
    toggle(browser, "should_show_hello_world")
    toggle(browser, "should_show_hello_world")
    wait(browser, lambda d: http(server, "GET", "/preferences/should_show_hello_world")[1]["revision"] > 0
         and http(server, "GET", "/preferences")[1]["should_show_hello_world"] is False, 5)
    wait_pref(browser, "should_show_hello_world", False)

    # Keyboard: Space on a focused switch changes it too.
    browser.find_element(By.CSS_SELECTOR, '[data-pref-control="promptedForProVersion"]').send_keys(Keys.SPACE)
    wait(browser, lambda d: http(server, "GET", "/preferences")[1]["promptedForProVersion"] is True, 5,
         "Space on the switch did nothing")
    wait_pref(browser, "promptedForProVersion", True)

    # Number and text fields submit on Enter.
    set_input(browser, "speed", "2.5")
    wait(browser, lambda d: http(server, "GET", "/preferences")[1]["speed"] == 2.5, 5)
    wait_pref(browser, "speed", 2.5)
    set_input(browser, "name", "Grace")
    wait(browser, lambda d: http(server, "GET", "/preferences")[1]["name"] == "Grace", 5)

    # The server's validation error is shown next to the control; the value does not change.
    set_input(browser, "age", "1.5")
    wait(browser, lambda d: page_state(d)["prefs"]["age"]["error"] != "", 5,
         "no validation error shown for age = 1.5")
    assert page_state(browser)["prefs"]["age"]["value"] == 42
    assert http(server, "GET", "/preferences")[1]["age"] == 42


def history_entries(d, key):
    """The history panel of `key` as the page shows it: [(revision, who, before → after text)]."""
    return d.execute_script("""
        const panel = document.querySelector('[data-history-panel="' + arguments[0] + '"]');
        if (!panel || panel.hidden) return null;
        return Array.from(panel.querySelectorAll('[data-history-entry]')).map((li) => [
          Number(li.dataset.historyEntry), li.querySelector('.history-who').textContent,
          li.querySelector('.history-what').textContent]);
    """, key)


def test_history_panel_shows_who_when_and_what_and_rolls_back_after_confirmation(make_server, browser, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps([{"name": "deploy-bot", "role": "write", "token": "bot-token"}]))
    server = make_server("--tokens", str(tokens))
    assert http(server, "PUT", "/preferences/age", {"value": 6}, token="bot-token")[0] == 200
    assert http(server, "PUT", "/preferences/age", {"value": 7}, token="bot-token")[0] == 200
    assert http(server, "PUT", "/preferences/age", {"value": 8}, token="bot-token")[0] == 200
    open_dashboard(browser, server)  # reads are open: only writes need the token
    wait_pref(browser, "age", 8)

    browser.find_element(By.CSS_SELECTOR, '[data-history-open="age"]').click()
    wait(browser, lambda d: history_entries(d, "age") == [[3, "deploy-bot", "7 \u2192 8"],
                                                        [2, "deploy-bot", "6 \u2192 7"],
                                                        [1, "deploy-bot", "5 \u2192 6"]],
         5, "the history panel never showed age's three changes")
    when = browser.find_element(By.CSS_SELECTOR, '[data-history-entry="2"] time').get_attribute("datetime")
    assert when.endswith("Z")

    # Roll back to revision 1 (age = 6): nothing happens until the confirmation is accepted.
    browser.find_element(By.CSS_SELECTOR, '[data-history-rollback="1"]').click()
    confirm = browser.find_element(By.CSS_SELECTOR, '[data-history-confirm="1"]')
    assert "age" in confirm.find_element(By.XPATH, "..").text and "6" in confirm.find_element(By.XPATH, "..").text
    assert http(server, "GET", "/preferences/age", token="bot-token")[1]["value"] == 8
    confirm.click()
    # The rollback is a write: the page asks for the write token, then sends it.
    wait(browser, lambda d: d.find_element(By.ID, "token-panel").is_displayed(), 5, "no token asked for")
    browser.find_element(By.ID, "token-input").send_keys("bot-token", Keys.ENTER)
    wait_pref(browser, "age", 6)
    status, page = http(server, "GET", "/preferences/age/history?limit=1", token="bot-token")
    assert status == 200
    record = page["changes"][0]
    assert (record["actor"], record["reason"], record["before"], record["after"]) == \
        ("deploy-bot", "rollback to 1", 8, 6)
    assert record["revision"] > 3  # (the posts feed's documents take revisions too)
    wait(browser, lambda d: (history_entries(d, "age") or [[0]])[0] == [record["revision"], "deploy-bot", "8 \u2192 6"],
         5, "the panel never showed the rollback")


def test_things_add_duplicate_too_long_and_remove(server, browser):
    open_dashboard(browser, server)
    wait_ready(browser)
    add_thing(browser, "yolo")
    wait_things(browser, ["YOLO"])
    state = page_state(browser)
    assert state["emptyHint"] is None
    assert state["thingError"] == ""
    assert http(server, "GET", "/things")[1]["things"] == ["YOLO"]

    add_thing(browser, "yolo")
    wait(browser, lambda d: page_state(d)["thingError"] != "", 5, "no duplicate error shown")
    state = page_state(browser)
    assert state["thingErrorStatus"] == "409"
    assert state["things"] == ["YOLO"]

    add_thing(browser, "x" * 65)
    wait(browser, lambda d: page_state(d)["thingErrorStatus"] == "422", 5, "no too-long error shown")

    add_thing(browser, "  brb ")
    wait_things(browser, ["YOLO", "BRB"])
    assert page_state(browser)["thingError"] == ""

    # Server text is text: markup in a thing is shown, not parsed.
    add_thing(browser, "<b>hi</b>")
    wait_things(browser, ["YOLO", "BRB", "<B>HI</B>"])
    assert browser.find_elements(By.CSS_SELECTOR, "#things-list b") == []
    browser.find_element(By.CSS_SELECTOR, '#things-list [data-remove="<B>HI</B>"]').click()
    wait_things(browser, ["YOLO", "BRB"])

    browser.find_element(By.CSS_SELECTOR, '#things-list [data-remove="YOLO"]').click()
    wait_things(browser, ["BRB"])
    assert http(server, "GET", "/things")[1]["things"] == ["BRB"]
    browser.find_element(By.CSS_SELECTOR, '#things-list [data-remove="BRB"]').send_keys(Keys.ENTER)  # keyboard
    wait(browser, lambda d: page_state(d)["emptyHint"] == "Add acronyms you learn", 5)


def test_posts_load_states_refresh_and_failure(make_server, feed, browser):
    feed.posts = [{"id": 1, "title": "First <i>one</i>", "body": "hello", "userId": 7}]
    feed.gate.clear()  # hold the first load so the page shows it loading
    server = make_server("--feed-url", feed.url, "--feed-refresh", "0", "--feed-timeout", "10")
    open_dashboard(browser, server)
    wait(browser, lambda d: page_state(d)["postsState"] == "loading", 10, "never showed loading")
    assert page_state(browser)["postsText"].startswith("Loading")
    feed.gate.set()
    wait(browser, lambda d: page_state(d)["postsState"] == "loaded", 10)
    state = page_state(browser)
    assert state["posts"] == [["First <i>one</i>", "hello"]]
    assert browser.find_elements(By.CSS_SELECTOR, "#posts-list i") == []
    assert re.match(r"Loaded at \S", state["postsText"]), state["postsText"]

    # The refresh button starts a new load; the new posts arrive over the stream.
    feed.posts = [{"id": 2, "title": "Second", "body": "b2"}, {"id": "x3", "title": "Third", "body": "b3"}]
    browser.find_element(By.ID, "posts-refresh").click()
    wait(browser, lambda d: page_state(d)["posts"] == [["Second", "b2"], ["Third", "b3"]], 10,
         "refresh did not bring the new posts")

    # A failing upstream: the state says so, with the server's message, and the posts stay.
    feed.status = 500
    browser.find_element(By.ID, "posts-refresh").click()
    wait(browser, lambda d: page_state(d)["postsState"] == "failed", 10, "failure never shown")
    state = page_state(browser)
    assert state["postsText"].startswith("Failed: ") and len(state["postsText"]) > len("Failed: ")
    assert state["posts"] == [["Second", "b2"], ["Third", "b3"]]


def test_two_tabs_stay_in_sync(server, browser):
    open_dashboard(browser, server)
    wait_ready(browser)
    tab_a = browser.current_window_handle
    browser.switch_to.new_window("window")
    tab_b = browser.current_window_handle
    open_dashboard(browser, server)
    wait_ready(browser)

    add_thing(browser, "afaik")            # in B
    wait_things(browser, ["AFAIK"])
    browser.switch_to.window(tab_a)
    wait_things(browser, ["AFAIK"])
    toggle(browser, "promptedForProVersion")  # in A
    wait_pref(browser, "promptedForProVersion", True)
    set_input(browser, "numberOfItems", "7")
    wait_pref(browser, "numberOfItems", 7)
    browser.switch_to.window(tab_b)
    wait_pref(browser, "promptedForProVersion", True)
    wait_pref(browser, "numberOfItems", 7)
    browser.find_element(By.CSS_SELECTOR, '#things-list [data-remove="AFAIK"]').click()
    wait_things(browser, [])
    browser.switch_to.window(tab_a)
    wait_things(browser, [])
    assert page_state(browser)["emptyHint"] == "Add acronyms you learn"


def test_page_reconnects_after_restart_and_shows_what_changed(server, browser):
    open_dashboard(browser, server)
    wait_ready(browser)
    assert http(server, "PUT", "/preferences/name", {"value": "before"})[0] == 200
    wait_pref(browser, "name", "before")

    server.stop()
    wait(browser, lambda d: page_state(d)["connection"] != "live", 10, "page never noticed the drop")
    server.start()  # same port, same data dir
    # Changes made while the page is away (it is still backing off or reconnecting).
    assert http(server, "PUT", "/preferences/name", {"value": "after"})[0] == 200
    assert http(server, "PUT", "/preferences/age", {"value": 77})[0] == 200
    assert http(server, "POST", "/things", {"thing": "afk"})[0] == 201

    wait_live(browser, 20)
    wait_pref(browser, "name", "after")
    wait_pref(browser, "age", 77)
    wait_things(browser, ["AFK"])
    # And it is live again, not just resynced once.
    assert http(server, "PUT", "/preferences/speed", {"value": 3})[0] == 200
    wait_pref(browser, "speed", 3, timeout=1.0)
    state = page_state(browser)
    assert state["things"] == http(server, "GET", "/things")[1]["things"]


def test_reset_drops_old_state_and_takes_the_fresh_snapshot(make_server, browser, tmp_path):
    schema = tmp_path / "prefs.json"
    schema.write_text(json.dumps({
        "legacy": {"type": "string", "default": "old"},
        "age": {"type": "integer", "default": 1, "minimum": 0},
    }))
    server = make_server("--preferences", str(schema))
    assert http(server, "POST", "/things", {"thing": "old"})[0] == 201
    open_dashboard(browser, server)
    wait_things(browser, ["OLD"])
    wait(browser, lambda d: set(page_state(d)["prefs"]) == {"legacy", "age"}, 10)

    # Same port, but a new store and the built-in preferences: the page's resume point is now
    # ahead of the server's revision, so the server answers `reset` and a fresh snapshot.
    server.stop()
    wait(browser, lambda d: page_state(d)["connection"] != "live", 10)
    server.data_dir = Path(tempfile.mkdtemp(prefix="tidings-browser-fresh-")) / "data"
    server.extra_args = []
    server.start()
    try:
        wait_ready(browser, 20)
        wait(browser, lambda d: set(page_state(d)["prefs"]) == set(BUILT_IN), 10,
             "preferences of the old server survived the reset")
        wait_things(browser, [])
        assert page_state(browser)["emptyHint"] == "Add acronyms you learn"
        assert browser.execute_script("return document.body.dataset.lastReset || null"), "no reset seen"
        wait_pref(browser, "age", 5)
    finally:
        server.stop()
        shutil.rmtree(server.data_dir.parent, ignore_errors=True)


def test_screenshot_artifact(server, browser):
    assert http(server, "POST", "/things", {"thing": "til"})[0] == 201
    assert http(server, "PUT", "/preferences/should_show_hello_world", {"value": True})[0] == 200
    open_dashboard(browser, server)
    wait_ready(browser)
    wait_things(browser, ["TIL"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    assert browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 844)  # a phone: nothing may overflow sideways
        wait(browser, lambda d: d.execute_script("return window.innerWidth") <= 400, 5)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        browser.save_screenshot(str(ARTIFACTS / "dashboard-phone.png"))
        assert overflow <= 0, f"page scrolls sideways on a phone by {overflow}px"
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_tokens_form_tickets_and_write_token(make_server, browser):
    api, read = "write-secret-1", "read-secret-2"
    server = make_server("--api-token", api, "--read-token", read)
    assert http(server, "GET", "/preferences")[0] == 401

    open_dashboard(browser, server, live=False)
    wait(browser, lambda d: page_state(d)["tokenPanel"], 10, "token form never appeared")
    assert page_state(browser)["connection"] != "live"
    box = browser.find_element(By.ID, "token-input")
    assert box.get_attribute("type") == "password"
    assert browser.switch_to.active_element == box
    box.send_keys(api, Keys.ENTER)
    wait(browser, lambda d: not page_state(d)["tokenPanel"], 5)
    wait_ready(browser)
    add_thing(browser, "imho")
    wait_things(browser, ["IMHO"])
    assert http(server, "PUT", "/preferences/age", {"value": 9}, token=api)[0] == 200
    wait_pref(browser, "age", 9, timeout=1.0)

    def ticket_of(url):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        return q.get("ticket", [None])[0], q.get("lastEventId", [None])[0]

    streams = page_state(browser)["streams"]
    assert len(streams) == 1
    first_ticket, _ = ticket_of(streams[0])
    assert first_ticket and api not in streams[0] and read not in streams[0]

    # A reconnection needs a fresh ticket: restart the server and keep going without asking again.
    server.stop()
    wait(browser, lambda d: page_state(d)["connection"] != "live", 10)
    server.start()
    assert http(server, "PUT", "/preferences/age", {"value": 10}, token=api)[0] == 200
    wait_live(browser, 20)
    wait_pref(browser, "age", 10)
    assert not page_state(browser)["tokenPanel"]
    streams = page_state(browser)["streams"]
    assert len(streams) == 1
    ticket, resume = ticket_of(streams[0])
    assert ticket and ticket != first_ticket, "the reconnection reused a ticket"
    assert resume is not None, "the reconnection did not carry its resume point"

    # The token is kept for the tab: a reload does not ask again.
    browser.refresh()
    wait_ready(browser)
    assert not page_state(browser)["tokenPanel"]

    # A new window has its own session: give it the read token; writes then ask for the API token.
    browser.switch_to.new_window("window")
    open_dashboard(browser, server, live=False)
    wait(browser, lambda d: page_state(d)["tokenPanel"], 10)
    browser.find_element(By.ID, "token-input").send_keys(read, Keys.ENTER)
    wait_ready(browser)
    wait_things(browser, ["IMHO"])
    toggle(browser, "readyForAction")
    wait(browser, lambda d: page_state(d)["tokenPanel"], 10, "write with the read token did not ask again")
    # The refused change is not shown: the page never fakes a value the server has not sent.
    refused = page_state(browser)["prefs"]["readyForAction"]
    assert refused["shown"] is False and refused["value"] is False, refused
    browser.find_element(By.ID, "token-input").send_keys(api, Keys.ENTER)
    wait(browser, lambda d: http(server, "GET", "/preferences", token=read)[1]["readyForAction"] is True,
         10, "the change was not retried with the API token")
    wait_pref(browser, "readyForAction", True)
