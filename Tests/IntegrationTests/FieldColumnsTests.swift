import XCTest

/// `read -T fields` against `tshark -T fields` (Tests/Captures/expected, made by
/// scripts/fixtures/generate_expected.sh) for the tshark names blesniff has, on every committed and shared capture.
final class FieldColumnsTests: XCTestCase {
    /// Columns whose every value equals tshark's.
    static let exact = ["frame.number", "bthci_cmd.opcode", "bthci_evt.code", "bthci_evt.le_meta_subevent",
                        "bthci_acl.chandle", "bthci_acl.pb_flag", "btle.advertising_header.pdu_type",
                        "btle.data_header.llid", "bthci_evt.bd_addr", "bthci_evt.rssi"]

    /// Columns that differ on some frames, with how many (committed and shared captures), because:
    /// - btl2cap.cid, btl2cap.length, btatt.opcode, btsmp.opcode: sniffed PDUs blesniff decrypts
    ///   (an STK it recovers, an LTK from an LE Secure Connections debug key; tshark, without the
    ///   key, shows ciphertext), ciphertext tshark dissects as if plain, and
    ///   retransmissions blesniff keeps out of reassembly (the frames `DifferentialTests.skipped` leaves out).
    /// - btatt.handle (compared as a set; tshark gives a declaration's handle then its value's, blesniff
    ///   the list's handles then the value handles): the same PDUs, and tshark's generated handle of a
    ///   response where blesniff does not know the request's.
    /// - btatt.uuid16: tshark repeats the request's attribute type and a declaration's UUID in a
    ///   response, and leaves out a Find By Type Value's value; blesniff gives each UUID the PDU holds once.
    static let differing: [String: Int] = [
        "btl2cap.cid": 266, "btl2cap.length": 266, "btatt.opcode": 165, "btsmp.opcode": 99,
        "btatt.handle": 83, "btatt.uuid16": 1584,
    ]

    func testFieldsMatchTshark() throws {
        let columns = Self.exact + Self.differing.keys.sorted()
        var names = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        if let shared = try? Fixtures.sharedOrSkip() { names += shared.map { Fixtures.shared + "/" + $0 } }
        var rows = 0
        var mismatches: [String: Int] = [:]
        var examples: [String] = []
        for path in names {
            let name = (path as NSString).lastPathComponent
            guard let expected = Fixtures.expected(name) else { continue }
            let r = try CLI.run(["read", "-T", "fields"] + columns.flatMap { ["-e", $0] } + [path])
            XCTAssertEqual(r.status, 0, "\(name): \(r.err)")
            let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            XCTAssertEqual(lines.count, expected.count, "\(name): frames")
            for (line, row) in zip(lines, expected) {
                rows += 1
                let ours = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                for (i, c) in columns.enumerated() {
                    let theirs = row[c] ?? "", mine = i < ours.count ? ours[i] : ""
                    let same = c == "btatt.handle" ? Set(theirs.split(separator: ",")) == Set(mine.split(separator: ",")) : theirs == mine
                    if !same {
                        mismatches[c, default: 0] += 1
                        if Self.exact.contains(c), examples.count < 20 { examples.append("\(name) \(row["frame.number"] ?? "") \(c): tshark \(theirs) ours \(mine)") }
                    }
                }
            }
        }
        guard rows > 0 else { throw XCTSkip("no tshark expectations") }
        for c in Self.exact { XCTAssertNil(mismatches[c], examples.joined(separator: "\n")) }
        // With the shared captures present, the differences are exactly those explained above.
        if (try? Fixtures.sharedOrSkip()) != nil {
            XCTAssertEqual(mismatches.filter { !Self.exact.contains($0.key) }, Self.differing)
        }
    }

    /// tshark's -E settings: header, separator, occurrence, aggregator, quote.
    func testSettings() throws {
        let path = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try CLI.run(["read", "-T", "fields", "-E", "header=y", "-E", "separator=,", "-E", "aggregator=/s",
                             "-E", "quote=d", "-e", "frame.number", "-e", "btatt.handle", "-Y", "frame.number == 90", path])
        XCTAssertEqual(r.out, "frame.number,btatt.handle\n\"90\",\"0x0019 0x001b 0x001d 0x001a 0x001c 0x001e\"\n")
        let f = try CLI.run(["read", "-T", "fields", "-E", "occurrence=f", "-e", "btatt.handle", "-Y", "frame.number == 90", path])
        XCTAssertEqual(f.out, "0x0019\n")
        let bad = try CLI.run(["read", "-T", "fields", "-E", "occurrence=x", "-e", "btatt.handle", path])
        XCTAssertNotEqual(bad.status, 0)
    }

    /// tshark's -r, -c, -t and -x: the same time forms and hex dump as tshark prints for these frames.
    func testTsharkReadHabits() throws {
        let path = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try CLI.run(["read", "-r", path, "-c", "2", "-x", "-t", "ud"])
        XCTAssertEqual(r.out, """
                 1 2024-06-01 12:00:00.000500 < hci0 HCI Command Reset (0x0C03)
            0000  01 03 0c 00                                       ....

                 2 2024-06-01 12:00:00.001000 > hci0 HCI Event Command Complete (0x0E) Reset: Success
            0000  04 0e 04 01 03 0c 00                              .......


            """)
        let e = try CLI.run(["read", "-t", "e", "-c", "1", path])
        XCTAssertTrue(e.out.hasPrefix("     1 1717243200.000500 <"), e.out)
        let d = try CLI.run(["read", "-t", "d", "-c", "2", "--skip", "1", path])
        XCTAssertTrue(d.out.hasPrefix("     2     0.000500 >"), d.out)
    }
}

extension FieldColumnsTests {
    /// Several captures read one after another: a banner names each; one capture, none.
    func testBannerBetweenFiles() throws {
        let a = Fixtures.captures + "/adv_scan.btsnoop", b = Fixtures.captures + "/gatt_session.btsnoop"
        let two = try CLI.run(["read", a, b]).out
        XCTAssertTrue(two.hasPrefix("==> \(a) <==\n     1 "), two)
        XCTAssertTrue(two.contains("\n\n==> \(b) <==\n     1 "))
        XCTAssertFalse(try CLI.run(["read", a]).out.contains("==>"))
        XCTAssertFalse(try CLI.run(["read", "--format", "json", a, b]).out.contains("==>"))
    }
}

extension FieldColumnsTests {
    /// `-z`: tables after the frames (with -q, only them), from the same decode.
    func testStatistics() throws {
        let path = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try CLI.run(["read", "-q", "-z", "conv", "-z", "hci", "-z", "att", "-z", "io,stat,10", path])
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        // One connection: the frames and octets each way.
        XCTAssertTrue(lines.contains { $0.hasPrefix("1    0x0001  d4:ab:cd:00:00:01  47        497       50        776") }, r.out)
        XCTAssertTrue(lines.contains("95        ACL data"), r.out)
        XCTAssertTrue(lines.contains("5         10        0x0010  Handle Value Notification"), r.out)
        XCTAssertTrue(lines.contains("1         63        0x0021  Read Response"), r.out)
        // Every frame falls in the one 10-second interval.
        let frames = try CLI.run(["read", "-q", path]).out.split(separator: " ").first.map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("0.000000") && $0.split(separator: " ").dropFirst().first.map(String.init) == frames }, r.out)
        XCTAssertNotEqual(try CLI.run(["read", "-z", "nope", path]).status, 0)
    }
}
