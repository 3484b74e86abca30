import XCTest
import Capture
import Decoders
import Report

/// Every audit rule against captures recorded from a real stack: the `bad_*` capture shows the
/// anti-pattern and yields exactly the expected findings (rule and decisive frame, as listed in
/// Tests/Captures/README.md); its `good_*` twin does the same job the right way and yields none.
final class AuditCaptureTests: XCTestCase {
    static func audit(_ name: String, configuration: AuditConfiguration? = nil) throws -> [Finding] {
        // The advertising scenarios scan for a peripheral without connecting: it is the device
        // under test only when named (here: every advertiser).
        var config = AuditConfiguration()
        config.allAdvertisers = name.contains("adv_incomplete")
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        let auditor = Auditor(configuration: configuration ?? config, capturePath: name)
        var last: FrameRef?
        try Fixtures.decode(Fixtures.captures + "/" + name, dissector: dissector) { d in
            feed.events(d, into: auditor)
            last = FrameRef(number: d.packet.number, time: d.packet.timestamp)
        }
        feed.finish(into: auditor, at: last)
        return auditor.finish(at: last)
    }

    /// (rule, decisive frame, all evidence frames) per bad capture.
    static let expected: [String: [(String, Int, [Int])]] = [
        "bad_adv_data": [("BLE501", 31, [31]), ("BLE501", 33, [33])],
        // Frame 33's incomplete 16-bit list left room for more UUIDs (no overflow); its overflow area
        // and the scan response's full 128-bit list are.
        "bad_adv_incomplete": [("BLE502", 33, [33]), ("BLE502", 34, [34]), ("BLE503", 34, [34])],
        "bad_att_pipelining": [("BLE403", 53, [52, 53])],
        "bad_full_discovery": [("BLE201", 40, [40, 52]), ("BLE202", 55, [55, 97])],
        "bad_idle_connection": [("BLE401", 55, [54, 55])],
        "bad_just_works": [("BLE602", 42, [42])],
        "bad_polling_read": [("BLE301", 64, [52, 64, 73])],
        "bad_redundant_read": [("BLE302", 61, [52, 61])],
        // The last report counted is 61: frame 62 is a scan response, not a duplicate.
        "bad_scan_duplicates": [("BLE101", 31, [31, 61])],
        "bad_scan_not_stopped": [("BLE102", 44, [31, 37, 44])],
        "bad_sensitive_unencrypted": [("BLE601", 52, [52, 55])],
    ]

    func testAntiPatternsYieldExactlyTheirFindings() throws {
        for (name, want) in Self.expected.sorted(by: { $0.key < $1.key }) {
            for ext in ["btsnoop", "pcap"] {
                let got = try Self.audit(name + "." + ext)
                XCTAssertEqual(got.map(\.rule), want.map(\.0), "\(name).\(ext)")
                for (f, w) in zip(got, want) {
                    XCTAssertEqual(f.decisive.number, w.1, "\(name).\(ext) \(f.rule) decisive frame")
                    XCTAssertEqual(f.evidence.map(\.number), w.2, "\(name).\(ext) \(f.rule) evidence")
                    XCTAssertGreaterThan(f.decisive.fileOffset, 0, "findings point into the file")
                }
            }
        }
    }

    func testBystanderAdvertiserIsNotAFindingByDefault() throws {
        XCTAssertTrue(try Self.audit("bad_adv_incomplete.btsnoop", configuration: AuditConfiguration()).isEmpty)
    }

    func testCorrectTwinsYieldNothing() throws {
        for name in Self.expected.keys.sorted() {
            let good = name.replacingOccurrences(of: "bad_", with: "good_")
            let got = try Self.audit(good + ".btsnoop")
            XCTAssertTrue(got.isEmpty, "\(good): \(got.map { $0.rule + " " + $0.message })")
        }
    }

    func testSameFindingsFromEveryFormatOfOneSession() throws {
        let base = try Self.audit("gatt_session.btsnoop").map { $0.rule + $0.message }
        for f in ["gatt_session.pcap", "gatt_session.pcapng", "gatt_session.h1.btsnoop"] {
            XCTAssertEqual(try Self.audit(f).map { $0.rule + $0.message }, base, f)
        }
    }
}

extension AuditCaptureTests {
    /// Sniffer captures go through the same rules: the nRF Sniffer capture of a BLE mouse shows the
    /// mouse's Just Works legacy pairing; its host's full discovery is what HID over GATT requires of
    /// every host (no finding), and its missed responses are not taken for pipelining.
    func testSnifferCaptureIsAudited() throws {
        _ = try Fixtures.sharedOrSkip()
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        let auditor = Auditor(capturePath: "mouse")
        var last: FrameRef?
        try Fixtures.decode(Fixtures.shared + "/tesible__mouse.pcapng", dissector: dissector) { d in
            feed.events(d, into: auditor)
            last = FrameRef(number: d.packet.number, time: d.packet.timestamp)
        }
        feed.finish(into: auditor, at: last)
        let rules = Set(auditor.finish(at: last).map(\.rule))
        XCTAssertTrue(rules.contains("BLE602"), "\(rules)")
        XCTAssertFalse(rules.contains("BLE201"), "\(rules)")
        XCTAssertFalse(rules.contains("BLE403"), "\(rules)")
    }
}

extension AuditCaptureTests {
    /// Advertising PDUs of sniffer captures are advertising reports: `devices` lists their
    /// advertisers (each advertising event once, not once per primary channel), and the advertiser
    /// rules judge the device the central connected to.
    func testSnifferAdvertisingFeedsDevicesAndRules() throws {
        _ = try Fixtures.sharedOrSkip()
        let path = Fixtures.shared + "/sweyn__noncompliance_nxp_invalid_hop_interval_sniffer.pcapng"
        let devices = try CLI.run(["devices", "--format", "json", path])
        XCTAssertEqual(devices.status, 0, devices.err)
        XCTAssertTrue(devices.out.contains("\"NXP-KW\""), devices.out)
        let dissector = Dissector(trackAdvertisers: true)
        let feed = AuditFeed(dissector: dissector)
        let auditor = Auditor(capturePath: "nxp")
        var adv = 0
        var last: FrameRef?
        try Fixtures.decode(path, dissector: dissector) { d in
            if d.linkLayer?.advertisingPDU?.report(rssi: nil) != nil { adv += 1 }
            feed.events(d, into: auditor)
            last = FrameRef(number: d.packet.number, time: d.packet.timestamp)
        }
        feed.finish(into: auditor, at: last)
        let nxp = try XCTUnwrap(dissector.advertisers?.devices.first { $0.name == "NXP-KW" })
        XCTAssertGreaterThan(nxp.advertisingReports, 0)
        XCTAssertLessThan(nxp.advertisingReports, adv, "copies of one event on other channels are not counted again")
        XCTAssertEqual(auditor.finish(at: last).map(\.rule), ["BLE503"])
    }
}
