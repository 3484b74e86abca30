import XCTest
@testable import Decoders
import Wire

/// PDU vectors taken from the shared captures (file and frame named), checked against `tshark -V`.
final class LinkLayerPDUTests: XCTestCase {
    static func hex(_ s: String) -> [UInt8] { LinkLayerCryptoTests.hex(s) }

    static func packet(_ linkType: UInt32, _ bytes: [UInt8], number: Int = 1) -> Packet {
        Packet(number: number, timestamp: 0, direction: .unknown, adapter: 0, kind: .linkLayer(linkType: linkType), payload: ArraySlice(bytes))
    }

    // crackle__le_secure_connections.pcapng (DLT 256, Ubertooth)
    static let crackleADVIND = hex("""
        0000c900d6be898e3700d6be898e4021162342824 37d0201 1a03031118130941 6c657274204e6f74 696669636174696f 6ee5b902
        """)       // frame 1: ADV_IND, CRC 0xa79d40
    static let crackleCONNECT = hex("""
        0000c900d6be898e3700d6be898e8522f43e7370f35c16234282437d274a65505dd42e03260036 0000002a00ffffffff1fa5ec7ca4
        """)       // frame 44: CONNECT_IND AA 0x50654a27 CRCInit 0x2ed45d, CRC 0x373e25
    static let crackleEmpty = hex("06e0c9000000000027 00274a6550110035ef8e")          // frame 45: Empty PDU
    static let crackleVersion = hex("0600c90000000000270027 4a65500b060c080f0007666de7fb") // frame 48: LL_VERSION_IND

    /// crackle__pairing_and_ltk_exchange.pcap frame 1: PPI (24 bytes, DLT 147) with Ubertooth's BTLE
    /// field, then an ADV_IND with its CRC.
    static let cracklePPI = hex("00001800 93000000 36750c00 006209006b36e300e8dcee3c d6be898e0009e8dd6ee5c578020105c63c96")

    func testPPIAroundUserDLT() {
        let (h, packet, problem) = LLPseudoHeader.parse(linkType: LinkType.ppi, ArraySlice(Self.cracklePPI))
        XCTAssertNil(problem)
        XCTAssertEqual(h.ppiLinkType, 147)
        XCTAssertEqual(h.ppiFrequency, 2402)
        XCTAssertEqual(h.channel, 37)
        XCTAssertEqual(h.ppiRSSIMax, -24)
        XCTAssertEqual(h.ppiRSSICount, 60)
        XCTAssertEqual(Array(packet.prefix(4)), [0xD6, 0xBE, 0x89, 0x8E])
        XCTAssertEqual(packet.count, 18)
    }

    /// Lengths that lie and link types that are not LE: a problem and no packet, never a crash.
    func testPPIThatLies() {
        var tooLong = Self.cracklePPI; tooLong[2] = 0xFF
        var fieldTooLong = Self.cracklePPI; fieldTooLong[10] = 0x40
        var ethernet = Self.cracklePPI; ethernet[4] = 1
        for (bytes, expected) in [(Array(Self.cracklePPI.prefix(5)), "PPI header truncated (5 bytes)"),
                                  (tooLong, "PPI header truncated (42 bytes)"),
                                  (fieldTooLong, "PPI field 30006 longer than the header"),
                                  (ethernet, "PPI carries link type 1, not an LE link-layer packet")] {
            let (_, _, problem) = LLPseudoHeader.parse(linkType: LinkType.ppi, ArraySlice(bytes))
            XCTAssertEqual(problem, expected)
        }
        for n in 0..<Self.cracklePPI.count { _ = LLPseudoHeader.parse(linkType: LinkType.ppi, ArraySlice(Self.cracklePPI.prefix(n))) }
    }

