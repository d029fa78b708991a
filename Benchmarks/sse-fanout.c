/*
 * sse-fanout — fan-out load generator for `make bench`.
 *
 * Opens N Server-Sent-Events streams on GET /preferences/{key}/events, waits
 * until every stream has its initial snapshot event, then sends M changes
 * (PUT /preferences/{key} {"value":"<run>-<i>"}) INTERVAL ms apart on a separate
 * keep-alive connection, recording each PUT's send time. Every stream parses
 * its events (HTTP/1.1 chunked or raw body; `id:`, `event:`, `data:`), maps the
 * value back to the PUT that caused it, and checks that every change arrives,
 * in order, with no gap and no duplicate. Delivery latency = event arrival
 * minus the PUT's send time.
 *
 * Server memory per stream = (VmRSS with all streams open - VmRSS before) / N,
 * read from /proc/PID/status (PID given with -P).
 *
 * Single-threaded on epoll so it holds 10,000 connections cheaply; it prints
 * its own CPU time against wall time so a reader can see it is not the
 * bottleneck.
 *
 * Usage: sse-fanout -p PORT [-H 127.0.0.1] [-k name] [-n 10000] [-m 50]
 *                   [-i 100] [-P SERVER_PID] [-c 500] [-T 60] [-W 10] [-t TOKEN]
 *                   [-w WRITE_PORT]   (PUTs to another instance: propagation A → B)
 *                   [-S N]   (streams from N loopback addresses 127.0.0.2..: N clients behind a proxy)
 *                   [-g]     (ask for gzip streams: `Accept-Encoding: gzip`; see below)
 *                   [-e PREFIX] (streams and changes under PREFIX, e.g. /environments/staging)
 *                   [-V BYTES] (each value is "<run>-<i> " and about BYTES of English-like words, so
 *                               events are as large and as compressible as real text)
 *
 * With -g each stream must answer `Content-Encoding: gzip` (HTTP/1.1 chunked). Tidings sends a
 * gzip stream as the 10-byte gzip header, then one chunk per event, each a raw deflate block
 * sequence started from an empty window and ended on a sync-flush boundary (shared by every
 * subscriber). So the generator decodes every chunk on its own with one shared raw inflater
 * (inflateReset per chunk) instead of holding 32 KiB of inflate window per stream — which also
 * checks that property: a chunk that needs an earlier one fails to decode and is counted.
 * Either way it reports the body bytes on the wire (chunk framing included) per delivered event.
 * Last line of output: "RESULT key=value ..." for scripts. Exit status 0 when
 * every stream was held and got every event in order (complete), 1 otherwise,
 * 2 on a usage error.
 *
 * Build: gcc -O2 -pthread -o sse-fanout sse-fanout.c -lz
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---------- options ---------- */
static const char *o_host = "127.0.0.1";
static int o_port = 0;
static const char *o_key = "name";
/* -e: a path prefix for the streams and the changes, e.g. /environments/staging (issue 31). */
static const char *o_prefix = "";
static int o_streams = 10000;
static int o_changes = 50;
static int o_interval_ms = 100;
static long o_pid = 0;
static int o_connect_window = 500; /* streams opened but not yet holding a snapshot */
static int o_open_timeout_s = 60;
static int o_tail_s = 10;          /* how long to wait after the last PUT */
static const char *o_token = NULL;
static const char *o_probe = NULL;
static const char *o_method = "PUT"; /* -M: how a change is sent (nchan publishes with POST) */
static int o_gzip = 0;
static int o_value_pad = 0;         /* -V BYTES: words after "<run>-<i> " in every value */              /* -g: Accept-Encoding: gzip, inflate every event's chunk */
static int o_ignore_ids = 0;        /* -I: ids are not revisions (nchan's are time:tag) */  /* -z PATH: a GET every 10 ms during the changes, timed */

/* ---------- time ---------- */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* ---------- /proc readers ---------- */
static long proc_rss_kib(long pid) {
    char path[64], line[256];
    long kib = -1;
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) { kib = strtol(line + 6, NULL, 10); break; }
    fclose(f);
    return kib;
}
/* utime+stime of a process (all threads), in seconds; -1 if unreadable. */
static double proc_cpu_s(long pid) {
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may contain spaces */
    if (!p) return -1;
    unsigned long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---------- connections ---------- */
enum { HS_HEADERS, HS_BODY, HS_DONE };
enum { CS_SIZE, CS_SIZE_REST, CS_DATA, CS_DATA_END, CS_TRAILER, CS_END };

struct conn {
    int fd;
    int index;          /* stream number, -1 for the PUT connection */
    int connected;
    int hstate;
    int status;
    int chunked;
    long content_left;  /* -1: until close */
    int is_sse;
    int cstate;
    long chunk_left;
    int trailer_line_len;
    short hdr_len;
    char hdr[2048];
    /* SSE parser */
    short line_len;
    char line_overflow;
    char last_cr;
    char line[512];
    char ev_name[24];
    unsigned long long ev_id;
    char ev_has_id;
    int ev_value_idx;   /* -2 no data, -1 foreign value, >= 0 the change index */
    char ev_is_snapshot_value;
    /* gzip (-g): whether the answer is gzip, chunks seen, the chunk being collected */
    char gzip;
    int gz_chunks;
    unsigned char *gz_buf;
    size_t gz_len, gz_cap;
    /* per-stream results */
    char got_snapshot;
    char closed;
    int next_idx;
    unsigned long long last_id;
};

static int g_epfd;
static struct conn *g_conns;
/* Stream body bytes read during the change phase (framing included), and -g's inflate. */
static long long g_stream_rx_bytes;
static z_stream g_inflate;
static unsigned char *g_inflated;
static size_t g_inflated_cap = 1 << 16;
static long c_gzip_bad_chunks, c_not_gzip;
static struct conn g_put;
static struct conn g_probe;     /* index -2: the -z probe connection */
static double g_probe_sent_ms;
static int g_probe_inflight, c_probe_lost;
static float g_probe_lat[1 << 16];
static long g_probe_n;
static char g_run[32];      /* unique per run, prefix of every value we write */
static double *g_send_ms;   /* send time of each PUT */
static double *g_ack_ms;    /* response time of each PUT */
static float *g_lat;        /* delivery latencies, ms */
static long g_lat_n;

/* counters */
static int c_opened, c_ready, c_failed_connect, c_rejected, c_closed_early, c_reject_status;
static long c_dup_or_reorder, c_id_not_increasing, c_foreign, c_resets;
static long c_heartbeats;
static int c_puts_sent, c_puts_answered, c_puts_2xx, c_puts_non2xx, c_put_last_bad_status, c_puts_lost;
static signed char *g_acked;   /* per PUT: 1 answered 2xx, -1 refused or lost, 0 not yet */
static unsigned char *g_got;   /* per stream, a bitmap of the changes it received */
static size_t g_got_bytes;     /* bytes of bitmap per stream */
static int c_put_reconnects;
static int g_phase; /* 0 opening, 1 delivering */

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) perror("setrlimit(RLIMIT_NOFILE)");
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)o_streams + 64 > rl.rlim_cur)
        fprintf(stderr, "warning: open-file limit %lu is below %d streams + 64\n",
                (unsigned long)rl.rlim_cur, o_streams);
}

