import XCTest
@testable import Decoders
@testable import Report

/// `blesniff diff` on event streams whose change is known: the metrics, the verdicts, the thresholds.
final class DiffTests: XCTestCase {
    /// Runs a stream through the collector (and an auditor behind it, as `blesniff diff` does).
    func metrics(_ s: EventStream, end: Double? = nil) -> CaptureMetrics {
        let auditor = Auditor(configuration: AuditConfiguration(), capturePath: "test.pcap")
        let collector = MetricsCollector(passingTo: auditor)
        for (e, f) in s.items { collector.observe(e, at: f) }
        let last = end.map { Int64($0 * 1e9) } ?? s.last?.time
        return collector.finish(at: last, findings: auditor.finish(at: s.last))
    }

    /// A scan, a connection to the device and `reads` reads of Battery Level, one every 100 ms.
    func session(reads: Int, fullDiscovery: Bool = false, stopScan: Bool = true) -> EventStream {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(0.1, .advertisingReport(adapter: 0, address: peerA, addressType: 1, rssi: -50, scanResponse: false))
        if stopScan { s.scanEnable(0.2, adapter: 0, enabled: false, filterDuplicates: 1, extended: false) }
        let c = s.connection()
        c.interval = 24
        s.add(0.3, .connected(c))
        var t = 0.31
        let requests = fullDiscovery ? 6 : 2
        for i in 0..<requests {
            s.add(t, att(c, .local, 0x10, .request, handle: UInt16(1 + i * 8), end: 0xFFFF, type: 0x2800))
            s.add(t + 0.01, att(c, .remote, 0x11, .response, length: 6))
            t += 0.02
        }
        for _ in 0..<reads {
            s.add(t, att(c, .local, 0x0A, .request, handle: 0x0012, characteristic: 0x2A19))
            s.add(t + 0.015, att(c, .remote, 0x0B, .response, handle: 0x0012, length: 1, characteristic: 0x2A19))
            t += 0.1
        }
        s.add(t, .disconnected(c, reason: 0x13))
        return s
    }

    func row(_ d: CaptureDiff, _ subject: String, _ metric: String) -> DiffRow? {
        d.rows.first { $0.subject == subject && $0.metric == metric }
    }

    let device = "device " + peerA.description

    /// Set-up time: from the connection to the first value read (after two discovery round trips
    /// of 20 ms, or six with full discovery, and the read's own 15 ms).
    func testSetUpTimeToFirstValue() throws {
        let a = metrics(session(reads: 3)), b = metrics(session(reads: 3, fullDiscovery: true))
        XCTAssertEqual(a.devices[peerA.description]?.timeToReady, 65_000_000)
        XCTAssertEqual(b.devices[peerA.description]?.timeToReady, 145_000_000)
        XCTAssertEqual(row(CaptureDiff(base: "a", new: "b", a, b), device, "connected to first value (set-up)")?.verdict, .regression)
    }

    func testTwentyReadsAgainstFortyIsARegressionOfReads() throws {
        let a = metrics(session(reads: 20)), b = metrics(session(reads: 40))
        XCTAssertEqual(a.devices[peerA.description]?.reads, 20)
        XCTAssertEqual(b.devices[peerA.description]?.reads, 40)
        let d = CaptureDiff(base: "a", new: "b", a, b)
        let reads = try XCTUnwrap(row(d, device, "reads"))
        XCTAssertEqual(reads.base, 20)
        XCTAssertEqual(reads.new, 40)
        XCTAssertEqual(reads.verdict, .regression)
        let perChar = try XCTUnwrap(row(d, device + " / 0x2A19 Battery Level", "reads"))
        XCTAssertEqual(perChar.verdict, .regression)
        XCTAssertEqual(row(d, device, "discovery requests")?.verdict, .same)
        // The other way it is better, and a generous threshold lets it through.
        XCTAssertEqual(row(CaptureDiff(base: "b", new: "a", b, a), device, "reads")?.verdict, .better)
        let lenient = CaptureDiff(base: "a", new: "b", a, b, thresholds: DiffThresholds(["reads": .relative(1.5)]))
        XCTAssertEqual(row(lenient, device, "reads")?.verdict, .worse)
    }

    /// The new capture used the phone's cached database: no discovery, so its reads are known by
    /// handle only. The base capture named that handle's UUID: both are compared under the UUID,
    /// and the same reads are no change.
    func testCachedDatabaseIsComparedByUUID() throws {
        let a = metrics(session(reads: 3))
        var s = EventStream()
        let c = s.connection()
        c.interval = 24
        s.add(0.3, .connected(c))
        var t = 0.31
        for _ in 0..<3 {
            s.add(t, att(c, .local, 0x0A, .request, handle: 0x0012))
            s.add(t + 0.015, att(c, .remote, 0x0B, .response, handle: 0x0012, length: 1))
            t += 0.1
        }
        s.add(t, .disconnected(c, reason: 0x13))
        let b = metrics(s)
        XCTAssertNotNil(b.devices[peerA.description]?.characteristics["handle 0x0012"])
        let d = CaptureDiff(base: "a", new: "b", a, b)
        XCTAssertEqual(row(d, device + " / 0x2A19 Battery Level", "reads")?.verdict, .same)
        XCTAssertNil(d.rows.first { $0.subject.contains("handle 0x0012") })
    }

