import XCTest
@testable import Report

/// Committed Bumble sessions seen as a sniffer sees them: each made into the over-the-air capture
/// (scripts/fixtures/make_air_capture.py; link type 256 or the nRF Sniffer's 272, LE 1M or LE Coded), with
/// no key given. The pairings a passive observer can break — LE legacy Just Works (TK 0), legacy
/// Passkey Entry (123456, found by search), LE Secure Connections with the peripheral's debug key —
/// decrypt to the same SMP and ATT traffic as the HCI log, and the auditor, `links`, `devices` and
/// the HTML report read the sniffed link as they read the log. These run on a fresh clone; the real
/// sniffer captures in ../shared add coverage where present.
final class SniffedSessionTests: XCTestCase {
    static let pairings = ["pairing_legacy_just_works", "pairing_legacy_passkey", "pairing_sc_debug_key"]
    static let variants: [[String]] = [[], ["--nordic"], ["--coded"], ["--nordic", "--coded"]]
    static let columns = ["-T", "fields", "-e", "btsmp.opcode", "-e", "btatt.opcode", "-e", "btatt.handle", "-e", "btatt.value"]

    /// The air captures are made once for all the tests here, and removed after them.
    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: Fixtures.airDirectory)
        super.tearDown()
    }

    static func rows(_ path: String) throws -> [Substring] {
        let r = try CLI.run(["read"] + columns + [path])
        XCTAssertEqual(r.status, 0, r.err)
        return r.out.split(separator: "\n").filter { !$0.allSatisfy { $0 == "\t" } }
    }

    static func keys(_ path: String) throws -> [[String: Any]] {
        let r = try CLI.run(["keys", "--format", "json", path])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        return try XCTUnwrap(json["keys"] as? [[String: Any]])
    }

    func testPairingsDecryptWithNoKeyGiven() throws {
        for session in Self.pairings {
            let log = Fixtures.captures + "/" + session + ".btsnoop"
            let hci = try Self.rows(log)
            XCTAssertGreaterThan(hci.count, 20, session)
            // The keys the log shows in the clear (the central's LE Enable Encryption, SMP key
            // distribution) are the keys the air capture gives up.
            let shown = Set(try Self.keys(log).filter { ["STK", "LTK"].contains($0["kind"] as? String) }.compactMap { $0["value"] as? String })
            XCTAssertFalse(shown.isEmpty, session)
            for options in Self.variants {
                let name = session + " " + options.joined(separator: " ")
                let air = try Fixtures.airCapture(session, options)
                XCTAssertEqual(try Self.rows(air), hci, "\(name): the sniffed link decodes differently")
                let quiet = try CLI.run(["read", "--quiet", air]).out
                XCTAssert(quiet.hasSuffix(", 0 malformed\n"), "\(name): \(quiet)")
                let keys = try Self.keys(air)
                let found = Set(keys.compactMap { $0["value"] as? String })
                XCTAssert(shown.isSubset(of: found), "\(name): \(found) lacks some of \(shown)")
                if session.contains("legacy") {
                    let tk = keys.first { $0["kind"] as? String == "TK" }
                    XCTAssertEqual(tk?["passkey"] as? String, session.hasSuffix("passkey") ? "123456" : nil, name)
                    XCTAssertEqual(tk?["value"] as? String, session.hasSuffix("passkey") ? "0000000000000000000000000001E240" : "00000000000000000000000000000000", name)
                } else {
                    XCTAssert((keys.first?["source"] as? String ?? "").contains("peripheral's debug private key"), name)
                }
            }
        }
    }

    /// The auditor judges the sniffed link as it judges the log: the same pairing findings, and no
    /// "sensitive data on a link that was never encrypted" for data sent after encryption began
    /// (the air has no Encryption Change event; the first encrypted PDU says it).
    func testSniffedPairingsAreAuditedLikeTheLog() throws {
        func rules(_ path: String) throws -> [String] {
            let r = try CLI.run(["audit", "--fail-on", "never", path])
            XCTAssertEqual(r.status, 0, r.err)
            return r.out.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("BLE") && $0.count == 6 }.map(String.init)
            }.sorted()
        }
        let expected = ["pairing_legacy_just_works": ["BLE602", "BLE603"], "pairing_legacy_passkey": ["BLE603"],
                        "pairing_sc_debug_key": ["BLE602", "BLE603"]]
        for session in Self.pairings {
            XCTAssertEqual(try rules(Fixtures.captures + "/" + session + ".btsnoop"), expected[session], session)
            for options in Self.variants {
                XCTAssertEqual(try rules(try Fixtures.airCapture(session, options)), expected[session], "\(session) \(options)")
            }
        }
    }

    /// `links` reads a sniffed link's parameters off the air: the PHY each packet came on (LE
    /// Coded from LL_PHY_UPDATE_IND's instant), the ATT MTU, encryption from its first encrypted
    /// PDU, and every packet of every event.
    func testLinksReadTheSniffedLink() throws {
        for options in [["--coded"], ["--nordic", "--coded"]] {
            let air = try Fixtures.airCapture("pairing_legacy_passkey", options)
            let r = try CLI.run(["links", "--format", "json", air])
            XCTAssertEqual(r.status, 0, r.err)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
            let c = try XCTUnwrap((json["connections"] as? [[String: Any]])?.first)
            XCTAssertEqual(c["phy"] as? String, "LE Coded")
            // Frames 3–7: LL_PHY_REQ, its empty answer, LL_PHY_RSP, LL_PHY_UPDATE_IND with the
            // instant six events on; the first packet on LE Coded is that event's.
            let phyChange = try XCTUnwrap((c["phy_changes"] as? [[String: Any]])?.first)
            XCTAssertEqual(phyChange["phy"] as? String, "LE Coded")
            let frame = try XCTUnwrap(phyChange["frame"] as? Int)
            let at = try CLI.run(["read", "-T", "fields", "-e", "btle.control_opcode", "-Y", "frame.number < \(frame)", air]).out
            XCTAssertEqual(at.split(separator: "\n").filter { !$0.isEmpty }, ["0x16", "0x17", "0x18"])
            let air0 = try XCTUnwrap(c["air"] as? [String: Any])
            XCTAssertEqual(air0["retransmissions"] as? Int, 0)
            XCTAssertEqual(air0["bad_crc"] as? Int, 0)
            // Every data PDU of the capture (all but the ADV_IND and the CONNECT_IND), two an event.
            let frames = try CLI.run(["read", "--quiet", air]).out
            let total = try XCTUnwrap(Int(frames.split(separator: " ").first ?? ""))
            XCTAssertEqual(air0["packets"] as? Int, total - 2)
            XCTAssertEqual(air0["events"] as? Int, (total - 2) / 2)
            // Encrypted from the first encrypted PDU: the central's LL_START_ENC_RSP.
            let encrypted = try XCTUnwrap(c["encrypted_frame"] as? Int)
            let startEnc = try CLI.run(["read", "-T", "fields", "-e", "frame.number", "-Y", "btle.control_opcode == 0x06", air]).out
            XCTAssertEqual(startEnc.split(separator: "\n").first.flatMap { Int($0) }, encrypted)
            let steps = (c["setup"] as? [[String: Any]] ?? []).compactMap { $0["step"] as? String }
            XCTAssertEqual(Array(steps.prefix(2)), ["connected", "encrypted"])
            XCTAssertEqual((c["att_mtu_changes"] as? [[String: Any]])?.isEmpty, true)
        }
    }

    /// `devices` lists the advertiser from its ADV_IND; the HTML page of a sniffed capture shows
    /// what was sniffed, and no adapter or host role (there is no host).
    func testDevicesAndReportOfASniffedCapture() throws {
        let air = try Fixtures.airCapture("pairing_sc_debug_key", ["--nordic"])
        let devices = try CLI.run(["devices", "--format", "json", air])
        XCTAssertEqual(devices.status, 0, devices.err)
        XCTAssert(devices.out.contains("\"HRM-1\""), devices.out)
        XCTAssert(devices.out.contains("d4:ab:cd:00:00:01"), devices.out)
        let (page, c) = try HTMLReportTests.report(path: air)
        XCTAssertGreaterThan(c.airFrames, 0)
        XCTAssertTrue(page.contains(">Sniffed<"), "no Sniffed card")
        XCTAssertFalse(page.contains(">Adapters<"))
        XCTAssertFalse(page.contains("host&#39;s role") || page.contains("host's role"))
        XCTAssertEqual(c.findings.map(\.rule).sorted(), ["BLE602", "BLE603"])
    }
}
