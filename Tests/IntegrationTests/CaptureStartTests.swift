import XCTest

/// Where relative times and durations count from. iOS PacketLogger files open with notes
/// (product, firmware, chipset) stamped when logging was turned on, days before the HCI traffic:
/// `report` once showed "Duration 101 h 45 min" and connections starting at 366282.72 s.
final class CaptureStartTests: XCTestCase {
    static let fourDays: UInt32 = 4 * 86_400

    /// `gatt_session.btsnoop` as iOS writes it (little-endian PacketLogger) with three header
    /// notes stamped four days before its first frame.
    func iosCapture() throws -> (plain: String, ios: String) {
        let dir = NSTemporaryDirectory() + "blesniff-start-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let plain = dir + "/plain.pklg"
        let r = try CLI.run(["convert", "--byte-order", "little", Fixtures.captures + "/gatt_session.btsnoop", plain])
        XCTAssertEqual(r.status, 0, r.err)
        let traffic = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        // Record: length, seconds, microseconds (little-endian), type, payload.
        let seconds = traffic[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var notes: [UInt8] = []
        for text in ["Product: iPhone15,2", "Firmware: 21E236", "Chipset: BCM4387"] {
            for v in [UInt32(9 + text.utf8.count), seconds - Self.fourDays, 0] { notes += (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
            notes.append(0xFC)
            notes += Array(text.utf8)
        }
        let ios = dir + "/ios.pklg"
        try Data(notes + traffic).write(to: URL(fileURLWithPath: ios))
        return (plain, ios)
    }

    /// The time column of `read`'s lines.
    func times(_ out: String) -> [String] {
        out.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }.map(String.init)
    }

    func testHeaderNotesDaysBeforeTheTrafficDoNotStartTheCapture() throws {
        let (plain, ios) = try iosCapture()
        // read: the traffic's times are those of the capture without the notes (the notes, printed
        // before the traffic is seen, at 0).
        let a = try CLI.run(["read", plain]), b = try CLI.run(["read", ios])
        XCTAssertEqual(a.status, 0, a.err)
        XCTAssertEqual(b.status, 0, b.err)
        let ta = times(a.out), tb = times(b.out)
        XCTAssertEqual(tb.count, ta.count + 3)
        XCTAssertEqual(Array(tb.dropFirst(3)), ta)
        XCTAssertEqual(Array(tb.prefix(3)), ["0.000000", "0.000000", "0.000000"], b.out)
        // The filter's time counts from the same start.
        let fa = try CLI.run(["read", "--quiet", "--filter", "time > 0.1 and time < 1", plain])
        let fb = try CLI.run(["read", "--quiet", "--filter", "time > 0.1 and time < 1", ios])
        XCTAssertEqual(fb.out, fa.out)
        // report: the same duration, and connections start at the same relative time.
        let ra = try CLI.run(["report", plain, "-o", "-"]), rb = try CLI.run(["report", ios, "-o", "-"])
        XCTAssertEqual(rb.status, 0, rb.err)
        func duration(_ page: String) -> String? {
            page.components(separatedBy: "<div class=\"k\">Duration</div><div class=\"v\">").dropFirst().first?
                .components(separatedBy: "<").first
        }
        XCTAssertNotNil(duration(ra.out))
        XCTAssertEqual(duration(rb.out), duration(ra.out))
        XCTAssertFalse(rb.out.contains(" h "), "no duration in hours")
        // devices: first and last seen from the same start.
        let da = try CLI.run(["devices", plain]), db = try CLI.run(["devices", ios])
        func seen(_ out: String) -> [String] { out.split(separator: "\n").filter { $0.contains(" Seen") }.map(String.init) }
        XCTAssertFalse(seen(da.out).isEmpty, da.out)
        XCTAssertEqual(seen(db.out), seen(da.out))
    }
}
