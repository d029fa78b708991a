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

#endif
