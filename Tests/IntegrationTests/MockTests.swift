import XCTest
import Decoders
import Report

/// `blesniff mock`: the script's self-test (a Bumble central browsing the stand-in in-process)
/// must find what `blesniff gatt` rebuilt from the same capture.
final class MockTests: XCTestCase {
    /// Captures that hold a discovered database: the whole session (long values, writes,
    /// notifications, an indication), full discovery, one service found by UUID, notifications of
    /// a readable characteristic, a read then written value, and the session in another format.
    static let captures = ["gatt_session.btsnoop", "bad_full_discovery.btsnoop", "good_full_discovery.btsnoop",
                           "good_polling_read.btsnoop", "bad_sensitive_unencrypted.btsnoop", "gatt_session.pcapng",
                           "reconnect_by_uuid.btsnoop"]

    func requireBumble() throws {
        guard let p = try? Subprocess.run("python3", ["-c", "import bumble"]) else { throw XCTSkip("python3 is not available") }
        guard p.status == 0 else { throw XCTSkip("python3 cannot import bumble") }
    }

    func json(_ s: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(s.utf8)) as? [String: Any])
    }

    func testSelfTestFindsWhatGattRebuilt() throws {
        try requireBumble()
        for name in Self.captures {
            let path = Fixtures.captures + "/" + name
            let script = NSTemporaryDirectory() + "blesniff-mock-\(UUID().uuidString).py"
            defer { try? FileManager.default.removeItem(atPath: script) }
            let made = try CLI.run(["mock", path, "-o", script])
            XCTAssertEqual(made.status, 0, name + ": " + made.err)
            let ran = try Subprocess.run("python3", [script, "--self-test"], timeout: 120)
            XCTAssertEqual(ran.status, 0, name + ": " + ran.err)
            let found = try json(ran.out)
            let gatt = try json(try CLI.run(["gatt", "--format", "json", path]).out)
            let db = try XCTUnwrap((gatt["databases"] as? [[String: Any]])?.first, name)
            XCTAssertGreaterThan(try compare(db, found, name), 0, name + ": no value compared")
        }
    }

    /// Same services, characteristics (UUIDs, properties, value handles) and descriptors, and
    /// each last value `gatt` shows is among those the self-test read or was notified.
    /// Returns how many values were compared.
    func compare(_ source: [String: Any], _ mock: [String: Any], _ name: String) throws -> Int {
        var compared = 0
        let services = source["primary_service"] as? [[String: Any]] ?? []
        let found = mock["services"] as? [[String: Any]] ?? []
        XCTAssertEqual(services.map { $0["uuid128"] as? String }, found.map { $0["uuid128"] as? String }, name)
        for (s, f) in zip(services, found) {
            XCTAssertEqual(s["start_handle"] as? Int, f["start_handle"] as? Int, name)
            let chars = s["characteristic"] as? [[String: Any]] ?? []
            let fchars = f["characteristics"] as? [[String: Any]] ?? []
            XCTAssertEqual(chars.map { $0["uuid128"] as? String }, fchars.map { $0["uuid128"] as? String }, name)
            for (c, fc) in zip(chars, fchars) {
                let label = name + " " + (c["uuid"] as? String ?? "?")
                let props = (c["properties"] as? [String: Any])?["value"] as? Int
                XCTAssertEqual(props, fc["properties"] as? Int, label)
                XCTAssertEqual(c["value_handle"] as? Int, fc["value_handle"] as? Int, label)
                var descriptors = (c["descriptor"] as? [[String: Any]] ?? []).map { $0["uuid128"] as! String }
                let cccd = "00002902-0000-1000-8000-00805F9B34FB"
                // Bumble adds the CCCD a notifying characteristic needs when discovery did not show it.
                if descriptors.isEmpty, let p = props, p & 0x30 != 0 { descriptors = [cccd] }
                XCTAssertEqual(descriptors, (fc["descriptors"] as? [[String: Any]] ?? []).map { $0["uuid128"] as! String }, label)
                guard var last = c["last_value"] as? [String: Any], let uuid = BluetoothUUID(c["uuid128"] as? String ?? "") else { continue }
                last["frame"] = nil
                let seen = (fc["reads"] as? [String] ?? []) + (fc["notifications"] as? [String] ?? [])
                if seen.isEmpty { continue } // write-only: what was written is not served
                let decoded = try seen.map { try self.decoded(uuid, $0) }
                XCTAssertTrue(decoded.contains { NSDictionary(dictionary: $0).isEqual(to: last) },
                              label + ": last value \(last) not among \(decoded)")
                compared += 1
            }
        }
        return compared
    }

    /// A value as `gatt --format json` writes a last value (without its frame).
    func decoded(_ uuid: BluetoothUUID, _ hex: String) throws -> [String: Any] {
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        let path = NSTemporaryDirectory() + "blesniff-mock-value-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try XCTUnwrap(Output(path: path))
        out.write("{")
        FieldRendering.writeJSONMembers(CharacteristicValues.fields(uuid, bytes[...]), to: out)
        out.write("}")
        out.close()
        return try json(String(contentsOfFile: path, encoding: .utf8))
    }

    func testScriptIsWrittenToStandardOutputAndReadsStandardInput() throws {
        let r = try CLI.run(["mock", "-"], stdin: Fixtures.captures + "/gatt_session.btsnoop")
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("#!/usr/bin/env python3\n"))
        XCTAssertTrue(r.out.contains("rebuilt from a capture read from standard input"), "the header names the source")
        XCTAssertTrue(r.out.contains("ADDRESS = 'D4:AB:CD:00:00:01'  # random static, as captured"))
        XCTAssertTrue(r.out.contains("ServiceSpec(0x000E, '180D', 'Heart Rate', ["))
        XCTAssertTrue(r.out.contains("(1.000, b'\\x00\\x4a'),  # Heart Rate 74 bpm"), "notifications replay at their intervals")
        XCTAssertTrue(r.out.contains("# Never read in the capture: served as an empty value.\n        CharacteristicSpec(0x0005, '2A01', 'Appearance', 'READ'),"))
    }

    func testBadInputIsExitTwoWithOneLineNamingTheFile() throws {
        let scan = Fixtures.captures + "/adv_scan.btsnoop"
        var r = try CLI.run(["mock", scan])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.err, "blesniff: \(scan): no connection to a device in the capture, so no GATT database\n")
        r = try CLI.run(["mock", scan, "--device", "d4:ab:cd:00:00:01"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("d4:ab:cd:00:00:01: advertised but never connected to"), r.err)
        let paired = Fixtures.captures + "/bad_just_works.btsnoop"
        r = try CLI.run(["mock", paired])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.err, "blesniff: \(paired): d4:ab:cd:00:00:01: its GATT database was never discovered (no service discovery in the capture)\n")
        let session = Fixtures.captures + "/gatt_session.btsnoop"
        r = try CLI.run(["mock", session, "--device", "11:22:33:44:55:66"])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.err, "blesniff: \(session): 11:22:33:44:55:66: not in the capture\n  d4:ab:cd:00:00:01 (random): 7 services\n")
        r = try CLI.run(["mock", session, "--device", "nonsense"])
        XCTAssertEqual(r.status, 2)
        r = try CLI.run(["mock", "/nonexistent.btsnoop"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.hasPrefix("blesniff: /nonexistent.btsnoop"), r.err)
    }

    /// A capture that starts mid-connection (the session without its connection set-up) never
    /// names the peer: the stand-in takes a made-up random static address, and its self-test still
    /// finds what `gatt` rebuilt. `--device` also takes the advertised name.
    func testMidConnectionCaptureAndDeviceByName() throws {
        let session = Fixtures.captures + "/gatt_session.btsnoop"
        let mid = NSTemporaryDirectory() + "blesniff-mid-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: mid) }
        XCTAssertEqual(try CLI.run(["convert", "-Y", "frame > 39", session, mid]).status, 0)
        let r = try CLI.run(["mock", mid])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("(it starts mid-connection): a random static address stands in.\nADDRESS = 'C0:FF:EE:00:00:01'"), r.out)
        let byName = try CLI.run(["mock", session, "--device", "HRM-1"])
        XCTAssertEqual(byName.status, 0, byName.err)
        XCTAssertTrue(byName.out.contains("ADDRESS = 'D4:AB:CD:00:00:01'"))
        try requireBumble()
        let script = NSTemporaryDirectory() + "blesniff-mock-\(UUID().uuidString).py"
        defer { try? FileManager.default.removeItem(atPath: script) }
        XCTAssertEqual(try CLI.run(["mock", mid, "-o", script]).status, 0)
        let ran = try Subprocess.run("python3", [script, "--self-test"], timeout: 120)
        XCTAssertEqual(ran.status, 0, ran.err)
        let gatt = try json(try CLI.run(["gatt", "--format", "json", mid]).out)
        let db = try XCTUnwrap((gatt["databases"] as? [[String: Any]])?.first)
        XCTAssertGreaterThan(try compare(db, try json(ran.out), "mid-connection"), 0)
    }

    /// A phone that connects without scanning and reads the Device Name by its UUID, the GAP
    /// service never discovered (as an iOS app reconnecting does; its PacketLogger log has no
    /// advertising either): the stand-in takes the name read, not "mock".
    func testNameReadByUUIDWithoutDiscovery() throws {
        let r = try CLI.run(["mock", Fixtures.captures + "/reconnect_by_uuid.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("\nNAME = 'HRM-1'\n"), r.out)
    }
}
