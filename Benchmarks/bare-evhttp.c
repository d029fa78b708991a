/*
 * bare-evhttp — the reference point for `make bench`.
 *
 * A bare, single-threaded libevent evhttp server that answers the benchmarked
 * routes with the same bytes Tidings answers, with no router, no JSON coder and
 * no durability, so that the ratio "Tidings rate / bare rate" measures what the
 * Tidings layers cost on top of evhttp itself.
 *
 *   GET  /healthz                   200 {"status":"ok"}
 *   GET  /preferences/name          200 {"key":"name","value":...,"default":"fat",
 *                                        "type":"string","revision":R}, ETag "R"
 *   PUT  /preferences/name          body {"value": <json>} -> new revision, 200 record,
 *                                   and one SSE event broadcast to every open stream
 *   GET  /preferences/name/events   text/event-stream: retry line, snapshot event,
 *                                   then live `id:/event: preference/data:` events
 *
 * The PUT is in memory only (no store): it is the fan-out reference, not a
 * durable-write reference. Each event is encoded once and the same bytes are
 * queued on every stream.
 *
 * Usage: bare-evhttp [PORT]        (0 or absent = pick a free port)
 * Prints: "bare-evhttp listening on http://127.0.0.1:PORT" on stdout.
 *
 * Build: gcc -O2 -o bare-evhttp bare-evhttp.c $(pkg-config --cflags --libs libevent)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

/* evhttp_bind_socket listens with a backlog of 128, which drops SYNs when
 * thousands of clients connect at once; we listen ourselves. The kernel clamps
 * this to net.core.somaxconn. */
#define LISTEN_BACKLOG 16384
#define MAX_VALUE_LEN 4096

static const char HEALTHZ_BODY[] = "{\"status\":\"ok\"}";

/* The one preference this server knows. Confined to the loop thread. */
static char g_value[MAX_VALUE_LEN + 1] = "\"fat\"";
static unsigned long long g_revision = 0;

/* Open event streams: an intrusive doubly linked list, loop thread only. */
struct stream {
    struct evhttp_request *req;
    struct stream *prev, *next;
};
static struct stream *g_streams = NULL;
static long g_stream_count = 0;
static struct evbuffer *g_scratch; /* reused for every chunk we queue */

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            perror("setrlimit(RLIMIT_NOFILE)");
    }
}

static void add_common_headers(struct evhttp_request *req, const char *ctype) {
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    char rev[32];
    snprintf(rev, sizeof rev, "%llu", g_revision);
    evhttp_add_header(h, "Content-Type", ctype);
    evhttp_add_header(h, "Tidings-Revision", rev);
}

static void reply_problem(struct evhttp_request *req, int status, const char *title) {
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "{\"type\":\"about:blank\",\"title\":\"%s\",\"status\":%d}", title, status);
    add_common_headers(req, "application/problem+json");
    evhttp_send_reply(req, status, title, b);
    evbuffer_free(b);
}

