#!/usr/bin/env python3
"""Build Android bug report fixtures from a btsnoop (datalink 1002) capture.

btsnooz, as AOSP documents it (tools/scripts/btsnooz.py, btif_debug_btsnoop):
    base64 { version (1) | last timestamp (8, LE, us since 1970) | zlib { records } }
    v1 record: length (2) | delta us (4) | type (1) | data          (little-endian)
    v2 record: length (2) | packet length (2) | delta us (4) | type (1) | data
`length` counts the type byte and the data kept; `packet length` the type byte and the data
on the wire. ACL payloads are cut short, as Android does, so frames are marked truncated.

Writes into OUT (default Tests/Captures/phone):
    bugreport_v1.txt, bugreport_v2.txt         text with a btsnooz section (v1 full, v2 ACL cut)
    bugreport.zip                              FS/data/misc/bluetooth/logs/btsnoop_hci.log.last
                                               (first half of the frames) and .log (the rest),
                                               plus the main text with the v2 section
    bugreport_textonly.zip                     the main text only (no snoop log files)
    bugreport_bad_base64.txt                   an invalid character in the middle of the base64
    bugreport_truncated_deflate.txt            the deflate stream cut to 60%
    bugreport_bad_version.txt                  btsnooz version 3
Deterministic: the same input gives byte-identical files.

Usage: scripts/make_bugreport.py [CAPTURE] [OUT]
"""
import base64
import os
import struct
import sys
import zipfile
import zlib

EPOCH_DELTA_US = 0x00DCDDB30F2F8000
ACL_KEPT = 14  # bytes of an ACL packet kept after the type byte (HCI + L2CAP headers + 6)

# (H4 indicator, received) -> btsnooz type
SNOOZ_TYPE = {
    (0x01, False): 0x20, (0x04, True): 0x10,
    (0x02, True): 0x11, (0x02, False): 0x21,
    (0x03, True): 0x12, (0x03, False): 0x22,
    (0x05, True): 0x17, (0x05, False): 0x2D,
}


def read_btsnoop(path):
    data = open(path, "rb").read()
    assert data[:8] == b"btsnoop\0", "not a btsnoop file"
    version, datalink = struct.unpack(">II", data[8:16])
    assert version == 1 and datalink == 1002, "btsnoop 1002 expected"
    frames, off = [], 16
    while off + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack(">IIIIq", data[off:off + 24])
        frames.append((ts - EPOCH_DELTA_US, flags, data[off + 24:off + 24 + incl]))
        off += 24 + incl
    return frames


def write_btsnoop(frames):
    out = bytearray(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for ts, flags, pkt in frames:
        out += struct.pack(">IIIIq", len(pkt), len(pkt), flags, 0, ts + EPOCH_DELTA_US) + pkt
    return bytes(out)


def snooz(frames, version):
    body, prev = bytearray(), None
    for ts, flags, pkt in frames:
        delta = 0 if prev is None else ts - prev
        prev = ts
        stype = SNOOZ_TYPE[(pkt[0], bool(flags & 1))]
        data = pkt[1:]
        kept = data[:ACL_KEPT] if (pkt[0] == 0x02 and version == 2) else data
        if version == 1:
            body += struct.pack("<HIB", len(kept) + 1, delta, stype) + kept
        else:
            body += struct.pack("<HHIB", len(kept) + 1, len(data) + 1, delta, stype) + kept
    return struct.pack("<BQ", version, frames[-1][0]) + zlib.compress(bytes(body), 9)


def text(blob, raw_base64=None):
    b64 = raw_base64 if raw_base64 is not None else base64.standard_b64encode(blob).decode()
    lines = [b64[i:i + 76] for i in range(0, len(b64), 76)]
    return ("========================================================\n"
            "== dumpstate: 2024-06-01 12:00:40\n"
            "========================================================\n\n"
            "DUMP OF SERVICE bluetooth_manager:\n"
            "Bluetooth Status\n  enabled: true\n  state: ON\n\n"
            "--- BEGIN:BTSNOOP_LOG_SUMMARY (%d bytes in) ---\n" % len(blob)
            + "\n".join(lines) + "\n"
            "--- END:BTSNOOP_LOG_SUMMARY ---\n\n"
            "------ 0.012s was the duration of 'DUMPSYS' ------\n")


def write_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2024, 6, 1, 12, 0, 40))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Tests/Captures/gatt_session.btsnoop")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "Tests/Captures/phone")
    os.makedirs(out, exist_ok=True)
    frames = read_btsnoop(src)

    def put(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)

    v1, v2 = snooz(frames, 1), snooz(frames, 2)
    main_text = text(v2)
    put("bugreport_v1.txt", text(v1))
    put("bugreport_v2.txt", main_text)

    half = len(frames) // 2
    logs = "FS/data/misc/bluetooth/logs/"
    report = "bugreport-phone-UQ1A.240105.004-2024-06-01-12-00-40"
    write_zip(os.path.join(out, "bugreport.zip"), [
        ("version.txt", "2.0"),
        ("main_entry.txt", report + ".txt"),
        (report + ".txt", main_text),
        (logs + "btsnoop_hci.log", write_btsnoop(frames[half:])),
        (logs + "btsnoop_hci.log.last", write_btsnoop(frames[:half])),
    ])
    write_zip(os.path.join(out, "bugreport_textonly.zip"), [
        ("main_entry.txt", report + ".txt"),
        (report + ".txt", main_text),
    ])

    b64 = base64.standard_b64encode(v2).decode()
    cut = len(b64) // 2 // 4 * 4
    put("bugreport_bad_base64.txt", text(v2, b64[:cut] + "!" + b64[cut + 1:]))
    deflate = v2[9:]
    put("bugreport_truncated_deflate.txt", text(v2[:9] + deflate[:len(deflate) * 6 // 10]))
    put("bugreport_bad_version.txt", text(bytes([3]) + v2[1:]))
    print("%d frames, %d in the .last log" % (len(frames), half))


if __name__ == "__main__":
    main()