    func testFullDiscoveryAgainstDiscoveryByUUID() throws {
        let a = metrics(session(reads: 1)), b = metrics(session(reads: 1, fullDiscovery: true))
        let d = CaptureDiff(base: "a", new: "b", a, b)
        let requests = try XCTUnwrap(row(d, device, "discovery requests"))
        XCTAssertEqual(requests.base, 2)
        XCTAssertEqual(requests.new, 6)
        XCTAssertEqual(requests.verdict, .regression)
        let time = try XCTUnwrap(row(d, device, "time to discovery complete"))
        XCTAssertEqual(time.base, 0.04e9)
        XCTAssertEqual(time.new!, 0.12e9, accuracy: 1)
        XCTAssertEqual(time.verdict, .regression)
    }

    func testScanLeftOnAgainstScanStopped() throws {
        let a = metrics(session(reads: 5), end: 10), b = metrics(session(reads: 5, stopScan: false), end: 10)
        XCTAssertEqual(a.adapters[0]?.scanTime, 200_000_000)
        XCTAssertEqual(b.adapters[0]?.scanTime, 10_000_000_000, "a scan left on counts to the end of the capture")
        let d = CaptureDiff(base: "a", new: "b", a, b)
        XCTAssertEqual(row(d, "adapter 0", "scan time")?.verdict, .regression)
        XCTAssertEqual(row(d, "adapter 0", "scan listening time (estimate)")?.verdict, .regression)
        XCTAssertEqual(row(d, "adapter 0", "scan start to connection")?.verdict, .same)
    }

    func testAStreamAgainstItselfChangesNothing() {
        let a = metrics(session(reads: 7, fullDiscovery: true))
        let d = CaptureDiff(base: "a", new: "a", a, a)
        XCTAssertEqual(d.rows.filter(\.changed).map { $0.subject + " " + $0.metric }, [])
        XCTAssertTrue(d.added.isEmpty && d.resolved.isEmpty)
        XCTAssertEqual(d.regressions, 0)
    }

    func testFindingsAddedAndResolvedByFingerprint() {
        let a = FindingSummary(rule: "BLE302", severity: "note", fingerprint: "aaaa", subject: "x", message: "m")
        let b = FindingSummary(rule: "BLE201", severity: "warning", fingerprint: "bbbb", subject: "x", message: "n")
        var before = CaptureMetrics(), after = CaptureMetrics()
        before.findings = [a]
        after.findings = [b]
        var d = CaptureDiff(base: "a", new: "b", before, after)
        XCTAssertEqual(d.added.map(\.rule), ["BLE201"])
        XCTAssertEqual(d.resolved.map(\.rule), ["BLE302"])
        XCTAssertTrue(d.findingsRegression)
        d = CaptureDiff(base: "a", new: "b", before, after, thresholds: DiffThresholds(["findings": .off]))
        XCTAssertFalse(d.findingsRegression)
    }

    func testRTTPercentilesWithinTheBucketWidth() throws {
        var h = RTTHistogram()
        for ms in 1...100 { h.add(Int64(ms) * 1_000_000) }
        let median = try XCTUnwrap(h.percentile(50)), p95 = try XCTUnwrap(h.percentile(95))
        XCTAssertEqual(Double(median), 50e6, accuracy: 50e6 * 0.05)
        XCTAssertEqual(Double(p95), 95e6, accuracy: 95e6 * 0.05)
    }

    func testThresholdsParse() {
        XCTAssertEqual(DiffThreshold(parsing: "+10%"), .relative(0.1))
        XCTAssertEqual(DiffThreshold(parsing: "+5"), .absolute(5))
        XCTAssertEqual(DiffThreshold(parsing: "+200ms"), .absolute(200_000_000))
        XCTAssertEqual(DiffThreshold(parsing: "new"), .any)
        XCTAssertEqual(DiffThreshold(parsing: "off"), .off)
        XCTAssertNil(DiffThreshold(parsing: "lots"))
    }

    func testConfigurationDiffKey() throws {
        let c = try AuditConfiguration.parse("diff: { reads: \"+10%\", discovery-time: \"+20%\", findings: new }\n")
        XCTAssertEqual(c.diff["reads"], .relative(0.1))
        XCTAssertEqual(c.diff["discovery_time"], .relative(0.2))
        XCTAssertEqual(c.diff["findings"], .any)
        XCTAssertEqual(c.diff["writes"], .relative(0.1), "a default")
        do {
            _ = try AuditConfiguration.parse("rules: {}\ndiff:\n  reads: lots\n")
            XCTFail("accepted a bad threshold")
        } catch {
            XCTAssertEqual(error.key, "diff.reads")
            XCTAssertEqual(error.line, 3)
        }
        do {
            _ = try AuditConfiguration.parse("diff:\n  radio: \"+1%\"\n")
            XCTFail("accepted an unknown metric")
        } catch {
            XCTAssertEqual(error.key, "diff.radio")
            XCTAssertEqual(error.line, 2)
            XCTAssertTrue(error.problem.contains("unknown metric"))
        }
    }
}
