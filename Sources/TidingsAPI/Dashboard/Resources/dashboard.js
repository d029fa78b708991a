// The dashboard's script (GET /). The server inlines this file into index.html at start-up
// (DashboardPage.swift), so the page stays one self-contained document: no framework, no CDN,
// works offline. Checked by `make lint` (node --check).
//
// What the page relies on (keep in step with API.md):
// - GET /events?topics=preferences,things,posts (+ &lastEventId=R when resuming, &ticket=T when
//   tokens are in use) with events `preference`, `things`, `posts`, `reset`;
// - GET /preferences (key list) and GET /preferences/{key} (`type`, `default`);
// - PUT /preferences/{key} {"value": v}; POST /things {"thing": t}; DELETE /things/{thing};
//   GET /posts (starts an idle load); POST /posts/refresh;
// - POST /stream-tickets after a 401 made the page ask for a token (kept in sessionStorage);
// - GET /preferences/{key}/history?limit=10 (a key's recent changes: who, when, before → after)
//   and POST /preferences/rollback {"revision", "keys": [key]} after an inline confirmation.
// Errors are shown from problem details' `detail` (and `errors[].detail`). Server data never goes
// into innerHTML; all text goes in as text nodes.
(function () {
  "use strict";

  // ---------- small helpers (no innerHTML anywhere: all server text goes in as text nodes) ----------
  var TOPICS = "preferences,things,posts";
  var TOKEN_KEY = "tidings.token";
  function $(id) { return document.getElementById(id); }
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        var v = attrs[name];
        if (v === null || v === undefined || v === false) return;
        if (name === "text") node.textContent = String(v);
        else if (name === "className") node.className = v;
        else node.setAttribute(name, v === true ? "" : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function problemText(res) {
    var d = res.data;
    if (d && typeof d === "object") {
      var parts = [];
      if (typeof d.detail === "string" && d.detail) parts.push(d.detail);
      else if (typeof d.title === "string" && d.title) parts.push(d.title);
      if (Array.isArray(d.errors)) {
        d.errors.forEach(function (e) {
          if (e && typeof e.detail === "string" && parts.indexOf(e.detail) < 0) {
            parts.push((e.key ? e.key + ": " : "") + e.detail);
          }
        });
      }
      if (parts.length) return parts.join(" ");
    }
    return "The server answered " + res.status + ".";
  }

  // ---------- token (asked once, kept for the tab) ----------
  var token = null;
  try { token = sessionStorage.getItem(TOKEN_KEY); } catch (e) { token = null; }
  var tokenWait = null, tokenResolve = null, focusBeforeToken = null;

  function askForToken(message) {
    $("token-message").textContent = message;
    if (!tokenWait) {
      tokenWait = new Promise(function (resolve) { tokenResolve = resolve; });
      focusBeforeToken = document.activeElement;
      $("token-panel").hidden = false;
      $("token-input").value = "";
      $("token-input").focus();
    }
    return tokenWait;
  }
  $("token-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var t = $("token-input").value.trim();
    if (!t) { $("token-message").textContent = "Enter a token."; return; }
    token = t;
    try { sessionStorage.setItem(TOKEN_KEY, t); } catch (e) { /* private mode: keep in memory */ }
    $("token-input").value = "";
    $("token-panel").hidden = true;
    // Give the keyboard back to whatever the person was doing when we asked.
    if (focusBeforeToken && focusBeforeToken !== document.body && document.contains(focusBeforeToken)) {
      focusBeforeToken.focus();
    }
    focusBeforeToken = null;
    var resolve = tokenResolve;
    tokenWait = null; tokenResolve = null;
    if (resolve) resolve(t);
  });

  // ---------- HTTP ----------
  // Resolves with {status, ok, data}; rejects only on network failure.
  // A 401 asks for the token (one form shared by every waiting request) and retries.
  function api(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    var sent = token;
    if (sent) headers["Authorization"] = "Bearer " + sent;
    return fetch(path, {
      method: method, headers: headers, cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (res) {
      if (res.status === 401 && token !== sent) return api(method, path, body); // a new token came meanwhile
      if (res.status === 401) {
        // A stream ticket is authorised like a read; every other POST/PUT/DELETE is a write.
        var isRead = method === "GET" || method === "HEAD" || path === "/stream-tickets";
        var msg = !token ? "This server needs a token."
          : isRead ? "The token was not accepted. Enter another."
          : "That change needs the API (write) token.";
        setConnection(source ? connState : "auth");
        return askForToken(msg).then(function () { return api(method, path, body); });
      }
      var type = res.headers.get("Content-Type") || "";
      var parse = /json/i.test(type) ? res.json().catch(function () { return null; }) : Promise.resolve(null);
      return parse.then(function (data) { return { status: res.status, ok: res.ok, data: data }; });
    });
  }

  // ---------- state ----------
  var prefs = new Map();      // key -> {value, type, typeKnown, def, row, control, error, dirty, busy}
  var typeFetches = new Map(); // key -> Promise (one GET /preferences/{key} per key)
  var things = [];
  var posts = null;
  var postsKicked = false;
  var lastEventId = null;
  var prefSeq = 0;

  // ---------- preferences ----------
  function inferType(v) {
    if (typeof v === "boolean") return "boolean";
    if (typeof v === "number") return "number";
    if (v && typeof v === "object") return "object";
    return "string";
  }

  function fetchType(key) {
    if (typeFetches.has(key)) return;
    var p = api("GET", "/preferences/" + encodeURIComponent(key)).then(function (res) {
      if (!res.ok || !res.data) { typeFetches.delete(key); return; }
      var p = prefs.get(key);
      if (!p) return;
      var t = res.data.type;
      if (t === "boolean" || t === "integer" || t === "number" || t === "string" || t === "object") {
        p.type = t; p.typeKnown = true;
      }
      p.def = res.data["default"];
      renderPref(key);
    }, function () { typeFetches.delete(key); });
    typeFetches.set(key, p);
  }

  function onPreference(d) {
    if (!d || typeof d.key !== "string") return;
    var p = prefs.get(d.key);
    if (!p) {
      p = { value: d.value, type: inferType(d.value), typeKnown: false, def: undefined,
            row: null, control: null, kind: null, error: "", dirty: false, busy: false };
      prefs.set(d.key, p);
    } else {
      p.value = d.value;
    }
    renderPref(d.key);
    if (!p.typeKnown) fetchType(d.key);
    if (p.historyPanel && !p.historyPanel.hidden) loadHistory(d.key);
  }

  function buildRow(key, p) {
    var n = ++prefSeq;
    var id = "pref-" + n, errId = "pref-error-" + n;
    var row = el("li", { className: "pref", "data-pref": key });
    var control, head, form = null;
    if (p.type === "boolean") {
      control = el("input", { type: "checkbox", id: id, className: "toggle", role: "switch",
                             "data-pref-control": key, "aria-describedby": errId });
      control.addEventListener("click", function (ev) {
        // Never show a value the server has not confirmed: undo the browser's own toggle,
        // send the change, and let the stream's event flip the switch.
        ev.preventDefault();
        var cur = prefs.get(key);
        if (!cur) return;
        var base = cur.busy ? (cur.queued ? cur.queued.value : cur.sending) : cur.value;
        send(key, !(base === true));
      });
      head = el("div", { className: "pref-head" }, el("label", { "for": id, text: key }), control);
      row.appendChild(head);
    } else {
      // An object preference is edited as JSON text (Set sends it; Enter adds a line).
      control = p.type === "object"
        ? el("textarea", { id: id, "data-pref-control": key, "aria-describedby": errId, spellcheck: "false",
                           className: "json", rows: 4 })
        : el("input", { id: id, "data-pref-control": key, "aria-describedby": errId,
                        type: p.type === "string" ? "text" : "number", spellcheck: "false" });
      if (p.type !== "string" && p.type !== "object") control.setAttribute("inputmode", p.type === "integer" ? "numeric" : "decimal");
      control.addEventListener("input", function () { var c = prefs.get(key); if (c) c.dirty = true; });
      control.addEventListener("change", function () { submitInput(key); });
      control.addEventListener("keydown", function (ev) {
        if (ev.key === "Escape") {
          var c = prefs.get(key); if (!c) return;
          c.dirty = false; c.error = ""; renderPref(key);
        }
      });
      form = el("form", { className: "row", novalidate: true }, control,
                el("button", { type: "submit", className: "secondary", text: "Set" }));
      form.addEventListener("submit", function (ev) { ev.preventDefault(); submitInput(key); });
      head = el("div", { className: "pref-head" }, el("label", { "for": id, text: key }));
      row.appendChild(head);
      row.appendChild(form);
    }
    var meta = el("span", { className: "pref-meta" });
    var name = el("div", { className: "pref-name" }, head.firstChild, meta);
    head.insertBefore(name, head.firstChild);
    var err = el("p", { className: "error", id: errId, role: "alert", "data-pref-error": key });
    row.appendChild(err);
    var historyId = "pref-history-" + n;
    var historyButton = el("button", { type: "button", className: "secondary small", text: "History",
                                       "data-history-open": key, "aria-expanded": "false", "aria-controls": historyId });
    var historyPanel = el("div", { className: "history", id: historyId, hidden: true, "data-history-panel": key });
    historyButton.addEventListener("click", function () { toggleHistory(key); });
    name.appendChild(historyButton);
    row.appendChild(historyPanel);
    p.historyButton = historyButton; p.historyPanel = historyPanel;
    p.row = row; p.control = control; p.meta = meta; p.errorNode = err;
    p.kind = kindOf(p.type);
    return row;
  }

  function kindOf(type) {
    return type === "boolean" || type === "string" || type === "object" ? type : "number";
  }

  function renderPref(key) {
    var p = prefs.get(key);
    if (!p) return;
    var kind = kindOf(p.type);
    if (!p.row || p.kind !== kind) {
      var old = p.row;
      var row = buildRow(key, p);
      if (old && old.parentNode) old.parentNode.replaceChild(row, old);
      else $("prefs").appendChild(row);
    }
    var c = p.control;
    p.row.setAttribute("data-type", p.type);
    p.row.setAttribute("data-type-known", p.typeKnown ? "true" : "false");
    p.row.setAttribute("data-value", JSON.stringify(p.value));
    if (p.busy) p.row.setAttribute("aria-busy", "true"); else p.row.removeAttribute("aria-busy");
    p.meta.textContent = p.type + (p.def !== undefined ? " · default " + JSON.stringify(p.def) : "");
    if (kind === "boolean") {
      c.checked = p.value === true;
      c.setAttribute("aria-checked", p.value === true ? "true" : "false");
    } else {
      if (kind === "number") c.setAttribute("step", p.type === "integer" ? "1" : "any");
      // Do not overwrite what the person is typing; everything else mirrors the stream.
      if (!(p.dirty && document.activeElement === c)) {
        c.value = p.value === null || p.value === undefined ? ""
          : kind === "object" ? JSON.stringify(p.value, null, 2) : String(p.value);
        p.dirty = false;
      }
    }
    p.errorNode.textContent = p.error;
    if (p.error) c.setAttribute("aria-invalid", "true"); else c.removeAttribute("aria-invalid");
    $("prefs-empty").hidden = prefs.size > 0;
  }

  function submitInput(key) {
    var p = prefs.get(key);
    if (!p || p.type === "boolean") return;
    var raw = p.control.value;
    var v;
    if (p.type === "string") v = raw;
    else if (p.type === "object") {
      // Text that is not JSON is sent as it is, so the server's own validation explains it.
      try { v = JSON.parse(raw); } catch (e) { v = raw; }
    } else {
      // An unparsable number is sent as typed text so the server's own validation explains it.
      v = raw.trim() === "" || isNaN(Number(raw)) ? raw : Number(raw);
    }
    if (p.busy && same(p.queued ? p.queued.value : p.sending, v)) return;
    send(key, v);
  }

  // One PUT per key at a time: a value chosen while one is in flight waits and replaces any
  // earlier waiting value, so the server applies the person's changes in the order made.
  function send(key, value) {
    var p = prefs.get(key);
    if (!p) return;
    if (p.busy) { p.queued = { value: value }; return; }
    p.busy = true; p.sending = value; renderPref(key);
    api("PUT", "/preferences/" + encodeURIComponent(key), { value: value }).then(function (res) {
      var c = prefs.get(key); if (!c) return;
      c.busy = false;
      if (c.queued) { var next = c.queued.value; c.queued = null; send(key, next); return; }
      if (res.ok) {
        c.error = "";
        c.dirty = false;
        // The shown value still comes only from the stream; if the event already arrived
        // (or nothing changed), re-render, otherwise the event will.
        renderPref(key);
      } else {
        c.error = problemText(res);
        renderPref(key);
      }
    }, function () {
      var c = prefs.get(key); if (!c) return;
      c.busy = false;
      if (c.queued) { var next = c.queued.value; c.queued = null; send(key, next); return; }
      c.error = "Could not reach the server."; renderPref(key);
    });
  }

  // ---------- a key's history and rollback ----------
  function shortTime(at) {
    var d = new Date(at);
    return isNaN(d.getTime()) ? String(at) : d.toLocaleString();
  }

  function toggleHistory(key) {
    var p = prefs.get(key);
    if (!p) return;
    var open = p.historyPanel.hidden;
    p.historyPanel.hidden = !open;
    p.historyButton.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) loadHistory(key);
  }

  function loadHistory(key) {
    var p = prefs.get(key);
    if (!p || p.historyPanel.hidden) return;
    var seq = (p.historySeq || 0) + 1;
    p.historySeq = seq;
    api("GET", "/preferences/" + encodeURIComponent(key) + "/history?limit=10").then(function (res) {
      var c = prefs.get(key);
      if (!c || c.historySeq !== seq) return; // a newer load replaced this one
      renderHistory(key, res.ok && res.data ? res.data.changes || [] : null, res.ok ? "" : problemText(res));
    }, function () {
      renderHistory(key, null, "Could not reach the server.");
    });
  }

  function renderHistory(key, changes, error) {
    var p = prefs.get(key);
    if (!p) return;
    var panel = p.historyPanel;
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    if (error) { panel.appendChild(el("p", { className: "error", role: "alert", text: error })); return; }
    if (!changes.length) { panel.appendChild(el("p", { className: "muted", text: "No changes recorded." })); return; }
    var list = el("ol", { className: "history-list", "aria-label": "Recent changes of " + key });
    changes.forEach(function (c, index) {
      var who = el("span", { className: "history-who", text: c.actor });
      var when = el("time", { className: "history-when", dateTime: c.at, text: shortTime(c.at) });
      var what = el("span", { className: "history-what",
                               text: JSON.stringify(c.before) + " \u2192 " + JSON.stringify(c.after) });
      var item = el("li", { "data-history-entry": String(c.revision), "data-history-after": JSON.stringify(c.after) },
                    who, when, what);
      if (c.reason) item.appendChild(el("span", { className: "history-reason muted", text: c.reason }));
      if (index > 0 || !same(c.after, p.value)) {
        var back = el("button", { type: "button", className: "secondary small", text: "Roll back to this",
                                  "data-history-rollback": String(c.revision) });
        back.addEventListener("click", function () { confirmRollback(key, c, item); });
        item.appendChild(back);
      }
      list.appendChild(item);
    });
    panel.appendChild(list);
  }

  // The confirmation stays in the page (no modal): it names the key and the value it brings back.
  function confirmRollback(key, change, item) {
    var old = item.querySelector(".history-confirm");
    if (old) { old.parentNode.removeChild(old); }
    var question = el("span", { text: "Set " + key + " back to " + JSON.stringify(change.after) + "?" });
    var yes = el("button", { type: "button", text: "Roll back", "data-history-confirm": String(change.revision) });
    var no = el("button", { type: "button", className: "secondary", text: "Cancel" });
    var box = el("div", { className: "history-confirm", role: "group", "aria-label": "Confirm rollback" }, question, yes, no);
    no.addEventListener("click", function () { box.parentNode.removeChild(box); });
    yes.addEventListener("click", function () {
      yes.disabled = true;
      api("POST", "/preferences/rollback", { revision: change.revision, keys: [key] }).then(function (res) {
        var p = prefs.get(key); if (!p) return;
        p.error = res.ok ? "" : problemText(res);
        renderPref(key);
        loadHistory(key);
      }, function () {
        var p = prefs.get(key); if (!p) return;
        p.error = "Could not reach the server."; renderPref(key);
      });
    });
    item.appendChild(box);
    yes.focus();
  }

  // ---------- things ----------
  function onThings(d) {
    if (!d || !Array.isArray(d.things)) return;
    things = d.things.slice();
    renderThings();
  }
  function renderThings() {
    var list = $("things-list");
    while (list.firstChild) list.removeChild(list.firstChild);
    things.forEach(function (t) {
      var text = String(t);
      var btn = el("button", { type: "button", "data-remove": text, "aria-label": "Remove " + text,
                              title: "Remove " + text, text: "\u00d7" });
      btn.addEventListener("click", function () { removeThing(text, btn); });
      list.appendChild(el("li", { "data-thing": text }, el("span", { className: "thing-text", text: text }), btn));
    });
    $("things-empty").hidden = things.length > 0;
    $("things-count").textContent = things.length ? "(" + things.length + ")" : "";
  }
  function showThingError(msg, status) {
    var e = $("thing-error");
    e.textContent = msg;
    if (status) e.setAttribute("data-status", String(status)); else e.removeAttribute("data-status");
    if (msg) $("thing-input").setAttribute("aria-invalid", "true");
    else $("thing-input").removeAttribute("aria-invalid");
  }
  $("thing-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = $("thing-input"), btn = $("thing-add");
    var v = input.value;
    btn.disabled = true;
    api("POST", "/things", { thing: v }).then(function (res) {
      btn.disabled = false;
      if (res.ok) { input.value = ""; showThingError("", 0); }
      else showThingError(problemText(res), res.status);
      input.focus();
    }, function () { btn.disabled = false; showThingError("Could not reach the server.", 0); });
  });
  function removeThing(text, btn) {
    btn.disabled = true;
    api("DELETE", "/things/" + encodeURIComponent(text)).then(function (res) {
      btn.disabled = false;
      if (res.ok || res.status === 404) showThingError("", 0); // 404: already gone; the stream says so
      else showThingError(problemText(res), res.status);
    }, function () { btn.disabled = false; showThingError("Could not reach the server.", 0); });
  }

  // ---------- posts ----------
  function onPosts(d) {
    if (!d || typeof d !== "object") return;
    posts = d;
    renderPosts();
    // The stream reports but does not start a load; the first reader does (GET /posts).
    if (d.state === "idle" && !postsKicked) {
      postsKicked = true;
      api("GET", "/posts").catch(function () { postsKicked = false; });
    }
  }
  function renderPosts() {
    var st = $("posts-state");
    var list = $("posts-list");
    if (!posts) {
      st.setAttribute("data-state", "unknown"); st.textContent = "Waiting for the server…";
      while (list.firstChild) list.removeChild(list.firstChild);
      return;
    }
    var state = String(posts.state);
    st.setAttribute("data-state", state);
    while (st.firstChild) st.removeChild(st.firstChild);
    var at = null;
    if (posts.fetchedAt) {
      var date = new Date(posts.fetchedAt);
      at = el("time", { datetime: posts.fetchedAt, text: isNaN(date) ? String(posts.fetchedAt) : date.toLocaleString() });
    }
    var text = function (t) { st.appendChild(document.createTextNode(t)); };
    if (state === "loading") {
      if (at) { text("Refreshing… (last loaded at "); st.appendChild(at); text(")"); } else text("Loading…");
    } else if (state === "loaded") {
      text("Loaded"); if (at) { text(" at "); st.appendChild(at); }
    } else if (state === "failed") {
      var e = posts.error || {};
      var m = "Failed: " + (e.message ? String(e.message) : "unknown error");
      if (typeof e.upstreamStatus === "number") m += " (upstream status " + e.upstreamStatus + ")";
      text(m);
      if (at) { text(". Showing posts loaded at "); st.appendChild(at); }
    } else if (state === "idle") text("Not loaded yet");
    else text(state);
    if (posts.source) st.setAttribute("title", "Source: " + String(posts.source));
    while (list.firstChild) list.removeChild(list.firstChild);
    (Array.isArray(posts.posts) ? posts.posts : []).forEach(function (post) {
      if (!post || typeof post !== "object") return;
      list.appendChild(el("li", { className: "post", "data-post-id": String(post.id) },
        el("h3", { text: post.title === undefined ? "" : String(post.title) }),
        el("p", { text: post.body === undefined ? "" : String(post.body) })));
    });
  }
  $("posts-refresh").addEventListener("click", function () {
    var btn = $("posts-refresh");
    btn.disabled = true;
    $("posts-error").textContent = "";
    api("POST", "/posts/refresh").then(function (res) {
      btn.disabled = false;
      if (!res.ok) $("posts-error").textContent = problemText(res);
    }, function () { btn.disabled = false; $("posts-error").textContent = "Could not reach the server."; });
  });

  // ---------- reset ----------
  function onReset(d) {
    // The server could not resume us: drop everything and take the snapshot that follows.
    prefs.clear(); typeFetches.clear();
    var list = $("prefs"); while (list.firstChild) list.removeChild(list.firstChild);
    $("prefs-empty").hidden = false;
    things = []; renderThings();
    posts = null; postsKicked = false; renderPosts();
    var reason = d && d.reason ? String(d.reason) : "reset";
    document.body.setAttribute("data-last-reset", reason);
  }

  // ---------- the one event stream ----------
  var source = null;        // the current EventSource
  var connState = "connecting";
  var attempt = 0;          // consecutive failed connections, for backoff
  var retryTimer = null;
  var connectGen = 0;       // guards against overlapping (async) connects
  var stableTimer = null;

  function setConnection(s) {
    connState = s;
    var node = $("connection-state");
    node.setAttribute("data-state", s);
    node.textContent = s === "live" ? "Live" : s === "reconnecting" ? "Reconnecting…"
      : s === "auth" ? "Waiting for token" : "Connecting…";
  }

  function handler(fn) {
    return function (ev) {
      if (ev.target !== source) return;
      if (ev.lastEventId) {
        lastEventId = ev.lastEventId;
        $("revision").textContent = "rev " + lastEventId;
      }
      attempt = 0;
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      fn(data);
    };
  }

  function scheduleReconnect() {
    clearTimeout(retryTimer);
    attempt++;
    var base = Math.min(5000, 250 * Math.pow(2, attempt - 1));
    var delay = Math.round(base * (0.75 + Math.random() * 0.5));
    retryTimer = setTimeout(connect, delay);
  }

  function connect() {
    clearTimeout(retryTimer);
    var gen = ++connectGen;
    if (source) { source.close(); source = null; }
    // conflate: a dashboard wants the latest state, never to be cut off for falling behind.
    var url = "/events?conflate=true&topics=" + TOPICS;
    // Resume from what we have seen. A fresh EventSource has no Last-Event-ID of its own,
    // so the resume point goes into the query.
    if (lastEventId !== null) url += "&lastEventId=" + encodeURIComponent(lastEventId);
    var ticket = token
      ? api("POST", "/stream-tickets").then(function (res) {
          if (res.ok && res.data && typeof res.data.ticket === "string") return res.data.ticket;
          if (res.status === 404) return null; // a server without tickets: open the stream plainly
          throw new Error("ticket " + res.status);
        })
      : Promise.resolve(null);
    ticket.then(function (t) {
      if (gen !== connectGen) return;
      open(t ? url + "&ticket=" + encodeURIComponent(t) : url);
    }, function () {
      if (gen !== connectGen) return;
      setConnection("reconnecting");
      scheduleReconnect();
    });
  }

  function open(url) {
    var es = new EventSource(url);
    var opened = false;
    source = es;
    es.addEventListener("open", function () {
      if (es !== source) return;
      opened = true;
      setConnection("live");
      // A stream that stays up for a while counts as healthy even if nothing happens.
      clearTimeout(stableTimer);
      stableTimer = setTimeout(function () { if (es === source) attempt = 0; }, 3000);
    });
    es.addEventListener("preference", handler(onPreference));
    es.addEventListener("things", handler(onThings));
    es.addEventListener("posts", handler(onPosts));
    es.addEventListener("reset", handler(onReset));
    es.addEventListener("error", function () {
      if (es !== source) return;
      // Reconnect ourselves rather than leave it to the browser: with tokens every connection
      // needs a fresh ticket, and a new EventSource carries the resume point in its URL.
      es.close(); source = null;
      clearTimeout(stableTimer);
      setConnection("reconnecting");
      if (!opened && !token) {
        // Refused before it opened: find out whether the server wants a token
        // (api() asks for it on 401), then try again.
        var gen = ++connectGen;
        api("GET", "/preferences").then(function () {
          if (gen === connectGen) scheduleReconnect();
        }, function () {
          if (gen === connectGen) scheduleReconnect();
        });
        return;
      }
      scheduleReconnect();
    });
  }

  // ---------- start ----------
  renderThings();
  $("things-empty").hidden = true; // until the first things event says the list is empty
  setConnection("connecting");
  api("GET", "/preferences").then(function (res) {
    // Fetch each preference's type early; the values themselves come from the stream.
    if (res.ok && res.data && typeof res.data === "object") {
      Object.keys(res.data).forEach(function (key) {
        if (!prefs.has(key)) {
          prefs.set(key, { value: res.data[key], type: inferType(res.data[key]), typeKnown: false,
                           def: undefined, row: null, control: null, kind: null, error: "",
                           dirty: false, busy: false });
          renderPref(key);
          fetchType(key);
        }
      });
    }
    connect();
  }, function () { connect(); });
})();
