#ifndef BLESNIFF_CZLIB_SHIM_H
#define BLESNIFF_CZLIB_SHIM_H
#include <zlib.h>

/* Inflate setup without the macros Swift cannot import. */
static inline int blesniff_inflate_init(z_stream *s, int window_bits) {
    return inflateInit2(s, window_bits);
}

/* glibc declares memfd_create(2) only under _GNU_SOURCE, which the Swift Glibc module is built
   without; decompressed captures are replayed through such an anonymous file. */
int memfd_create(const char *name, unsigned int flags);
#endif
