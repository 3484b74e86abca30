import Foundation
import XCTest
@testable import Decoders
@testable import Report
import Wire
#if canImport(FoundationXML)
import FoundationXML
#endif

final class AuditReportTests: XCTestCase {
    /// One error (BLE402), one warning (BLE301 can-notify) and one note (BLE602) on one capture.
    private func mixedStream() -> EventStream {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        for i in 0..<5 {
            s.add(1 + Double(i), att(c, .local, 0x0A, .request, handle: 0x2A, characteristic: 0x2A19, properties: 0x12))
            s.add(1.05 + Double(i), att(c, .remote, 0x0B, .response, length: 1))
        }
        s.add(7, .pairing(c, PairingObservation(method: .justWorks, secureConnections: true, bothSupportSecureConnections: true)))
        s.add(8, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(8.1, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        s.add(8.2, .disconnected(c, reason: 0x16))
        return s
    }

    private func run(_ s: EventStream, path: String = "captures/app run.pcapng", baseline: Baseline? = nil,
                     config: AuditConfiguration = AuditConfiguration(), live: ((Finding) -> Void)? = nil) -> CaptureAudit {
        let auditor = Auditor(configuration: config, capturePath: path, baseline: baseline, onFinding: live)
        for (e, f) in s.items { auditor.observe(e, at: f) }
        return CaptureAudit(path: path, findings: auditor.finish(), rules: auditor.enabledRules)
    }

    func testMessagesAreValues() {
        // A message's text has one owner behind a reference: appending to a copy leaves the
        // message it was copied from as it was, and a message appended to itself doubles.
        let base: Message = "read \(3) times in \(seconds: 4_100_000_000)"
        var more = base
        more += " (polling)"
        XCTAssertEqual(base.string, "read 3 times in 4.1 s")
        XCTAssertEqual(more.string, "read 3 times in 4.1 s (polling)")
        var twice: Message = "ab"
        twice += twice
        XCTAssertEqual(twice.string, "abab")
        let nested: Message = "[\(more)] \(handle: 0x2A)"
        XCTAssertEqual(nested.string, "[read 3 times in 4.1 s (polling)] 0x002A")
    }

    func testAuditorOrderAndLiveCallback() {
        var live: [String] = []
        let a = run(mixedStream(), live: { live.append($0.rule) })
        XCTAssertEqual(Set(a.findings.map(\.rule)), ["BLE301", "BLE402", "BLE602"])
        XCTAssertEqual(live.count, 3)
        // BLE602 and BLE402 are decided at once; BLE301 when the connection ends.
        XCTAssertEqual(Array(live.prefix(2)), ["BLE602", "BLE402"])
        XCTAssertEqual(a.findings.map(\.firstFrame.number), a.findings.map(\.firstFrame.number).sorted())
        XCTAssertEqual(a.findings.first?.rule, "BLE301")
    }

    func testFingerprintIsStableAcrossCapturesAndFrames() {
        let a = run(mixedStream())
        var shifted = EventStream()
        shifted.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        shifted.scanEnable(0.1, adapter: 0, enabled: false, filterDuplicates: 1, extended: false)
        for (e, f) in mixedStream().items { shifted.add(Double(f.time) / 1e9 + 100, e) }
        let b = run(shifted, path: "other.pcap")
        XCTAssertEqual(a.findings.map(\.fingerprint).sorted(), b.findings.map(\.fingerprint).sorted())
        XCTAssertNotEqual(a.findings.map(\.firstFrame.number), b.findings.map(\.firstFrame.number))
        XCTAssertEqual(Set(a.findings.map(\.fingerprint)).count, 3)
        XCTAssertEqual(Fingerprint.make(["a"]), "af63dc4c8601ec8c")
        XCTAssertEqual(Fingerprint.make([""]), "cbf29ce484222325")
    }

    /// A finding's fingerprint, hashed from its parts where they lie, is `Fingerprint.make` over
    /// the texts: for every kind of subject, with and without an address, identity or detail.
    func testFingerprintHashedInPlaceIsTheTextsHash() {
        var findings = run(mixedStream()).findings
        XCTAssertFalse(findings.isEmpty)
        guard var f = findings.first else { return }
        let addresses: [BDAddr?] = [nil, BDAddr(0), BDAddr(0x001B_DC07_32A1), BDAddr(0xFFFF_FFFF_FFFF), BDAddr(0xC0A9_5B3D_0E1F)]
        for kind in [FindingSubject.Kind.connection, .advertiser, .host] {
            for address in addresses {
                for identity in [nil, BDAddr(0x0A0B_0C0D_0E0F)] {
                    for detail in ["", "handle 0x002a", "Ünïcode"] {
                        f.subject = FindingSubject(kind: kind, adapter: 3, connectionID: address == nil ? 12 : nil, handle: 0x40,
                                                   address: address, addressType: 1, identity: identity)
                        f.detail = detail
                        findings.append(f)
                    }
                }
            }
        }
        for f in findings {
            XCTAssertEqual(f.fingerprint, Fingerprint.make([f.rule, f.subject.fingerprintKey, f.detail]), "\(f.subject)")
        }
    }

    func testExitCodeForEveryFailOnLevel() {
        let mixed = [run(mixedStream())]
        XCTAssertEqual(AuditExit.code(mixed, failOn: .error), 1)
        XCTAssertEqual(AuditExit.code(mixed, failOn: .warning), 1)
        XCTAssertEqual(AuditExit.code(mixed, failOn: .note), 1)
        XCTAssertEqual(AuditExit.code(mixed, failOn: .never), 0)

        var noteOnly = EventStream()
        let c = noteOnly.connection()
        noteOnly.add(0, .connected(c))
        noteOnly.add(1, .pairing(c, PairingObservation(method: .justWorks, secureConnections: true, bothSupportSecureConnections: true)))
        let notes = [run(noteOnly)]
        XCTAssertEqual(AuditExit.code(notes, failOn: .error), 0)
        XCTAssertEqual(AuditExit.code(notes, failOn: .warning), 0)
        XCTAssertEqual(AuditExit.code(notes, failOn: .note), 1)
        XCTAssertEqual(AuditExit.code(notes, failOn: .never), 0)

        let clean = [CaptureAudit(path: "a.pcap")]
        for level in FailOn.allCases { XCTAssertEqual(AuditExit.code(clean, failOn: level), 0) }

        let unreadable = clean + [CaptureAudit(path: "b.pcap", error: "truncated header")]
        for level in FailOn.allCases { XCTAssertEqual(AuditExit.code(unreadable, failOn: level), 2) }
    }

    func testBaselineRoundTrip() {
        let first = run(mixedStream())
        let text = Baseline.render([first])
        let baseline = Baseline.parse(text)
        XCTAssertEqual(baseline.fingerprints.count, 3)
        let second = run(mixedStream(), baseline: baseline)
        XCTAssertEqual(second.findings.count, 3)
        XCTAssertTrue(second.findings.allSatisfy(\.suppressed))
        XCTAssertEqual(AuditExit.code([second], failOn: .note), 0)
        // A baseline of only the error leaves the warning failing.
        let onlyError = Baseline(fingerprints: Set(first.findings.filter { $0.rule == "BLE402" }.map(\.fingerprint)))
        let third = run(mixedStream(), baseline: onlyError)
        XCTAssertEqual(AuditExit.code([third], failOn: .error), 0)
        XCTAssertEqual(AuditExit.code([third], failOn: .warning), 1)
        XCTAssertTrue(Baseline.parse("# comment\n\nBLE101 0123456789abcdef  x: y\n").fingerprints.contains("0123456789abcdef"))
    }

    // MARK: SARIF

    func testSARIFStructure() throws {
        var a = run(mixedStream(), baseline: nil)
        a.findings[0].suppressed = true
        let text = AuditReport(audits: [a, CaptureAudit(path: "/abs/bad file.pcap", error: "unreadable")]).render(.sarif)
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(root["version"] as? String, "2.1.0")
        XCTAssertNotNil(root["$schema"] as? String)
        let runs = try XCTUnwrap(root["runs"] as? [[String: Any]])
        XCTAssertEqual(runs.count, 1)
        let driver = try XCTUnwrap((runs[0]["tool"] as? [String: Any])?["driver"] as? [String: Any])
        XCTAssertEqual(driver["name"] as? String, "blesniff")
        XCTAssertNotNil(driver["version"] as? String)
        XCTAssertNotNil(URL(string: try XCTUnwrap(driver["informationUri"] as? String))?.scheme)
        let rules = try XCTUnwrap(driver["rules"] as? [[String: Any]])
        XCTAssertEqual(rules.map { $0["id"] as? String }, AuditRules.infos.map(\.id))
        let levels: Set<String> = ["none", "note", "warning", "error"]
        for r in rules {
            XCTAssertNotNil(r["name"] as? String)
            for k in ["shortDescription", "fullDescription", "help"] {
                XCTAssertFalse(((r[k] as? [String: Any])?["text"] as? String ?? "").isEmpty, k)
            }
            let level = (r["defaultConfiguration"] as? [String: Any])?["level"] as? String
            XCTAssertTrue(levels.contains(level ?? ""))
        }
        let results = try XCTUnwrap(runs[0]["results"] as? [[String: Any]])
        XCTAssertEqual(results.count, 3)
        for (i, r) in results.enumerated() {
            let ruleID = try XCTUnwrap(r["ruleId"] as? String)
            XCTAssertEqual((r["ruleIndex"] as? Int).map { rules[$0]["id"] as? String }, ruleID)
            XCTAssertTrue(levels.contains(r["level"] as? String ?? ""))
            XCTAssertFalse(((r["message"] as? [String: Any])?["text"] as? String ?? "").isEmpty)
            let loc = try XCTUnwrap((r["locations"] as? [[String: Any]])?.first)
            let physical = try XCTUnwrap(loc["physicalLocation"] as? [String: Any])
            let uri = (physical["artifactLocation"] as? [String: Any])?["uri"] as? String
            XCTAssertEqual(uri, "captures/app%20run.pcapng")
            let region = try XCTUnwrap(physical["region"] as? [String: Any])
            let offset = try XCTUnwrap(region["byteOffset"] as? Int)
            let length = try XCTUnwrap(region["byteLength"] as? Int)
            XCTAssertGreaterThanOrEqual(offset, 0)
            XCTAssertGreaterThan(length, 0)
            XCTAssertEqual(offset, Int(a.findings[i].decisive.fileOffset))
            let logical = try XCTUnwrap(loc["logicalLocations"] as? [[String: Any]])
            XCTAssertEqual(logical.first?["name"] as? String, "frame " + String(a.findings[i].decisive.number))
            XCTAssertTrue((logical.last?["name"] as? String ?? "").hasPrefix("connection #1"))
            let fp = (r["partialFingerprints"] as? [String: Any])?["blesniff/v1"] as? String
            XCTAssertEqual(fp, a.findings[i].fingerprint)
            let suppressions = r["suppressions"] as? [[String: Any]]
            if i == 0 {
                XCTAssertEqual(suppressions?.first?["kind"] as? String, "external")
            } else {
                XCTAssertNil(suppressions)
            }
        }
        let artifacts = try XCTUnwrap(runs[0]["artifacts"] as? [[String: Any]])
        XCTAssertEqual(((artifacts[1]["location"] as? [String: Any])?["uri"] as? String), "file:///abs/bad%20file.pcap")
        let invocations = try XCTUnwrap(runs[0]["invocations"] as? [[String: Any]])
        XCTAssertEqual(invocations.first?["executionSuccessful"] as? Bool, false)
    }

    /// Full validation against the published SARIF 2.1.0 JSON schema needs the schema file in
    /// Resources; without it the structural test above checks what the schema requires of us.
    func testSARIFSchemaFileWhenPresent() throws {
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/sarif-schema-2.1.0.json")
        guard FileManager.default.fileExists(atPath: schema.path) else {
            throw XCTSkip("SARIF 2.1.0 schema not shipped; structural checks only")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: schema)) as? [String: Any]
        XCTAssertNotNil(object?["properties"])
    }

    // MARK: JUnit

    func testJUnitStructure() throws {
        let a = run(mixedStream())
        var report = AuditReport(audits: [a, CaptureAudit(path: "bad.pcap", error: "unreadable & short")])
        report.failOn = .warning
        let text = report.render(.junit)
        #if canImport(FoundationXML) || canImport(Darwin)
        let doc = try XMLDocument(xmlString: text, options: [])
        let root = try XCTUnwrap(doc.rootElement())
        XCTAssertEqual(root.name, "testsuites")
        let suites = root.elements(forName: "testsuite")
        XCTAssertEqual(suites.count, 2)
        let cases = suites[0].elements(forName: "testcase")
        XCTAssertEqual(cases.count, AuditRules.all.count)
        XCTAssertEqual(suites[0].attribute(forName: "tests")?.stringValue, String(AuditRules.all.count))
        let failing = cases.filter { !$0.elements(forName: "failure").isEmpty }
        // BLE402 (error) and BLE301 (warning) fail at --fail-on warning; BLE602 (note) is only output.
        XCTAssertEqual(Set(failing.compactMap { $0.attribute(forName: "name")?.stringValue?.split(separator: " ").first.map(String.init) }),
                       ["BLE301", "BLE402"])
        XCTAssertEqual(suites[0].attribute(forName: "failures")?.stringValue, "2")
        let note = cases.first { $0.attribute(forName: "name")?.stringValue?.hasPrefix("BLE602") == true }
        XCTAssertEqual(note?.elements(forName: "system-out").count, 1)
        XCTAssertEqual(suites[1].attribute(forName: "errors")?.stringValue, "1")
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, "2")
        #else
        XCTAssertTrue(text.hasPrefix("<?xml"))
        #endif
    }