    /// Link type 256 with PHY LE Coded: an octet with the Coding Indicator follows the access
    /// address (crackle's ADV_IND as if sent on LE Coded, S=2; tshark reads the same bytes alike), and the PDU and CRC after it.
    func testCodedPHYCodingIndicator() {
        let phdr = Self.hex("00 00 00 00 d6be898e 0180") // channel 37, Dewhitened, PHY 2 (LE Coded)
        let air = Self.hex("d6be898e 01 0009e8dd6ee5c578020105 c63c96")
        let f = LinkLayerTracker().process(Self.packet(LinkType.leLLWithPHDR, phdr + air))
        XCTAssertEqual(f.codingIndicator, 1)
        XCTAssertEqual(f.crc, .valid)
        XCTAssertTrue(f.problems.isEmpty, "\(f.problems)")
        XCTAssertTrue(f.summary.contains("ADV_IND"), f.summary)
        let ll = f.fields.first { $0.label == "Bluetooth Low Energy Link Layer" }
        guard case .named(1, _, let name, _)? = ll?.children.first(where: { $0.label == "Coding Indicator" })?.value else {
            return XCTFail("no Coding Indicator field")
        }
        XCTAssertEqual(name, "FEC Block 2 coded using S=2")
        // The same bytes on LE 1M keep no Coding Indicator.
        let m = LinkLayerTracker().process(Self.packet(LinkType.leLLWithPHDR, Self.hex("00 00 00 00 d6be898e 0100") + Self.hex("d6be898e 0009e8dd6ee5c578020105 c63c96")))
        XCTAssertNil(m.codingIndicator)
        XCTAssertEqual(m.crc, .valid)
    }

    /// The nRF Sniffer's header (272, protocol 3) with PHY LE Coded in its flags: the Coding
    /// Indicator octet follows the access address there too (tshark reads these bytes so: ADV_IND,
    /// S=8, CRC correct); read as a PDU header it made every Coded packet malformed.
    func testCodedPHYCodingIndicatorNordic() {
        let air = Self.hex("d6be898e 00 0009e8dd6ee5c578020105 c63c96")
        func nordic(flags: UInt8, _ body: [UInt8]) -> [UInt8] {
            let event: [UInt8] = [10, flags, 37, 60, 0, 0, 0xE8, 0x03, 0, 0]
            let length = event.count + body.count
            return [0, UInt8(length & 0xFF), UInt8(length >> 8), 3, 1, 0, 0x02] + event + body
        }
        let f = LinkLayerTracker().process(Self.packet(LinkType.nordicBLE, nordic(flags: 0x21, air)))
        XCTAssertEqual(f.codingIndicator, 0)
        XCTAssertTrue(f.problems.isEmpty, "\(f.problems)")
        XCTAssertTrue(f.summary.contains("ADV_IND"), f.summary)
        // LE 1M (PHY 0): no Coding Indicator.
        var uncoded = air
        uncoded.remove(at: 4)
        let m = LinkLayerTracker().process(Self.packet(LinkType.nordicBLE, nordic(flags: 0x01, uncoded)))
        XCTAssertNil(m.codingIndicator)
        XCTAssertTrue(m.problems.isEmpty, "\(m.problems)")
    }

    /// The nRF Sniffer's headers cut at every length: the fields before the cut are kept, as a
    /// field-by-field read keeps them, and anything shorter than both headers (17 octets) is
    /// truncated; the access address and PDU follow them.
    func testNordicHeaderCutAtEveryLength() {
        let air = Self.hex("d6be898e 0009e8dd6ee5c578020105 c63c96")
        let v3 = [0, 28, 0, 3, 0x34, 0x12, 0x02] + [10, 0x01, 37, 60, 0x78, 0x56, 0xE8, 0x03, 0, 0] + air
        let v0 = [0xBE, 0xEF, 0x06, 0x34, 0x12, 0, 0, 27] + [0x01, 37, 60, 0x78, 0x56, 0xE8, 0x03, 0, 0] + air
        for (record, legacy) in [(v3, false), (v0, true)] {
            for n in 0...record.count {
                let (h, packet, problem) = LLPseudoHeader.parse(linkType: LinkType.nordicBLE, ArraySlice(record.prefix(n)))
                // Version 0 is known from its marker (2 octets), a later one from octet 3; one
                // octet of a marker is read as a board number.
                XCTAssertEqual(h.protocolVersion, legacy ? (n >= 2 ? 0 : nil) : (n >= 4 ? 3 : nil), "\(legacy) \(n)")
                XCTAssertEqual(h.board, n < 1 ? nil : legacy ? (n == 1 ? 0xBE : nil) : 0, "\(legacy) \(n)")
                XCTAssertEqual(h.packetID, n >= (legacy ? 3 : 7) ? (legacy ? 6 : 2) : nil, "\(legacy) \(n)")
                XCTAssertEqual(h.packetCounter, n >= (legacy ? 5 : 6) ? 0x1234 : nil, "\(legacy) \(n)")
                XCTAssertEqual(h.eventCounter, n >= 13 ? 0x5678 : nil, "\(legacy) \(n)")
                XCTAssertEqual(h.nordicTime, n >= 17 ? 1000 : nil, "\(legacy) \(n)")
                XCTAssertEqual(h.rssi, n >= 17 ? -60 : nil, "\(legacy) \(n)")
                if n < 17 {
                    XCTAssertEqual(problem, "nRF Sniffer header truncated (\(n) bytes)")
                    XCTAssertTrue(packet.isEmpty)
                } else {
                    XCTAssertEqual(Array(packet), Array(record[17..<n]))
                    if n == record.count { XCTAssertNil(problem) }
                }
            }
        }
    }

