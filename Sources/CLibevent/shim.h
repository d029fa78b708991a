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
#include <sys/resource.h>
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

#endif
