#!/usr/bin/env python3
"""Builds benchmark captures of several traffic shapes, deterministically (same bytes every run).

Usage: make_workloads.py --frames N --out DIR [SHAPE...]

Each shape is written as DIR/SHAPE.btsnoop (btsnoop 1002, H4) and DIR/SHAPE.pcap (pcap, link type
201: 4-byte direction + H4), the same frames in both:

  notify        one connection, a heart-rate sensor streaming: >= 90% Handle Value Notifications of
                2-byte values, the rest Number Of Completed Packets; the handle never discovered
  notify-gatt   the same after a full GATT discovery, so every notification is named and decoded
  adv           an advertising flood: legacy and extended reports, scan responses, 600 advertisers
                with names, service UUIDs and manufacturer data, scanning restarted now and then
  throughput    writes and notifications of 244-byte values at ATT_MTU 247, each L2CAP PDU split
                over 27-byte ACL fragments
  requests      an app driving a peripheral with requests after discovery, as a lock's or a
                thermostat's app does: reads, writes with a response, read multiple, long reads in
                blobs, a refused read, now and then a notification

The mixed workload (many connections with discovery, reads, writes, pairing) is make_capture.py's;
a link-layer sniffer workload repeats a real nRF Sniffer capture (scripts/bench/workloads.sh)."""
import argparse, os, struct

EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # btsnoop counts microseconds from year 0
T0_US = 1_700_000_000_000_000      # capture start, microseconds since the Unix epoch


