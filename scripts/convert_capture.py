#!/usr/bin/env python3
"""Convert Bluetooth HCI captures between file formats (pure Python).

    convert_capture.py IN OUT --to FORMAT

Reads btsnoop (1001 H1, 1002 H4, 2001 Linux monitor), pcap (DLT 187 H4,
201 H4 with direction, 254 Linux monitor) and pcapng with those link types.
Writes:
    pcap201      pcap, DLT_BLUETOOTH_HCI_H4_WITH_PHDR (4-byte direction + H4)
    pcap187      pcap, DLT_BLUETOOTH_HCI_H4 (H4, no direction)
    pcap254      pcap, DLT_BLUETOOTH_LINUX_MONITOR (adapter index + opcode)
    pcapng       pcapng, one interface with link type 201
    btsnoop1001  btsnoop, H1 (no packet-type byte; flags tell command/event)
    btsnoop1002  btsnoop, H4
    btsnoop2001  btsnoop, Linux monitor (flags = index << 16 | opcode)

Every packet keeps its timestamp (microseconds) and direction. Monitor formats
start with New Index and Open Index records for adapter 0, as btmon writes.
Losses inherent to a format: pcap187 has no direction (reading it back, commands
are "sent", events "received", data "sent"); btsnoop1001 cannot tell ACL from
SCO/ISO (read back as ACL).
"""

import argparse
import struct
import sys

H4_CMD, H4_ACL, H4_SCO, H4_EVT, H4_ISO = 1, 2, 3, 4, 5
SENT, RECEIVED = 0, 1

# Linux monitor opcodes (btmon / Linux kernel hci_mon.h).
MON_NEW_INDEX, MON_DEL_INDEX, MON_CMD, MON_EVT = 0, 1, 2, 3
MON_ACL_TX, MON_ACL_RX, MON_SCO_TX, MON_SCO_RX = 4, 5, 6, 7
MON_OPEN_INDEX, MON_CLOSE_INDEX = 8, 9
MON_ISO_TX, MON_ISO_RX = 18, 19

# (H4 type, direction) -> monitor opcode, and back.
TO_MONITOR = {
    (H4_CMD, SENT): MON_CMD, (H4_CMD, RECEIVED): MON_CMD,
    (H4_EVT, SENT): MON_EVT, (H4_EVT, RECEIVED): MON_EVT,
    (H4_ACL, SENT): MON_ACL_TX, (H4_ACL, RECEIVED): MON_ACL_RX,
    (H4_SCO, SENT): MON_SCO_TX, (H4_SCO, RECEIVED): MON_SCO_RX,
    (H4_ISO, SENT): MON_ISO_TX, (H4_ISO, RECEIVED): MON_ISO_RX,
}
FROM_MONITOR = {
    MON_CMD: (H4_CMD, SENT), MON_EVT: (H4_EVT, RECEIVED),
    MON_ACL_TX: (H4_ACL, SENT), MON_ACL_RX: (H4_ACL, RECEIVED),
    MON_SCO_TX: (H4_SCO, SENT), MON_SCO_RX: (H4_SCO, RECEIVED),
    MON_ISO_TX: (H4_ISO, SENT), MON_ISO_RX: (H4_ISO, RECEIVED),
}

# btsnoop timestamps count microseconds from 0000-01-01; this is 1970-01-01.
BTSNOOP_EPOCH_DELTA = 0x00DCDDB30F2F8000

DLT_H4, DLT_H4_PHDR, DLT_MONITOR = 187, 201, 254


class Packet:
    __slots__ = ('ts_us', 'direction', 'h4')

    def __init__(self, ts_us, direction, h4):
        self.ts_us, self.direction, self.h4 = ts_us, direction, h4


class FormatError(Exception):
    pass


# ---------------------------------------------------------------------------
# Readers: each yields Packet objects with an H4 packet (type byte first).

def direction_of_h4(h4):
    return RECEIVED if h4[:1] == bytes([H4_EVT]) else SENT


