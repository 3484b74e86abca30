import XCTest

/// The command line: exit codes, options shared by the decoding commands, output formats.
final class CLITests: XCTestCase {
    func lines(_ s: String) -> [Substring] { s.split(separator: "\n") }

    /// Hundreds of runs per suite must not pile up descriptors in the test process.
    func testRunsLeaveNoDescriptorsOpen() throws {
        func open() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        _ = try CLI.run(["--version"])
        let before = open()
        for _ in 0..<20 { _ = try CLI.run(["read", "--quiet", Fixtures.captures + "/gatt_session.btsnoop"]) }
        XCTAssertEqual(open(), before)
    }

    func testReadPrintsOneLinePerFrameAndExitsZero() throws {
        let r = try CLI.run(["read", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(lines(r.out).count, 184)
        XCTAssertTrue(r.out.contains("HCI Command LE Set Scan Enable (0x200C)"))
        XCTAssertTrue(r.out.contains("ATT Read By Group Type Request, Handles: 0x0001..0xffff, UUID: Primary Service (0x2800)"))
    }

    func testJSONLinesAreObjectsWithTheDocumentedKeys() throws {
        let r = try CLI.run(["read", "--format", "json", "--count", "50", Fixtures.captures + "/gatt_session.pcap"])
        XCTAssertEqual(r.status, 0, r.err)
        let objects = try lines(r.out).map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(objects.count, 50)
        for key in ["frame", "timestamp_ns", "relative_time", "direction", "adapter", "kind", "file_offset", "length", "summary", "layers"] {
            XCTAssertNotNil(objects[0][key], key)
        }
        let att = objects.first { ($0["layers"] as? [String: Any])?["att"] != nil }
        XCTAssertNotNil(att, "an ATT layer in the first 50 frames")
    }

    func testMergeReadsSeveralCapturesAsOne() throws {
        let a = Fixtures.captures + "/adv_scan.btsnoop", b = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try CLI.run(["read", "--merge", "--quiet", a, b])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "\(36 + 184) frames, 0 malformed\n")
    }

    func testUnreadableInputIsExitTwo() throws {
        var r = try CLI.run(["read", "/nonexistent.btsnoop"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("/nonexistent.btsnoop"), r.err)
        r = try CLI.run(["read", Fixtures.root + "/README.md"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("not a capture"), r.err)
        r = try CLI.run(["read", "--ltk", "1234", Fixtures.captures + "/gatt_session.pcap"])
        XCTAssertEqual(r.status, 2, "a bad key is a usage error")
        r = try CLI.run(["read", "--bogus"])
        XCTAssertEqual(r.status, 2, "usage errors are exit 2")
    }

    func testTruncatedCaptureIsAWarningUnlessStrict() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.captures + "/gatt_session.btsnoop"))
        let cut = NSTemporaryDirectory() + "blesniff-cut-\(UUID().uuidString).btsnoop"
        try data.prefix(data.count - 5).write(to: URL(fileURLWithPath: cut))
        defer { try? FileManager.default.removeItem(atPath: cut) }
        var r = try CLI.run(["read", "--quiet", cut])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.out, "183 frames, 0 malformed\n")
        XCTAssertTrue(r.err.contains("warning"), r.err)
        XCTAssertTrue(r.err.contains("frame 184"), r.err)
        r = try CLI.run(["read", "--quiet", "--strict", cut])
        XCTAssertEqual(r.status, 2)
    }

    func testGattAndDevicesOnTheSession() throws {
        var r = try CLI.run(["gatt", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        for line in ["Service 0x180D Heart Rate (handles 0x000E–0x0013)",
                     "  Characteristic 0x2A37 Heart Rate Measurement [notify] value 0x0010",
                     "    Last value (frame 117): Body Sensor Location Chest",
                     "    Last value (frame 123): Manufacturer Name \"Bumble Labs\"",
                     "Service 8D5A0001-6C3B-4E5F-9A1D-2B7C4E8F0A11 Unknown Service (handles 0x001F–0x0026)"] {
            XCTAssertTrue(r.out.contains(line + "\n"), line)
        }
        r = try CLI.run(["devices", "--format", "json", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("\"HRM-1\""), r.out)
        XCTAssertTrue(r.out.contains("0000180D-0000-1000-8000-00805F9B34FB"), "16-bit UUIDs shown expanded too")
    }
}

extension CLITests {
    /// `audit --format html` writes the same full page as `report`, from the audit's own pass.
    func testAuditHTMLIsTheFullPage() throws {
        let out = NSTemporaryDirectory() + "blesniff-audit-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try CLI.run(["audit", "--fail-on", "warning", "--format", "html", "-o", out, "--format", "text",
                             Fixtures.captures + "/bad_polling_read.btsnoop"])
        XCTAssertEqual(r.status, 1, "the warning fails the run")
        XCTAssertTrue(r.out.contains("BLE301"), "text report on standard output")
        let page = try String(contentsOfFile: out, encoding: .utf8)
        for s in ["Connection #1", "HRM-1", "BLE301", "<svg"] { XCTAssertTrue(page.contains(s), s) }
    }
}

