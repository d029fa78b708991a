#ifndef TIDINGS_CLIBEVENT_SHIM_H
#define TIDINGS_CLIBEVENT_SHIM_H

// The one C header Tidings imports: libevent's core, buffers, bufferevents, listener and
// pthreads glue (HTTP is Swift: EventHTTP's own connection and parser).
// Variadic or macro-only APIs get plain `static inline` wrappers here so Swift can call them;
// no logic (that is Swift). The one piece that must be C, a signal handler, is deadline.h.

// System headers first: libevent's event-config.h defines _GNU_SOURCE, and glibc's feature
// macros are fixed by whichever header comes first. Included after it, <sys/select.h> would
// declare `fd_set` differently (fds_bits) from the Glibc/Dispatch modules (__fds_bits), and
// clang rejects the two definitions when one file imports both modules.
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/epoll.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>


// libdispatch's run-loop integration (what CoreFoundation's run loop uses on Linux):
// an eventfd that becomes readable when the main queue has work, and the call that drains it.
// Tidings polls that fd from its libevent loop on the main thread, so the main actor *is* the
// event loop, exactly as a UI's main thread owns its views.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

// Plain wrappers of what Swift cannot call: variadic functions (`ioctl`, `syscall`) and `errno`
// (a macro). Everything else the server does with the system is Swift (SocketCalls, EventLoop,
// StreamWorker), through its `syscall` helper.
static inline int tidings_errno(void) { return errno; }
static inline int tidings_ioctl_outq(int fd, int *pending) { return ioctl(fd, TIOCOUTQ, pending); }
static inline long tidings_gettid(void) { return syscall(SYS_gettid); }
// `struct epoll_event` is packed on x86-64: these take and give its two fields as plain values.
static inline int tidings_epoll_ctl(int set, int op, int fd, unsigned int events, unsigned long long data) {
    struct epoll_event event = { .events = events, .data = { .u64 = data } };
    return epoll_ctl(set, op, fd, &event);
}
static inline int tidings_epoll_wait(int set, unsigned int *events, unsigned long long *data, int capacity) {
    struct epoll_event ready[capacity];
    int count = epoll_wait(set, ready, capacity, 0);
    for (int index = 0; index < count; index++) { events[index] = ready[index].events; data[index] = ready[index].data.u64; }
    return count;
}
static inline long tidings_sched_getaffinity(size_t size, unsigned long *mask) {
    return syscall(SYS_sched_getaffinity, 0, size, mask);
}
static inline long tidings_sched_setaffinity(size_t size, unsigned long *mask) {
    return syscall(SYS_sched_setaffinity, 0, size, mask);
}

#endif