static int set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL, 0);
    return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static struct sockaddr_in g_addr;
static struct sockaddr_in g_put_addr; /* where the PUTs go: g_addr, or -w PORT (another instance) */
static int o_write_port = 0;

static int o_sources = 0; /* -S N: streams come from 127.0.0.2 ... 127.0.0.(N+1), like N clients */

static int start_connect(struct conn *c) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (o_sources > 0) {
        /* Behind a proxy every stream would otherwise be one client (its per-client share). */
        struct sockaddr_in source = { .sin_family = AF_INET };
        source.sin_addr.s_addr = htonl(0x7F000002u + (uint32_t)(c->index % o_sources));
        if (bind(fd, (struct sockaddr *)&source, sizeof source) < 0) { int e = errno; close(fd); errno = e; return -1; }
    }
    int r = connect(fd, (struct sockaddr *)&g_addr, sizeof g_addr);
    if (r < 0 && errno != EINPROGRESS) { int e = errno; close(fd); errno = e; return -1; }
    c->fd = fd;
    c->connected = 0; /* even if connect() finished at once, EPOLLOUT sends the request */
    struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.ptr = c };
    if (epoll_ctl(g_epfd, EPOLL_CTL_ADD, fd, &ev) < 0) { close(fd); c->fd = -1; return -1; }
    return 0;
}

static void reset_http(struct conn *c) {
    c->hstate = HS_HEADERS;
    c->hdr_len = 0;
    c->status = 0;
    c->chunked = 0;
    c->content_left = -1;
    c->is_sse = 0;
    c->cstate = CS_SIZE;
    c->chunk_left = 0;
    c->trailer_line_len = 0;
}

static int write_all(int fd, const char *buf, size_t n) {
    /* Requests are a few hundred bytes into an empty socket buffer; a short
     * write would mean the machine is in trouble, which we report. */
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) { usleep(100); continue; }
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static void send_stream_request(struct conn *c) {
    char req[512];
    int n = snprintf(req, sizeof req,
        "GET %s/preferences/%s/events HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
        "Cache-Control: no-cache\r\n%s%s%s%s\r\n",
        o_prefix, o_key, o_host, o_port, o_gzip ? "Accept-Encoding: gzip\r\n" : "",
        o_token ? "Authorization: Bearer " : "", o_token ? o_token : "", o_token ? "\r\n" : "");
    if (write_all(c->fd, req, (size_t)n) < 0) { perror("write stream request"); }
}