class Capture:
    """Frames as (time µs, sent by host, H4 bytes), written as btsnoop and pcap together."""

    def __init__(self, out_dir, name):
        self.snoop = open(os.path.join(out_dir, name + '.btsnoop'), 'wb')
        self.pcap = open(os.path.join(out_dir, name + '.pcap'), 'wb')
        self.snoop.write(b'btsnoop\0' + struct.pack('>II', 1, 1002))
        self.pcap.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201))
        self.frames = 0
        self.t = T0_US

    def add(self, h4, sent, dt_us=500):
        self.t += dt_us
        t = self.t
        cmd_or_evt = h4[0] in (0x01, 0x04)
        flags = (0 if sent else 1) | (2 if cmd_or_evt else 0)
        self.snoop.write(struct.pack('>IIIIq', len(h4), len(h4), flags, 0, t + EPOCH_DELTA_US) + h4)
        rec = struct.pack('>I', 0 if sent else 1) + h4
        self.pcap.write(struct.pack('<IIII', t // 1_000_000, t % 1_000_000, len(rec), len(rec)) + rec)
        self.frames += 1

    def close(self):
        self.snoop.close()
        self.pcap.close()


def command(op, params=b''):
    return bytes([0x01]) + struct.pack('<HB', op, len(params)) + params


def event(code, params):
    return bytes([0x04, code, len(params)]) + params


def acl(handle, payload, start=True):
    pb = 0x2000 if start else 0x1000
    return bytes([0x02]) + struct.pack('<HH', handle | pb, len(payload)) + payload


def l2cap(cid, pdu):
    return struct.pack('<HH', len(pdu), cid) + pdu


def addr(n):
    return struct.pack('<Q', 0xC0_00_00_00_00_00 | n)[:6]


def connect(cap, handle, peer):
    cap.add(command(0x200D, struct.pack('<HHBB', 0x60, 0x30, 0, 1) + peer + struct.pack('<BHHHHHH', 0, 24, 40, 0, 400, 0, 0)), True)
    cap.add(event(0x0F, bytes([0, 1]) + struct.pack('<H', 0x200D)), False)
    cap.add(event(0x3E, bytes([0x01, 0x00]) + struct.pack('<HBB', handle, 0, 1) + peer + struct.pack('<HHHB', 24, 0, 400, 0)), False)


def completed(handle, n=1):
    return event(0x13, bytes([1]) + struct.pack('<HH', handle, n))


def att(handle, pdu):
    return acl(handle, l2cap(0x0004, pdu))


def discovery(cap, h):
    """Heart Rate server: 0x0001-0x0005 GAP, 0x0006-0x0009 GATT, 0x000E-0x0013 Heart Rate (0x0010 measurement)."""
    r = lambda p: cap.add(att(h, p), False)
    s = lambda p: cap.add(att(h, p), True)
    s(bytes([0x02]) + struct.pack('<H', 247)); r(bytes([0x03]) + struct.pack('<H', 247))
    s(bytes([0x10]) + struct.pack('<HHH', 1, 0xFFFF, 0x2800))
    r(bytes([0x11, 6]) + struct.pack('<HHH', 1, 5, 0x1800) + struct.pack('<HHH', 6, 9, 0x1801) + struct.pack('<HHH', 0x0E, 0x13, 0x180D))
    s(bytes([0x10]) + struct.pack('<HHH', 0x14, 0xFFFF, 0x2800)); r(bytes([0x01, 0x10]) + struct.pack('<HB', 0x14, 0x0A))
    s(bytes([0x08]) + struct.pack('<HHH', 0x0E, 0x13, 0x2803))
    r(bytes([0x09, 7]) + struct.pack('<HBHH', 0x0F, 0x10, 0x10, 0x2A37) + struct.pack('<HBHH', 0x12, 0x02, 0x13, 0x2A38))
    s(bytes([0x04]) + struct.pack('<HH', 0x11, 0x11)); r(bytes([0x05, 1]) + struct.pack('<HH', 0x11, 0x2902))
    s(bytes([0x12]) + struct.pack('<HH', 0x11, 1)); r(bytes([0x13]))


def notify(cap, n, discover):
    h = 0x0040
    connect(cap, h, addr(1))
    if discover:
        discovery(cap, h)
    i = 0
    while cap.frames < n:
        cap.add(att(h, bytes([0x1B]) + struct.pack('<HBB', 0x10, 0x06, 60 + i % 40)), False, 1000)
        i += 1
        if i % 12 == 0:
            cap.add(completed(h, 0), False, 100)


def adv(cap, n):
    cap.add(command(0x200B, bytes([1]) + struct.pack('<HHBB', 0x60, 0x30, 0, 0)), True)
    cap.add(command(0x200C, bytes([1, 0])), True)
    i = 0
    while cap.frames < n:
        k = i % 600
        name = ('Sensor-%03d' % k).encode()
        mfr = struct.pack('<H', 0x0059 + k % 7) + bytes([k & 0xFF, i & 0xFF, 1, 2])
        data = bytes([2, 0x01, 0x06, 3, 0x03]) + struct.pack('<H', 0x180D + k % 3) + bytes([len(mfr) + 1, 0xFF]) + mfr
        if k % 3 == 0:   # extended report: name in the advertisement itself
            data += bytes([len(name) + 1, 0x09]) + name
            # Event type: connectable or not, extended PDUs (no legacy bit: the data is over 31 bytes).
            rep = struct.pack('<HB', 0x0001 if k % 2 else 0x0000, 1) + addr(k) + bytes([1, 0, 0xFF, 0x7F, (-40 - k % 50) & 0xFF])
            rep += struct.pack('<H', 0) + bytes([0]) + bytes(6) + bytes([len(data)]) + data
            cap.add(event(0x3E, bytes([0x0D, 1]) + rep), False, 300)
        else:            # legacy ADV_IND and its scan response
            rep = bytes([0x00, 0x01]) + addr(k) + bytes([len(data)]) + data + bytes([(-50 - k % 40) & 0xFF])
            cap.add(event(0x3E, bytes([0x02, 1]) + rep), False, 300)
            if k % 2 == 0:
                srsp = bytes([len(name) + 1, 0x09]) + name
                rep = bytes([0x04, 0x01]) + addr(k) + bytes([len(srsp)]) + srsp + bytes([(-52 - k % 40) & 0xFF])
                cap.add(event(0x3E, bytes([0x02, 1]) + rep), False, 200)
        i += 1
        if i % 5000 == 0:   # the stack restarts its scan, as phones do
            cap.add(command(0x200C, bytes([0, 0])), True)
            cap.add(command(0x200C, bytes([1, 0])), True, 20_000)


def throughput(cap, n):
    h = 0x0040
    connect(cap, h, addr(2))
    discovery(cap, h)
    i = 0
    while cap.frames < n:
        sent = i % 2 == 0
        if sent:   # a vendor characteristic the capture never discovers
            pdu = bytes([0x52]) + struct.pack('<H', 0x0020) + bytes((i + j) & 0xFF for j in range(244))
        else:      # Heart Rate Measurement: flags (RR intervals, 8-bit rate), rate, 121 RR intervals
            pdu = bytes([0x1B]) + struct.pack('<H', 0x10) + bytes([0x10, 60 + i % 40]) + struct.pack('<121H', *[(800 + i + j) & 0xFFFF for j in range(121)])
        frame = l2cap(0x0004, pdu)
        for off in range(0, len(frame), 27):
            cap.add(acl(h, frame[off:off + 27], start=off == 0), sent, 150)
        if i % 4 == 3:
            cap.add(completed(h, 4), False, 100)
        i += 1


def requests(cap, n):
    h = 0x0040
    connect(cap, h, addr(3))
    discovery(cap, h)
    s = lambda p, dt=700: cap.add(att(h, p), True, dt)
    r = lambda p, dt=700: cap.add(att(h, p), False, dt)
    i = 0
    while cap.frames < n:
        k = i % 8
        if k == 0:   # Body Sensor Location
            s(bytes([0x0A]) + struct.pack('<H', 0x13)); r(bytes([0x0B, 1 + i % 6]))
        elif k == 1:  # a command to a vendor characteristic the capture never discovers
            s(bytes([0x12]) + struct.pack('<H', 0x20) + bytes((i + j) & 0xFF for j in range(4 + i % 13))); r(bytes([0x13]))
        elif k == 2:
            s(bytes([0x0E]) + struct.pack('<HH', 0x13, 0x20)); r(bytes([0x0F, 2]) + bytes((i + j) & 0xFF for j in range(8)))
        elif k == 3:  # a long vendor value, read in two blobs at ATT_MTU 247
            s(bytes([0x0A]) + struct.pack('<H', 0x22)); r(bytes([0x0B]) + bytes((i + j) & 0xFF for j in range(246)))
            s(bytes([0x0C]) + struct.pack('<HH', 0x22, 246)); r(bytes([0x0D]) + bytes((i + j) & 0xFF for j in range(54)))
        elif k == 4:  # Read Not Permitted
            s(bytes([0x0A]) + struct.pack('<H', 0x24)); r(bytes([0x01, 0x0A]) + struct.pack('<HB', 0x24, 0x02))
        elif k == 5:
            r(bytes([0x1B]) + struct.pack('<HBB', 0x10, 0x06, 60 + i % 40), 1000)
        elif k == 6:  # Write Without Response
            s(bytes([0x52]) + struct.pack('<H', 0x20) + bytes([i & 0xFF, 1]))
        else:
            cap.add(completed(h, 4), False, 100)
        i += 1


SHAPES = {
    'notify': lambda c, n: notify(c, n, False),
    'notify-gatt': lambda c, n: notify(c, n, True),
    'adv': adv,
    'throughput': throughput,
    'requests': requests,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--frames', type=int, default=200_000)
    ap.add_argument('--out', required=True)
    ap.add_argument('shapes', nargs='*', default=list(SHAPES))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for s in a.shapes:
        cap = Capture(a.out, s)
        SHAPES[s](cap, a.frames)
        cap.close()
        print(f'{s}: {cap.frames} frames')


if __name__ == '__main__':
    main()
