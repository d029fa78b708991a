#ifndef TIDINGS_CBROTLI_SHIM_H
#define TIDINGS_CBROTLI_SHIM_H

// Google's Brotli (Debian libbrotli-dev / libbrotli1): `br` answers. The decoder is for tests.
#include <brotli/encode.h>
#include <brotli/decode.h>

#endif
