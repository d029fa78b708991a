#define _GNU_SOURCE
/* fixed-get: sends exactly N keep-alive GETs for PATH, one at a time, on one connection, and
 * checks every answer is 2xx/3xx. For instruction counts (callgrind) a fixed amount of work
 * matters, not a rate: `fixed-get PORT PATH N`. Exit 0 when all N were answered 2xx/3xx.
 * With FIXED_POST_BODY=FILE in the environment each request is a POST of that file's bytes as
 * application/json instead (OFREP's evaluations); with FIXED_POST_VARY=1 too, the body's first
 * "1234" is replaced by the request's number (mod 10,000) in every request, so no two bodies in a
 * row are the same (a server that remembers bodies it checked pays for checking each). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[1 << 16];

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: fixed-get PORT PATH N\n"); return 2; }
    int port = atoi(argv[1]); const char *path = argv[2]; long n = atol(argv[3]);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("connect"); return 1; }
    int on = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    static char req[1 << 16];
    int reqlen;
    const char *body_file = getenv("FIXED_POST_BODY");
    if (body_file) {
        static char body[1 << 15];
        FILE *f = fopen(body_file, "rb");
        if (!f) { perror(body_file); return 2; }
        size_t length = fread(body, 1, sizeof body, f);
        fclose(f);
        reqlen = snprintf(req, sizeof req, "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n%.*s", path, port, length, (int)length, body);
    } else {
        reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
    }
    char *vary = NULL;
    if (body_file && getenv("FIXED_POST_VARY")) {
        vary = strstr(strstr(req, "\r\n\r\n"), "1234");
        if (!vary) { fprintf(stderr, "FIXED_POST_VARY: the body has no 1234\n"); return 2; }
    }
    long bad = 0;
    for (long i = 0; i < n; i++) {
        if (vary) { char digits[5]; snprintf(digits, sizeof digits, "%04ld", i % 10000); memcpy(vary, digits, 4); }
        if (write(fd, req, reqlen) != reqlen) { perror("write"); return 1; }
        size_t have = 0; long need = -1;
        for (;;) {
            ssize_t r = read(fd, buf + have, sizeof buf - have - 1);
            if (r <= 0) { fprintf(stderr, "connection closed after %ld answers\n", i); return 1; }
            have += (size_t)r; buf[have] = 0;
            char *end = strstr(buf, "\r\n\r\n");
            if (!end) continue;
            if (need < 0) {
                long length = 0; char *cl = strcasestr(buf, "\r\nContent-Length:");
                if (cl && cl < end) length = atol(cl + 17);
                need = (end + 4 - buf) + length;
                int status = atoi(buf + 9);
                if (status < 200 || status >= 400) bad++;
            }
            if ((long)have >= need) break;
        }
    }
    printf("fixed-get: %ld answers, %ld not 2xx/3xx\n", n, bad);
    return bad ? 1 : 0;
}
