/* idle-streams: holds N idle SSE streams open on a server and measures what they cost it.
 *
 *   idle-streams -p PORT -P SERVER_PID [-H 127.0.0.1] [-n 15000] [-d 60] [-c 500] [-T 120]
 *                [-b 10] [-u /preferences/name/events] [-t TOKEN]
 *
 * First measures the server's CPU with no stream for -b seconds (what it spends on its own
 * clocks, whatever the number of streams). Then opens -n streams (at most -c connecting at once,
 * within -T seconds), waits until every one has its first bytes (the snapshot), settles 2 s,
 * then holds them for -d seconds reading and dropping whatever comes (heartbeats). Reported, for
 * the server (-P) over the hold:
 *   - CPU seconds (utime+stime from /proc/PID/stat) per stream per second, in microseconds —
 *     all of it, the idle server's own share included (printed apart too);
 *   - VmRSS growth from before the first connect, per stream, at the start of the hold and at
 *     its end (after the heartbeats: the figure reported);
 *   - kernel memory of each TCP socket: every object a socket holds (its TCP sock, socket inode,
 *     file, dentry, and its epoll item and wait entry), and socket buffer pages from
 *     /proc/net/sockstat. The TCP, sock_inode and epoll-item slabs are measured (their growth in
 *     /proc/slabinfo, halved: a loopback stream is two sockets, one of them this client's, each
 *     in an epoll set); the file, dentry and epoll wait entry are counted at their slab object
 *     size, one each per socket, because builds on a shared machine move those caches by more
 *     than 15,000 sockets do (their measured growth is printed beside, as a check);
 *   - heartbeat bytes received, so the run shows the server was beating.
 * One `RESULT key=value ...` line at the end. Exit 0 when every stream stayed open.
 *
 * Its own process and descriptors: the server's hard limit of descriptors is not shared.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *o_host = "127.0.0.1";
static int o_port = 0;
static long o_pid = 0;
static int o_streams = 15000;
static int o_hold_s = 60;
static int o_window = 500;
static int o_open_timeout_s = 120;
static const char *o_path = "/preferences/name/events";
static const char *o_token = NULL;
static int o_baseline_s = 10;

struct conn { int fd; int state; /* 0 unused, 1 connecting, 2 sent, 3 holding, 4 closed */ long rx; };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double proc_cpu_s(long pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    unsigned long utime = 0, stime = 0;
    /* fields after ')': state(3) ... utime(14) stime(15) */
    int field = 2;
    for (char *t = strtok(p + 1, " "); t; t = strtok(NULL, " ")) {
        field++;
        if (field == 14) utime = strtoul(t, NULL, 10);
        if (field == 15) { stime = strtoul(t, NULL, 10); break; }
    }
    return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

static long proc_rss_kib(long pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kib = -1;
    while (fgets(line, sizeof line, f)) if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

/* Bytes in the slabs that hold TCP sockets (-1 when /proc/slabinfo cannot be read). */
static long long slab_bytes(void) {
    FILE *f = fopen("/proc/slabinfo", "r");
    if (!f) return -1;
    char line[512];
    long long total = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64];
        long active, num, size;
        if (sscanf(line, "%63s %ld %ld %ld", name, &active, &num, &size) != 4) continue;
        /* The socket's own objects. Its file and dentry (192 bytes each) are left out: builds
         * on a shared machine churn those slabs by far more than 15,000 sockets move them. */
        if (!strcmp(name, "TCP") || !strcmp(name, "sock_inode_cache")
            || !strcmp(name, "eventpoll_epi") || !strcmp(name, "eventpoll_pwq"))
            total += (long long)active * size;
    }
    fclose(f);
    return total;
}

/* One slab's active objects and object size from /proc/slabinfo (0 and 0 when absent). */
static void slab_entry(const char *wanted, long *active_out, long *size_out) {
    *active_out = 0;
    *size_out = 0;
    FILE *f = fopen("/proc/slabinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char name[64];
        long active, num, size;
        if (sscanf(line, "%63s %ld %ld %ld", name, &active, &num, &size) != 4) continue;
        if (!strcmp(name, wanted)) { *active_out = active; *size_out = size; break; }
    }
    fclose(f);
}

/* The slab object size of a cache that may be merged into another (so absent from slabinfo
 * under its own name): /sys/kernel/slab/NAME/slab_size, else `fallback`. */
static long merged_slab_size(const char *name, long fallback) {
    char path[128];
    snprintf(path, sizeof path, "/sys/kernel/slab/%s/slab_size", name);
    FILE *f = fopen(path, "r");
    if (!f) return fallback;
    long size = fallback;
    if (fscanf(f, "%ld", &size) != 1) size = fallback;
    fclose(f);
    return size;
}

