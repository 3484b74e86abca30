import XCTest

/// Captures whose devices try to write to the terminal or to grow our tables: every text output
/// shows their bytes escaped, JSON keeps them exact, and the device list stays bounded.
final class HostileInputTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "blesniff-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    // MARK: Building captures

    /// A btsnoop H4 capture of the given packets (all received, 1 ms apart).
    func capture(_ name: String, _ packets: [(bytes: [UInt8], sent: Bool)]) throws -> String {
        var file = Array("btsnoop\0".utf8) + be32(1) + be32(1002)
        var t: UInt64 = 0x00DC_DDB3_0F2F_8000 + 1_700_000_000_000_000
        for p in packets {
            t += 1000
            file += be32(UInt32(p.bytes.count)) + be32(UInt32(p.bytes.count)) + be32(p.sent ? 0 : 1) + be32(0)
            file += (0..<8).map { UInt8(truncatingIfNeeded: t >> (56 - 8 * UInt64($0))) }
            file += p.bytes
        }
        let path = dir + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(file))
        return path
    }

    func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }

    /// LE Advertising Report (ADV_IND, random address c0:00:00:00:00:`n`) with a Complete Local Name.
    func advertising(_ n: UInt8, name: [UInt8], rssi: Int8 = -60) -> (bytes: [UInt8], sent: Bool) {
        let data: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        let body: [UInt8] = [0x02, 1, 0x00, 0x01, n, 0, 0, 0, 0, 0xC0, UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return ([0x04, 0x3E, UInt8(body.count)] + body, false)
    }

    /// LE Connection Complete, handle 0x0040, to c0:00:00:00:00:`n`.
    func connected(_ n: UInt8) -> (bytes: [UInt8], sent: Bool) {
        ([0x04, 0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, n, 0, 0, 0, 0, 0xC0, 24, 0, 0, 0, 0x90, 0x01, 0], false)
    }

    /// ATT on handle 0x0040.
    func att(_ pdu: [UInt8], sent: Bool) -> (bytes: [UInt8], sent: Bool) {
        let l2: [UInt8] = [UInt8(pdu.count), 0, 0x04, 0] + pdu
        return ([0x02, 0x40, 0x20, UInt8(l2.count), 0] + l2, sent)
    }

    static let names: [[UInt8]] = [
        Array("\u{1B}[2Jcleared".utf8),
        Array("\u{1B}]8;;http://x\u{07}link\u{1B}]8;;\u{07}".utf8),
        Array("abc\u{202E}dcba".utf8),
        [0xFF, 0xFE, 0xC3, 0x28, 0x6F, 0x6B],
    ]

    func namesCapture() throws -> String {
        try capture("names.btsnoop", Self.names.enumerated().map { advertising(UInt8($0.offset + 1), name: $0.element) })
    }

    func lines(_ text: String, containing s: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.contains(s) }
    }

    // MARK: Text outputs

    func testReadEscapesNames() throws {
        let r = try CLI.run(["read", try namesCapture()])
        XCTAssertEqual(r.status, 0)
        let head = "HCI Event LE Meta (0x3E) LE Advertising Report ADV_IND "
        XCTAssertEqual(lines(r.out, containing: "Name"), [
            "     1     0.000000 > hci0 " + head + "c0:00:00:00:00:01 (random static) -60 dBm Name \"\\x1b[2Jcleared\"",
            "     2     0.001000 > hci0 " + head + "c0:00:00:00:00:02 (random static) -60 dBm Name \"\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07\"",
            "     3     0.002000 > hci0 " + head + "c0:00:00:00:00:03 (random static) -60 dBm Name \"abc\\u{202E}dcba\"",
            "     4     0.003000 > hci0 " + head + "c0:00:00:00:00:04 (random static) -60 dBm Name \"\\xff\\xfe\\xc3(ok\"",
        ])
        XCTAssertFalse(r.out.contains("\u{1B}") || r.out.contains("\u{202E}") || r.out.contains("\u{07}"))
    }

    func testReadVerboseEscapesFields() throws {
        let r = try CLI.run(["read", "-v", try namesCapture()])
        XCTAssertEqual(lines(r.out, containing: "Device Name:").map { $0.trimmingCharacters(in: .whitespaces) }, [
            "Device Name: \\x1b[2Jcleared",
            "Device Name: \\x1b]8;;http://x\\x07link\\x1b]8;;\\x07",
            "Device Name: abc\\u{202E}dcba",
            "Device Name: \\xff\\xfe\\xc3(ok",
        ])
        XCTAssertFalse(r.out.contains("\u{1B}") || r.out.contains("\u{202E}"))
    }

    func testDevicesEscapesNames() throws {
        let r = try CLI.run(["devices", try namesCapture()])
        XCTAssertEqual(lines(r.out, containing: "(random static) \""), [
            "c0:00:00:00:00:01 (random static) \"\\x1b[2Jcleared\"",
            "c0:00:00:00:00:02 (random static) \"\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07\"",
            "c0:00:00:00:00:03 (random static) \"abc\\u{202E}dcba\"",
            "c0:00:00:00:00:04 (random static) \"\\xff\\xfe\\xc3(ok\"",
        ])
        XCTAssertEqual(lines(r.out, containing: "Complete Local Name:").first?.trimmingCharacters(in: .whitespaces),
                       "Complete Local Name: \\x1b[2Jcleared")
    }

    func testJSONKeepsTheExactText() throws {
        let r = try CLI.run(["read", "--format", "json", try namesCapture()])
        XCTAssertTrue(r.out.contains("\"device_name\":\"\\u001B[2Jcleared\""), r.out)
        XCTAssertTrue(r.out.contains("\"device_name\":\"abc\u{202E}dcba\""))
        XCTAssertTrue(r.out.contains("\"device_name\":\"\u{FFFD}\u{FFFD}\u{FFFD}(ok\""))
        XCTAssertTrue(r.out.contains("Name \\\"\\u001B]8;;http://x\\u0007link\\u001B]8;;\\u0007\\\""))
        let d = try CLI.run(["devices", "--format", "json", try namesCapture()])
        XCTAssertTrue(d.out.contains("\"complete_local_name\":\"\\u001B[2Jcleared\""), d.out)
    }

    func testGattEscapesStringValues() throws {
        let value = Array("\u{1B}[31mred\u{07}\u{202E}".utf8) + [0xC3]
        let path = try capture("gatt.btsnoop", [
            connected(1),
            att([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x2A], sent: true),
            att([0x09, UInt8(value.count + 2), 0x03, 0x00] + value, sent: false),
        ])
        let g = try CLI.run(["gatt", path])
        XCTAssertEqual(lines(g.out, containing: "Handle 0x0003"),
                       ["  Handle 0x0003 Device Name (0x2A00) last value (frame 3): Device Name \"\\x1b[31mred\\x07\\u{202E}\u{FFFD}\""])
        let r = try CLI.run(["read", "-v", path])
        XCTAssertEqual(lines(r.out, containing: "Device Name:").last?.trimmingCharacters(in: .whitespaces),
                       "Device Name: \\x1b[31mred\\x07\\u{202E}\\xc3")
    }

    func testErrorMessagesEscapeTheFileName() throws {
        let r = try CLI.run(["read", dir + "/no\u{1B}[2Jfile.btsnoop"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("no\\x1b[2Jfile.btsnoop"), r.err)
        XCTAssertFalse(r.err.contains("\u{1B}"))
    }

    // MARK: Bounded device list

    /// Five advertisers, a cap of two: the first two in detail, the host's connection to the fourth
    /// keeps it in detail too, the other two are counted.
    func testDevicesPastTheCapAreCounted() throws {
        var packets = (1...5).map { advertising(UInt8($0), name: Array("d\($0)".utf8), rssi: Int8(-40 - $0)) }
        packets.append(advertising(5, name: Array("d5".utf8), rssi: -90))
        packets.insert(connected(4), at: 4)
        let path = try capture("cap.btsnoop", packets)
        let r = try CLI.run(["devices", "--max-advertisers", "2", path])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(lines(r.out, containing: "\""), [
            "c0:00:00:00:00:01 (random static) \"d1\"",
            "c0:00:00:00:00:02 (random static) \"d2\"",
            "c0:00:00:00:00:04 (random static) \"d4\"",
        ])
        XCTAssertTrue(r.out.hasPrefix(path + ": 3 advertisers in detail, 2 more only counted (past --max-advertisers 2)\n"), r.out)
        XCTAssertTrue(r.out.hasSuffix("\nOnly counted (past the first 2 advertisers):\n"
                                      + "  Random Device Address: 2 advertisers, 3 reports, RSSI -90 to -43 dBm\n"), r.out)
        let j = try CLI.run(["devices", "--format", "json", "--max-advertisers", "2", path])
        XCTAssertTrue(j.out.hasSuffix(",\"untracked\":{\"advertisers\":2,\"reports\":3,\"by_address_type\":[{\"address_type\":1,"
                                      + "\"name\":\"Random Device Address\",\"advertisers\":2,\"at_least\":false,\"reports\":3,"
                                      + "\"rssi_min\":-90,\"rssi_max\":-43}]}}\n"), j.out)
    }
}
