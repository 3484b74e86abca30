#!/usr/bin/env python3
"""Writes hostile-input btsnoop captures (H4, datalink 1002) into a directory, for tests and the
memory benchmark. Nothing here is committed as a binary: the captures are made on demand.

Usage: make_hostile.py OUT_DIR [--flood N]   (N random-address advertising reports, default 2,000,000)

  names.btsnoop   advertising reports whose names carry ESC [2J, OSC 8, BEL, U+202E, combining
                  marks only, NULs, invalid UTF-8, C1 controls, zero-width joiners, a 227-byte name
  gatt.btsnoop    a connection whose peer answers a Device Name read (Read By Type 0x2A00) with
                  escapes and a 248-byte name
  flood.btsnoop   N legacy advertising reports, each from a new random static address
"""
import argparse, os, random, struct

EPOCH_DELTA_US = 0x00DCDDB30F2F8000
T0 = EPOCH_DELTA_US + 1_700_000_000 * 1_000_000


class Snoop:
    def __init__(self, path):
        self.f = open(path, 'wb', buffering=1 << 20)
        self.f.write(b'btsnoop\0' + struct.pack('>II', 1, 1002))
        self.t = T0

    def rec(self, pkt, received=True, command=False):
        flags = (1 if received else 0) | (2 if command else 0)
        self.t += 1000
        self.f.write(struct.pack('>IIIIq', len(pkt), len(pkt), flags, 0, self.t) + pkt)

    def close(self):
        self.f.close()


def adv_report(addr, addr_type, data, rssi=-60, evt=0):
    body = bytes([0x02, 1, evt, addr_type]) + addr + bytes([len(data)]) + data + struct.pack('b', rssi)
    return bytes([0x04, 0x3E, len(body)]) + body


def ext_adv_report(addr, addr_type, data, rssi=-60):
    # event type (connectable, scannable, legacy off), address, PHYs, SID, TX power, RSSI,
    # periodic interval, direct address, data
    body = (bytes([0x0D, 1]) + struct.pack('<H', 0x0003) + bytes([addr_type]) + addr + bytes([1, 0, 0xFF, 0x7F])
            + struct.pack('b', rssi) + struct.pack('<H', 0) + bytes([0]) + bytes(6) + bytes([len(data)]) + data)
    return bytes([0x04, 0x3E, len(body)]) + body


def ad(t, v):
    return bytes([len(v) + 1, t]) + v


NAMES = [
    b'\x1b[2Jcleared',
    b'\x1b]8;;http://x\x07link\x1b]8;;\x07',
    b'bell\x07',
    'abc\u202edcba'.encode(),
    '\u0301\u0302\u0303'.encode(),
    b'AB\x00CD',
    b'\xff\xfe\xc3(ok',
    '\u0085next\u200djoin'.encode(),
    b'tab\there',
]


def names(path):
    s = Snoop(path)
    for i, n in enumerate(NAMES):
        s.rec(adv_report(bytes([i + 1, 0, 0, 0, 0, 0xC0]), 1, ad(0x09, n)))
    s.rec(ext_adv_report(bytes([0x77, 0, 0, 0, 0, 0xC0]), 1, ad(0x09, b'N' * 227)))
    s.close()


def acl(handle, payload_cid, att):
    l2 = struct.pack('<HH', len(att), payload_cid) + att
    return bytes([0x02]) + struct.pack('<HH', handle | 0x2000, len(l2)) + l2


def gatt(path):
    s = Snoop(path)
    peer = bytes([1, 2, 3, 4, 5, 0xC6])
    # LE Connection Complete: status, handle 0x0040, role central, peer random, interval 24
    s.rec(bytes([0x04, 0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01]) + peer + struct.pack('<HHHB', 24, 0, 400, 0))
    for value in [b'\x1b[31mred\x1b]8;;x\x07\xe2\x80\xae', b'G' * 248]:
        # Read By Type Request 0x0001-0xFFFF, type 0x2A00 (Device Name); the answer: one handle-value pair
        s.rec(acl(0x40, 4, bytes([0x08]) + struct.pack('<HHH', 1, 0xFFFF, 0x2A00)), received=False)
        s.rec(acl(0x40, 4, bytes([0x09, len(value) + 2]) + struct.pack('<H', 3) + value))
    s.close()


def flood(path, n):
    s = Snoop(path)
    rng = random.Random(1)
    rec = s.rec
    for _ in range(n):
        a = rng.getrandbits(48) | (0xC0 << 40)  # random static
        rec(adv_report(a.to_bytes(6, 'little'), 1, b'\x02\x01\x06', rssi=-rng.randrange(30, 100)))
    s.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('out')
    p.add_argument('--flood', type=int, default=2_000_000)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    names(os.path.join(a.out, 'names.btsnoop'))
    gatt(os.path.join(a.out, 'gatt.btsnoop'))
    if a.flood > 0:
        flood(os.path.join(a.out, 'flood.btsnoop'), a.flood)


if __name__ == '__main__':
    main()