    /// A packet cut anywhere keeps its access address and what there is of its PDU; the CRC only
    /// when all three of its octets are there.
    func testPacketCutAtEveryLength() {
        let air = Self.hex("d6be898e 0009e8dd6ee5c578020105 c63c96")
        for n in 0...air.count {
            let p = LLPacket(ArraySlice(air.prefix(n)))
            guard n >= 4 else { XCTAssertNil(p, "\(n)"); continue }
            XCTAssertEqual(p?.accessAddress, LLPacket.advertisingAccessAddress)
            XCTAssertEqual(p.map { Array($0.pdu) }, Array(air[4..<min(n, 15)]), "\(n)")
            XCTAssertEqual(p?.crcAsNumber, n == air.count ? 0x963CC6 : nil, "\(n)")
        }
    }

    func testPseudoHeader256() {
        let (h, packet, problem) = LLPseudoHeader.parse(linkType: LinkType.leLLWithPHDR, ArraySlice(Self.crackleADVIND))
        XCTAssertNil(problem)
        XCTAssertEqual(h.rfChannel, 0)
        XCTAssertEqual(h.channel, 37)
        XCTAssertEqual(h.rssi, 0)
        XCTAssertEqual(h.noise, -55)
        XCTAssertEqual(h.referenceAccessAddress, 0x8E89BED6)
        XCTAssertEqual(h.phdrFlags, 0x0037)
        XCTAssertFalse(h.crcChecked)
        XCTAssertEqual(packet.count, Self.crackleADVIND.count - 10)
        XCTAssertEqual(LLPseudoHeader.channelIndex(rf: 6), 5)
        XCTAssertEqual(LLPseudoHeader.channelIndex(rf: 12), 38)
        XCTAssertEqual(LLPseudoHeader.channelIndex(rf: 13), 11)
        XCTAssertEqual(LLPseudoHeader.channelIndex(rf: 39), 39)
    }

    func testCRCAdvertising() {
        let p = LLPacket(ArraySlice(Self.crackleADVIND).dropFirst(10))!
        XCTAssertEqual(p.accessAddress, 0x8E89BED6)
        XCTAssertEqual(p.crc, 0xA79D40)
        XCTAssertEqual(LLCRC.compute(p.pdu, initial: 0x555555), 0xA79D40)
        XCTAssertEqual(LLCRC.recoverInit(p.pdu, crc: 0xA79D40), 0x555555)
        let c = LLPacket(ArraySlice(Self.crackleCONNECT).dropFirst(10))!
        XCTAssertEqual(c.crc, 0x373E25)
        XCTAssertEqual(LLCRC.compute(c.pdu, initial: 0x555555), 0x373E25)
    }

    func testCRCDataWithConnectionCRCInit() {
        let e = LLPacket(ArraySlice(Self.crackleEmpty).dropFirst(10))!
        XCTAssertEqual(e.accessAddress, 0x50654A27)
        XCTAssertEqual(LLCRC.compute(e.pdu, initial: 0x2ED45D), e.crc)
        XCTAssertEqual(LLCRC.recoverInit(e.pdu, crc: e.crc!), 0x2ED45D)
        let v = LLPacket(ArraySlice(Self.crackleVersion).dropFirst(10))!
        XCTAssertEqual(LLCRC.compute(v.pdu, initial: 0x2ED45D), v.crc)
        XCTAssertNotEqual(LLCRC.compute(v.pdu, initial: 0x2ED45C), v.crc)
    }