static void close_conn(struct conn *c) {
    if (c->fd >= 0) {
        epoll_ctl(g_epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
}

/* A stream ended (server closed it, error, or rejected). */
static void stream_gone(struct conn *c, int rejected) {
    if (c->closed) return;
    c->closed = 1;
    close_conn(c);
    if (!c->got_snapshot) {
        if (rejected) { c_rejected++; c_reject_status = c->status; } else c_failed_connect++;
    } else {
        c_closed_early++;
    }
}

/* ---------- SSE parsing ---------- */

/* Finds the "value" of the event's data and maps it to a change index. */
static int value_index(const char *data) {
    const char *p = strstr(data, "\"value\"");
    if (!p) return -2;
    p += 7;
    while (*p == ' ' || *p == ':') p++;
    if (*p != '"') return -1;
    p++;
    size_t rl = strlen(g_run);
    if (strncmp(p, g_run, rl) != 0 || p[rl] != '-') return -1;
    p += rl + 1;
    if (!isdigit((unsigned char)*p)) return -1;
    long v = strtol(p, NULL, 10);
    return (v >= 0 && v < o_changes) ? (int)v : -1;
}

static void dispatch_event(struct conn *c, double t) {
    if (c->ev_name[0] == '\0' && c->ev_value_idx == -2) goto reset; /* nothing to dispatch */
    if (strcmp(c->ev_name, "reset") == 0) { c_resets++; goto reset; }
    if (strcmp(c->ev_name, "preference") != 0) goto reset;
    if (c->ev_has_id && !o_ignore_ids) {
        if (c->got_snapshot && c->ev_id <= c->last_id) c_id_not_increasing++;
        c->last_id = c->ev_id;
    }
    if (!c->got_snapshot) {
        c->got_snapshot = 1;
        c_ready++;
        goto reset;
    }
    if (c->ev_value_idx < 0) { c_foreign++; goto reset; }
    int idx = c->ev_value_idx;
    if (idx < c->next_idx) { c_dup_or_reorder++; goto reset; }
    /* A skipped index is judged at the end: it is a gap only if that PUT was acknowledged. */
    g_got[(size_t)c->index * g_got_bytes + (size_t)idx / 8] |= (unsigned char)(1u << (idx % 8));
    c->next_idx = idx + 1;
    g_lat[g_lat_n++] = (float)(t - g_send_ms[idx]);
reset:
    c->ev_name[0] = '\0';
    c->ev_has_id = 0;
    c->ev_value_idx = -2;
}

static void sse_line(struct conn *c, double t) {
    char *l = c->line;
    size_t n = (size_t)c->line_len;
    l[n] = '\0';
    if (c->line_overflow) {   /* too long to be ours, unless -V made our values long */
        c->line_overflow = 0;
        if (!o_value_pad || strncmp(l, "data:", 5) != 0) return;
    }
    if (n == 0) { dispatch_event(c, t); return; }
    if (l[0] == ':') { c_heartbeats++; return; }
    char *colon = memchr(l, ':', n);
    char *val = "";
    if (colon) { *colon = '\0'; val = colon + 1; if (*val == ' ') val++; }
    if (strcmp(l, "data") == 0) {
        int idx = value_index(val);
        if (idx != -2) c->ev_value_idx = idx;
    } else if (strcmp(l, "event") == 0) {
        snprintf(c->ev_name, sizeof c->ev_name, "%s", val);
    } else if (strcmp(l, "id") == 0) {
        c->ev_id = strtoull(val, NULL, 10);
        c->ev_has_id = 1;
    } /* retry: and unknown fields are ignored, as EventSource does */
}

static void sse_bytes(struct conn *c, const char *p, size_t n, double t) {
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == '\n' || ch == '\r') {
            if (ch == '\n' && c->last_cr) { c->last_cr = 0; continue; } /* CRLF */
            c->last_cr = (ch == '\r');
            sse_line(c, t);
            c->line_len = 0;
            continue;
        }
        c->last_cr = 0;
        if ((size_t)c->line_len < sizeof c->line - 1) c->line[c->line_len++] = ch;
        else c->line_overflow = 1;
    }
}

/* ---------- HTTP response parsing ---------- */

static void put_response_done(struct conn *c, double t);

/* -g: one whole chunk of a gzip stream: the gzip header (first chunk), or an event's piece,
 * inflated on its own (see the top of the file). */
static void gzip_chunk(struct conn *c, double t) {
    const unsigned char *p = c->gz_buf;
    size_t n = c->gz_len;
    c->gz_len = 0;
    if (c->gz_chunks++ == 0) {
        if (n != 10 || p[0] != 0x1f || p[1] != 0x8b) c_gzip_bad_chunks++;
        return;
    }
    inflateReset(&g_inflate);
    g_inflate.next_in = (unsigned char *)p;
    g_inflate.avail_in = (unsigned)n;
    for (;;) {
        g_inflate.next_out = g_inflated;
        g_inflate.avail_out = (unsigned)g_inflated_cap;
        int rc = inflate(&g_inflate, Z_SYNC_FLUSH);
        size_t out = g_inflated_cap - g_inflate.avail_out;
        if (out) sse_bytes(c, (const char *)g_inflated, out, t);
        if (rc == Z_STREAM_END) return;   /* the final block: the stream's end */
        if (rc != Z_OK && rc != Z_BUF_ERROR) { c_gzip_bad_chunks++; return; }
        if (g_inflate.avail_in == 0 && g_inflate.avail_out > 0) return;
    }
}

static void body_bytes(struct conn *c, const char *p, size_t n, double t) {
    if (c->index >= 0 && c->is_sse && c->gzip) {
        if (c->gz_len + n > c->gz_cap) {
            size_t cap = c->gz_cap ? c->gz_cap * 2 : 4096;
            while (cap < c->gz_len + n) cap *= 2;
            unsigned char *grown = realloc(c->gz_buf, cap);
            if (!grown) { c_gzip_bad_chunks++; return; }
            c->gz_buf = grown;
            c->gz_cap = cap;
        }
        memcpy(c->gz_buf + c->gz_len, p, n);
        c->gz_len += n;
        return;   /* decoded when the chunk is complete */
    }
    if (c->index >= 0 && c->is_sse) sse_bytes(c, p, n, t);
    /* PUT bodies are not inspected: the status says whether it was acknowledged */
}

