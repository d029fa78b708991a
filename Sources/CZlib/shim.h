#ifndef TIDINGS_CZLIB_SHIM_H
#define TIDINGS_CZLIB_SHIM_H

// The system zlib (Debian zlib1g / zlib1g-dev), for gzip answers and compressed event streams.
// `deflateInit2` is a macro; a `static inline` wrapper lets Swift call it.
#include <zlib.h>

static inline int tidings_deflate_init2(z_streamp stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}


#endif