    /// The octet-table CRC against the bit-by-bit LFSR run backwards: every length, many CRCInits.
    func testCRCOctetTableAgreesWithTheBitwiseLFSR() {
        var rng = SystemRandomNumberGenerator()
        for length in 0...64 {
            let data = ArraySlice((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let initial = UInt32.random(in: 0...0xFF_FFFF, using: &rng)
            XCTAssertEqual(LLCRC.recoverInit(data, crc: LLCRC.compute(data, initial: initial)), initial, "length \(length)")
        }
    }

    func testADVIND() {
        let t = LinkLayerTracker()
        let f = t.process(Self.packet(LinkType.leLLWithPHDR, Self.crackleADVIND))
        XCTAssertEqual(f.crc, .valid)
        guard let a = f.advertisingPDU else { return XCTFail("not advertising") }
        XCTAssertEqual(a.name, "ADV_IND")
        XCTAssertTrue(a.txAdd)
        XCTAssertFalse(a.rxAdd)
        XCTAssertFalse(a.chSel)
        XCTAssertEqual(a.length, 33)
        XCTAssertEqual(a.advertiser?.description, "7d:43:82:42:23:16")
        guard case .advertising(_, let data) = a.body else { return XCTFail() }
        XCTAssertEqual(data.count, 27)
        XCTAssertEqual(f.summary, "ADV_IND 7d:43:82:42:23:16")
        XCTAssertFalse(f.fields.isEmpty)
    }

    func testCONNECTINDAndConnectionTracking() {
        let t = LinkLayerTracker()
        let f = t.process(Self.packet(LinkType.leLLWithPHDR, Self.crackleCONNECT))
        XCTAssertEqual(f.crc, .valid)
        guard let c = f.advertisingPDU?.connectInd else { return XCTFail("no CONNECT_IND") }
        XCTAssertEqual(f.advertisingPDU?.name, "CONNECT_IND")
        XCTAssertEqual(c.initA.description, "5c:f3:70:73:3e:f4")
        XCTAssertEqual(c.advA.description, "7d:43:82:42:23:16")
        XCTAssertEqual(c.accessAddress, 0x50654A27)
        XCTAssertEqual(c.crcInit, 0x2ED45D)
        XCTAssertEqual(c.winSize, 3)
        XCTAssertEqual(c.winOffset, 38)
        XCTAssertEqual(c.interval, 54)
        XCTAssertEqual(c.latency, 0)
        XCTAssertEqual(c.timeout, 42)
        XCTAssertEqual(c.channelMap, 0x1F_FFFF_FFFF)
        XCTAssertEqual(c.hop, 5)
        XCTAssertEqual(c.sca, 5)

        let e = t.process(Self.packet(LinkType.leLLWithPHDR, Self.crackleEmpty, number: 2))
        XCTAssertEqual(e.connection, 1)
        XCTAssertEqual(e.crc, .valid)
        XCTAssertEqual(e.direction, .centralToPeripheral)
        XCTAssertEqual(e.dataPDU?.isEmpty, true)
        XCTAssertNil(e.l2cap)
        XCTAssertEqual(e.header.channel, 5)

        let v = t.process(Self.packet(LinkType.leLLWithPHDR, Self.crackleVersion, number: 3))
        XCTAssertEqual(v.crc, .valid)
        guard let ctl = v.dataPDU?.control else { return XCTFail("no control PDU") }
        XCTAssertEqual(ctl.name, "LL_VERSION_IND")
        XCTAssertEqual(ctl.summary, "LL_VERSION_IND version 8 Broadcom Corporation")
        XCTAssertEqual(ctl.parameters.byte(0), 8)
        XCTAssertEqual(ctl.parameters.le16(1), 0x000F)
        XCTAssertEqual(ctl.parameters.le16(3), 0x6607)
        XCTAssertEqual(ctl.fields.count, 3)

        // A damaged copy: CRC now wrong, kept out of reassembly and sequence tracking.
        var bad = Self.crackleVersion
        bad[bad.count - 5] ^= 0x40
        let b = t.process(Self.packet(LinkType.leLLWithPHDR, bad, number: 4))
        XCTAssertEqual(b.crc, .invalid)
        XCTAssertTrue(b.summary.contains("[bad CRC]"))
    }

    // sweyn__noncompliance_nxp_invalid_hop_interval_sniffer.pcapng frame 29 (nRF Sniffer v2)
    static let sweynConnect = hex("""
        133500021 37d060a01262c0000960000 00d6be898e4522220b90ac365d0c168837600070 83329a9c9a1702020010000000320 0ffffffff1f002cb139
        """)

    func testNordicV2ConnectIndWithInvalidHop() {
        let t = LinkLayerTracker()
        let f = t.process(Self.packet(LinkType.nordicBLE, Self.sweynConnect))
        XCTAssertEqual(f.header.board, 0x13)
        XCTAssertEqual(f.header.protocolVersion, 2)
        XCTAssertEqual(f.header.packetID, 6)
        XCTAssertEqual(f.header.channel, 38)
        XCTAssertEqual(f.header.channelKind, .advertising)
        XCTAssertFalse(f.header.lengthMismatch)
        XCTAssertEqual(f.crc, .valid)
        XCTAssertEqual(f.crcValue, 0x348D9C)
        let p = LLPacket(ArraySlice(Self.sweynConnect).dropFirst(17))!
        XCTAssertEqual(LLCRC.compute(p.pdu, initial: 0x555555), 0x348D9C)
        guard let c = f.advertisingPDU?.connectInd else { return XCTFail("no CONNECT_IND") }
        XCTAssertEqual(c.accessAddress, 0x9A328370)
        XCTAssertEqual(c.crcInit, 0x179A9C)
        XCTAssertEqual(c.interval, 16)
        XCTAssertEqual(c.hop, 0)
        XCTAssertTrue(f.advertisingPDU!.fields.contains { if case .error = $0.value { return true } else { return false } })
    }

    // sweyn__capture_dialog_DA14680_truncated_l2cap_crash.pcap frame 1 (v2, channel 0): tshark
    // reads type 3 on a secondary channel as AUX_SCAN_REQ.
    func testNordicV2AuxScanReq() {
        let bytes = Self.hex("4b1f0002000000 0a03000000000000000 0d6be898e030c220b90ac365d010080caea806b2bab")
        let f = LinkLayerTracker().process(Self.packet(LinkType.nordicBLE, bytes))
        XCTAssertEqual(f.header.board, 75)
        XCTAssertEqual(f.header.channel, 0)
        XCTAssertEqual(f.header.auxType, 1)
        XCTAssertEqual(f.advertisingPDU?.name, "AUX_SCAN_REQ")
        XCTAssertEqual(f.crcValue, 0xD6D4D5)
        guard case .scanRequest(let s, let a)? = f.advertisingPDU?.body else { return XCTFail() }
        XCTAssertEqual(s.description, "5d:36:ac:90:0b:22")
        XCTAssertEqual(a.description, "80:ea:ca:80:00:01")
    }

    // tesible__mouse.pcapng, first LL_VERSION_IND (nRF Sniffer protocol version 3, packet counter 5694)
    func testNordicV3VersionInd() {
        let bytes = Self.hex("001900033e16060a030d240200 5813ce13 17656550 0f06 0c0b0f000863 1cc728")
        let f = LinkLayerTracker().process(Self.packet(LinkType.nordicBLE, bytes))
        let h = f.header
        XCTAssertEqual(h.protocolVersion, 3)
        XCTAssertEqual(h.packetCounter, 5694)
        XCTAssertEqual(h.packetID, 6)
        XCTAssertEqual(h.channelKind, .data)
        XCTAssertEqual(h.channel, 13)
        XCTAssertEqual(h.rssi, -36)
        XCTAssertEqual(h.eventCounter, 2)
        XCTAssertEqual(h.nordicTime, 332_272_472)
        XCTAssertEqual(h.centralToPeripheral, true)
        XCTAssertEqual(f.crc, .valid)
        XCTAssertEqual(f.accessAddress, 0x50656517)
        XCTAssertEqual(f.direction, .centralToPeripheral)
        let d = f.dataPDU!
        XCTAssertEqual(d.llid, .control)
        XCTAssertTrue(d.nesn)
        XCTAssertTrue(d.sn)
        XCTAssertEqual(d.control?.summary.hasPrefix("LL_VERSION_IND version 11"), true)
        XCTAssertNil(f.l2cap)
    }

    func testExtendedAdvertisingHeader() {
        // ADV_EXT_IND: AdvMode 0, flags ADI + AuxPtr (channel 5, 300 µs units, offset 100, LE 2M).
        let auxPtr: UInt32 = 5 | 1 << 7 | 100 << 8 | 1 << 21
        let payload: [UInt8] = [0x06, 0x18, 0x34, 0x12, UInt8(auxPtr & 0xFF), UInt8(auxPtr >> 8 & 0xFF), UInt8(auxPtr >> 16)]
        let pdu = ArraySlice([0x07, UInt8(payload.count)] + payload)
        let a = LLAdvertisingPDU(pdu)
        XCTAssertEqual(a.name, "ADV_EXT_IND")
        guard case .extended(let h, let data) = a.body else { return XCTFail() }
        XCTAssertEqual(h.adi, 0x1234)
        XCTAssertEqual(h.auxPtr, auxPtr)
        XCTAssertNil(h.advA)
        XCTAssertTrue(data.isEmpty)
        XCTAssertNil(h.malformed)
        XCTAssertFalse(a.fields.isEmpty)
        // AUX_ADV_IND on a secondary channel with AdvA, TxPower and data.
        let aux: [UInt8] = [0x08, 0x41, 1, 2, 3, 4, 5, 6, 0xF8, 0x02, 0x01, 0x06]
        let b = LLAdvertisingPDU(ArraySlice([0x47, UInt8(aux.count)] + aux), secondary: true)
        XCTAssertEqual(b.name, "AUX_ADV_IND")
        guard case .extended(let hb, let db) = b.body else { return XCTFail() }
        XCTAssertEqual(hb.advA?.description, "06:05:04:03:02:01")
        XCTAssertEqual(hb.txPower, -8)
        XCTAssertEqual(Array(db), [0x02, 0x01, 0x06])
        // Extended header length past the payload: malformed, no trap.
        let c = LLAdvertisingPDU(ArraySlice([0x07, 3, 0x3F, 0xFF, 0xFF]))
        guard case .malformed = c.body else { return XCTFail() }
    }

    func testControlTableCoversCore54() {
        XCTAssertEqual(LLControlPDU.table.count, 0x2B)
        XCTAssertEqual(LLControlPDU(opcode: 0x29, parameters: []).name, "LL_CHANNEL_STATUS_IND")
        XCTAssertEqual(LLControlPDU(opcode: 0x7F, parameters: []).name, "Unknown LL Control Opcode 0x7F")
        // Each opcode decodes a truncated and an empty parameter list without trapping.
        for op in 0..<0x2B {
            _ = LLControlPDU(opcode: UInt8(op), parameters: ArraySlice([UInt8](repeating: 0xFF, count: 3))).fields
            _ = LLControlPDU(opcode: UInt8(op), parameters: []).summary
        }
        let upd = LLControlPDU(opcode: 0, parameters: ArraySlice([3, 0x10, 0, 0x28, 0, 0, 0, 0x2A, 0, 0x64, 0]))
        XCTAssertEqual(upd.fields.map(\.label), ["WinSize", "WinOffset", "Interval", "Latency", "Timeout", "Instant"])
    }

    func testRetransmissionAndL2CAPFragments() {
        let t = LinkLayerTracker()
        func data(_ header: UInt8, _ payload: [UInt8], dirCtoP: Bool, n: Int) -> LLFrame {
            let flags: UInt16 = (dirCtoP ? 2 : 3) << 7
            let bytes = [5, 0, 0, 0, 0, 0, 0, 0, UInt8(flags & 0xFF), UInt8(flags >> 8), 0x11, 0x22, 0x33, 0x44, header, UInt8(payload.count)] + payload + [0, 0, 0]
            return t.process(Self.packet(LinkType.leLLWithPHDR, bytes, number: n))
        }
        let start = data(0x02, [0x05, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00], dirCtoP: true, n: 1)
        XCTAssertEqual(start.l2cap?.start, true)
        XCTAssertEqual(start.l2cap?.data.count, 7)
        let ack = data(0x05, [], dirCtoP: false, n: 2)          // P→C empty, NESN 1
        XCTAssertNil(ack.l2cap)
        let again = data(0x06, [0x05, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00], dirCtoP: true, n: 3) // same SN 0: repeated
        XCTAssertTrue(again.isRetransmission)
        XCTAssertNil(again.l2cap)
        let cont = data(0x09, [0x01, 0x02], dirCtoP: true, n: 4) // SN 1: new
        XCTAssertFalse(cont.isRetransmission)
        XCTAssertEqual(cont.l2cap?.start, false)
    }

    func testDirectionByAlternation() {
        // Link type 251: no pseudo header; the sides alternate within a connection event.
        let t = LinkLayerTracker()
        var dirs: [LLDirection?] = []
        for i in 0..<4 {
            let bytes: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x01, 0x00, 0, 0, 0]
            dirs.append(t.process(Self.packet(LinkType.leLL, bytes, number: i + 1)).direction)
        }
        XCTAssertEqual(dirs, [.centralToPeripheral, .peripheralToCentral, .centralToPeripheral, .peripheralToCentral])
    }

    func testGarbageNeverTraps() {
        var rng = SystemRandomNumberGenerator()
        let t = LinkLayerTracker(keys: [LinkLayerCryptoTests.ltk])
        for n in 0..<3000 {
            let len = Int.random(in: 0..<80, using: &rng)
            var bytes = (0..<len).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let lt = [LinkType.leLL, LinkType.leLLWithPHDR, LinkType.nordicBLE][n % 3]
            if n % 7 == 0, bytes.count > 8 { bytes[4] = 0x03; bytes[5] = 0x05 } // control-looking data
            let f = t.process(Self.packet(lt, bytes, number: n))
            _ = f.summary
            _ = f.fields
        }
    }
}

/// SN/NESN across missed packets (Vol 6 Part B 4.5.9), on `LLSequenceTracker` directly.
final class LinkLayerSequenceTests: XCTestCase {
    /// Data header octet: LLID 1, NESN, SN.
    static func header(sn: Int, nesn: Int) -> UInt8 { 0x01 | UInt8(nesn) << 2 | UInt8(sn) << 3 }