/* Feeds body bytes; returns bytes consumed (stops after the end of a message). */
static size_t feed_body(struct conn *c, const char *p, size_t n, double t) {
    size_t i = 0;
    if (!c->chunked) {
        if (c->content_left < 0) { body_bytes(c, p, n, t); return n; }
        size_t take = (size_t)c->content_left < n ? (size_t)c->content_left : n;
        body_bytes(c, p, take, t);
        c->content_left -= (long)take;
        if (c->content_left == 0) c->hstate = HS_DONE;
        return take;
    }
    while (i < n && c->hstate == HS_BODY) {
        char ch = p[i];
        switch (c->cstate) {
        case CS_SIZE:
            if (isxdigit((unsigned char)ch)) {
                c->chunk_left = c->chunk_left * 16 + (isdigit((unsigned char)ch) ? ch - '0' : (tolower(ch) - 'a' + 10));
                i++;
                break;
            }
            c->cstate = CS_SIZE_REST;
            /* fall through */
        case CS_SIZE_REST:
            if (p[i] == '\n') c->cstate = c->chunk_left == 0 ? CS_TRAILER : CS_DATA;
            i++;
            break;
        case CS_DATA: {
            size_t take = (size_t)c->chunk_left < n - i ? (size_t)c->chunk_left : n - i;
            body_bytes(c, p + i, take, t);
            i += take;
            c->chunk_left -= (long)take;
            if (c->chunk_left == 0) {
                c->cstate = CS_DATA_END;
                if (c->gzip && c->index >= 0) gzip_chunk(c, t);
            }
            break;
        }
        case CS_DATA_END:
            if (ch == '\n') { c->cstate = CS_SIZE; c->chunk_left = 0; }
            i++;
            break;
        case CS_TRAILER:
            if (ch == '\n') {
                if (c->trailer_line_len == 0) { c->cstate = CS_END; c->hstate = HS_DONE; }
                c->trailer_line_len = 0;
            } else if (ch != '\r') c->trailer_line_len++;
            i++;
            break;
        }
    }
    return i;
}

/* Parses the header block once complete. Returns 0 ok, -1 malformed. */
static int parse_headers(struct conn *c) {
    c->hdr[c->hdr_len] = '\0';
    if (sscanf(c->hdr, "HTTP/%*d.%*d %d", &c->status) != 1) return -1;
    char *line = strstr(c->hdr, "\r\n");
    while (line && line[2] != '\r' && line[2] != '\0') {
        line += 2;
        char *end = strstr(line, "\r\n");
        if (!end) break;
        char *colon = memchr(line, ':', (size_t)(end - line));
        if (colon) {
            char *v = colon + 1;
            while (*v == ' ') v++;
            size_t nl = (size_t)(colon - line);
            if (nl == 17 && strncasecmp(line, "Transfer-Encoding", nl) == 0 && strncasecmp(v, "chunked", 7) == 0)
                c->chunked = 1;
            else if (nl == 14 && strncasecmp(line, "Content-Length", nl) == 0)
                c->content_left = strtol(v, NULL, 10);
            else if (nl == 12 && strncasecmp(line, "Content-Type", nl) == 0 && strncasecmp(v, "text/event-stream", 17) == 0)
                c->is_sse = 1;
            else if (nl == 16 && strncasecmp(line, "Content-Encoding", nl) == 0 && strncasecmp(v, "gzip", 4) == 0)
                c->gzip = 1;
        }
        line = end;
    }
    if (c->chunked) c->content_left = -1;
    if (o_gzip && c->index >= 0 && c->is_sse && (!c->gzip || !c->chunked)) { c_not_gzip++; c->gzip = 0; }
    return 0;
}

/* Returns -1 if the connection must be closed. */
static int feed(struct conn *c, const char *p, size_t n, double t) {
    while (n > 0) {
        if (c->hstate == HS_HEADERS) {
            /* Copy byte by byte until the blank line; headers are small. */
            size_t i = 0;
            int done = 0;
            while (i < n) {
                if ((size_t)c->hdr_len >= sizeof c->hdr - 1) return -1;
                c->hdr[c->hdr_len++] = p[i++];
                if (c->hdr_len >= 4 && memcmp(c->hdr + c->hdr_len - 4, "\r\n\r\n", 4) == 0) { done = 1; break; }
            }
            p += i;
            n -= i;
            if (!done) return 0;
            if (parse_headers(c) < 0) return -1;
            c->hstate = HS_BODY;
            if (c->index >= 0 && (c->status != 200 || !c->is_sse)) c->is_sse = 0; /* rejected or not a stream */
            if (!c->chunked && c->content_left == 0) c->hstate = HS_DONE;
        }
        if (c->hstate == HS_BODY) {
            size_t used = feed_body(c, p, n, t);
            p += used;
            n -= used;
        }
        if (c->hstate == HS_DONE) {
            if (c->index >= 0) return -1; /* a stream whose body ended is over */
            if (c == &g_probe) {
                if (g_probe_inflight && g_probe_n < (long)(sizeof g_probe_lat / sizeof *g_probe_lat))
                    g_probe_lat[g_probe_n++] = (float)(t - g_probe_sent_ms);
                g_probe_inflight = 0;
                reset_http(c);
                continue;
            }
            put_response_done(c, t);
            reset_http(c);
        }
    }
    return 0;
}

/* ---------- the PUT connection ---------- */

static void put_response_done(struct conn *c, double t) {
    int ok = c->status >= 200 && c->status < 300;
    if (c_puts_answered < c_puts_sent) {
        g_ack_ms[c_puts_answered] = t;
        g_acked[c_puts_answered] = ok ? 1 : -1;
    }
    c_puts_answered++;
    if (ok) c_puts_2xx++;
    else { c_puts_non2xx++; c_put_last_bad_status = c->status; }
}

/* The PUT connection closed: whatever it had not answered yet is lost. */
static void put_lost(void) {
    while (c_puts_answered < c_puts_sent) { g_acked[c_puts_answered++] = -1; c_puts_lost++; }
}