    // MARK: other formats

    func testJSONTextAndMarkdown() throws {
        let a = run(mixedStream())
        let report = AuditReport(audits: [a])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.render(.json).utf8)) as? [String: Any])
        let summary = try XCTUnwrap(json["summary"] as? [String: Int])
        XCTAssertEqual(summary["errors"], 1)
        XCTAssertEqual(summary["warnings"], 1)
        XCTAssertEqual(summary["notes"], 1)
        let text = report.render(.text)
        XCTAssertTrue(text.contains("1 error, 1 warning, 1 note"))
        XCTAssertTrue(text.contains("  peer c0:ff:ee:00:00:01 (connection #1)\n"), text)
        XCTAssertTrue(text.contains("  platform: unknown (no evidence"), text)
        XCTAssertFalse(text.contains("\u{1B}["))
        let md = report.render(.markdown)
        XCTAssertTrue(md.contains("| `captures/app run.pcapng` | 1 | 1 | 1 | 0 |"))
        XCTAssertTrue(md.contains("BLE402 reconnect-before-disconnected"))
    }

    /// One peer's finding over twelve connections: the text lists the first five and the last two
    /// of them, and the JSON each occurrence with its own message, subject and frames.
    func testFindingOverManyConnections() throws {
        let peer = BDAddr(0xC0FF_EE00_0002)
        func subject(_ n: Int) -> FindingSubject {
            FindingSubject(kind: .connection, adapter: 0, connectionID: n, handle: UInt16(0x40 + n), address: peer, addressType: 0)
        }
        func occurrence(_ n: Int) -> Finding {
            let frame = FrameRef(number: 100 * n, time: Int64(n) * 1_000_000_000)
            return Finding(rule: "BLE301", ruleName: "polling-read", severity: .warning, message: "read \"x\" \(n) times",
                           subject: subject(n), evidence: [FrameRef(number: 100 * n - 1, time: 0)], decisive: frame)
        }
        var f = occurrence(1)
        for n in 2...12 { f.absorb(occurrence(n)) }
        let report = AuditReport(audits: [CaptureAudit(path: "many.pcap", findings: [f])])
        let text = report.render(.text)
        XCTAssertTrue(text.contains("  peer c0:ff:ee:00:00:02 (connections #1, #2, #3, #4, #5, ..., #11, #12)\n"), text)
        XCTAssertTrue(text.contains("read \"x\" 1 times (x12: connections #1, #2, #3, #4, #5, ..., #11, #12) [frames 99, 100; last: frames 1199, 1200]"), text)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.render(.json).utf8)) as? [String: Any])
        let capture = try XCTUnwrap((json["captures"] as? [[String: Any]])?.first)
        let finding = try XCTUnwrap((capture["findings"] as? [[String: Any]])?.first)
        XCTAssertEqual(finding["count"] as? Int, 12)
        let occurrences = try XCTUnwrap(finding["occurrences"] as? [[String: Any]])
        XCTAssertEqual(occurrences.count, 12)
        for (i, o) in occurrences.enumerated() {
            XCTAssertEqual(o["message"] as? String, "read \"x\" \(i + 1) times")
            let subject = try XCTUnwrap(o["subject"] as? [String: Any])
            XCTAssertEqual(subject["connection"] as? Int, i + 1)
            XCTAssertEqual(subject["handle"] as? Int, 0x41 + i)
            XCTAssertEqual(subject["address"] as? String, "c0:ff:ee:00:00:02")
            XCTAssertEqual(subject["label"] as? String, "connection #\(i + 1) (handle \(Hex.prefixed(0x41 + i, width: 4)), c0:ff:ee:00:00:02)")
            let frames = try XCTUnwrap(o["frames"] as? [[String: Any]])
            XCTAssertEqual(frames.map { $0["number"] as? Int }, [100 * (i + 1) - 1, 100 * (i + 1)])
            XCTAssertEqual((o["decisive"] as? [String: Any])?["time"] as? Int, (i + 1) * 1_000_000_000)
        }
    }

    func testFormatFromExtension() {
        XCTAssertEqual(AuditFormat(fileExtensionOf: "out.sarif"), .sarif)
        XCTAssertEqual(AuditFormat(fileExtensionOf: "out.json"), .json)
        XCTAssertEqual(AuditFormat(fileExtensionOf: "junit.xml"), .junit)
        XCTAssertEqual(AuditFormat(fileExtensionOf: "summary.md"), .markdown)
        XCTAssertNil(AuditFormat(fileExtensionOf: "report"))
    }

    func testBoundedMapStaysWithinCapacity() {
        var m = BoundedMap<Int, Int>(capacity: 100)
        for i in 0..<10_000 { m[i] = i }
        XCTAssertEqual(m.count, 100)
        XCTAssertEqual(m[9_999], 9_999)
        XCTAssertNil(m[0])
    }

    /// Keys that collide in threes, so probes run long and forgetting one moves others back.
    private struct Clashing: Hashable {
        let v: Int
        func hash(into h: inout Hasher) { h.combine(v / 3) }
    }

    func testRingTableForgetsTheOldestAndFindsTheRest() {
        var t = RingTable<Clashing, Int>(capacity: 50)
        var expected: [Int: Int] = [:]
        var order: [Int] = []
        // Keys come again and again (updated in place) and new ones push the oldest out.
        var x = 7
        for step in 0..<5_000 {
            x = (x &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
            let k = x % 120
            let got = t.update(Clashing(v: k), default: 0) { $0 += step; return $0 }
            if expected[k] == nil {
                if order.count == 50 { expected[order.removeFirst()] = nil }
                order.append(k)
            }
            expected[k, default: 0] += step
            XCTAssertEqual(got, expected[k])
        }
        XCTAssertEqual(t.count, 50)
        for k in 0..<120 { XCTAssertEqual(t[Clashing(v: k)], expected[k], "key \(k)") }
    }

    func testConnectionTableGrowsWithLiveConnectionsAndStaysBounded() {
        XCTAssertEqual(ConnectionTable<Int>(capacity: 100).capacity, 128, "rounded up to a power of two")
        var t = ConnectionTable<Int>(capacity: 16_384)
        // Live connections far apart: the table doubles rather than letting one take another's slot.
        for id in [3, 19, 35, 1_000, 77] { t[id] = id * 10 }
        XCTAssertEqual(t.ids, [3, 19, 35, 77, 1_000])
        XCTAssertEqual(t.values, [30, 190, 350, 770, 10_000])
        XCTAssertEqual(t.update(19, default: 0) { $0 += 1; return $0 }, 191)
        XCTAssertEqual(t.removeValue(forKey: 35), 350)
        XCTAssertNil(t[35])
        XCTAssertEqual(t.newest { $0 > 100 }, 1_000)
        // Thousands opened and closed in turn evict nothing within the capacity.
        for id in 2_000..<12_000 {
            t[id] = id
            if id >= 2_010 { XCTAssertEqual(t.removeValue(forKey: id - 10), id - 10) }
        }
        XCTAssertEqual(t.ids, [3, 19, 77, 1_000] + Array(11_990..<12_000))
        // More live connections than the capacity: the oldest give way, the table stays bounded.
        var u = ConnectionTable<Int>(capacity: 64)
        for id in 0..<1_000 { u[id] = id }
        XCTAssertEqual(u.ids, Array(936..<1_000))
    }

    func testATTOpcodeSets() {
        let responses = ATTOpcodeSet.responses
        for op: UInt8 in [0x01, 0x03, 0x0B, 0x0D, 0x11, 0x13, 0x17, 0x19, 0x21] { XCTAssertTrue(responses.contains(ATTOpcode(op)), "\(op)") }
        for op: UInt8 in [0x0A, 0x12, 0x1B, 0x1D, 0x1E, 0x52, 0xD2] { XCTAssertFalse(responses.contains(ATTOpcode(op)), "\(op)") }
        let writes = ATTOpcodeSet([.writeRequest, .writeCommand, .signedWriteCommand])
        XCTAssertTrue(writes.contains(.signedWriteCommand))
        XCTAssertFalse(writes.contains(ATTOpcode(0x92)))
        XCTAssertTrue(writes.union(.valueReads).contains(.readBlobRequest))
        XCTAssertTrue((0...255).allSatisfy { ATTOpcodeSet.all.contains(ATTOpcode(UInt8($0))) })
    }

    func testAdapterTable() {
        var t = AdapterTable<String>()
        t[3] = "c"
        t[1] = "a"
        t.update(2, default: "") { $0 += "b" }
        XCTAssertEqual(t.keys, [1, 2, 3])
        XCTAssertEqual(t.update(3) { $0 += "!"; return $0.count }, 2)
        XCTAssertNil(t.update(9) { _ in 0 })
        XCTAssertEqual(t.removeValue(forKey: 1), "a")
        t[2] = nil
        XCTAssertEqual(Array(t.entries.map { "\($0)\($1)" }), ["3c!"])
    }
}