def from_link_type(link, data, ts_us):
    """One captured frame of the given link type as a Packet, or None (skipped)."""
    if link == DLT_H4_PHDR:
        if len(data) < 5:
            return None
        return Packet(ts_us, struct.unpack('>I', data[:4])[0] & 1, data[4:])
    if link == DLT_H4:
        return Packet(ts_us, direction_of_h4(data), data) if data else None
    if link == DLT_MONITOR:
        if len(data) < 4:
            return None
        _index, opcode = struct.unpack('>HH', data[:4])
        kind = FROM_MONITOR.get(opcode)
        return Packet(ts_us, kind[1], bytes([kind[0]]) + data[4:]) if kind else None
    raise FormatError(f'unsupported link type {link}')


def read_btsnoop(buf):
    version, datalink = struct.unpack('>II', buf[8:16])
    if version != 1 or datalink not in (1001, 1002, 2001):
        raise FormatError(f'unsupported btsnoop version {version} datalink {datalink}')
    off = 16
    while off + 24 <= len(buf):
        _orig, incl, flags, _drops, ts = struct.unpack('>IIIIQ', buf[off:off + 24])
        data = buf[off + 24:off + 24 + incl]
        off += 24 + incl
        ts_us = ts - BTSNOOP_EPOCH_DELTA
        if datalink == 1002:
            if data:
                yield Packet(ts_us, flags & 1, data)
        elif datalink == 1001:
            if flags & 2:
                h4 = H4_EVT if flags & 1 else H4_CMD
            else:
                h4 = H4_ACL
            yield Packet(ts_us, flags & 1, bytes([h4]) + data)
        else:
            kind = FROM_MONITOR.get(flags & 0xFFFF)
            if kind:
                yield Packet(ts_us, kind[1], bytes([kind[0]]) + data)


