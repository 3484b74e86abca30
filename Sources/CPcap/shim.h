#ifndef BLESNIFF_CPCAP_SHIM_H
#define BLESNIFF_CPCAP_SHIM_H
#include <pcap/pcap.h>
#include <stdio.h>
#include <sys/types.h>

/* glibc declares fopencookie(3) only under _GNU_SOURCE, which the Swift Glibc module is built
   without; libpcap reads standard input through such a stream (peeked bytes replayed first).
   Same layout as glibc's cookie_io_functions_t. */
typedef struct {
    ssize_t (*read)(void *cookie, char *buf, size_t size);
    ssize_t (*write)(void *cookie, const char *buf, size_t size);
    int (*seek)(void *cookie, off_t *offset, int whence);
    int (*close)(void *cookie);
} blesniff_cookie_io_functions;

FILE *fopencookie(void *cookie, const char *mode, blesniff_cookie_io_functions io);
#endif
