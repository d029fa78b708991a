#ifndef TIDINGS_CLIBEVENT_DEADLINE_H
#define TIDINGS_CLIBEVENT_DEADLINE_H

// The one piece of Tidings that must be C: a signal handler (Swift code may not run in one).
#include "shim.h"

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