def read_pcap(buf):
    magic = buf[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        e = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        e = '>'
    else:
        raise FormatError('not a pcap file')
    nanos = magic in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    link = struct.unpack(e + 'I', buf[20:24])[0] & 0x0FFFFFFF
    off = 24
    while off + 16 <= len(buf):
        sec, frac, incl, _orig = struct.unpack(e + 'IIII', buf[off:off + 16])
        data = buf[off + 16:off + 16 + incl]
        off += 16 + incl
        p = from_link_type(link, data, sec * 1000000 + (frac // 1000 if nanos else frac))
        if p:
            yield p


def read_pcapng(buf):
    e = '<'
    interfaces = []  # (link type, ticks per second)
    off = 0
    while off + 12 <= len(buf):
        btype = struct.unpack(e + 'I', buf[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            e = '<' if buf[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
            interfaces = []
        blen = struct.unpack(e + 'I', buf[off + 4:off + 8])[0]
        if blen < 12:
            raise FormatError('bad pcapng block length')
        if off + blen > len(buf):  # truncated last block: keep what came before
            break
        body = buf[off + 8:off + blen - 4]
        off += blen
        if btype == 1:  # Interface Description Block
            link = struct.unpack(e + 'H', body[:2])[0]
            resol = 10 ** 6
            opts = body[8:]
            while len(opts) >= 4:
                code, olen = struct.unpack(e + 'HH', opts[:4])
                if code == 0:
                    break
                if code == 9 and olen >= 1:  # if_tsresol
                    v = opts[4]
                    resol = 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
                opts = opts[4 + ((olen + 3) & ~3):]
            interfaces.append((link, resol))
        elif btype == 6 and len(body) >= 20:  # Enhanced Packet Block
            iface, hi, lo, incl, _orig = struct.unpack(e + 'IIIII', body[:20])
            if iface >= len(interfaces):
                raise FormatError('packet for an undeclared interface')
            link, resol = interfaces[iface]
            ts_us = ((hi << 32) | lo) * 1000000 // resol
            p = from_link_type(link, body[20:20 + incl], ts_us)
            if p:
                yield p


def read_capture(path):
    with open(path, 'rb') as f:
        buf = f.read()
    if buf[:8] == b'btsnoop\0':
        return list(read_btsnoop(buf))
    if buf[:4] == b'\x0a\x0d\x0d\x0a':
        return list(read_pcapng(buf))
    return list(read_pcap(buf))


# ---------------------------------------------------------------------------
# Writers.

def controller_address(packets):
    """BD_ADDR from a Read BD_ADDR Command Complete, for the New Index record."""
    for p in packets:
        h = p.h4
        # Event 0x0E, Command Complete for opcode 0x1009, status 0.
        if len(h) >= 13 and h[0] == H4_EVT and h[1] == 0x0E and h[4:6] == b'\x09\x10' and h[6] == 0:
            return h[7:13]
    return bytes(6)


def monitor_records(packets):
    """(ts_us, opcode, payload) records: New Index + Open Index, then the packets."""
    t0 = packets[0].ts_us if packets else 0
    # New Index: type 0 (primary controller), bus 0 (virtual), bdaddr, name[8].
    new_index = bytes([0, 0]) + controller_address(packets) + b'hci0'.ljust(8, b'\0')
    records = [(t0, MON_NEW_INDEX, new_index), (t0, MON_OPEN_INDEX, b'')]
    skipped = 0
    for p in packets:
        opcode = TO_MONITOR.get((p.h4[0], p.direction))
        if opcode is None:  # vendor or unknown packet type: no monitor opcode
            skipped += 1
            continue
        records.append((p.ts_us, opcode, p.h4[1:]))
    if skipped:
        print(f'warning: {skipped} packet(s) of unknown H4 type not written', file=sys.stderr)
    return records


def pcap_file(link, frames):
    out = [struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, link)]
    for ts_us, data in frames:
        out.append(struct.pack('<IIII', ts_us // 1000000, ts_us % 1000000, len(data), len(data)) + data)
    return b''.join(out)


def btsnoop_file(datalink, records):
    out = [b'btsnoop\0' + struct.pack('>II', 1, datalink)]
    for ts_us, flags, data in records:
        out.append(struct.pack('>IIIIQ', len(data), len(data), flags, 0,
                               ts_us + BTSNOOP_EPOCH_DELTA) + data)
    return b''.join(out)


def phdr(p):
    return struct.pack('>I', p.direction) + p.h4


def write_pcap201(packets):
    return pcap_file(DLT_H4_PHDR, [(p.ts_us, phdr(p)) for p in packets])


def write_pcap187(packets):
    return pcap_file(DLT_H4, [(p.ts_us, p.h4) for p in packets])


def write_pcap254(packets):
    return pcap_file(DLT_MONITOR, [(t, struct.pack('>HH', 0, op) + d)
                                   for t, op, d in monitor_records(packets)])


def write_pcapng(packets):
    def block(btype, body):
        body += b'\0' * (-len(body) % 4)
        n = len(body) + 12
        return struct.pack('<II', btype, n) + body + struct.pack('<I', n)

    shb = block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1))
    # if_tsresol = 6 (microseconds), then opt_endofopt.
    idb = block(1, struct.pack('<HHI', DLT_H4_PHDR, 0, 65535)
                + struct.pack('<HHB3x', 9, 1, 6) + struct.pack('<HH', 0, 0))
    epbs = []
    for p in packets:
        data = phdr(p)
        epbs.append(block(6, struct.pack('<IIIII', 0, p.ts_us >> 32, p.ts_us & 0xFFFFFFFF,
                                         len(data), len(data)) + data))
    return shb + idb + b''.join(epbs)


def write_btsnoop1002(packets):
    return btsnoop_file(1002, [(p.ts_us, p.direction | (2 if p.h4[0] in (H4_CMD, H4_EVT) else 0), p.h4)
                               for p in packets])


def write_btsnoop1001(packets):
    return btsnoop_file(1001, [(p.ts_us, p.direction | (2 if p.h4[0] in (H4_CMD, H4_EVT) else 0), p.h4[1:])
                               for p in packets])


def write_btsnoop2001(packets):
    # flags: adapter index (0) in the upper 16 bits, monitor opcode in the lower.
    return btsnoop_file(2001, monitor_records(packets))


WRITERS = {
    'pcap201': write_pcap201,
    'pcap187': write_pcap187,
    'pcap254': write_pcap254,
    'pcapng': write_pcapng,
    'btsnoop1001': write_btsnoop1001,
    'btsnoop1002': write_btsnoop1002,
    'btsnoop2001': write_btsnoop2001,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('input')
    parser.add_argument('output')
    parser.add_argument('--to', required=True, choices=sorted(WRITERS))
    args = parser.parse_args()
    try:
        packets = read_capture(args.input)
    except (OSError, FormatError, struct.error) as err:
        print(f'{args.input}: {err}', file=sys.stderr)
        return 2
    with open(args.output, 'wb') as f:
        f.write(WRITERS[args.to](packets))
    return 0


if __name__ == '__main__':
    sys.exit(main())
