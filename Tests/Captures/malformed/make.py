#!/usr/bin/env python3
"""Writes the small malformed captures of this directory (deterministic; see README.md).

    python3 Tests/Captures/malformed/make.py [--out DIR]
"""
import argparse
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 0x00E03AB44A676000 + 1_717_243_200_000_000  # btsnoop epoch (0 AD) + 2024-06-01 12:00 UTC, in µs

PEER = bytes([0x66, 0x55, 0x44, 0x33, 0x22, 0x11])


# --- containers ---------------------------------------------------------------------------------

def btsnoop(records, datalink=1002, version=1):
    """records: (flags, data[, original length, included length override])."""
    out = b"btsnoop\0" + struct.pack(">II", version, datalink)
    for i, r in enumerate(records):
        flags, data = r[0], r[1]
        orig = r[2] if len(r) > 2 else len(data)
        incl = r[3] if len(r) > 3 else len(data)
        out += struct.pack(">IIIIq", orig, incl, flags, 0, T0 + i * 1000) + data
    return out


def pcap(records, linktype=201):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    for i, r in enumerate(records):
        data = r[0]
        incl = r[1] if len(r) > 1 else len(data)
        out += struct.pack("<IIII", 1_717_243_200 + i, 0, incl, len(data)) + data
    return out


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def shb():
    return block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(linktype):
    return block(1, struct.pack("<HHI", linktype, 0, 65535))


def epb(iface, ts, data):
    return block(6, struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(data), len(data)) + data)


# --- HCI building blocks (H4, type byte first) --------------------------------------------------

SENT, RECV = 0, 1


def cmd(op, params):
    return bytes([1]) + struct.pack("<HB", op, len(params)) + params


def evt(code, params, length=None):
    return bytes([4, code, len(params) if length is None else length]) + params


def acl(handle, pb, payload, length=None):
    return bytes([2]) + struct.pack("<HH", handle | pb << 12, len(payload) if length is None else length) + payload


def l2cap(cid, payload, length=None):
    return struct.pack("<HH", len(payload) if length is None else length, cid) + payload


def le_conn_complete(handle):
    return evt(0x3E, bytes([0x01, 0x00]) + struct.pack("<H", handle) + bytes([0x00, 0x01]) + PEER
               + struct.pack("<HHHB", 0x18, 0, 0x48, 0))


def disconn(handle):
    return evt(0x05, bytes([0x00]) + struct.pack("<H", handle) + bytes([0x13]))


def att(handle, pdu):
    return acl(handle, 2, l2cap(4, pdu))


MTU_REQ = bytes([0x02, 0x00, 0x02])
READ_REQ = bytes([0x0A, 0x03, 0x00])
READ_RSP = bytes([0x0B]) + b"HRM-1"