static int put_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&g_put_addr, sizeof g_put_addr) < 0) { close(fd); return -1; }
    set_nonblock(fd);
    g_put.fd = fd;
    g_put.connected = 1;
    reset_http(&g_put);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &g_put };
    epoll_ctl(g_epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

static void send_put(int i) {
    if (g_put.fd < 0) {
        /* The server closed the keep-alive connection; any PUT still unanswered on it is lost. */
        put_lost();
        if (put_connect() < 0) {
            perror("PUT connect");
            g_acked[i] = -1;
            c_puts_sent++; c_puts_answered++; c_puts_lost++;
            return;
        }
        c_put_reconnects++;
    }
    static char body[70000], req[72000];
    static const char *words[] = { "the", "stream", "carries", "every", "change", "to", "each", "subscriber",
        "once", "while", "preferences", "and", "things", "arrive", "in", "order", "with", "a", "revision",
        "server", "sent", "events", "keep", "browsers", "informed", "about", "what", "happened", "since",
        "they", "last", "looked", "at", "settings", "page", "value", "default", "update" };
    int bn = snprintf(body, sizeof body, "{\"value\":\"%s-%d", g_run, i);
    unsigned seed = 2654435761u * (unsigned)(i + 1);
    while (o_value_pad > 0 && bn < o_value_pad + 32 && bn < (int)sizeof body - 64) {
        seed = seed * 1103515245u + 12345u;
        bn += snprintf(body + bn, sizeof body - (size_t)bn, " %s", words[(seed >> 16) % (sizeof words / sizeof *words)]);
    }
    bn += snprintf(body + bn, sizeof body - (size_t)bn, "\"}");
    int n = snprintf(req, sizeof req,
        "%s %s/preferences/%s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        "Content-Length: %d\r\n%s%s%s\r\n%s",
        o_method, o_prefix, o_key, o_host, o_port, bn,
        o_token ? "Authorization: Bearer " : "", o_token ? o_token : "", o_token ? "\r\n" : "", body);
    g_send_ms[i] = now_ms();
    c_puts_sent++;
    if (write_all(g_put.fd, req, (size_t)n) < 0) perror("write PUT");
}

/* The -z probe: one GET every 10 ms on a keep-alive connection of its own thread, timed
 * send -> full answer. Not in the streams' epoll loop: there an answer that arrived during a
 * change waited behind thousands of stream reads, and the probe measured this program. */
static atomic_int g_probe_stop;

static int probe_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = { .tv_sec = 5, .tv_usec = 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&g_addr, sizeof g_addr) < 0) { close(fd); return -1; }
    return fd;
}

/* Reads one answer with a Content-Length body; 1 when the server keeps the connection, 0 when
 * it closes it, -1 on an error or a timeout. */
static int probe_read_answer(int fd) {
    static char buf[16384];
    size_t have = 0;
    long need = -1;
    int keep = 1;
    for (;;) {
        if (need >= 0 && (long)have >= need) return keep;
        if (have == sizeof buf) return -1;
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r <= 0) return -1;
        have += (size_t)r;
        if (need < 0) {
            char *end = memmem(buf, have, "\r\n\r\n", 4);
            if (!end) continue;
            long length = 0;
            for (char *line = buf; line < end; ) {
                char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
                if (!eol) break;
                if (eol - line > 15 && strncasecmp(line, "content-length:", 15) == 0) length = strtol(line + 15, NULL, 10);
                if (eol - line >= 17 && strncasecmp(line, "connection: close", 17) == 0) keep = 0;
                line = eol + 2;
            }
            need = (long)(end - buf) + 4 + length;
        }
    }
}

static void *probe_main(void *unused) {
    (void)unused;
    int fd = -1;
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n%s%s%s\r\n", o_probe, o_host, o_port,
                     o_token ? "Authorization: Bearer " : "", o_token ? o_token : "", o_token ? "\r\n" : "");
    double next = now_ms();
    while (!atomic_load(&g_probe_stop)) {
        double t = now_ms();
        if (t < next) {
            struct timespec pause = { 0, (long)((next - t) * 1e6) };
            nanosleep(&pause, NULL);
            continue;
        }
        next = t + 10;
        if (fd < 0 && (fd = probe_connect()) < 0) { c_probe_lost++; continue; }
        double sent = now_ms();
        int kept = write_all(fd, req, (size_t)n) < 0 ? -1 : probe_read_answer(fd);
        if (kept < 0) { close(fd); fd = -1; c_probe_lost++; continue; }
        if (g_probe_n < (long)(sizeof g_probe_lat / sizeof *g_probe_lat)) g_probe_lat[g_probe_n++] = (float)(now_ms() - sent);
        if (kept == 0) { close(fd); fd = -1; }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

/* ---------- event loop ---------- */

static char g_rbuf[1 << 16];

static void open_more(void) {
    while (c_opened < o_streams && (c_opened - c_ready - c_failed_connect - c_rejected) < o_connect_window) {
        struct conn *c = &g_conns[c_opened++];
        if (start_connect(c) < 0) {
            c->closed = 1;
            c_failed_connect++;
            if (c_failed_connect <= 3) perror("connect");
        }
    }
}

static void on_ready(struct conn *c, uint32_t events, double t) {
    if (c->index >= 0 && !c->connected) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err != 0) {
            if (c_failed_connect < 3) fprintf(stderr, "connect: %s\n", strerror(err));
            stream_gone(c, 0);
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLIN))) return;
        c->connected = 1;
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        epoll_ctl(g_epfd, EPOLL_CTL_MOD, c->fd, &ev);
        send_stream_request(c);
        return;
    }
    for (;;) {
        ssize_t r = read(c->fd, g_rbuf, sizeof g_rbuf);
        if (r > 0) {
            if (g_phase == 1 && c->index >= 0) g_stream_rx_bytes += r;
            if (feed(c, g_rbuf, (size_t)r, t) < 0) {
                if (c->index >= 0) stream_gone(c, c->status != 0); /* answered, but no snapshot: rejected */
                else if (c == &g_probe) { close_conn(c); if (g_probe_inflight) c_probe_lost++; g_probe_inflight = 0; }
                else { close_conn(c); put_lost(); }
                return;
            }
            if ((size_t)r < sizeof g_rbuf) return;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
        /* EOF or error */
        if (c->index >= 0) stream_gone(c, c->status != 0); /* answered, but no snapshot: rejected */
        else if (c == &g_probe) { close_conn(c); if (g_probe_inflight) c_probe_lost++; g_probe_inflight = 0; }
        else {
            if (c->hstate == HS_BODY && !c->chunked && c->content_left < 0) put_response_done(c, t);
            close_conn(c);
            put_lost();
        }
        return;
    }
}

