import XCTest

/// `blesniff diff` on Bumble-recorded pairs whose change is known, on a capture against itself and
/// its own conversion, on folders, and its exit statuses.
final class DiffCommandTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "blesniff-diff-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func capture(_ name: String) -> String { Fixtures.captures + "/" + name }

    func json(_ args: [String]) throws -> (status: Int32, report: [String: Any]) {
        let r = try CLI.run(["diff", "--format", "json"] + args)
        XCTAssertTrue(r.status == 0 || r.status == 1, r.err)
        return (r.status, try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any])
    }

    func rows(_ report: [String: Any]) -> [[String: Any]] {
        ((report["pairs"] as! [[String: Any]])[0]["rows"] as! [[String: Any]])
    }

    func row(_ report: [String: Any], _ subjectPrefix: String, _ metric: String) -> [String: Any]? {
        rows(report).first { ($0["subject"] as! String).hasPrefix(subjectPrefix) && $0["metric"] as! String == metric }
    }

    func added(_ report: [String: Any]) -> [String] {
        let f = (report["pairs"] as! [[String: Any]])[0]["findings"] as! [String: Any]
        return (f["added"] as! [[String: Any]]).map { $0["rule"] as! String }
    }

    func testRedundantReadsAreARegressionAndFailOnlyWhenAsked() throws {
        let (status, report) = try json([capture("good_redundant_read.btsnoop"), capture("bad_redundant_read.btsnoop")])
        XCTAssertEqual(status, 0, "no --fail-on-regression")
        let reads = try XCTUnwrap(row(report, "device ", "reads"))
        XCTAssertEqual(reads["base"] as? Int, 1)
        XCTAssertEqual(reads["new"] as? Int, 4)
        XCTAssertEqual(reads["verdict"] as? String, "regression")
        XCTAssertEqual(added(report), ["BLE302"])
        let r = try CLI.run(["diff", "--fail-on-regression", capture("good_redundant_read.btsnoop"), capture("bad_redundant_read.btsnoop")])
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertTrue(r.out.contains("REGRESSION"), r.out)
        XCTAssertFalse(r.out.contains("\u{1B}["), "no colour when not a terminal")
        // The fix, the other way round, is better and passes.
        let back = try CLI.run(["diff", "--fail-on-regression", capture("bad_redundant_read.btsnoop"), capture("good_redundant_read.btsnoop")])
        XCTAssertEqual(back.status, 0, back.out)
        XCTAssertTrue(back.out.contains("- finding BLE302"), back.out)
    }

    /// A link kept up idle costs the device radio charge: the links energy model's estimate of
    /// its side, compared like the other radio estimates.
    func testIdleConnectionCostsTheDeviceRadioCharge() throws {
        let (_, report) = try json([capture("good_idle_connection.btsnoop"), capture("bad_idle_connection.btsnoop")])
        let charge = try XCTUnwrap(row(report, "", "device's radio charge (estimate, nRF52840)"))
        XCTAssertEqual(charge["key"] as? String, "radio_charge")
        XCTAssertEqual(charge["unit"] as? String, "microcoulombs")
        XCTAssertEqual(charge["verdict"] as? String, "regression")
        let base = try XCTUnwrap(charge["base"] as? Double), new = try XCTUnwrap(charge["new"] as? Double)
        XCTAssertGreaterThan(new, base * 20)
    }

    /// Value throughput of the device's busiest connection, as `links` measures it: lower is worse.
    func testThroughputDrop() throws {
        let (_, report) = try json([capture("throughput_write_commands.btsnoop"), capture("gatt_session.btsnoop")])
        let t = try XCTUnwrap(row(report, "device ", "value throughput, busiest connection"))
        XCTAssertEqual(t["key"] as? String, "throughput")
        XCTAssertEqual(t["unit"] as? String, "bits_per_second")
        // 24,400 octets in 2.97 s (Tests/Captures/README), against the GATT session's reads.
        XCTAssertEqual(try XCTUnwrap(t["base"] as? Double), 24_400 * 8 / 2.97, accuracy: 1)
        XCTAssertEqual(t["verdict"] as? String, "regression")
    }

    func testFullDiscoveryAgainstDiscoveryByUUID() throws {
        let (_, report) = try json([capture("good_full_discovery.btsnoop"), capture("bad_full_discovery.btsnoop")])
        let requests = try XCTUnwrap(row(report, "device ", "discovery requests"))
        XCTAssertLessThan(requests["base"] as! Int, requests["new"] as! Int)
        XCTAssertEqual(requests["verdict"] as? String, "regression")
        XCTAssertEqual(row(report, "device ", "time to discovery complete")?["verdict"] as? String, "regression")
        XCTAssertEqual(Set(added(report)), ["BLE201", "BLE202"])
    }

    func testScanLeftOnAgainstScanStopped() throws {
        let (_, report) = try json([capture("good_scan_not_stopped.btsnoop"), capture("bad_scan_not_stopped.btsnoop")])
        let scan = try XCTUnwrap(row(report, "adapter 0", "scan time"))
        XCTAssertLessThan(scan["base"] as! Int, scan["new"] as! Int)
        XCTAssertEqual(scan["verdict"] as? String, "regression")
        XCTAssertTrue(added(report).contains("BLE102"))
    }

    func assertNoChange(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (status, report) = try json(["--fail-on-regression", a, b])
        XCTAssertEqual(status, 0, file: file, line: line)
        let changed = rows(report).filter { $0["verdict"] as? String != "same" }
        XCTAssertEqual(changed.map { "\($0["subject"]!) \($0["metric"]!)" }, [], file: file, line: line)
        XCTAssertEqual(added(report), [], file: file, line: line)
        XCTAssertFalse(rows(report).isEmpty, file: file, line: line)
    }

    func testACaptureAgainstItselfAndItsConversionShowsNoChange() throws {
        let source = capture("gatt_session.btsnoop")
        try assertNoChange(source, source)
        for ext in ["pcapng", "pcap"] {
            let converted = dir + "/gatt_session." + ext
            let c = try CLI.run(["convert", source, converted])
            XCTAssertEqual(c.status, 0, c.err)
            try assertNoChange(source, converted)
        }
    }

    func testFoldersPairCapturesByName() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/base", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir + "/new", withIntermediateDirectories: true)
        try fm.copyItem(atPath: capture("good_redundant_read.btsnoop"), toPath: dir + "/base/read.btsnoop")
        try fm.copyItem(atPath: capture("bad_redundant_read.btsnoop"), toPath: dir + "/new/read.btsnoop")
        try fm.copyItem(atPath: capture("gatt_session.btsnoop"), toPath: dir + "/base/session.btsnoop")
        XCTAssertEqual(try CLI.run(["convert", capture("gatt_session.btsnoop"), dir + "/new/session.pcapng"]).status, 0)
        try fm.copyItem(atPath: capture("adv_scan.btsnoop"), toPath: dir + "/new/extra.btsnoop")
        let r = try CLI.run(["diff", "--format", "json", dir + "/base", dir + "/new"])
        XCTAssertEqual(r.status, 0, r.err)
        let report = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as! [String: Any]
        let pairs = report["pairs"] as! [[String: Any]]
        XCTAssertEqual(pairs.map { ($0["base"] as! String).split(separator: "/").last! }, ["read.btsnoop", "session.btsnoop"])
        XCTAssertEqual(pairs.map { ($0["new"] as! String).split(separator: "/").last! }, ["read.btsnoop", "session.pcapng"])
        XCTAssertEqual(pairs.map { $0["regressions"] as! Int }.map { $0 > 0 }, [true, false])
        XCTAssertEqual((report["only_in_new"] as! [String]).map { $0.split(separator: "/").last! }, ["extra.btsnoop"])
    }

    func testMarkdownForAPullRequest() throws {
        let r = try CLI.run(["diff", "--format", "markdown", capture("good_redundant_read.btsnoop"), capture("bad_redundant_read.btsnoop")])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("## blesniff diff\n"), r.out)
        XCTAssertTrue(r.out.contains("| Subject | Metric | Base | New | Change | |"), r.out)
        XCTAssertTrue(r.out.contains("🔴 regression"), r.out)
        XCTAssertTrue(r.out.contains("new BLE302"), r.out)
        XCTAssertTrue(r.out.contains("estimates"), r.out)
    }

    func testUnreadableInputAndBadConfigurationAreExitTwo() throws {
        var r = try CLI.run(["diff", capture("gatt_session.btsnoop"), "/nonexistent.btsnoop"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("/nonexistent.btsnoop"), r.err)
        r = try CLI.run(["diff", capture("gatt_session.btsnoop"), Fixtures.root + "/README.md"])
        XCTAssertEqual(r.status, 2, r.out)
        let config = dir + "/blesniff.yml"
        try "diff:\n  reads: lots\n".write(toFile: config, atomically: true, encoding: .utf8)
        r = try CLI.run(["diff", "--config", config, capture("gatt_session.btsnoop"), capture("gatt_session.btsnoop")])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("blesniff.yml:2: diff.reads:"), r.err)
        // A threshold from the configuration decides: 1 read to 4 within +500%.
        try "diff: { reads: \"+500%\", bytes: off, time_connected: off, radio_time: off, radio_charge: off, findings: off }\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        r = try CLI.run(["diff", "--config", config, "--fail-on-regression",
                         capture("good_redundant_read.btsnoop"), capture("bad_redundant_read.btsnoop")])
        XCTAssertEqual(r.status, 0, r.out)
    }
}