static void reply_record(struct evhttp_request *req) {
    struct evbuffer *b = evbuffer_new();
    char etag[32];
    evbuffer_add_printf(b,
        "{\"key\":\"name\",\"value\":%s,\"default\":\"fat\",\"type\":\"string\",\"revision\":%llu}",
        g_value, g_revision);
    snprintf(etag, sizeof etag, "\"%llu\"", g_revision);
    add_common_headers(req, "application/json");
    evhttp_add_header(evhttp_request_get_output_headers(req), "ETag", etag);
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void on_healthz(struct evhttp_request *req) {
    struct evbuffer *b = evbuffer_new();
    evbuffer_add(b, HEALTHZ_BODY, sizeof HEALTHZ_BODY - 1);
    add_common_headers(req, "application/json");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* Copies the raw JSON token after "value": (string, number, literal). Returns
 * 0 on success. Deliberately small: the bare server is a reference, not a
 * JSON parser, but it never forwards a control character into an event. */
static int extract_value(const char *body, size_t len, char *out, size_t outsz) {
    const char *end = body + len;
    const char *p = NULL;
    for (const char *q = body; q + 7 <= end; q++)
        if (memcmp(q, "\"value\"", 7) == 0) { p = q + 7; break; }
    if (!p) return -1;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    if (p >= end || *p != ':') return -1;
    p++;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    if (p >= end) return -1;
    const char *start = p;
    if (*p == '"') {
        p++;
        while (p < end && *p != '"') {
            if ((unsigned char)*p < 0x20) return -1;
            if (*p == '\\') p++;
            p++;
        }
        if (p >= end) return -1;
        p++; /* closing quote */
    } else {
        while (p < end && *p != ',' && *p != '}' && *p != ' ' && *p != '\r' && *p != '\n') {
            if ((unsigned char)*p < 0x20) return -1;
            p++;
        }
    }
    size_t n = (size_t)(p - start);
    if (n == 0 || n >= outsz) return -1;
    memcpy(out, start, n);
    out[n] = '\0';
    return 0;
}

/* Encodes the event once, then queues the same bytes on every open stream. */
static void broadcast(void) {
    char event[MAX_VALUE_LEN + 160];
    int n = snprintf(event, sizeof event,
        "id: %llu\nevent: preference\ndata: {\"key\":\"name\",\"value\":%s,\"revision\":%llu}\n\n",
        g_revision, g_value, g_revision);
    for (struct stream *s = g_streams, *next; s; s = next) {
        next = s->next; /* close callbacks run from the loop, never from inside send */
        evbuffer_add(g_scratch, event, (size_t)n);
        evhttp_send_reply_chunk(s->req, g_scratch); /* moves the bytes out of g_scratch */
    }
}

static void on_put(struct evhttp_request *req) {
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    char newval[MAX_VALUE_LEN + 1];
    if (len == 0 || len > 1 << 20) { reply_problem(req, 422, "Missing value"); return; }
    const char *body = (const char *)evbuffer_pullup(in, -1);
    if (extract_value(body, len, newval, sizeof newval) != 0 || newval[0] != '"') {
        reply_problem(req, 422, "Expected a string value");
        return;
    }
    if (strcmp(newval, g_value) != 0) { /* an equal value changes nothing, as in Tidings */
        strcpy(g_value, newval);
        g_revision++;
        broadcast();
    }
    reply_record(req);
}

static void on_stream_closed(struct evhttp_connection *evcon, void *arg) {
    (void)evcon;
    struct stream *s = arg;
    if (s->prev) s->prev->next = s->next; else g_streams = s->next;
    if (s->next) s->next->prev = s->prev;
    g_stream_count--;
    /* When the peer vanishes mid-stream evhttp detaches the request (its
     * connection becomes NULL) and leaves it to us; ending it frees it. */
    if (evhttp_request_get_connection(s->req) == NULL)
        evhttp_send_reply_end(s->req);
    free(s);
}

static void on_events(struct evhttp_request *req) {
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct stream *s = calloc(1, sizeof *s);
    if (!s) { reply_problem(req, 503, "Out of memory"); return; }
    s->req = req;
    add_common_headers(req, "text/event-stream");
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Cache-Control", "no-cache");
    evhttp_add_header(h, "X-Accel-Buffering", "no");
    evhttp_send_reply_start(req, 200, "OK");
    evbuffer_add_printf(g_scratch,
        "retry: 3000\n\nid: %llu\nevent: preference\ndata: {\"key\":\"name\",\"value\":%s,\"revision\":%llu}\n\n",
        g_revision, g_value, g_revision);
    evhttp_send_reply_chunk(req, g_scratch);
    /* A quiet stream must not hit the connection timeout. */
    evhttp_connection_set_timeout(evcon, 24 * 3600);
    evhttp_connection_set_closecb(evcon, on_stream_closed, s);
    s->next = g_streams;
    if (g_streams) g_streams->prev = s;
    g_streams = s;
    g_stream_count++;
}

static void on_request(struct evhttp_request *req, void *arg) {
    (void)arg;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    if (!path) { reply_problem(req, 400, "Bad Request"); return; }
    if (strcmp(path, "/healthz") == 0) {
        if (m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD) on_healthz(req);
        else reply_problem(req, 405, "Method Not Allowed");
    } else if (strcmp(path, "/preferences/name") == 0) {
        if (m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD) reply_record(req);
        else if (m == EVHTTP_REQ_PUT) on_put(req);
        else reply_problem(req, 405, "Method Not Allowed");
    } else if (strcmp(path, "/preferences/name/events") == 0) {
        if (m == EVHTTP_REQ_GET) on_events(req);
        else reply_problem(req, 405, "Method Not Allowed");
    } else {
        reply_problem(req, 404, "Not Found");
    }
}

static void on_signal(evutil_socket_t sig, short what, void *arg) {
    (void)sig; (void)what;
    event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 0;
    if (port < 0 || port > 65535) { fprintf(stderr, "usage: %s [PORT]\n", argv[0]); return 2; }
    raise_nofile();
    signal(SIGPIPE, SIG_IGN);

    struct event_base *base = event_base_new();
    struct evhttp *http = evhttp_new(base);
    g_scratch = evbuffer_new();
    if (!base || !http || !g_scratch) { fprintf(stderr, "libevent init failed\n"); return 1; }
    evhttp_set_gencb(http, on_request, NULL);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT);

    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((unsigned short)port);
    struct evconnlistener *lev = evconnlistener_new_bind(base, NULL, NULL,
        LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, LISTEN_BACKLOG,
        (struct sockaddr *)&sin, sizeof sin);
    if (!lev) { fprintf(stderr, "bind 127.0.0.1:%d: %s\n", port, strerror(errno)); return 1; }
    if (!evhttp_bind_listener(http, lev)) { fprintf(stderr, "evhttp_bind_listener failed\n"); return 1; }

    struct sockaddr_in bound;
    socklen_t blen = sizeof bound;
    getsockname(evconnlistener_get_fd(lev), (struct sockaddr *)&bound, &blen);
    printf("bare-evhttp listening on http://127.0.0.1:%d\n", ntohs(bound.sin_port));
    fflush(stdout);

    struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
    event_add(sigterm, NULL);
    event_add(sigint, NULL);
    event_base_dispatch(base);

    event_free(sigterm);
    event_free(sigint);
    evhttp_free(http);
    evbuffer_free(g_scratch);
    event_base_free(base);
    return 0;
}