    func testRetransmissionWithoutMissedPackets() {
        var t = LLSequenceTracker()
        XCTAssertEqual(t.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 0), hash: 1, event: 1, counted: true).sequence, .new)
        // No reply seen; the next event repeats SN 0: not acknowledged.
        XCTAssertEqual(t.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 0), hash: 1, event: 2, counted: true).sequence, .retransmission)
        XCTAssertEqual(t.receive(from: .peripheralToCentral, header: Self.header(sn: 0, nesn: 1), hash: 1, event: 2, counted: true).sequence, .new)
        XCTAssertEqual(t.receive(from: .centralToPeripheral, header: Self.header(sn: 1, nesn: 1), hash: 2, event: 3, counted: true).sequence, .new)
    }

    /// tesible__Lv4_passkey 2928-2932: the peripheral's reply in event 105 was missed; the central's
    /// NESN went 0 then 1, so the peripheral's SN 1 in event 106 is a new PDU, not its last one again.
    func testTwoAcknowledgementsOverAMissedPacketMeanNew() {
        var t = LLSequenceTracker()
        _ = t.receive(from: .centralToPeripheral, header: Self.header(sn: 1, nesn: 1), hash: 1, event: 104, counted: true)
        _ = t.receive(from: .peripheralToCentral, header: Self.header(sn: 1, nesn: 0), hash: 2, event: 104, counted: true)
        _ = t.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 0), hash: 1, event: 105, counted: true)
        _ = t.receive(from: .centralToPeripheral, header: Self.header(sn: 1, nesn: 1), hash: 1, event: 106, counted: true)
        let p = t.receive(from: .peripheralToCentral, header: Self.header(sn: 1, nesn: 0), hash: 2, event: 106, counted: true)
        XCTAssertEqual(p.sequence, .new)
        XCTAssertTrue(p.repeats)
    }

    /// A skipped connection event could hide two acknowledged PDUs: the same SN is then unknown.
    func testSkippedEventLeavesItUnknown() {
        var t = LLSequenceTracker()
        _ = t.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 0), hash: 1, event: 44, counted: true)
        _ = t.receive(from: .peripheralToCentral, header: Self.header(sn: 0, nesn: 1), hash: 2, event: 44, counted: true)
        var u = t
        let c = t.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 1), hash: 1, event: 46, counted: true)
        XCTAssertEqual(c.sequence, .unknown)
        XCTAssertTrue(c.repeats)
        // Other content under the same SN: the central moved on twice in the skipped event.
        XCTAssertEqual(u.receive(from: .centralToPeripheral, header: Self.header(sn: 0, nesn: 1), hash: 3, event: 46, counted: true).sequence, .new)
        // A damaged PDU from a side also hides what it sent.
        var d = LLSequenceTracker()
        _ = d.receive(from: .centralToPeripheral, header: Self.header(sn: 1, nesn: 0), hash: 1, event: 1, counted: true)
        d.damaged(from: .centralToPeripheral)
        XCTAssertEqual(d.receive(from: .centralToPeripheral, header: Self.header(sn: 1, nesn: 0), hash: 1, event: 2, counted: true).sequence, .unknown)
    }
}