static void loop_once(int timeout_ms) {
    struct epoll_event evs[1024];
    int n = epoll_wait(g_epfd, evs, 1024, timeout_ms);
    if (n < 0) { if (errno != EINTR) perror("epoll_wait"); return; }
    for (int i = 0; i < n; i++) {
        struct conn *c = evs[i].data.ptr;
        if (c->fd < 0) continue;
        on_ready(c, evs[i].events, now_ms());
    }
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}
static double pct(const float *v, long n, double p) {
    if (n == 0) return 0;
    long i = (long)(p / 100.0 * (double)n + 0.999999) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return v[i];
}

/* True when every open stream has received the last acknowledged change. */
static int all_streams_done(void) {
    int last = -1;
    for (int i = 0; i < o_changes; i++) if (g_acked[i] == 1) last = i;
    for (int i = 0; i < o_streams; i++) {
        struct conn *c = &g_conns[i];
        if (c->got_snapshot && !c->closed && c->next_idx <= last) return 0;
    }
    return 1;
}

static void usage(const char *argv0) {
    fprintf(stderr,
        "usage: %s -p PORT [-H HOST] [-k KEY] [-e PREFIX] [-n STREAMS] [-m CHANGES] [-i INTERVAL_MS]\n"
        "          [-P SERVER_PID] [-c CONNECT_WINDOW] [-T OPEN_TIMEOUT_S] [-W TAIL_S] [-t TOKEN] [-z PROBE_PATH]\n"
        "          [-M PUT|POST] [-I (do not check ids)] [-w WRITE_PORT (PUTs go to another instance)]\n"
        "          [-S SOURCES (streams from 127.0.0.2.. as that many clients)] [-g (gzip streams)] [-V VALUE_BYTES]\n"
        "  defaults: -H 127.0.0.1 -k name -n 10000 -m 50 -i 100 -c 500 -T 60 -W 10\n", argv0);
    exit(2);
}

