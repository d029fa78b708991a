#ifndef TIDINGS_CLIBEVENT_SHIM_H
#define TIDINGS_CLIBEVENT_SHIM_H

// The one C header Tidings imports: libevent's core, HTTP, listener and pthreads glue.
// Variadic or macro-only APIs get `static inline` wrappers here so Swift can call them.

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

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>


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

static inline int tidings_errno(void) { return errno; }

// The loop's cross-thread wake-up: an eventfd any thread may signal (a plain syscall, so
// libevent itself needs no locking), drained by the loop before it runs the queued work.
static inline int tidings_eventfd_new(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void tidings_eventfd_signal(int fd) { uint64_t one = 1; (void)!write(fd, &one, sizeof one); }
static inline void tidings_eventfd_drain(int fd) { uint64_t count; (void)!read(fd, &count, sizeof count); }

// Caps the kernel's send buffer of a socket (the kernel doubles the value it is given).
static inline int tidings_set_send_buffer(int fd, int bytes) {
    return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}


// --- Stream workers ---------------------------------------------------------------------

// Takes a connected socket away from evhttp without evhttp ever touching it again: the socket
// moves to a new descriptor (returned, close-on-exec), and `placeholder` (an open /dev/null) is
// duplicated onto the old number. evhttp later shuts down and closes that number, i.e. only
// the placeholder copy; the socket itself is closed once, by whoever owns the returned fd.
// Call only after every libevent event on `fd` was removed (bufferevent_disable), or epoll
// would keep reporting the socket under the old number. Returns -1 with errno set on failure.
static inline int tidings_detach_socket(int fd, int placeholder) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (moved < 0) return -1;
    if (dup2(placeholder, fd) < 0) { int saved = errno; close(moved); errno = saved; return -1; }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    return moved;
}

// One non-blocking gathered send of `count` pieces, never raising SIGPIPE.
// Returns the bytes the kernel took, or -1 with errno set.
static inline long tidings_sendv(int fd, const struct iovec *pieces, int count) {
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = (struct iovec *)pieces;
    message.msg_iovlen = (size_t)count;
    return (long)sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Reads and discards what a client sent on a stream. Returns 1 while the socket is open,
// 0 once the peer closed it or it failed.
static inline int tidings_discard_input(int fd) {
    char sink[4096];
    for (int round = 0; round < 16; round++) {
        ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n > 0) continue;
        if (n == 0) return 0;
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 1 : 0;
    }
    return 1;
}

// The IMF-fixdate for `Date:` (29 bytes + NUL into `out`, which holds at least 32).
static inline void tidings_http_date(char *out) {
    time_t now = time(NULL);
    struct tm parts;
    gmtime_r(&now, &parts);
    strftime(out, 32, "%a, %d %b %Y %H:%M:%S GMT", &parts);
}

// Lowers the calling thread's scheduling priority by `increment` nice levels (Linux nice
// values are per thread). Unprivileged: a thread may always lower its own priority.
static inline void tidings_lower_thread_priority(int increment) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)self);
    if (errno == 0) (void)setpriority(PRIO_PROCESS, (id_t)self, current + increment);
}

// Keeps the calling thread (one of `workers` stream workers) off the lowest-numbered CPU it may
// run on, when it may run on more than `workers` CPUs: that CPU is left to the request loop.
// The raw system calls, not the CPU_* macros (they need _GNU_SOURCE before the first system
// header). Returns the CPUs the thread may use afterwards, or -1 (nothing changed) when the
// kernel refused.
static inline int tidings_avoid_first_cpu(int workers) {
    unsigned long mask[16];
    memset(mask, 0, sizeof mask);
    long size = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (size <= 0) return -1;
    int count = 0, first = -1;
    for (int bit = 0; bit < (int)(size * 8); bit++) {
        if (mask[bit / (8 * sizeof(unsigned long))] & (1UL << (bit % (8 * sizeof(unsigned long))))) {
            if (first < 0) first = bit;
            count++;
        }
    }
    if (count < 2 || workers >= count) return count;
    mask[first / (8 * sizeof(unsigned long))] &= ~(1UL << (first % (8 * sizeof(unsigned long))));
    if (syscall(SYS_sched_setaffinity, 0, (size_t)size, mask) != 0) return -1;
    return count - 1;
}

static inline int tidings_open_placeholder(void) { return open("/dev/null", O_RDWR | O_CLOEXEC); }

// The HTTP version of a request (major * 10 + minor: 10 or 11).
static inline int tidings_request_version(struct evhttp_request *request) {
    return request->major * 10 + request->minor;
}

// The shutdown deadline, kept off the event loop: a loop busy with one long callback runs
// neither its signal events nor its timers, so a deadline that is a loop timer never fires.
// A signal handler (chained in front of libevent's, which it still calls) starts a waiting
// thread on the first signal; that thread sleeps `ms` and ends the process with `_exit(status)`
// whatever the loop is doing. Only async-signal-safe calls run in the handler (sem_post).
// Call once, after the loop's signal events are added (libevent installs its handlers then),
// and from one Swift file only (the static state below is per object file).
#include <semaphore.h>
#include <pthread.h>

struct tidings_deadline {
    sem_t start;
    unsigned ms;
    int status;
    volatile sig_atomic_t started;
    struct sigaction previous[65];
};

// One state (a function-local static: Swift emits the functions of this header it calls,
// but not file-scope statics).
static inline struct tidings_deadline *tidings_deadline_state(void) {
    static struct tidings_deadline state;
    return &state;
}

static void tidings_deadline_handler(int sig) {
    struct tidings_deadline *D = tidings_deadline_state();
    int saved = errno;
    if (!D->started) {
        D->started = 1;
        sem_post(&D->start);
    }
    if (sig > 0 && sig < 65) {
        struct sigaction *previous = &D->previous[sig];
        if (!(previous->sa_flags & SA_SIGINFO) && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
            previous->sa_handler(sig);
        }
    }
    errno = saved;
}

static void *tidings_deadline_wait(void *unused) {
    struct tidings_deadline *D = tidings_deadline_state();
    (void)unused;
    while (sem_wait(&D->start) != 0) {}
    struct timespec left = { (time_t)(D->ms / 1000), (long)(D->ms % 1000) * 1000000L };
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
    static const char message[] = "tidings: shutdown did not finish before its deadline; exiting now\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(D->status);
    return NULL;
}

// Returns 0, or -1 (errno set) when the thread or a handler could not be set up.
static inline int tidings_arm_shutdown_deadline(const int *signals, int count, unsigned ms, int status) {
    struct tidings_deadline *D = tidings_deadline_state();
    D->ms = ms;
    D->status = status;
    if (sem_init(&D->start, 0, 0) != 0) return -1;
    // The thread takes no signals itself: they go to the threads that handle them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int created = pthread_create(&thread, NULL, tidings_deadline_wait, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (created != 0) { errno = created; return -1; }
    pthread_detach(thread);
    for (int i = 0; i < count; i++) {
        int sig = signals[i];
        if (sig <= 0 || sig >= 65) continue;
        if (sigaction(sig, NULL, &D->previous[sig]) != 0) return -1;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = tidings_deadline_handler;
        sigfillset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        if (sigaction(sig, &action, NULL) != 0) return -1;
    }
    return 0;
}

#endif
