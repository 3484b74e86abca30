import XCTest

/// What commands say about themselves: help text that matches what they do, and where output went.
final class CommandMessagesTests: XCTestCase {
    /// `audit --format html` writes the full page (the same as `blesniff report`), not findings only.
    func testAuditHelpDescribesTheHTMLPage() throws {
        let r = try CLI.run(["audit", "--help"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(r.out.contains("findings only"), r.out)
        XCTAssert(r.out.contains("html (the full page"), r.out)
    }

    /// `report` without `-o` writes ./report.html and says so on standard error; with `-o` it is quiet.
    func testReportSaysWhereItWroteTheDefaultPage() throws {
        let dir = NSTemporaryDirectory() + "report-default-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let capture = Fixtures.captures + "/gatt_session.btsnoop"
        let r = try Subprocess.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" report \"$3\"", "sh", dir, try CLI.binary(), capture])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssert(FileManager.default.fileExists(atPath: dir + "/report.html"))
        XCTAssert(r.err.contains("wrote report.html"), r.err)
        let given = try CLI.run(["report", capture, "-o", dir + "/given.html"])
        XCTAssertEqual(given.status, 0, given.err)
        XCTAssertEqual(given.err, "")
    }
}
