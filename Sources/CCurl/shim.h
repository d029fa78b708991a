#ifndef TIDINGS_CCURL_SHIM_H
#define TIDINGS_CCURL_SHIM_H

// The system libcurl (Debian libcurl4 / libcurl4-openssl-dev), for the posts feed's upstream
// client. `curl_easy_setopt` and `curl_easy_getinfo` are variadic, which Swift cannot call:
// these `static inline` wrappers give each argument type its own function.
#include <curl/curl.h>

typedef size_t (*tidings_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*tidings_curl_progress_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                              curl_off_t ultotal, curl_off_t ulnow);

/// `curl_global_init(CURL_GLOBAL_ALL)`: once per process, before the first transfer.
static inline CURLcode tidings_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_ALL);
}

static inline CURLcode tidings_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tidings_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tidings_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tidings_curl_set_data_callback(CURL *handle, CURLoption option, tidings_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode tidings_curl_set_progress_callback(CURL *handle, tidings_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode tidings_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// Outbound requests that must not reach private addresses (webhooks): libcurl asks this
// callback for each socket, with the address it resolved, before it connects.
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>

typedef curl_socket_t (*tidings_curl_opensocket_callback)(void *context, curlsocktype purpose,
                                                          struct curl_sockaddr *address);

static inline CURLcode tidings_curl_set_opensocket_callback(CURL *handle, tidings_curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

/// The address libcurl is about to connect to: 4 (IPv4, 4 bytes into `bytes`), 6 (IPv6, 16
/// bytes), or 0 for any other family.
static inline int tidings_curl_sockaddr_bytes(const struct curl_sockaddr *address, unsigned char *bytes) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&address->addr;
        memcpy(bytes, &in4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&address->addr;
        memcpy(bytes, &in6->sin6_addr, 16);
        return 6;
    }
    return 0;
}

/// The socket libcurl would have opened itself.
static inline curl_socket_t tidings_curl_open_socket(const struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

#endif