/* TCP socket buffer memory in bytes from /proc/net/sockstat ("TCP: ... mem PAGES"). */
static long long sockstat_bytes(void) {
    FILE *f = fopen("/proc/net/sockstat", "r");
    if (!f) return -1;
    char line[256];
    long long pages = -1;
    while (fgets(line, sizeof line, f)) {
        char *m = strstr(line, "TCP:");
        if (!m) continue;
        char *mem = strstr(line, " mem ");
        if (mem) pages = atoll(mem + 5);
    }
    fclose(f);
    return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

static void raise_nofile(void) {
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0) { r.rlim_cur = r.rlim_max; setrlimit(RLIMIT_NOFILE, &r); }
}

int main(int argc, char **argv) {
    int opt;
    while ((opt = getopt(argc, argv, "H:p:P:n:d:c:T:u:t:b:")) != -1) {
        switch (opt) {
        case 'H': o_host = optarg; break;
        case 'p': o_port = atoi(optarg); break;
        case 'P': o_pid = atol(optarg); break;
        case 'n': o_streams = atoi(optarg); break;
        case 'd': o_hold_s = atoi(optarg); break;
        case 'c': o_window = atoi(optarg); break;
        case 'T': o_open_timeout_s = atoi(optarg); break;
        case 'u': o_path = optarg; break;
        case 't': o_token = optarg; break;
        case 'b': o_baseline_s = atoi(optarg); break;
        default: fprintf(stderr, "usage: see the comment at the top of idle-streams.c\n"); return 2;
        }
    }
    if (!o_port || !o_pid) { fprintf(stderr, "-p PORT and -P SERVER_PID are required\n"); return 2; }
    raise_nofile();
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(o_port) };
    inet_pton(AF_INET, o_host, &addr.sin_addr);
    char request[1024];
    int request_len = snprintf(request, sizeof request,
        "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n%s%s%s\r\n", o_path, o_host, o_port,
        o_token ? "Authorization: Bearer " : "", o_token ? o_token : "", o_token ? "\r\n" : "");

    /* The idle server, before any stream: its own clocks (store polling, sweeps). */
    double idle_cpu_ms_per_s = -1;
    if (o_baseline_s > 0) {
        double c0 = proc_cpu_s(o_pid), w0 = now_s();
        sleep(o_baseline_s);
        idle_cpu_ms_per_s = (proc_cpu_s(o_pid) - c0) * 1e3 / (now_s() - w0);
    }
    long rss_before = proc_rss_kib(o_pid);
    long long slab_before = slab_bytes(), sock_before = sockstat_bytes();
    long filp_before, dentry_before, filp_size, dentry_size;
    slab_entry("filp", &filp_before, &filp_size);
    slab_entry("dentry", &dentry_before, &dentry_size);
    struct conn *conns = calloc(o_streams, sizeof *conns);
    int ep = epoll_create1(0);
    struct epoll_event events[1024];
    int opened = 0, holding = 0, connecting = 0, failed = 0, closed = 0;
    double start = now_s();
    static char sink[65536];

    /* Opening: keep at most o_window streams between connect and their first bytes. */
    while (holding + failed < o_streams) {
        while (opened < o_streams && connecting < o_window) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (fd < 0) { perror("socket"); failed++; opened++; continue; }
            int rc = connect(fd, (struct sockaddr *)&addr, sizeof addr);
            if (rc < 0 && errno != EINPROGRESS) { close(fd); failed++; opened++; continue; }
            conns[opened] = (struct conn){ .fd = fd, .state = 1 };
            struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)opened };
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            opened++;
            connecting++;
        }
        if (now_s() - start > o_open_timeout_s) { fprintf(stderr, "opening took longer than %d s\n", o_open_timeout_s); break; }
        int n = epoll_wait(ep, events, 1024, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = &conns[events[i].data.u32];
            if (c->state == 1 && (events[i].events & EPOLLOUT)) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err || write(c->fd, request, request_len) != request_len) {
                    close(c->fd); c->state = 4; connecting--; failed++; continue;
                }
                c->state = 2;
                struct epoll_event ev = { .events = EPOLLIN, .data.u32 = events[i].data.u32 };
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t r = read(c->fd, sink, sizeof sink);
                if (r <= 0 && !(r < 0 && errno == EAGAIN)) {
                    close(c->fd);
                    if (c->state == 3) { holding--; closed++; } else { connecting--; }
                    c->state = 4; failed++;
                    continue;
                }
                if (r > 0 && c->state == 2) {
                    /* The head must say 200 (the first bytes hold the status line). */
                    if (r < 12 || memcmp(sink + 9, "200", 3) != 0) {
                        close(c->fd); c->state = 4; connecting--; failed++; continue;
                    }
                    c->state = 3; connecting--; holding++;
                }
            }
        }
    }
    double opened_at = now_s();
    fprintf(stderr, "%d streams open in %.1f s (%d failed)\n", holding, opened_at - start, failed);

    /* Settle, then hold: read and drop what comes, count heartbeat bytes. */
    double settle_end = now_s() + 2;
    long long rx_hold = 0;
    double cpu0 = 0, t0 = 0;
    long rss_held = 0;
    long long slab_held = 0, sock_held = 0;
    long filp_held = 0, dentry_held = 0, unused_size;
    int measuring = 0;
    double end = settle_end + o_hold_s;
    while (now_s() < end) {
        if (!measuring && now_s() >= settle_end) {
            measuring = 1;
            cpu0 = proc_cpu_s(o_pid);
            t0 = now_s();
            rss_held = proc_rss_kib(o_pid);
            slab_held = slab_bytes();
            sock_held = sockstat_bytes();
            slab_entry("filp", &filp_held, &unused_size);
            slab_entry("dentry", &dentry_held, &unused_size);
        }
        int n = epoll_wait(ep, events, 1024, 200);
        for (int i = 0; i < n; i++) {
            struct conn *c = &conns[events[i].data.u32];
            if (c->state != 3) continue;
            ssize_t r = read(c->fd, sink, sizeof sink);
            if (r > 0) { if (measuring) rx_hold += r; continue; }
            if (r < 0 && errno == EAGAIN) continue;
            close(c->fd); c->state = 4; holding--; closed++;
        }
    }
    double cpu1 = proc_cpu_s(o_pid), t1 = now_s();
    long rss_end = proc_rss_kib(o_pid);
    double seconds = t1 - t0;
    int n = holding > 0 ? holding : 1;
    double us_per_stream_s = (cpu1 - cpu0) * 1e6 / seconds / n;
    double idle_us_per_stream_s = idle_cpu_ms_per_s >= 0 ? idle_cpu_ms_per_s * 1e3 / n : -1;
    double rss_kib_per_stream_start = (double)(rss_held - rss_before) / n;
    double rss_kib_per_stream = (double)(rss_end - rss_before) / n;
    double slab_per_stream = slab_before >= 0 && slab_held >= 0 ? (double)(slab_held - slab_before) / n / 2 : -1;
    double sock_per_stream = sock_before >= 0 && sock_held >= 0 ? (double)(sock_held - sock_before) / n / 2 : -1;
    /* One file, one dentry and one epoll wait entry per socket, at their slab object size. */
    long pwq_listed, pwq_size;
    slab_entry("eventpoll_pwq", &pwq_listed, &pwq_size);
    /* Listed under its own name: slab_bytes() measured it already. */
    pwq_size = pwq_size > 0 ? 0 : merged_slab_size("eventpoll_pwq", 64);
    double model_per_stream = filp_size > 0 && dentry_size > 0 ? (double)(filp_size + dentry_size + pwq_size) : -1;
    double filp_measured = filp_size > 0 ? (double)(filp_held - filp_before) * filp_size / n / 2 : -1;
    double dentry_measured = dentry_size > 0 ? (double)(dentry_held - dentry_before) * dentry_size / n / 2 : -1;
    printf("idle streams held: %d for %.1f s (%d failed, %d closed while held)\n", holding, seconds, failed, closed);
    printf("server CPU: %.3f s over the hold = %.3f us per stream per second", cpu1 - cpu0, us_per_stream_s);
    if (idle_cpu_ms_per_s >= 0)
        printf(" (of which %.3f the server's own clocks: %.2f ms/s with no stream)", idle_us_per_stream_s, idle_cpu_ms_per_s);
    printf("\n");
    printf("server RSS: %ld -> %ld KiB at the start of the hold (%.2f KiB per stream), %ld KiB at its end = %.2f KiB per stream\n",
           rss_before, rss_held, rss_kib_per_stream_start, rss_end, rss_kib_per_stream);
    if (slab_per_stream >= 0)
        printf("kernel slabs measured (TCP, sock_inode, epoll item), half of both ends: %.0f bytes per stream\n", slab_per_stream);
    else
        printf("kernel slabs: /proc/slabinfo not readable\n");
    if (model_per_stream >= 0)
        printf("kernel objects counted by size (file %ld + dentry %ld + epoll wait entry %ld): %.0f bytes per stream"
               " (measured growth, half of both ends: file %.0f, dentry %.0f)\n",
               filp_size, dentry_size, pwq_size, model_per_stream, filp_measured, dentry_measured);
    printf("TCP socket buffers (sockstat mem), half of both ends: %.0f bytes per stream\n", sock_per_stream);
    printf("heartbeat bytes received over the hold: %lld (%.1f per stream)\n", rx_hold, (double)rx_hold / n);
    printf("RESULT held=%d failed=%d closed=%d seconds=%.1f cpu_us_per_stream_s=%.3f idle_cpu_ms_per_s=%.3f "
           "rss_kib_per_stream=%.2f rss_kib_per_stream_start=%.2f slab_bytes_per_stream=%.0f "
           "slab_model_bytes_per_stream=%.0f sockbuf_bytes_per_stream=%.0f heartbeat_bytes=%lld\n",
           holding, failed, closed, seconds, us_per_stream_s, idle_cpu_ms_per_s, rss_kib_per_stream,
           rss_kib_per_stream_start, slab_per_stream, model_per_stream, sock_per_stream, rx_hold);
    for (int i = 0; i < opened; i++) if (conns[i].state != 4 && conns[i].fd > 0) close(conns[i].fd);
    return (failed == 0 && closed == 0) ? 0 : 1;
}