def captures():
    c = {}
    good = [(SENT, cmd(0x0C03, b"")), (RECV, evt(0x0E, bytes([1, 0x03, 0x0C, 0])))]
    # Containers.
    c["truncated_header.pcap"] = pcap([])[:10]
    c["truncated_header.btsnoop"] = btsnoop([])[:12]
    c["truncated_record.btsnoop"] = btsnoop(good + [(SENT, cmd(0x200B, bytes(7)))])[:-4]
    c["truncated_record.pcap"] = pcap([(struct.pack(">I", d) + x,) for d, x in good + [(SENT, cmd(0x200B, bytes(7)))]])[:-4]
    c["record_larger_than_file.pcap"] = pcap([(struct.pack(">I", d) + x,) for d, x in good] + [(bytes(20), 100_000)])
    c["record_over_16mib.btsnoop"] = btsnoop(good + [(SENT, bytes(16), 17 << 20, 17 << 20)])
    c["zero_length.btsnoop"] = btsnoop([good[0], (SENT, b""), good[1], (RECV, b"")])
    c["unknown_linktype.pcap"] = pcap([(b"\x01\x03\x0c\x00",)], linktype=147)
    c["pcapng_unknown_blocks.pcapng"] = (
        shb() + idb(201) + block(0x123, b"unknown block") + epb(0, 1, struct.pack(">I", 0) + good[0][1])
        + block(0x40000BAD, b"local-use block") + idb(254)
        + epb(1, 2, struct.pack(">HH", 0, 3) + good[1][1][1:])
        + block(0x7FFFFFFF, bytes(8)) + epb(0, 3, struct.pack(">I", 1) + good[1][1]))
    c["btsnoop_wrong_version.btsnoop"] = btsnoop(good, version=2)
    # HCI.
    c["h4_unknown_type.btsnoop"] = btsnoop([good[0], (RECV, b"\x07\x01\x02"), (RECV, b"\xff"), (RECV, b"\x00abc"), good[1]])
    c["hci_length_mismatch.btsnoop"] = btsnoop([
        (SENT, bytes([1, 0x03, 0x0C, 5])),                       # command: 5 parameter bytes announced, none
        (RECV, evt(0x0E, bytes([1, 0x03, 0x0C, 0]), length=2)),  # event: 2 announced, 4 follow
        (RECV, le_conn_complete(0x40)),
        (SENT, acl(0x40, 2, l2cap(4, MTU_REQ), length=20)),       # ACL: 20 announced, 7 follow
        (RECV, att(0x40, bytes([0x03, 0x00, 0x02]))),            # good: decoding goes on
    ])
    # L2CAP.
    c["l2cap_length_lies.btsnoop"] = btsnoop([
        (RECV, le_conn_complete(0x40)),
        (SENT, acl(0x40, 2, l2cap(4, MTU_REQ, length=2))),       # L2CAP says 2, carries 3
        (SENT, acl(0x40, 2, l2cap(4, READ_REQ, length=300))),    # says 300: waits for more
        (SENT, acl(0x40, 2, l2cap(4, READ_REQ))),                # a start drops the pending one
        (RECV, att(0x40, READ_RSP)),
    ])
    c["fragments_without_start.btsnoop"] = btsnoop([
        (RECV, le_conn_complete(0x40)),
        (SENT, acl(0x40, 1, b"\x0a\x03\x00")),                  # continuation, nothing pending
        (RECV, acl(0x40, 1, b"\x0b")),
        (SENT, att(0x40, READ_REQ)),
        (RECV, att(0x40, READ_RSP)),
    ])
    rsp = l2cap(4, READ_RSP)
    rsp2 = l2cap(4, bytes([0x0B]) + b"sensor two")
    c["interleaved_fragments.btsnoop"] = btsnoop([
        (RECV, le_conn_complete(0x40)),
        (RECV, le_conn_complete(0x41)),
        (RECV, acl(0x40, 2, rsp[:5])),
        (RECV, acl(0x41, 2, rsp2[:6])),
        (RECV, acl(0x40, 1, rsp[5:])),
        (RECV, acl(0x41, 1, rsp2[6:])),
    ])
    # ATT / advertising / GATT.
    c["att_short_pdus.btsnoop"] = btsnoop([
        (RECV, le_conn_complete(0x40)),
        (SENT, att(0x40, b"\x02\x17")),                          # Exchange MTU Request: MTU cut in half
        (SENT, att(0x40, b"\x0a")),                              # Read Request without a handle
        (RECV, att(0x40, b"\x01\x0a\x03")),                      # Error Response: 3 of 5 bytes
        (SENT, att(0x40, b"\x10\x01\x00\xff")),                  # Read By Group Type: range cut
        (SENT, att(0x40, b"")),                                  # empty ATT PDU
        (SENT, att(0x40, READ_REQ)),
        (RECV, att(0x40, READ_RSP)),
    ])
    adv = lambda ad, length=None: evt(0x3E, bytes([0x02, 0x01, 0x00, 0x00]) + PEER + bytes([len(ad) if length is None else length]) + ad + bytes([0xC4]))
    c["ad_length_past_end.btsnoop"] = btsnoop([
        (RECV, adv(b"\x02\x01\x06\x09\x09HRM")),                 # Complete Local Name: 8 announced, 3 follow
        (RECV, adv(b"\x02\x01\x06", length=20)),                 # report data length past the event
        (RECV, adv(b"\x02\x01\x06\x05\x09HRM1")),                # good
    ])
    grp = lambda *entries: bytes([0x11, 6]) + b"".join(struct.pack("<HHH", *e) for e in entries)
    c["handles_out_of_order.btsnoop"] = btsnoop([
        (RECV, le_conn_complete(0x40)),
        (SENT, att(0x40, b"\x10\x01\x00\xff\xff\x00\x28")),
        (RECV, att(0x40, grp((0x10, 0x1F, 0x180D), (0x01, 0x0F, 0x1800), (0x08, 0x12, 0x180F)))),
        (SENT, att(0x40, b"\x04\x01\x00\xff\xff")),
        (RECV, att(0x40, b"\x05\x01" + struct.pack("<HHHHHH", 0x0003, 0x2803, 0x0002, 0x2800, 0x0002, 0x2A00))),
        (SENT, att(0x40, READ_REQ)),
        (RECV, att(0x40, READ_RSP)),
    ])
    c["mid_connection.btsnoop"] = btsnoop([
        (SENT, att(0x40, READ_REQ)),                             # no Connection Complete before
        (RECV, att(0x40, READ_RSP)),
        (RECV, acl(0x40, 2, l2cap(4, READ_RSP)[:4])),
        (RECV, acl(0x40, 1, l2cap(4, READ_RSP)[4:])),
        (RECV, disconn(0x40)),
    ])
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE)
    out = ap.parse_args().out
    for name, data in captures().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
