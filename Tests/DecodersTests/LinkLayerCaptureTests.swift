import Foundation
import XCTest
@testable import Decoders
import Wire

/// Runs every NORDIC_BLE (272) and LE_LL_WITH_PHDR (256) capture in ../shared/captures through the
/// tracker with a tiny pcap/pcapng record loop, and compares the advertising PDU count with the
/// MANIFEST's "LL adv PDUs" figure (tshark's count).
final class LinkLayerCaptureTests: XCTestCase {
    static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/captures").standardized

    /// Little-endian pcap or pcapng records: (link type, bytes). Enough for these test files only.
    static func records(_ d: [UInt8]) -> [(UInt32, ArraySlice<UInt8>)] {
        func u32(_ i: Int) -> UInt32 { i + 4 <= d.count ? UInt32(d[i]) | UInt32(d[i + 1]) << 8 | UInt32(d[i + 2]) << 16 | UInt32(d[i + 3]) << 24 : 0 }
        var out: [(UInt32, ArraySlice<UInt8>)] = []
        let magic = u32(0)
        if magic == 0xA1B2_C3D4 || magic == 0xA1B2_3C4D {
            let lt = u32(20)
            var i = 24
            while i + 16 <= d.count {
                let n = Int(u32(i + 8))
                guard i + 16 + n <= d.count else { break }
                out.append((lt, d[(i + 16)..<(i + 16 + n)]))
                i += 16 + n
            }
        } else if magic == 0x0A0D_0D0A {
            var linkTypes: [UInt32] = []
            var i = 0
            while i + 12 <= d.count {
                let type = u32(i), len = Int(u32(i + 4))
                guard len >= 12, i + len <= d.count else { break }
                if type == 0x0A0D_0D0A { linkTypes = [] }
                if type == 1 { linkTypes.append(u32(i + 8) & 0xFFFF) }
                if type == 6 {
                    let iface = Int(u32(i + 8)), cap = Int(u32(i + 20))
                    if iface < linkTypes.count, i + 28 + cap <= d.count { out.append((linkTypes[iface], d[(i + 28)..<(i + 28 + cap)])) }
                }
                i += len
            }
        }
        return out
    }

    static func manifestAdvCounts() -> [String: Int] {
        guard let text = try? String(contentsOf: captures.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8) else { return [:] }
        var out: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let cols = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard cols.count > 7, let r = cols[7].range(of: "LL adv PDUs: ") else { continue }
            let digits = cols[7][r.upperBound...].prefix { $0.isNumber || $0 == "," }.filter { $0 != "," }
            if let n = Int(digits) { out[String(cols[0])] = n }
        }
        return out
    }

    struct Tally { var frames = 0, adv = 0, data = 0, badCRC = 0, retrans = 0, encrypted = 0, l2cap = 0, connections = 0 }

    static func run(_ name: String, keys: [LTK] = []) throws -> Tally {
        let url = captures.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { throw XCTSkip("\(name) not available") }
        let tracker = LinkLayerTracker(keys: keys)
        var t = Tally()
        for (n, (lt, bytes)) in records([UInt8](data)).enumerated() {
            let p = Packet(Record(number: n + 1, timestamp: 0, linkType: lt, data: bytes, fileLength: bytes.count))
            let f = tracker.process(p)
            _ = f.summary
            _ = f.fields
            t.frames += 1
            if f.isAdvertising { t.adv += 1 } else if f.dataPDU != nil { t.data += 1 }
            if f.crc == .invalid { t.badCRC += 1 }
            if f.isRetransmission { t.retrans += 1 }
            if f.encryption == .encrypted, (f.dataPDU?.length ?? 0) > 0 { t.encrypted += 1 }
            if f.l2cap != nil { t.l2cap += 1 }
        }
        t.connections = tracker.knownConnections.count
        return t
    }

    func testAdvertisingCountsMatchManifest() throws {
        let expected = Self.manifestAdvCounts()
        guard !expected.isEmpty else { throw XCTSkip("shared captures not available") }
        for (name, want) in expected.sorted(by: { $0.key < $1.key }) {
            let t = try Self.run(name)
            print("\(name): \(t)")
            XCTAssertEqual(t.adv, want, name)
        }
    }

    /// crackle's own test says this Ubertooth capture holds 71 encrypted packets after LE SC pairing.
    func testCrackleEncryptedPackets() throws {
        let t = try Self.run("crackle__le_secure_connections.pcapng")
        XCTAssertEqual(t.connections, 1)
        XCTAssertEqual(t.encrypted, 71)
    }

    /// Figures tshark gives for the same files: `-Y btle.retransmit` (1072 in the mouse capture),
    /// `-Y "nordic_ble.encrypted==1 && nordic_ble.micok==0 && btle.data_header.length>0"` (16 in Lv4_passkey),
    /// ATT + SMP frames in the SweynTooth Cypress capture (473 + 440, plaintext after START_ENC).
    /// tshark dissects retransmissions too; blesniff reassembles 938 fragments there. The fuzzing
    /// central's own PDUs are logged with SN and NESN 0 (SweynTooth writes what it hands its radio,
    /// which sets them on air), so key distribution in frames 308-312 shows SN 0 throughout; a
    /// retransmission repeats the PDU, so other content under the same SN is new (the device
    /// answers each such PDU: SweynTooth's Dialog capture 59 LL_VERSION_IND, answered in 61).
    func testAgreesWithTshark() throws {
        let mouse = try Self.run("tesible__mouse.pcapng")
        XCTAssertLessThan(abs(mouse.retrans - 1072), 20)
        XCTAssertEqual(try Self.run("tesible__Lv4_passkey.pcapng").encrypted, 16)
        let cypress = try Self.run("sweyn__capture_cypress_psoc6_crash_llid.pcapng")
        XCTAssertEqual(cypress.encrypted, 0)
        XCTAssertEqual(cypress.l2cap, 938)
    }
}