/// CRC-24 computed, not taken from the sniffer's flag.
final class LinkLayerCRCTests: XCTestCase {
    func testComputedCRCBeatsTheSnifferFlag() {
        // tesible__mouse.pcapng's LL_VERSION_IND (CRC correct) with the nRF Sniffer's CRC flag cleared:
        // no CONNECT_IND, so CRCInit is run back from it and the flag is all there is.
        var bytes = LinkLayerPDUTests.hex("001900033e16060a030d240200 5813ce13 17656550 0f06 0c0b0f000863 1cc728")
        bytes[8] &= 0xFE
        let t = LinkLayerTracker()
        XCTAssertEqual(t.process(LinkLayerPDUTests.packet(LinkType.nordicBLE, bytes)).crc, .invalid)
        // An advertising PDU is checked from 0x555555 whatever the flag says.
        var adv = LinkLayerPDUTests.sweynConnect
        adv[8] &= 0xFE
        XCTAssertEqual(LinkLayerTracker().process(LinkLayerPDUTests.packet(LinkType.nordicBLE, adv)).crc, .valid)
        // A flipped payload bit with the flag saying correct: the stored CRC does not match.
        var damaged = LinkLayerPDUTests.sweynConnect
        damaged[30] ^= 0x01
        XCTAssertEqual(LinkLayerTracker().process(LinkLayerPDUTests.packet(LinkType.nordicBLE, damaged)).crc, .storedMismatch)
    }

