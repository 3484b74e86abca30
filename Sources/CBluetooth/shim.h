#ifndef BLESNIFF_CBLUETOOTH_SHIM_H
#define BLESNIFF_CBLUETOOTH_SHIM_H
/* Only constants and structures (AF_BLUETOOTH, BTPROTO_HCI, sockaddr_hci, HCI_CHANNEL_MONITOR)
   are used, so nothing links against libbluetooth. */
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#endif
