#!/usr/bin/env python3
"""Makes the over-the-air capture of a session from the central's or peripheral's HCI log.

Usage: make_air_capture.py [--nordic] [--coded] HCI.btsnoop AIR.pcap

The HCI log (btsnoop, H4) of one side of an LE connection is turned into what a sniffer following
that connection would have written (pcap, link type 256, LE_LL_WITH_PHDR; with --nordic link type
272, NORDIC_BLE, as the nRF Sniffer's protocol version 3 writes it): the peer's ADV_IND, the
CONNECT_IND, every ACL data packet as a link-layer data PDU in its own connection event (the other
side answering with an empty PDU), channel hopping by Channel Selection Algorithm #1, sequence
numbers, CRCs, and, where the log shows the link being encrypted (HCI LE Enable Encryption or LE
Long Term Key Request Reply, then Encryption Change), the encryption procedure (LL_ENC_REQ/RSP,
LL_START_ENC_REQ/RSP) followed by every PDU encrypted with AES-CCM under the session key (Core Vol 6
Part E). With --coded the central moves the link to LE Coded (S=8) first: LL_PHY_REQ, LL_PHY_RSP
and LL_PHY_UPDATE_IND with its instant, then every data PDU on LE Coded, whose packets both link
types store with the Coding Indicator octet after the access address. Encryption uses Python's `cryptography` package, not blesniff's code, so decrypting the
result with the LTK the log shows checks blesniff's link-layer decryption end to end.

Exit status: 0 written, 1 the log holds no LE connection, 2 not a btsnoop file of H4 records (1002),
77 the `cryptography` package is absent.
"""
import struct
import sys

try:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESCCM
except ImportError:
    sys.exit(77)

ADV_AA = 0x8E89BED6
# Fixed, so the output is reproducible; any valid values would do.
ACCESS_ADDRESS = 0x50654A7B
CRC_INIT = 0x3A5C91
HOP = 7
SKD_M, IV_M = bytes.fromhex("1122334455667788"), bytes.fromhex("99aabbcc")
SKD_S, IV_S = bytes.fromhex("0102030405060708"), bytes.fromhex("d1d2d3d4")


def crc24(init, data):
    """The link-layer CRC (Vol 6 Part B 3.1.1): an LFSR preset with CRCInit, fed each octet least
    significant bit first; sent with its most significant bit first, so stored bit-reversed."""
    c = init
    for byte in data:
        for bit in range(8):
            msb = (c >> 23) & 1
            c = (c << 1) & 0xFFFFFF
            if ((byte >> bit) & 1) ^ msb:
                c ^= 0x00065B
    r = 0
    for i in range(24):
        r = (r << 1) | ((c >> i) & 1)
    return r.to_bytes(3, "little")


def rf_channel(index):
    """RF channel (0-39) of a channel index (0-36 data, 37-39 advertising)."""
    if index == 37:
        return 0
    if index == 38:
        return 12
    if index == 39:
        return 39
    return index + 1 if index <= 10 else index + 2


