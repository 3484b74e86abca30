#!/usr/bin/env python3
"""Repeats a capture's records until it holds N frames, each repetition after the previous one in
time, written as pcap with the capture's link type: a large capture of real traffic of one kind
(an nRF Sniffer capture, say) for benchmarks.

Usage: repeat_capture.py --frames N IN.pcap|IN.pcapng OUT.pcap

Reads little-endian pcap (µs) and pcapng with one interface (µs timestamps, the default)."""
import argparse, struct, sys


def records(data):
    """(link type, [(time µs, bytes)])."""
    magic = struct.unpack_from('<I', data, 0)[0]
    out = []
    if magic == 0xA1B2C3D4:
        link = struct.unpack_from('<I', data, 20)[0]
        off = 24
        while off + 16 <= len(data):
            sec, usec, incl, _ = struct.unpack_from('<IIII', data, off)
            out.append((sec * 1_000_000 + usec, data[off + 16:off + 16 + incl]))
            off += 16 + incl
        return link, out
    if magic == 0x0A0D0D0A:
        off, link = 0, None
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from('<II', data, off)
            if blen < 12:
                break
            if btype == 1 and link is None:
                link = struct.unpack_from('<H', data, off + 8)[0]
            elif btype == 6:
                _, hi, lo, incl, _ = struct.unpack_from('<IIIII', data, off + 8)
                out.append(((hi << 32) | lo, data[off + 28:off + 28 + incl]))
            off += blen
        return link, out
    sys.exit('not a little-endian pcap or pcapng file')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--frames', type=int, required=True)
    ap.add_argument('input')
    ap.add_argument('output')
    a = ap.parse_args()
    link, recs = records(open(a.input, 'rb').read())
    if not recs:
        sys.exit('no records')
    span = recs[-1][0] - recs[0][0] + 1000
    with open(a.output, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, link))
        n, k = 0, 0
        while n < a.frames:
            for t, b in recs:
                if n == a.frames:
                    break
                t += k * span
                f.write(struct.pack('<IIII', t // 1_000_000, t % 1_000_000, len(b), len(b)) + b)
                n += 1
            k += 1
    print(f'{a.output}: {n} frames, link type {link}')


if __name__ == '__main__':
    main()