/// `blesniff links` on a committed Bumble session: its parameters, what it carried, its set-up.
final class LinksCommandTests: XCTestCase {
    func testGattSessionLink() throws {
        let r = try CLI.run(["links", "--format", "json", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let c = try XCTUnwrap((json["connections"] as? [[String: Any]])?.first)
        XCTAssertEqual(c["handle"] as? Int, 1)
        XCTAssertEqual(c["interval_ms"] as? Double, 15)
        XCTAssertEqual(c["att_mtu"] as? Int, 64)
        let bytes = try XCTUnwrap(c["bytes"] as? [String: Int])
        XCTAssertEqual(bytes, ["notifications": 10, "indications": 1, "writes": 4, "writes_without_response": 2, "reads": 137])
        let steps = (c["setup"] as? [[String: Any]])?.compactMap { $0["step"] as? String }
        XCTAssertEqual(steps, ["connected", "mtu_exchanged", "discovered", "ready", "subscribed"])
        // The series holds every value octet, second by second from the first value on.
        let throughput = try XCTUnwrap(c["throughput"] as? [String: Any])
        let series = try XCTUnwrap(throughput["series"] as? [String: Any])
        XCTAssertEqual(series["seconds_per_bin"] as? Int, 1)
        XCTAssertEqual((series["octets"] as? [Int])?.reduce(0, +), bytes.values.reduce(0, +))
        // The histogram counts every answered request the latency table counts.
        let histogram = try XCTUnwrap(c["latency_histogram"] as? [String: Any])
        let answered = (c["latency"] as? [[String: Any]])?.compactMap { $0["count"] as? Int }.reduce(0, +)
        XCTAssertEqual((histogram["counts"] as? [Int])?.reduce(0, +), answered)
        XCTAssertEqual((histogram["edges_ms"] as? [Double])?.first, 7.5)
        let text = try CLI.run(["links", Fixtures.captures + "/gatt_session.btsnoop"])
        XCTAssertTrue(text.out.contains("verdict: reads at"), text.out)
        XCTAssertNil(c["air"], "an HCI log has no air figures")
    }

    /// A stream generated with chosen parameters (Tests/Captures/README works the numbers): the
    /// achieved and possible rates and the knob are the arithmetic's.
    func testChosenParametersStream() throws {
        let path = Fixtures.captures + "/throughput_write_commands.btsnoop"
        let r = try CLI.run(["links", "--format", "json", path])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let c = try XCTUnwrap((json["connections"] as? [[String: Any]])?.first)
        XCTAssertEqual((c["intervals"] as? [[String: Any]])?.compactMap { $0["ms"] as? Double }, [15, 30])
        XCTAssertEqual(c["att_mtu"] as? Int, 247)
        XCTAssertEqual((c["bytes"] as? [String: Int])?["writes_without_response"], 24_400)
        let t = try XCTUnwrap(c["throughput"] as? [String: Any])
        // 100 values of 244 octets, 30 ms apart: 99 gaps of 30 ms.
        XCTAssertEqual(t["achieved_bps"] as? Int, Int((24_400.0 * 8 / 2.97).rounded()))
        // Four 244-octet values fit a 30 ms event on LE 1M with data length 27.
        XCTAssertEqual(t["possible_bps"] as? Int, Int((4 * 244 * 8 / 0.030).rounded()))
        XCTAssertTrue(c["limit"] is NSNull, "a quarter of what the link allows: the sender was the limit")
        let text = try CLI.run(["links", path]).out
        XCTAssertTrue(text.contains("the sender produced less than the link could carry; to carry more, data length would allow up to 781 kbit/s"),
                      text)
    }

    /// This host's advertising: ADV_IND every 100 ms with 29 octets of data and 18 of scan
    /// response, on from frame 35 (0.017 s) to its disable at 0.518 s.
    func testHostAdvertising() throws {
        let r = try CLI.run(["links", "--format", "json", Fixtures.captures + "/good_adv_data.btsnoop"])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let a = try XCTUnwrap((json["advertising"] as? [[String: Any]])?.first)
        XCTAssertEqual(a["legacy"] as? Bool, true)
        XCTAssertEqual(a["connectable"] as? Bool, true)
        XCTAssertEqual(a["interval_min_ms"] as? Double, 100)
        XCTAssertEqual(a["data_octets"] as? Int, 29)
        XCTAssertEqual(a["scan_response_octets"] as? Int, 18)
        XCTAssertEqual(a["first_frame"] as? Int, 35)
        XCTAssertEqual(a["on_ms"] as? Double, 501)
        let energy = try XCTUnwrap(a["energy"] as? [String: Any])
        XCTAssertEqual(energy["uc_per_event"] as? Double, 11.23)
        let text = try CLI.run(["links", Fixtures.captures + "/good_adv_data.btsnoop"])
        XCTAssertTrue(text.out.contains("advertising on hci0 (this host): legacy, connectable and scannable, 3 channels, interval 100 ms"),
                      text.out)
    }

    /// A sniffed link: packets, events, retransmissions and air time as the air saw them. crackle's
    /// legacy pairing capture: 197 data PDUs as tshark counts, 124 events (the sniffer has no
    /// event counter), 3 retransmissions (DifferentialTests explains them).
    /// A sniffed link's data length comes from its LL_LENGTH_REQ and LL_LENGTH_RSP: tshark reads
    /// frame 14 as LL_LENGTH_REQ (MaxRxOctets 251, MaxTxOctets 251), 15 as its retransmission and
    /// 16 as LL_LENGTH_RSP (251, 251), so 251 octets are in force from frame 16.
    func testSniffedLinkDataLength() throws {
        let path = Fixtures.shared + "/homewsn_bsniffhub__connection-update.pcap"
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("shared captures are absent") }
        let r = try CLI.run(["links", "--format", "json", path])
        XCTAssertEqual(r.status, 0, r.err)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let c = try XCTUnwrap((json["connections"] as? [[String: Any]])?.first)
        let changes = try XCTUnwrap(c["data_length_changes"] as? [[String: Int]])
        XCTAssertEqual(changes, [["frame": 16, "octets": 251]])
        XCTAssertEqual(c["data_length"] as? Int, 251)
    }

    func testSniffedLinkAir() throws {
        let path = Fixtures.shared + "/crackle__pairing_and_ltk_exchange.pcap"
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("shared captures are absent") }
        let r = try CLI.run(["links", "--format", "json", path])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let object = try XCTUnwrap((json["connections"] as? [[String: Any]])?.first?["air"] as? [String: Any])
        let air = object.compactMapValues { $0 as? Int }
        XCTAssertEqual(air["packets"], 197)
        XCTAssertEqual(air["events"], 124)
        XCTAssertEqual(air["retransmissions"], 3)
        XCTAssertEqual(air["empty"], 185)
        // 185 empty PDUs of 80 µs and 12 others: the air time is their sum.
        XCTAssertEqual((air["central_us"] ?? 0) + (air["peripheral_us"] ?? 0), 17_192)
        // Hopping over all 37 data channels; the three retransmissions on channels 4, 17 and 26.
        let channels = try XCTUnwrap(object["channels"] as? [[String: Int]])
        XCTAssertEqual(channels.count, 37)
        XCTAssertEqual(channels.reduce(0) { $0 + ($1["packets"] ?? 0) }, 197)
        XCTAssertEqual(channels.filter { ($0["retransmissions"] ?? 0) > 0 }.compactMap { $0["channel"] }, [4, 17, 26])
    }
}
