#!/usr/bin/env python3
"""Builds a large capture deterministically from small btsnoop H4 captures, for benchmarks.

Usage: make_bench_capture.py --frames N --btsnoop OUT.btsnoop --pcap OUT.pcap [--btmon-safe OUT.btsnoop] IN.btsnoop...

The input records are repeated in order, each repetition shifted in time (after the previous one
ended) and onto other connection handles, so every repetition is a new set of connections with
discovery, reads, writes, notifications and advertising reports. The same frames are written as
btsnoop 1002 and as pcap with link type 201 (4-byte direction + H4). Inputs of another btsnoop
datalink are skipped.

--btmon-safe writes a third capture, btsnoop only, of the same size built from the same inputs
without the frames btmon 5.66 crashes on (it segfaults on some ATT discovery responses): the
comparison with `btmon -r` is run on that one, since btmon stops at the first of them."""
import argparse, os, struct, subprocess, sys, tempfile

EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # btsnoop counts microseconds from year 0

def read_btsnoop(path):
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:8] == b'btsnoop\0', path
    version, datalink = struct.unpack('>II', data[8:16])
    if datalink != 1002:
        print(f'{path}: datalink {datalink}, skipped (need 1002)', file=sys.stderr)
        return []
    off, recs = 16, []
    while off + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack('>IIIIq', data[off:off + 24])
        recs.append((flags, ts, data[off + 24:off + 24 + incl]))
        off += 24 + incl
    return recs

# Where connection handles sit in HCI packets: (offset into the parameters).
EVENT_HANDLE = {0x05: 1, 0x08: 1, 0x30: 1, 0x59: 1}
LE_META_HANDLE = {0x01: 2, 0x03: 2, 0x04: 2, 0x05: 1, 0x06: 1, 0x07: 1, 0x0A: 2, 0x0C: 2, 0x14: 1, 0x29: 2}
COMMAND_HANDLE = {0x0406: 0, 0x2013: 0, 0x2016: 0, 0x201A: 0, 0x201B: 0, 0x2022: 0, 0x2030: 0, 0x2032: 0, 0x2019: 0}

def shift_handle(pkt, k):
    if k == 0 or len(pkt) < 2:
        return pkt
    b = bytearray(pkt)
    def bump(i):
        if i + 2 <= len(b):
            v = struct.unpack_from('<H', b, i)[0]
            h = v & 0x0FFF
            if h < 0x0EFF:
                h = (h + k) % 0x0EFF
            struct.pack_into('<H', b, i, (v & 0xF000) | h)
    t = b[0]
    if t == 0x02:      # ACL: handle in the first two bytes
        bump(1)
    elif t == 0x04 and len(b) >= 3:
        code = b[1]
        if code in EVENT_HANDLE:
            bump(3 + EVENT_HANDLE[code])
        elif code == 0x13 and len(b) > 3:  # Number Of Completed Packets
            for i in range(b[3]):
                bump(4 + 4 * i)
        elif code == 0x3E and len(b) > 3 and b[3] in LE_META_HANDLE:
            bump(3 + LE_META_HANDLE[b[3]])
    elif t == 0x01 and len(b) >= 4:
        op = struct.unpack_from('<H', b, 1)[0]
        if op in COMMAND_HANDLE:
            bump(4 + COMMAND_HANDLE[op])
    return bytes(b)

def write_btsnoop(path, recs):
    with open(path, 'wb') as f:
        f.write(b'btsnoop\0' + struct.pack('>II', 1, 1002))
        for flags, ts, pkt in recs:
            f.write(struct.pack('>IIIIq', len(pkt), len(pkt), flags, 0, ts) + pkt)

def btmon_survives(recs):
    with tempfile.NamedTemporaryFile(suffix='.btsnoop', delete=False) as t:
        path = t.name
    try:
        write_btsnoop(path, recs)
        r = subprocess.run(['btmon', '-r', path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return r.returncode == 0
    finally:
        os.unlink(path)

def btmon_safe(recs):
    """The records without those btmon crashes on: the longest prefix it survives, found by
    bisection, then the frame after it dropped, until it reads the whole capture."""
    recs, dropped = list(recs), 0
    while recs and not btmon_survives(recs):
        lo, hi = 0, len(recs)  # btmon survives recs[:lo], crashes on recs[:hi]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if btmon_survives(recs[:mid]):
                lo = mid
            else:
                hi = mid
        del recs[hi - 1]
        dropped += 1
    return recs, dropped

def write_repeated(sources, frames, bs, pc):
    base = 1_700_000_000 * 1_000_000 + EPOCH_DELTA_US  # fixed start: deterministic output
    bs.write(b'btsnoop\0' + struct.pack('>II', 1, 1002))
    if pc:
        pc.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201))
    n, k, t = 0, 0, base
    while n < frames:
        for recs in sources:
            if not recs:
                continue
            t0 = recs[0][1]
            for flags, ts, pkt in recs:
                pkt = shift_handle(pkt, k)
                now = t + (ts - t0)
                bs.write(struct.pack('>IIIIq', len(pkt), len(pkt), flags, 0, now))
                bs.write(pkt)
                if pc:
                    unix_us = now - EPOCH_DELTA_US
                    pc.write(struct.pack('<IIII', unix_us // 1_000_000, unix_us % 1_000_000, len(pkt) + 4, len(pkt) + 4))
                    pc.write(struct.pack('>I', flags & 1) + pkt)
                n += 1
                if n >= frames:
                    break
            t += (recs[-1][1] - t0) + 1_000_000
            if n >= frames:
                break
        k += 1
    return n, k

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--frames', type=int, default=2_000_000)
    ap.add_argument('--btsnoop', required=True)
    ap.add_argument('--pcap', required=True)
    ap.add_argument('--btmon-safe')
    ap.add_argument('inputs', nargs='+')
    a = ap.parse_args()
    sources = [read_btsnoop(p) for p in a.inputs]
    with open(a.btsnoop, 'wb') as bs, open(a.pcap, 'wb') as pc:
        n, k = write_repeated(sources, a.frames, bs, pc)
    print(f'{n} frames, {k} repetitions')
    if a.btmon_safe:
        safe, dropped = [], 0
        for recs in sources:
            kept, d = btmon_safe(recs)
            safe.append(kept)
            dropped += d
        with open(a.btmon_safe, 'wb') as bs:
            n, k = write_repeated(safe, a.frames, bs, None)
        total = sum(len(r) for r in sources)
        print(f'btmon-safe: {n} frames, {k} repetitions; {dropped} of {total} input frames dropped')

if __name__ == '__main__':
    main()
