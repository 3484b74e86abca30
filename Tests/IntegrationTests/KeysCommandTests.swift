import XCTest

/// `blesniff keys` over the legacy pairing sniffer captures in ../shared/captures (skipped when
/// absent) and the committed HCI captures.
final class KeysCommandTests: XCTestCase {
    static func shared(_ name: String) throws -> String {
        let path = Fixtures.shared + "/" + name
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("\(name) not present") }
        return path
    }

    func json(_ args: [String]) throws -> [String: Any] {
        let r = try CLI.run(["keys", "--format", "json"] + args)
        XCTAssertEqual(r.status, 0, r.err)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    }

    func testPasskeyEntryPairing() throws {
        let path = try Self.shared("homewsn_bsniffhub__lp-passkeyentry-123456-initiator-inputs-responder-displays.pcap")
        let r = try CLI.run(["keys", path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("  TK   0000000000000000000000000001E240  passkey 123456\n"), r.out)
        XCTAssertTrue(r.out.contains("  STK  0D2044A672A3F23EE63B765232F6F2E5\n"), r.out)
        let keys = try XCTUnwrap(try json([path])["keys"] as? [[String: Any]])
        XCTAssertEqual(keys.map { $0["kind"] as? String }, ["TK", "STK", "LTK", "IRK", "CSRK", "LTK", "IRK", "CSRK"])
        XCTAssertEqual(keys[0]["passkey"] as? String, "123456")
        XCTAssertGreaterThan(keys[1]["decrypted_frames"] as? Int ?? 0, 0)
    }

    func testBondedLTKAndWhatItUnlocks() throws {
        let path = try Self.shared("homewsn_bsniffhub__bonding-ltk-0F241772AC270CAFEE654186F0A65D5F.pcap")
        let keys = try XCTUnwrap(try json([path])["keys"] as? [[String: Any]])
        let ltk = try XCTUnwrap(keys.first { $0["value"] as? String == "0F241772AC270CAFEE654186F0A65D5F" })
        XCTAssertEqual(ltk["kind"] as? String, "LTK")
        XCTAssertEqual(ltk["ediv"] as? Int, 0x2E7A)
        XCTAssertEqual(ltk["rand"] as? String, "0x238D24C7250DE29C")
        XCTAssertEqual(ltk["decrypted_frames"] as? Int, 90)
        XCTAssertEqual(ltk["link_layer_connections"] as? [Int], [2, 3])
        let irk = try XCTUnwrap(keys.first { $0["kind"] as? String == "IRK" })
        XCTAssertEqual((irk["identity_address"] as? [String: Any])?["value"] as? String, "04:ee:03:4a:8b:38")
    }

    func testOOBPairingSaysTheTKIsMissing() throws {
        let path = try Self.shared("homewsn_bsniffhub__lp-oob-tk-5E882417A987222423A1A9EC719AED27.pcap")
        let blind = try json([path])
        XCTAssertEqual((blind["keys"] as? [Any])?.count, 0)
        XCTAssertEqual((blind["notes"] as? [[String: Any]])?.first?["note"] as? String,
                       "LE legacy OOB pairing: TK missing (give it with --tk to decrypt the link)")
        let given = try json(["--tk", "5E882417A987222423A1A9EC719AED27", path])
        let kinds = (given["keys"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        XCTAssertEqual(kinds, ["TK", "STK", "LTK", "IRK", "CSRK", "LTK", "IRK", "CSRK"])
    }

    /// crackle's legacy pairing sample, an old Ubertooth capture (PPI around DLT_USER0): the Just
    /// Works TK found from the confirm values, the STK from it, and the LTK the peripheral then
    /// distributes under the STK (the key crackle's own test expects).
    func testLegacyPairingInAPPICapture() throws {
        let path = try Self.shared("crackle__pairing_and_ltk_exchange.pcap")
        let keys = try XCTUnwrap(try json([path])["keys"] as? [[String: Any]])
        XCTAssertEqual(keys.map { $0["kind"] as? String }, ["TK", "STK", "LTK"])
        XCTAssertEqual(keys.map { $0["value"] as? String },
                       ["00000000000000000000000000000000", "59D4B35ECE0DF548C10EFE17E9DA1F4C", "7F62C053F104A5BBE68B1D896A2ED49C"])
    }

    /// bsniffhub's LE Secure Connections examples: the peripheral used the debug key pair, so its
    /// published private key gives the DHKey and f5 the LTK; the link decrypts (every MIC checks)
    /// and the keys distributed under it appear. The example whose LTK is in its name used no
    /// debug key: the LTK cannot be worked out passively, and the frame says so.
    func testSecureConnectionsWithTheDebugKey() throws {
        let expected = [
            "homewsn_bsniffhub__sc-justworks.pcap": "7DF27955F679736A7A286B0566F88AD8",
            "homewsn_bsniffhub__sc-passkeyentry-123456-initiator-inputs-responder-displays.pcap": "9BB3D163CDCDCD52D9BEC44B4682EBE3",
        ]
        for (name, ltk) in expected {
            let path = try Self.shared(name)
            let keys = try XCTUnwrap(try json([path])["keys"] as? [[String: Any]])
            XCTAssertEqual(keys.first?["kind"] as? String, "LTK", name)
            XCTAssertEqual(keys.first?["value"] as? String, ltk, name)
            XCTAssertEqual(keys.first?["secure_connections"] as? Bool, true, name)
            XCTAssert((keys.first?["source"] as? String ?? "").contains("peripheral's debug private key"), name)
            // The CSRK the peripheral distributes inside the encrypted link.
            XCTAssert(keys.contains { $0["kind"] as? String == "CSRK" && $0["value"] as? String == "CC3123A8188CCF6CE4E4164E1E5D4593" }, name)
        }
        let other = try Self.shared("homewsn_bsniffhub__sc-justworks-fragments-assembly-ltk-BD27012E93C195F13B8F176FE84A2DED.pcap")
        let r = try CLI.run(["keys", other])
        XCTAssert(r.out.contains("neither side used the debug key"), r.out)
        let given = try CLI.run(["read", "--quiet", "--ltk", "BD27012E93C195F13B8F176FE84A2DED", "-Y", "att", other])
        XCTAssertEqual(given.status, 0, given.err)
    }

    /// `--keys-from`: the LTK an HCI log of one side shows (here the central's LE Enable Encryption
    /// command) decrypts a sniffer capture of the same link, and each frame names where it came from.
    func testKeysFromAnotherCapture() throws {
        let air = try Self.shared("homewsn_bsniffhub__ltk-063F1154BC631D186D48A05B7F5DCD8F.pcap")
        // btsnoop, H4: one HCI LE Enable Encryption command (handle 0x0040, Rand 0, EDIV 0, the LTK).
        var log: [UInt8] = Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x03, 0xEA]
        let ltk: [UInt8] = [0x06, 0x3F, 0x11, 0x54, 0xBC, 0x63, 0x1D, 0x18, 0x6D, 0x48, 0xA0, 0x5B, 0x7F, 0x5D, 0xCD, 0x8F]
        let packet: [UInt8] = [0x01, 0x19, 0x20, 28, 0x40, 0x00] + [UInt8](repeating: 0, count: 10) + ltk.reversed()
        let length = [UInt8(0), 0, 0, UInt8(packet.count)]
        log += length + length + [0, 0, 0, 2] + [0, 0, 0, 0] + [0x00, 0xE0, 0x3A, 0xB4, 0x4A, 0x67, 0x60, 0x00] + packet
        let path = NSTemporaryDirectory() + "blesniff-keys-from-\(getpid()).btsnoop"
        try Data(log).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(try CLI.run(["read", "--quiet", "-Y", "att", air]).out, "0 matching frames, 0 malformed\n")
        // Without the key, and with a wrong one, the link's first encrypted PDU says why it stays so.
        XCTAssert(try CLI.run(["keys", air]).out.contains("frame 151: link encrypted (EDIV 0x0000, Rand 0x0000000000000000): no key known"))
        XCTAssert(try CLI.run(["keys", "--ltk", "00000000000000000000000000000001", air]).out
            .contains("frame 151: link encrypted (EDIV 0x0000, Rand 0x0000000000000000): the MIC check failed with the one key known"))
        XCTAssertEqual(try CLI.run(["read", "--quiet", "-Y", "att", "--keys-from", path, air]).out, "82 matching frames, 0 malformed\n")
        let v = try CLI.run(["read", "-V", "-c", "200", "--keys-from", path, air]).out
        XCTAssert(v.contains("Key: LTK 063F1154BC631D186D48A05B7F5DCD8F from blesniff-keys-from-"), v)
        let missing = try CLI.run(["read", "--keys-from", "/nonexistent.btsnoop", air])
        XCTAssertEqual(missing.status, 2, missing.err)
        XCTAssert(missing.err.contains("--keys-from /nonexistent.btsnoop: cannot read it"), missing.err)
    }

    /// WHAD's capture of an encrypted link, decrypted here with the LTK its project publishes,
    /// reads frame by frame as the twin WHAD decrypted itself (MIC removed, header bit clear).
    func testDecryptionEqualsTheOtherToolsDecryptedTwin() throws {
        let encrypted = try Self.shared("whad-team_whad-client__comm.pcap")
        let decrypted = try Self.shared("whad-team_whad-client__comm_dec.pcap")
        let columns = ["read", "-T", "fields", "-e", "frame.number", "-e", "btl2cap.cid", "-e", "btatt.opcode", "-e", "btatt.handle",
                       "-e", "btatt.value", "-e", "btle.control_opcode", "-e", "btsmp.opcode"]
        let ours = try CLI.run(columns + ["--ltk", "0e0596ef16cf17cc48357ee19da96728", encrypted])
        let theirs = try CLI.run(columns + [decrypted])
        XCTAssertEqual(ours.status, 0, ours.err)
        XCTAssertEqual(ours.out, theirs.out)
        XCTAssertEqual(ours.out.split(separator: "\n").filter { $0.split(separator: "\t").count > 1 }.count, 15)
    }

    /// An HCI log: the LTK the host hands its controller after LE Secure Connections pairing (EDIV
    /// and Rand 0), and the IRKs both sides distribute in the clear ACL data.
    func testKeysInAnHCILog() throws {
        let o = try json([Fixtures.captures + "/good_just_works.btsnoop"])
        let keys = try XCTUnwrap(o["keys"] as? [[String: Any]])
        XCTAssertEqual(keys.map { $0["kind"] as? String }, ["LTK", "IRK", "IRK"])
        XCTAssertEqual(keys[0]["value"] as? String, "6BF201D383B5242872E77BA8C4D4FB51")
        XCTAssertEqual(keys[0]["source"] as? String, "HCI LE Enable Encryption command")
        XCTAssertEqual(keys[0]["secure_connections"] as? Bool, true)
        XCTAssertEqual(keys[0]["frames"] as? [Int], [173])
        XCTAssertEqual(keys[1]["source"] as? String, "SMP Identity Information from the peripheral (HCI ACL data)")
        XCTAssertEqual((keys[2]["identity_address"] as? [String: Any])?["value"] as? String, "00:1b:dc:00:00:01")
    }

    /// A keys file stands for --ltk and --tk, and the decrypted frames name it.
    func testKeysFile() throws {
        let ltkCapture = try Self.shared("homewsn_bsniffhub__ltk-063F1154BC631D186D48A05B7F5DCD8F.pcap")
        let oob = try Self.shared("homewsn_bsniffhub__lp-oob-tk-5E882417A987222423A1A9EC719AED27.pcap")
        let file = NSTemporaryDirectory() + "blesniff-keys-\(getpid()).yml"
        try "devices:\n  - name: sensor\n    ltk: 063F1154BC631D186D48A05B7F5DCD8F\n  - tk: 5E882417A987222423A1A9EC719AED27\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try CLI.run(["read", "-v", "--keys", file, ltkCapture])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out.components(separatedBy: "Key: LTK 063F1154BC631D186D48A05B7F5DCD8F from keys file \(file) (sensor)\n").count - 1, 85)
        let k = try json(["--keys", file, oob])
        XCTAssertEqual((k["keys"] as? [[String: Any]])?.first?["kind"] as? String, "TK")
        let bad = try CLI.run(["keys", "--keys", "/nonexistent.yml", oob])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.err.contains("--keys /nonexistent.yml: cannot read the keys file"), bad.err)
    }

    func testCaptureWithoutKeys() throws {
        let r = try CLI.run(["keys", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, Fixtures.captures + "/gatt_session.btsnoop\n  no keys\n")
    }
}
