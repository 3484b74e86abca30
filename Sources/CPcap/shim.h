#ifndef BLESNIFF_CPCAP_SHIM_H
#define BLESNIFF_CPCAP_SHIM_H
#include <pcap/pcap.h>
#include <stdio.h>
#endif