int main(int argc, char **argv) {
    int opt;
    while ((opt = getopt(argc, argv, "H:p:k:e:n:m:i:P:c:T:W:t:z:M:Ihw:S:gV:")) != -1) {
        switch (opt) {
        case 'H': o_host = optarg; break;
        case 'p': o_port = atoi(optarg); break;
        case 'k': o_key = optarg; break;
        case 'e': o_prefix = optarg; break;
        case 'n': o_streams = atoi(optarg); break;
        case 'm': o_changes = atoi(optarg); break;
        case 'i': o_interval_ms = atoi(optarg); break;
        case 'P': o_pid = atol(optarg); break;
        case 'c': o_connect_window = atoi(optarg); break;
        case 'T': o_open_timeout_s = atoi(optarg); break;
        case 'W': o_tail_s = atoi(optarg); break;
        case 't': o_token = optarg; break;
        case 'z': o_probe = optarg; break;
        case 'M': o_method = optarg; break;
        case 'I': o_ignore_ids = 1; break;
        case 'g': o_gzip = 1; break;
        case 'V': o_value_pad = atoi(optarg); if (o_value_pad < 0 || o_value_pad > 60000) usage(argv[0]); break;
        case 'w': o_write_port = atoi(optarg); break;
        case 'S': o_sources = atoi(optarg); if (o_sources < 0 || o_sources > 250) usage(argv[0]); break;
        default: usage(argv[0]);
        }
    }
    if (o_port <= 0 || o_streams <= 0 || o_changes <= 0 || o_interval_ms < 0 || o_connect_window <= 0) usage(argv[0]);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    g_inflated = malloc(g_inflated_cap);
    if (!g_inflated || inflateInit2(&g_inflate, -15) != Z_OK) { fprintf(stderr, "zlib: cannot start an inflater\n"); return 1; }
    memset(&g_addr, 0, sizeof g_addr);
    g_addr.sin_family = AF_INET;
    g_addr.sin_port = htons((unsigned short)o_port);
    if (inet_pton(AF_INET, o_host, &g_addr.sin_addr) != 1) { fprintf(stderr, "bad host %s (IPv4 address expected)\n", o_host); return 2; }
    g_put_addr = g_addr;
    if (o_write_port > 0) g_put_addr.sin_port = htons((unsigned short)o_write_port);
    snprintf(g_run, sizeof g_run, "fan%lx%lx", (long)getpid() & 0xffff, (long)time(NULL) & 0xffffff);

    g_conns = calloc((size_t)o_streams, sizeof *g_conns);
    g_send_ms = calloc((size_t)o_changes, sizeof *g_send_ms);
    g_ack_ms = calloc((size_t)o_changes, sizeof *g_ack_ms);
    g_lat = malloc((size_t)o_streams * (size_t)o_changes * sizeof *g_lat);
    g_acked = calloc((size_t)o_changes, 1);
    g_got_bytes = ((size_t)o_changes + 7) / 8;
    g_got = calloc((size_t)o_streams, g_got_bytes);
    if (!g_conns || !g_send_ms || !g_ack_ms || !g_lat || !g_acked || !g_got) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int i = 0; i < o_streams; i++) {
        g_conns[i].fd = -1;
        g_conns[i].index = i;
        g_conns[i].ev_value_idx = -2;
        reset_http(&g_conns[i]);
    }
    g_put.fd = -1;
    g_put.index = -1;
    g_probe.fd = -1;
    g_probe.index = -2;
    g_epfd = epoll_create1(EPOLL_CLOEXEC);

    printf("sse-fanout: %d streams on http://%s:%d/preferences/%s/events, %d changes %d ms apart\n",
           o_streams, o_host, o_port, o_key, o_changes, o_interval_ms);
    fflush(stdout);

    /* ---- phase 1: open every stream and wait for its snapshot ---- */
    long rss_before = o_pid ? proc_rss_kib(o_pid) : -1;
    if (o_pid && rss_before < 0) fprintf(stderr, "warning: cannot read /proc/%ld/status\n", o_pid);
    double t_open0 = now_ms();
    double open_deadline = t_open0 + o_open_timeout_s * 1e3;
    while (c_ready + c_failed_connect + c_rejected < o_streams && now_ms() < open_deadline) {
        open_more();
        loop_once(50);
    }
    double t_open1 = now_ms();
    int not_ready = o_streams - c_ready - c_failed_connect - c_rejected;
    printf("open:     %d/%d streams holding their snapshot after %.2f s (%d connect failures, %d rejected, %d still waiting)\n",
           c_ready, o_streams, (t_open1 - t_open0) / 1e3, c_failed_connect, c_rejected, not_ready);
    if (c_rejected)
        printf("          rejected = answered without a snapshot (last status %d; 200 means the server ended the stream)\n",
               c_reject_status);
    /* Let the server settle (deferred frees, buffers) before reading its memory. */
    double settle_until = now_ms() + 1000;
    while (now_ms() < settle_until) loop_once(50);
    long rss_open = o_pid ? proc_rss_kib(o_pid) : -1;
    double kib_per_stream = -1;
    if (rss_before >= 0 && rss_open >= 0 && c_ready > 0) {
        kib_per_stream = (double)(rss_open - rss_before) / c_ready;
        printf("memory:   server VmRSS %.1f MiB before, %.1f MiB with %d streams open -> %.2f KiB per stream\n",
               rss_before / 1024.0, rss_open / 1024.0, c_ready, kib_per_stream);
    } else {
        printf("memory:   not measured (pass the server's PID with -P)\n");
    }
    fflush(stdout);
    if (c_ready == 0) {
        printf("RESULT streams=%d held=0 expected=0 received=0 in_order=no complete=no p50_ms=0 p90_ms=0 p99_ms=0 max_ms=0 kib_per_stream=-1 gen_cpu_pct=0 server_cpu_pct=0 puts_2xx=0 puts_non2xx=0\n", o_streams);
        return 1;
    }

    /* ---- phase 2: the changes ---- */
    g_phase = 1;
    if (put_connect() < 0) { perror("PUT connection"); return 1; }
    double cpu0 = cpu_s(), scpu0 = o_pid ? proc_cpu_s(o_pid) : -1;
    double t0 = now_ms() + 50;
    int next_put = 0;
    double end_deadline = 0;
    pthread_t prober;
    int probing = o_probe && pthread_create(&prober, NULL, probe_main, NULL) == 0;
    for (;;) {
        double t = now_ms();
        while (next_put < o_changes && t >= t0 + (double)next_put * o_interval_ms) {
            send_put(next_put++);
            t = now_ms();
            if (next_put == o_changes) end_deadline = t + o_tail_s * 1e3;
        }
        int live = c_ready - c_closed_early;
        if (next_put == o_changes && c_puts_answered >= c_puts_sent && all_streams_done()) break;
        if (next_put == o_changes && t > end_deadline) break;
        if (live <= 0 && next_put == o_changes) break;
        int timeout = o_probe ? 10 : 50;
        if (next_put < o_changes) {
            double due = t0 + (double)next_put * o_interval_ms - t;
            timeout = due <= 0 ? 0 : due >= timeout ? timeout : (int)due + 1;
        }
        loop_once(timeout);
    }
    if (probing) {
        atomic_store(&g_probe_stop, 1);
        pthread_join(prober, NULL);
    }
    double t_end = now_ms();
    double cpu1 = cpu_s(), scpu1 = o_pid ? proc_cpu_s(o_pid) : -1;
    double wall_s = (t_end - g_send_ms[0]) / 1e3;
    int held = 0;
    for (int i = 0; i < o_streams; i++) if (!g_conns[i].closed && g_conns[i].got_snapshot) held++;
    /* Judge every stream against the acknowledged PUTs: a refused PUT owes no
     * event, an acknowledged one owes one to every stream. */
    int acked = 0;
    for (int k = 0; k < o_changes; k++) if (g_acked[k] == 1) acked++;
    long expected = (long)c_ready * acked;
    long not_arrived = 0, gaps = 0, unexpected = 0, delivered = 0;
    for (int i = 0; i < o_streams; i++) {
        struct conn *c = &g_conns[i];
        if (!c->got_snapshot) continue;
        const unsigned char *bits = g_got + (size_t)i * g_got_bytes;
        for (int k = 0; k < o_changes; k++) {
            int got = (bits[k / 8] >> (k % 8)) & 1;
            if (g_acked[k] == 1) {
                if (got) delivered++;
                else if (k < c->next_idx) gaps++;   /* a later change arrived, this one never will */
                else not_arrived++;
            } else if (got) {
                unexpected++;                      /* an event for a change the server refused */
            }
        }
    }
    /* In order: among what arrived, no gap, duplicate, reordering, reset or
     * backwards id. Complete: everything arrived before the tail deadline. */
    int in_order = gaps == 0 && c_dup_or_reorder == 0 && c_id_not_increasing == 0 && c_resets == 0 && unexpected == 0;
    int complete = not_arrived == 0 && gaps == 0 && acked == o_changes;

    qsort(g_lat, (size_t)g_lat_n, sizeof *g_lat, cmp_float);
    double p50 = pct(g_lat, g_lat_n, 50), p90 = pct(g_lat, g_lat_n, 90), p99 = pct(g_lat, g_lat_n, 99);
    double pmax = g_lat_n ? g_lat[g_lat_n - 1] : 0;
    float *acks = calloc((size_t)o_changes, sizeof *acks);
    int na = 0;
    for (int i = 0; i < c_puts_answered && i < c_puts_sent; i++)
        if (g_ack_ms[i] > 0) acks[na++] = (float)(g_ack_ms[i] - g_send_ms[i]);
    qsort(acks, (size_t)na, sizeof *acks, cmp_float);
    qsort(g_probe_lat, (size_t)g_probe_n, sizeof *g_probe_lat, cmp_float);
    double probe_p50 = pct(g_probe_lat, g_probe_n, 50), probe_p99 = pct(g_probe_lat, g_probe_n, 99);
    double us_per_event = (scpu0 >= 0 && scpu1 >= 0 && delivered > 0) ? 1e6 * (scpu1 - scpu0) / delivered : -1;

    printf("changes:  %d PUTs sent: %d answered 2xx, %d non-2xx%s", c_puts_sent,
           c_puts_2xx, c_puts_non2xx, c_puts_non2xx ? " (last status " : "");
    if (c_puts_non2xx) printf("%d)", c_put_last_bad_status);
    if (c_puts_lost) printf(", %d lost (connection closed or failed)", c_puts_lost);
    printf("; PUT response time p50 %.1f ms, p99 %.1f ms, max %.1f ms%s\n", pct(acks, na, 50), pct(acks, na, 99), na ? acks[na - 1] : 0.0,
           c_put_reconnects ? " (PUT connection was re-opened)" : "");
    printf("events:   expected %ld (%d acknowledged changes x %d streams), received %ld; gaps %ld, "
           "not arrived %ld, duplicate/out-of-order %ld, non-increasing id %ld, for refused PUTs %ld, "
           "foreign %ld, reset %ld\n",
           expected, acked, c_ready, delivered, gaps, not_arrived, c_dup_or_reorder, c_id_not_increasing,
           unexpected, c_foreign, c_resets);
    printf("in order: %s (no gap, duplicate, reordering or reset among the events that arrived)\n", in_order ? "yes" : "NO");
    if (complete) printf("complete: yes (every stream got every change)\n");
    else printf("complete: NO (%ld events had not arrived %d s after the last PUT: lost, or that late; "
                "%ld gaps; %d of %d PUTs acknowledged)\n", not_arrived, o_tail_s, gaps, acked, o_changes);
    printf("latency:  PUT send -> event arrival over %ld events: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
           g_lat_n, p50, p90, p99, pmax);
    printf("held:     %d of %d streams still open at the end (%d closed by the server early)\n", held, o_streams, c_closed_early);
    double gen_pct = wall_s > 0 ? 100.0 * (cpu1 - cpu0) / wall_s : 0;
    double srv_pct = (scpu0 >= 0 && scpu1 >= 0 && wall_s > 0) ? 100.0 * (scpu1 - scpu0) / wall_s : -1;
    printf("load gen: %.2f s CPU over %.2f s wall of the change phase = %.0f%% of one core (2 cores here)",
           cpu1 - cpu0, wall_s, gen_pct);
    if (srv_pct >= 0) printf("; server used %.2f s CPU = %.0f%% of one core", scpu1 - scpu0, srv_pct);
    printf("\n");
    if (us_per_event >= 0) printf("cost:     server CPU per delivered event %.2f us\n", us_per_event);
    double wire_per_event = delivered > 0 ? (double)g_stream_rx_bytes / (double)delivered : 0;
    printf("wire:     %lld stream body bytes read during the changes (chunk framing included) = %.1f bytes per delivered event%s\n",
           g_stream_rx_bytes, wire_per_event, o_gzip ? " (gzip)" : "");
    if (o_gzip) printf("gzip:     %ld streams not gzip-coded, %ld chunks that did not decode on their own\n", c_not_gzip, c_gzip_bad_chunks);
    if (o_probe) printf("probe:    GET %s every 10 ms during the changes: %ld answered, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d lost\n",
                        o_probe, g_probe_n, probe_p50, probe_p99, g_probe_n ? g_probe_lat[g_probe_n - 1] : 0.0, c_probe_lost);
    printf("RESULT streams=%d held=%d expected=%ld received=%ld in_order=%s complete=%s p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f "
           "kib_per_stream=%.2f gen_cpu_pct=%.0f server_cpu_pct=%.0f puts_2xx=%d puts_non2xx=%d "
           "server_us_per_event=%.2f probe_n=%ld probe_p50_ms=%.2f probe_p99_ms=%.2f put_p50_ms=%.1f put_p99_ms=%.1f "
           "wire_bytes_per_event=%.1f gzip_errors=%ld\n",
           o_streams, held, expected, delivered, in_order ? "yes" : "no", complete ? "yes" : "no", p50, p90, p99, pmax,
           kib_per_stream, gen_pct, srv_pct, c_puts_2xx, c_puts_non2xx,
           us_per_event, g_probe_n, probe_p50, probe_p99, pct(acks, na, 50), pct(acks, na, 99),
           wire_per_event, c_not_gzip + c_gzip_bad_chunks);
    return (in_order && complete && held == o_streams && c_not_gzip + c_gzip_bad_chunks == 0) ? 0 : 1;
}