    /// Link type 251 (no sniffer verdict), no CONNECT_IND: CRCInit is run back from the first data
    /// packet. A byte-identical copy agrees with any CRCInit, so it leaves the CRC unchecked; only
    /// another packet that agrees confirms it.
    func testIdenticalCopyDoesNotConfirmCRCInit() {
        func packet(_ pdu: [UInt8]) -> [UInt8] {
            let crc = LLCRC.compute(ArraySlice(pdu), initial: 0x123456)
            return [0x78, 0x56, 0x34, 0x12] + pdu + [UInt8(crc >> 16), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)].map(LLCRC.reverse)
        }
        let t = LinkLayerTracker()
        let first = packet([0x01, 0x00]), other = packet([0x09, 0x00])
        XCTAssertEqual(t.process(LinkLayerPDUTests.packet(LinkType.leLL, first)).crc, .unchecked)
        XCTAssertEqual(t.process(LinkLayerPDUTests.packet(LinkType.leLL, first)).crc, .unchecked)
        XCTAssertEqual(t.process(LinkLayerPDUTests.packet(LinkType.leLL, other)).crc, .valid)
        var damaged = other
        damaged[4] ^= 0x10
        XCTAssertEqual(t.process(LinkLayerPDUTests.packet(LinkType.leLL, damaged)).crc, .invalid)
    }

    func testCRCStoredAsANumber() {
        // sweyn__capture_nxp_ll_length_crash_capture.pcap frame 1: ADV_IND whose CRC 0x362E3A is stored 3a 2e 36.
        let bytes = LinkLayerPDUTests.hex("4b2f00020000000a0100000f0100000000d6be898e001caa4be1b416d002010408ff7d02010300ffcc09160238d016b4e14baa3a2e36")
        let f = LinkLayerTracker().process(LinkLayerPDUTests.packet(LinkType.nordicBLE, bytes))
        XCTAssertEqual(f.crc, .valid)
        XCTAssertTrue(f.crcStoredAsNumber)
    }
}