class Writer:
    def __init__(self, path, nordic=False):
        self.f = open(path, "wb")
        self.nordic = nordic
        self.counter = 0
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 272 if nordic else 256))

    def packet(self, time_us, channel_index, aa, pdu, crc_init, pdu_type, phy=0, event=0, encrypted=False):
        """pdu_type: 0 advertising, 2 data central to peripheral, 3 data peripheral to central.
        phy: 0 LE 1M, 2 LE Coded (S=8; the Coding Indicator octet, 0, follows the access address).
        encrypted: the nRF Sniffer flags a PDU it saw encrypted; without the key its MIC is not OK."""
        air = struct.pack("<I", aa) + (b"\x00" if phy == 2 else b"") + pdu + crc24(crc_init, pdu)
        if self.nordic:
            # Event header: length, flags (CRC OK, direction central to peripheral, PHY), channel
            # index, RSSI as a positive number, event counter, firmware timestamp in µs.
            flags = 0x01 | (0x02 if pdu_type == 2 else 0) | (0x04 if encrypted else 0) | phy << 4
            event_header = struct.pack("<BBBBHI", 10, flags, channel_index, 50, event, time_us & 0xFFFFFFFF)
            self.counter = (self.counter + 1) & 0xFFFF
            # Board, payload length, protocol version 3, packet counter, packet ID (6 data, 2 advertising).
            body = (struct.pack("<BHBHB", 0, len(event_header) + len(air), 3, self.counter, 0x02 if pdu_type == 0 else 0x06)
                    + event_header + air)
        else:
            # LE_LL_WITH_PHDR: channel, signal, noise, AA offenses, reference AA, flags (dewhitened,
            # signal power valid, reference AA valid, PDU type, CRC checked and valid, PHY).
            flags = 0x0001 | 0x0002 | 0x0010 | (pdu_type << 7) | 0x0400 | 0x0800 | phy << 14
            body = struct.pack("<BbbBIH", rf_channel(channel_index), -50, 0, 0, aa, flags) + air
        self.f.write(struct.pack("<IIII", time_us // 1_000_000, time_us % 1_000_000, len(body), len(body)) + body)

    def close(self):
        self.f.close()


def air_time_us(pdu_octets, phy):
    """A packet's time on air (Vol 6 Part B 2.1, 2.2): 1M preamble, AA, PDU and CRC at 8 µs an
    octet; Coded S=8: 80 µs preamble, AA, CI and TERM1 at 336 µs, PDU and CRC at 64 µs an octet, TERM2."""
    if phy == 2:
        return 80 + 256 + 16 + 24 + (pdu_octets + 3) * 64 + 24
    return (1 + 4 + pdu_octets + 3) * 8


def read_btsnoop(path):
    data = open(path, "rb").read()
    if data[:8] != b"btsnoop\0" or struct.unpack(">I", data[12:16])[0] != 1002:
        print(f"{path}: not a btsnoop file of H4 records (datalink 1002)", file=sys.stderr)
        sys.exit(2)
    off = 16
    while off + 24 <= len(data):
        _, incl, flags, _, _ = struct.unpack(">IIIIq", data[off:off + 24])
        off += 24
        yield flags, data[off:off + incl]
        off += incl


class Link:
    """One connection as the air sees it: events, sequence numbers, encryption."""

    def __init__(self, out, interval_us):
        self.out = out
        self.interval = interval_us
        self.time = 0
        self.unmapped = 0
        self.sn = {True: 0, False: 0}  # by "is central"
        self.nesn = {True: 0, False: 0}
        self.sk = None
        self.iv = IV_M + IV_S
        self.counter = {True: 0, False: 0}
        self.encrypt = {True: False, False: False}
        self.event_counter = 0
        self.phy = 0
        self.phy_instant = None
        self.encrypted = False

    def pdu(self, central, llid, payload):
        encrypted = self.encrypt[central] and len(payload) > 0
        body = payload
        if encrypted:
            nonce = (self.counter[central] | ((1 if central else 0) << 39)).to_bytes(5, "little") + self.iv
            self.counter[central] += 1
            header0 = llid
            body = AESCCM(self.sk, tag_length=4).encrypt(nonce, payload, bytes([header0]))
        self.encrypted = encrypted
        header0 = llid | self.nesn[central] << 2 | self.sn[central] << 3
        return bytes([header0, len(body)]) + body

    def event(self, central_pdu=(1, b""), peripheral_pdu=(1, b"")):
        """One connection event: the central's PDU, then the peripheral's after T_IFS."""
        self.unmapped = (self.unmapped + HOP) % 37
        if self.phy_instant == self.event_counter:
            self.phy, self.phy_instant = 2, None
        t = self.time
        c = self.pdu(True, *central_pdu)
        self.out.packet(t, self.unmapped, ACCESS_ADDRESS, c, CRC_INIT, 2, self.phy, self.event_counter, self.encrypted)
        # The peripheral takes the central's packet as new (SN equals its NESN) and acknowledges it.
        self.nesn[False] ^= 1
        t += air_time_us(len(c), self.phy) + 150
        p = self.pdu(False, *peripheral_pdu)
        self.out.packet(t, self.unmapped, ACCESS_ADDRESS, p, CRC_INIT, 3, self.phy, self.event_counter, self.encrypted)
        # The central takes the peripheral's packet as new and sees its own acknowledged; each
        # side sends its next packet with a new SN.
        self.nesn[True] ^= 1
        self.sn[True] ^= 1
        self.sn[False] ^= 1
        self.time += self.interval
        self.event_counter = (self.event_counter + 1) & 0xFFFF

    def move_to_coded(self):
        """The PHY update procedure (Vol 6 Part B 5.1.10): both sides prefer LE Coded; the central
        sets the instant six events ahead, where both switch."""
        self.event((3, bytes([0x16, 0x04, 0x04])), (1, b""))
        self.event((1, b""), (3, bytes([0x17, 0x04, 0x04])))
        self.phy_instant = (self.event_counter + 6) & 0xFFFF
        self.event((3, bytes([0x18, 0x04, 0x04]) + struct.pack("<H", self.phy_instant)), (1, b""))
        while self.phy_instant is not None:
            self.event()

    def start_encryption(self, ltk, rand, ediv):
        # SK = e(LTK, SKD), SKD = SKDs || SKDm (SKDm least significant); on the air least significant first.
        skd = int.from_bytes(SKD_S, "little") << 64 | int.from_bytes(SKD_M, "little")
        aes = Cipher(algorithms.AES(ltk), modes.ECB()).encryptor()
        self.sk = aes.update(skd.to_bytes(16, "big")) + aes.finalize()
        self.event((3, bytes([0x03]) + rand + ediv + SKD_M + IV_M), (3, bytes([0x04]) + SKD_S + IV_S))
        self.event((1, b""), (3, bytes([0x05])))
        # The central answers LL_START_ENC_REQ encrypted, and so does the peripheral then.
        self.encrypt[True] = True
        self.event((3, bytes([0x06])), (1, b""))
        self.encrypt[False] = True
        self.event((1, b""), (3, bytes([0x06])))


def main():
    args = sys.argv[1:]
    nordic, coded = "--nordic" in args, "--coded" in args
    args = [a for a in args if a not in ("--nordic", "--coded")]
    if len(args) != 2:
        raise SystemExit(__doc__)
    out = Writer(args[1], nordic)
    own = bytes(6)
    own_random = False
    adv_data = b""
    link = None
    central_host = True
    handle = None
    ltk = None
    pending_rand = bytes(8)
    pending_ediv = bytes(2)
    for flags, pkt in read_btsnoop(args[0]):
        if not pkt:
            continue
        kind, body = pkt[0], pkt[1:]
        if kind == 0x01 and len(body) >= 3:  # HCI command
            opcode, = struct.unpack("<H", body[:2])
            params = body[3:]
            if opcode == 0x2005 and len(params) >= 6:  # LE Set Random Address
                own, own_random = params[:6], True
            elif opcode == 0x2019 and len(params) >= 28:  # LE Enable Encryption
                pending_rand, pending_ediv = params[2:10], params[10:12]
                ltk = params[12:28][::-1]
            elif opcode == 0x201A and len(params) >= 18:  # LE Long Term Key Request Reply
                ltk = params[2:18][::-1]
        elif kind == 0x04 and len(body) >= 2:  # HCI event
            code, params = body[0], body[2:]
            if code == 0x3E and params:
                sub = params[0]
                if sub == 0x02 and len(params) >= 12 and not adv_data:  # LE Advertising Report
                    length = params[10]
                    adv_data = params[11:11 + length]
                elif sub in (0x01, 0x0A) and len(params) >= 19 and params[1] == 0 and link is None:
                    handle, = struct.unpack("<H", params[2:4])
                    role, peer_type, peer = params[4], params[5], params[6:12]
                    rest = params[12:] if sub == 0x01 else params[24:]
                    interval, latency, timeout = struct.unpack("<HHH", rest[:6])
                    central_host = role == 0
                    init, init_random = (own, own_random) if central_host else (peer, peer_type & 1 == 1)
                    adv, adv_random = (peer, peer_type & 1 == 1) if central_host else (own, own_random)
                    # ADV_IND from the advertiser, then the CONNECT_IND (Vol 6 Part B 2.3.3.1).
                    ind = adv + adv_data[:31]
                    out.packet(0, 37, ADV_AA, bytes([0x00 | adv_random << 6, len(ind)]) + ind, 0x555555, 0)
                    lldata = (struct.pack("<I", ACCESS_ADDRESS) + CRC_INIT.to_bytes(3, "little")
                              + struct.pack("<BHHHH", 1, 0, interval, latency, timeout) + b"\xff\xff\xff\xff\x1f" + bytes([HOP]))
                    req = init + adv + lldata
                    out.packet(600, 37, ADV_AA, bytes([0x05 | init_random << 6 | adv_random << 7, len(req)]) + req, 0x555555, 0)
                    link = Link(out, interval * 1250)
                    link.time = 1250 + 1250
                    if coded:
                        link.move_to_coded()
                elif sub == 0x05 and len(params) >= 13:  # LE Long Term Key Request
                    pending_rand, pending_ediv = params[3:11], params[11:13]
            elif code == 0x08 and len(params) >= 4 and link is not None and params[0] == 0 and params[3] and ltk:
                link.start_encryption(ltk, pending_rand, pending_ediv)
        elif kind == 0x02 and len(body) >= 4 and link is not None:  # ACL data
            h, length = struct.unpack("<HH", body[:4])
            if h & 0x0FFF != handle:
                continue
            llid = 1 if (h >> 12) & 3 == 1 else 2
            sent = flags & 1 == 0
            from_central = sent == central_host
            data = (llid, body[4:4 + length])
            if from_central:
                link.event(data, (1, b""))
            else:
                link.event((1, b""), data)
    out.close()
    sys.exit(0 if link is not None else 1)


main()
