#ifndef BLESNIFF_CBLUETOOTH_SHIM_H
#define BLESNIFF_CBLUETOOTH_SHIM_H
/* Constants and structures (AF_BLUETOOTH, BTPROTO_HCI, sockaddr_hci, HCI_CHANNEL_MONITOR), so
   nothing links against libbluetooth; and the socket calls below, whose CMSG_*, SO_TIMESTAMP*
   and _IOR (HCIGETDEVLIST, HCIGETDEVINFO) macros Swift cannot import. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

/* Asks the kernel to stamp each datagram with its receive time, in nanoseconds (SO_TIMESTAMPNS)
   or, failing that, microseconds (SO_TIMESTAMP, what btmon asks for). The monitor channel stamps
   a record when the kernel queues it, so the time does not depend on when the reader runs.
   Returns 2 (nanoseconds), 1 (microseconds) or 0 (no kernel time: the caller stamps). */
static inline int blesniff_enable_receive_time(int fd) {
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0) return 2;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof on) == 0) return 1;
    return 0;
}

/* Receives one datagram into buf, as recv() does, and stores in *time_ns the kernel's receive
   time (nanoseconds since the Unix epoch) from the SCM_TIMESTAMPNS or SCM_TIMESTAMP control
   message, or -1 when the datagram carried neither. */
static inline long blesniff_recv_timed(int fd, void *buf, size_t len, long long *time_ns) {
    struct iovec iov = { buf, len };
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(struct timeval))];
        struct cmsghdr align;
    } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof control.bytes;
    *time_ns = -1;
    ssize_t n = recvmsg(fd, &msg, 0);
    if (n < 0) return (long)n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET) continue;
        if (c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            *time_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
        } else if (c->cmsg_type == SCM_TIMESTAMP && c->cmsg_len >= CMSG_LEN(sizeof(struct timeval))) {
            struct timeval tv;
            memcpy(&tv, CMSG_DATA(c), sizeof tv);
            *time_ns = (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
        }
    }
    return (long)n;
}

/* The adapters' indexes, from HCIGETDEVLIST on an unbound raw HCI socket (no privileges needed).
   Stores up to max (at most 512) indexes in ids and returns how many, or -1 with errno set. */
static inline int blesniff_hci_dev_list(int fd, uint16_t *ids, int max) {
    if (max <= 0 || max > 512) { errno = EINVAL; return -1; }
    struct hci_dev_list_req *req = calloc(1, sizeof *req + (size_t)max * sizeof(struct hci_dev_req));
    if (req == NULL) { errno = ENOMEM; return -1; }
    req->dev_num = (uint16_t)max;
    if (ioctl(fd, HCIGETDEVLIST, req) < 0) {
        int e = errno;
        free(req);
        errno = e;
        return -1;
    }
    int n = req->dev_num < max ? req->dev_num : max;
    for (int i = 0; i < n; i++) ids[i] = req->dev_req[i].dev_id;
    free(req);
    return n;
}

/* One adapter's name (hciN), address, bus and type, and flags (bit HCI_UP ...), from
   HCIGETDEVINFO. Returns 0, or -1 with errno set (ENODEV: the adapter went away). */
static inline int blesniff_hci_dev_info(int fd, uint16_t id, struct hci_dev_info *info) {
    memset(info, 0, sizeof *info);
    info->dev_id = id;
    return ioctl(fd, HCIGETDEVINFO, info) < 0 ? -1 : 0;
}
#endif
