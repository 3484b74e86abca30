import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Sniffed links the sniffer lost end at their last packet, so the auditor does not see one long
/// quiet link: a generated LE LL capture (link type 256, CRCs computed) with a request whose
/// response the sniffer never saw.
final class LostLinkTests: XCTestCase {
    static let central = BDAddr(0xA1A2_A3A4_A5A6), peripheral = BDAddr(0xB1B2_B3B4_B5B6)

    /// Access address, PDU and its CRC-24 in air order.
    static func packet(_ aa: UInt32, _ pdu: [UInt8], crcInit: UInt32, ctp: Bool?) -> [UInt8] {
        let crc = LLCRC.compute(ArraySlice(pdu), initial: crcInit)
        let flags: UInt16 = ctp.map { ($0 ? 2 : 3) << 7 } ?? 0
        let phdr: [UInt8] = [5, 0, 0, 0, 0, 0, 0, 0, UInt8(flags & 0xFF), UInt8(flags >> 8)]
        return phdr + withUnsafeBytes(of: aa.littleEndian, Array.init) + pdu
            + [LLCRC.reverse(UInt8(crc >> 16 & 0xFF)), LLCRC.reverse(UInt8(crc >> 8 & 0xFF)), LLCRC.reverse(UInt8(crc & 0xFF))]
    }

    /// CONNECT_IND from `central` to `peripheral` (interval 30 ms, supervision timeout in 10 ms units).
    static func connectInd(_ aa: UInt32, crcInit: UInt32, timeout: UInt16) -> [UInt8] {
        var p: [UInt8] = [0x05, 34]
        for a in [central, peripheral] { p += withUnsafeBytes(of: a.raw.littleEndian, { Array($0.prefix(6)) }) }
        p += withUnsafeBytes(of: aa.littleEndian, Array.init)
        p += [UInt8(crcInit & 0xFF), UInt8(crcInit >> 8 & 0xFF), UInt8(crcInit >> 16), 2, 5, 0, 24, 0, 0, 0,
              UInt8(timeout & 0xFF), UInt8(timeout >> 8), 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x05]
        return packet(LLPacket.advertisingAccessAddress, p, crcInit: LLPacket.advertisingCRCInit, ctp: nil)
    }

    /// Runs the frames (time in seconds, bytes) through the dissector, the feed and BLE403 alone;
    /// every finding, wherever the auditor files it.
    static func run(_ frames: [(Double, [UInt8])]) -> (decoded: [Decoded], findings: [Finding]) {
        var config = AuditConfiguration()
        for t in AuditRules.all where t.info.id != "BLE403" { config.rules[t.info.id] = RuleOverride(enabled: false) }
        let auditor = Auditor(configuration: config, capturePath: "lost.pcap")
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        var decoded: [Decoded] = []
        for (i, (t, bytes)) in frames.enumerated() {
            let p = Packet(number: i + 1, timestamp: Int64(t * 1e9), direction: .unknown, adapter: 0,
                           kind: .linkLayer(linkType: LinkType.leLLWithPHDR), payload: ArraySlice(bytes))
            let d = dissector.dissect(p)
            feed.events(d, into: auditor)
            decoded.append(d)
        }
        let end = decoded.last.map { FrameRef(number: $0.packet.number, time: $0.packet.timestamp) }
        feed.finish(into: auditor, at: end)
        let outcome = auditor.finishAudit(at: end)
        return (decoded, outcome.findings + outcome.platformBehaviour + outcome.nearby)
    }

    /// A Read Request (the peripheral's empty PDU acknowledges it), then nothing on the link.
    static func request(_ aa: UInt32, crcInit: UInt32) -> [(Double, [UInt8])] {
        [(0.03, packet(aa, [0x02, 7, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00], crcInit: crcInit, ctp: true)),
         (0.031, packet(aa, [0x05, 0], crcInit: crcInit, ctp: false))]
    }

    func testSilenceLongerThanTheSupervisionTimeoutEndsTheLink() {
        let aa: UInt32 = 0x5065_4A27, other: UInt32 = 0x1234_5678
        // Supervision timeout 1 s; 40 s later another link (other devices' traffic) goes on.
        var frames = [(0.0, Self.connectInd(aa, crcInit: 0x2ED45D, timeout: 100))] + Self.request(aa, crcInit: 0x2ED45D)
        frames.append((40.0, Self.packet(other, [0x01, 0], crcInit: 0x111111, ctp: true)))
        let (decoded, findings) = Self.run(frames)
        XCTAssertEqual(decoded[1].upper.map { if case .att = $0 { return true } else { return false } }, true)
        let lost = decoded[3].lostConnections
        XCTAssertEqual(lost.map(\.id), [1])
        XCTAssertEqual(lost.first?.endedFrame, 3)
        XCTAssertEqual(lost.first?.endedTime, 31_000_000)
        XCTAssertEqual(lost.first?.lost, true)
        // The request ends with its link, 30 ms later, not as an ATT timeout 40 s later.
        assertNone(findings)
    }

    func testNewConnectIndBetweenTheSameDevicesEndsTheLink() {
        let aa: UInt32 = 0x5065_4A27, again: UInt32 = 0x5066_1B38
        // Supervision timeout 32 s: the new CONNECT_IND 20 s later is what shows the link is gone.
        var frames = [(0.0, Self.connectInd(aa, crcInit: 0x2ED45D, timeout: 3200))] + Self.request(aa, crcInit: 0x2ED45D)
        frames.append((20.0, Self.connectInd(again, crcInit: 0x0A0B0C, timeout: 3200)))
        frames.append((20.03, Self.packet(again, [0x01, 0], crcInit: 0x0A0B0C, ctp: true)))
        frames.append((45.0, Self.packet(again, [0x09, 0], crcInit: 0x0A0B0C, ctp: true)))
        let (decoded, findings) = Self.run(frames)
        XCTAssertEqual(decoded[3].lostConnections.map(\.id), [1])
        XCTAssertEqual(decoded[3].lostConnections.first?.endedFrame, 3)
        XCTAssertEqual(decoded[4].connection?.id, 2)
        XCTAssertEqual(decoded[4].connection?.peer, Self.peripheral)
        assertNone(findings)
    }

    /// The same request on a link the sniffer keeps seeing is a timeout.
    func testRequestOnALiveLinkStillTimesOut() {
        let aa: UInt32 = 0x5065_4A27
        var frames = [(0.0, Self.connectInd(aa, crcInit: 0x2ED45D, timeout: 3200))] + Self.request(aa, crcInit: 0x2ED45D)
        for t in stride(from: 10.0, through: 40.0, by: 10.0) { frames.append((t, Self.packet(aa, [0x01, 0], crcInit: 0x2ED45D, ctp: true))) }
        let (decoded, findings) = Self.run(frames)
        XCTAssertTrue(decoded.allSatisfy { $0.lostConnections.isEmpty })
        XCTAssertEqual(findings.map(\.rule), ["BLE403"])
    }
}
