#ifndef TIDINGS_CLIBEVENT_SHIM_H
#define TIDINGS_CLIBEVENT_SHIM_H

// The one C header Tidings imports: libevent's core, HTTP, listener and pthreads glue.
// Variadic or macro-only APIs get `static inline` wrappers here so Swift can call them.
#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>

#include <sys/socket.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

// libdispatch's run-loop integration (what CoreFoundation's run loop uses on Linux):
// an eventfd that becomes readable when the main queue has work, and the call that drains it.
// Tidings polls that fd from its libevent loop on the main thread, so the main actor *is* the
// event loop, exactly as a UI's main thread owns its views.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

// Bytes the kernel still holds in a socket's send queue (sent but not yet acknowledged, or not
// yet sent). `ioctl` is variadic, so Swift cannot call it directly. Returns -1 on error.
static inline int tidings_socket_unsent_bytes(int fd) {
    int pending = 0;
    if (ioctl(fd, TIOCOUTQ, &pending) != 0) return -1;
    return pending;
}

// Whether the peer of a connected socket has closed or reset it, without consuming data:
// 1 closed/reset, 0 open and quiet (or has data waiting), -1 unknown error.
static inline int tidings_socket_peer_closed(int fd) {
    char byte;
    ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return 1;
    if (n > 0) return 0;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    if (errno == ECONNRESET || errno == ENOTCONN || errno == EPIPE) return 1;
    return -1;
}

static inline int tidings_errno(void) { return errno; }

#endif
