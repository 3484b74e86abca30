#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets from the test captures.

    fuzz/seeds.py [--out DIR] [TARGET...]     (default DIR fuzz/out/corpus, all targets)

Sources: every capture committed in Tests/Captures (and its malformed/ directory), plus the
shared real captures in ../shared/captures no larger than 64 KiB when that directory exists
(they bring the link-layer sniffer formats). Whole files seed `capture` and `pipeline`; the
records, split out with a small pcap/pcapng/btsnoop parser, are re-encoded in the input layout
of each per-record target (see the comment at the top of each fuzz/TARGET.swift).
"""
import argparse
import hashlib
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["capture", "hci", "l2cap", "att", "ad", "ll", "pipeline"]
MAX_FILE = 64 * 1024
# Order of fuzz/hci.swift's `linkTypes`.
HCI_LINK_TYPES = [187, 201, 254, 0x10000 + 1001, 0x10000 + 1002, 0x10000 + 2001, 251, 256, 272, 192]
LL_TYPES = [251, 256, 272]
REPORT_SUBEVENTS = [0x02, 0x0B, 0x0D, 0x0F, 0x25]
MONITOR_HCI = {2: (1, 0), 3: (4, 1), 4: (2, 0), 5: (2, 1), 6: (3, 0), 7: (3, 1), 18: (5, 0), 19: (5, 1)}


def records(data):
    """(link type, flags, bytes) of every record of a capture; stops quietly at damage."""
    if data[:8] == b"btsnoop\0" and len(data) >= 16:
        dl = struct.unpack(">I", data[12:16])[0]
        i = 16
        while i + 24 <= len(data):
            orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[i:i + 24])
            yield 0x10000 + dl, flags, data[i + 24:i + 24 + incl]
            i += 24 + incl
    elif data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if data[0] in (0xD4, 0x4D) else ">"
        if len(data) < 24:
            return
        lt = struct.unpack(e + "I", data[20:24])[0] & 0xFFFF
        i = 24
        while i + 16 <= len(data):
            _, _, incl, _ = struct.unpack(e + "IIII", data[i:i + 16])
            yield lt, 0, data[i + 16:i + 16 + incl]
            i += 16 + incl
    elif data[:4] == b"\x0a\x0d\x0d\x0a":
        e, i, ifaces = "<", 0, []
        while i + 12 <= len(data):
            if data[i:i + 4] == b"\x0a\x0d\x0d\x0a":
                e = "<" if data[i + 8:i + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                ifaces = []
            btype, blen = struct.unpack(e + "II", data[i:i + 8])
            if blen < 12 or i + blen > len(data):
                return
            body = data[i + 8:i + blen - 4]
            if btype == 1 and len(body) >= 2:
                ifaces.append(struct.unpack(e + "H", body[:2])[0])
            elif btype == 6 and len(body) >= 20:
                iface, _, _, incl, _ = struct.unpack(e + "IIIII", body[:20])
                if iface < len(ifaces):
                    yield ifaces[iface], 0, body[20:20 + incl]
            i += blen


def hci(lt, flags, rec):
    """(H4 type, direction 0 sent / 1 received, payload after the type) of an HCI record."""
    if lt == 187 and rec:
        return rec[0], 0 if rec[0] == 1 else 1, rec[1:]
    if lt == 201 and len(rec) >= 5:
        return rec[4], struct.unpack(">I", rec[:4])[0] & 1, rec[5:]
    if lt == 254 and len(rec) >= 4:
        op = struct.unpack(">H", rec[2:4])[0]
        if op in MONITOR_HCI:
            return MONITOR_HCI[op] + (rec[4:],)
    if lt == 0x10000 + 1002 and rec:
        return rec[0], flags & 1, rec[1:]
    if lt == 0x10000 + 1001:
        return (1 if flags & 1 == 0 else 4) if flags & 2 else 2, flags & 1, rec
    if lt == 0x10000 + 2001 and (flags & 0xFFFF) in MONITOR_HCI:
        return MONITOR_HCI[flags & 0xFFFF] + (rec,)
    return None


def chunk(tag, data):
    data = data[:255]
    return bytes([tag & 0xFF, len(data)]) + data


def sources():
    dirs = [os.path.join(ROOT, "Tests/Captures"), os.path.join(ROOT, "Tests/Captures/malformed")]
    out = []
    for d in dirs:
        if os.path.isdir(d):
            for n in sorted(os.listdir(d)):
                p = os.path.join(d, n)
                if os.path.isfile(p) and not n.endswith((".md", ".py", ".tsv")):
                    out.append(p)
    shared = os.path.join(ROOT, "..", "shared", "captures")
    if os.path.isdir(shared):
        for n in sorted(os.listdir(shared)):
            p = os.path.join(shared, n)
            if os.path.isfile(p) and n not in ("MANIFEST.tsv", "README.md") and os.path.getsize(p) <= MAX_FILE:
                out.append(p)
    return out


def build(targets, outdir):
    seeds = {t: set() for t in targets}
    for path in sources():
        data = open(path, "rb").read()
        if not data:
            continue
        for t in ("capture", "pipeline"):
            if t in seeds:
                seeds[t].add(data[:MAX_FILE])
        try:
            recs = list(records(data))
        except struct.error:
            recs = []
        acl, att, ll = [], [], []
        for lt, flags, rec in recs:
            if lt in HCI_LINK_TYPES and "hci" in seeds:
                seeds["hci"].add(bytes([HCI_LINK_TYPES.index(lt)]) + struct.pack("<I", flags) + rec[:2048])
            if lt in LL_TYPES:
                ll.append(chunk(LL_TYPES.index(lt), rec))
                continue
            h = hci(lt, flags, rec)
            if h is None:
                continue
            typ, direction, payload = h
            if typ == 2 and len(payload) >= 4:
                w = struct.unpack("<H", payload[:2])[0]
                pb = (w >> 12) & 3
                acl.append(chunk((w & 3) | pb << 2 | direction << 4, payload[4:]))
                frame = payload[4:]
                if pb != 1 and len(frame) >= 4 and struct.unpack("<H", frame[2:4])[0] in (4, 5, 6):
                    cid = struct.unpack("<H", frame[2:4])[0]
                    att.append(chunk(direction | {4: 0, 6: 4, 5: 6}[cid], frame[4:]))
            elif typ == 4 and len(payload) >= 3 and payload[0] == 0x3E and payload[2] in REPORT_SUBEVENTS and "ad" in seeds:
                sub = REPORT_SUBEVENTS.index(payload[2])
                seeds["ad"].add(bytes([(sub << 1) | (1 if payload[2] == 0x02 else 0)]) + payload[3:])
        for t, items, n in (("l2cap", acl, 48), ("att", att, 32), ("ll", ll, 64)):
            if t in seeds:
                for i in range(0, len(items), n):
                    seeds[t].add(b"".join(items[i:i + n]))
    # AD structures alone (legacy bit set, subevent 0): a few hand-written edge cases.
    if "ad" in seeds:
        for ad in (b"\x02\x01\x06\x03\x03\x0d\x18\x05\x09abc", b"\x1f\xff" + b"\x00" * 30, b"\x00\x00\x05\x16\x0d\x18",
                   b"\x11\x07" + bytes(range(16)), b"\xff"):
            seeds["ad"].add(b"\x01" + ad)
    os.makedirs(outdir, exist_ok=True)
    for t, items in seeds.items():
        d = os.path.join(outdir, t)
        os.makedirs(d, exist_ok=True)
        for s in items:
            with open(os.path.join(d, hashlib.sha1(s).hexdigest()), "wb") as f:
                f.write(s)
        print(f"seeds: {t}: {len(items)} inputs in {d}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "fuzz/out/corpus"))
    ap.add_argument("targets", nargs="*")
    a = ap.parse_args()
    bad = [t for t in a.targets if t not in TARGETS]
    if bad:
        sys.exit(f"unknown target {bad[0]}; targets: {' '.join(TARGETS)}")
    build(a.targets or TARGETS, a.out)


if __name__ == "__main__":
    main()
