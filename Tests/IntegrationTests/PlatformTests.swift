import XCTest
import Capture
import Decoders
import Report
import Wire

/// The platform of a capture, told from evidence, and what it changes: a rule does not give a
/// finding for what the platform's stack does whatever the app asks.
final class PlatformTests: XCTestCase {
    /// LE Get Vendor Capabilities (0xFD53), the first command Android's stack sends to a controller.
    static func androidVendorCommand(at time: Int64) -> Packet {
        Packet(number: 0, timestamp: time, direction: .sent, adapter: 0, kind: .hci(.command), payload: [0x53, 0xFD, 0x00])
    }

    /// Audits a committed capture, with `extra` packets handed over before its first frame.
    static func audit(_ name: String, configuration: AuditConfiguration = AuditConfiguration(),
                      before extra: (Int64) -> [Packet] = { _ in [] }) throws -> AuditOutcome {
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector)
        let auditor = Auditor(configuration: configuration, capturePath: name)
        var last: FrameRef?
        let reader = try CaptureReader(path: Fixtures.captures + "/" + name)
        var first = true
        while let r = try reader.next() {
            if first {
                for p in extra(r.timestamp) { feed.events(dissector.dissect(p), into: auditor) }
                first = false
            }
            let p = Packet(r)
            feed.events(dissector.dissect(p), into: auditor)
            last = FrameRef(number: p.number, time: p.timestamp)
        }
        feed.finish(into: auditor, at: last)
        return auditor.finishAudit(at: last)
    }

    func testBumbleRecordingIsUnknownAndEveryRuleFires() throws {
        let o = try Self.audit("bad_full_discovery.btsnoop")
        XCTAssertEqual(o.platform.platform, .unknown)
        XCTAssertEqual(o.findings.map(\.rule), ["BLE201", "BLE202"])
        XCTAssertTrue(o.platformBehaviour.isEmpty)
        XCTAssertNil(o.findings.first?.advice)
    }

    /// The same recording with Android's vendor command added: full discovery and scanning with
    /// duplicates are what Android's stack does for every app.
    func testAndroidVendorCommandMakesItAndroid() throws {
        let o = try Self.audit("bad_full_discovery.btsnoop") { [Self.androidVendorCommand(at: $0)] }
        XCTAssertEqual(o.platform.platform, .android)
        XCTAssertTrue(o.platform.evidence.contains("0xFD53"), o.platform.evidence)
        XCTAssertTrue(o.findings.isEmpty, o.findings.map(\.message).joined(separator: " | "))
        XCTAssertEqual(o.platformBehaviour.map(\.rule), ["BLE201", "BLE202"])
        XCTAssertTrue(o.platformBehaviour[0].advice?.contains("BluetoothGatt.discoverServices()") ?? false)

        let scan = try Self.audit("bad_scan_duplicates.btsnoop") { [Self.androidVendorCommand(at: $0)] }
        XCTAssertTrue(scan.findings.isEmpty)
        XCTAssertEqual(scan.platformBehaviour.map(\.rule), ["BLE101"])
    }

    /// What the app chooses stays a finding, and names the call to change on the platform.
    func testAppChoicesStayFindingsWithThePlatformsCall() throws {
        let o = try Self.audit("bad_scan_not_stopped.btsnoop") { [Self.androidVendorCommand(at: $0)] }
        XCTAssertEqual(o.findings.map(\.rule), ["BLE102"])
        XCTAssertTrue(o.findings[0].advice?.contains("BluetoothLeScanner.stopScan") ?? false, o.findings[0].advice ?? "")
        let text = AuditReport(audits: [CaptureAudit(path: "x", outcome: o)]).render(.text)
        XCTAssertTrue(text.contains("  platform: android (Android vendor command LE Get Vendor Capabilities (0xFD53)"), text)
        XCTAssertTrue(text.contains("fix on Android: call BluetoothLeScanner.stopScan"), text)
        let discovery = try Self.audit("bad_full_discovery.btsnoop") { [Self.androidVendorCommand(at: $0)] }
        let shown = AuditReport(audits: [CaptureAudit(path: "x", outcome: discovery)]).render(.text)
        XCTAssertTrue(shown.contains("x: 0 errors, 0 warnings, 0 notes"), shown)
        XCTAssertTrue(shown.contains("platform behaviour (what Android does whatever the app asks; not counted):"), shown)
        XCTAssertTrue(shown.contains("Android discovers the whole database for every app"), shown)
    }

    /// `--platform` / `platform:` wins over the capture's evidence.
    func testConfiguredPlatformWins() throws {
        var config = AuditConfiguration()
        config.platform = .apple
        let o = try Self.audit("bad_full_discovery.btsnoop", configuration: config) { [Self.androidVendorCommand(at: $0)] }
        XCTAssertEqual(o.platform.platform, .apple)
        XCTAssertEqual(o.findings.map(\.rule), ["BLE201", "BLE202"])
        XCTAssertTrue(o.findings[0].advice?.contains("discoverServices(_:)") ?? false)
        let parsed = try AuditConfiguration.parse("platform: linux-bluez\n")
        XCTAssertEqual(parsed.platform, .linuxBluez)
        XCTAssertThrowsError(try AuditConfiguration.parse("platform: windows\n")) { e in
            XCTAssertTrue(String(describing: e).contains("platform"), String(describing: e))
        }
    }

    /// The Linux monitor channel says Linux; Apple's PacketLogger says Apple.
    func testContainers() throws {
        let o = try Self.audit("gatt_session.monitor.btsnoop")
        XCTAssertEqual(o.platform.platform, .linuxBluez, o.platform.evidence)
        XCTAssertEqual(PlatformGuess.container(packetLogger: true)?.platform, .apple)
        // A stronger piece of evidence replaces a weaker one, never the reverse.
        let auditor = Auditor()
        auditor.assume(PlatformGuess.container(androidSnoopLog: true)!)
        auditor.assume(PlatformGuess.container(linuxMonitor: true)!)
        XCTAssertEqual(auditor.platform.platform, .linuxBluez)
        auditor.assume(PlatformGuess.container(androidSnoopLog: true)!)
        XCTAssertEqual(auditor.platform.platform, .linuxBluez)
    }

    /// Real captures: Android logs, a BlueZ monitor capture, sniffer captures (skipped without them).
    func testSharedCapturesPlatforms() throws {
        let expect: [String: Platform] = [
            "bk300__btsnoop_hci.log.last": .android, "fossibot__btsnoop_hci.log": .android,
            "btpcaptest__bluetooth.pcap": .android,
            "blesecpoc__hci_capture_20260306_121058.snoop": .linuxBluez,
            "tesible__mouse.pcapng": .unknown, "sweyn__capture_cypress_psoc6_crash_llid.pcapng": .unknown,
        ]
        var ran = 0
        for (name, want) in expect {
            let path = Fixtures.shared + "/" + name
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let dissector = Dissector(keepEnded: 0)
            let feed = AuditFeed(dissector: dissector)
            let auditor = Auditor()
            try Fixtures.decode(path, dissector: dissector) { feed.events($0, into: auditor) }
            feed.finish(into: auditor, at: nil)
            XCTAssertEqual(auditor.platform.platform, want, name + ": " + auditor.platform.evidence)
            ran += 1
        }
        if ran == 0 { throw XCTSkip("../shared/captures is absent") }
    }

    // MARK: scans restarted by the stack

    static func hci(_ n: Int, _ t: Double, command op: UInt16, _ params: [UInt8]) -> Packet {
        Packet(number: n, timestamp: Int64(t * 1e9), direction: .sent, adapter: 0, kind: .hci(.command),
               payload: [UInt8(op & 0xFF), UInt8(op >> 8), UInt8(params.count)] + params[...])
    }

    /// An LE Advertising Report (ADV_IND, no data) from a random address.
    static func report(_ n: Int, _ t: Double, from address: UInt64) -> Packet {
        var p: [UInt8] = [0x02, 0x01, 0x00, 0x01]
        for k in 0..<6 { p.append(UInt8(truncatingIfNeeded: address >> (8 * k))) }
        p += [0x00, 0xC4]
        return Packet(number: n, timestamp: Int64(t * 1e9), direction: .received, adapter: 0, kind: .hci(.event),
                      payload: [0x3E, UInt8(p.count)] + p[...])
    }

    /// A scan stopped and started again after `gap` seconds with the same parameters, three
    /// reports of one advertiser in each part.
    static func restartedScan(gap: Double) -> [Packet] {
        let params: [UInt8] = [0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]
        var out = [hci(1, 0, command: 0x200B, params), hci(2, 0.01, command: 0x200C, [0x01, 0x00])]
        for k in 0..<3 { out.append(report(out.count + 1, 0.1 + Double(k) * 0.1, from: 0xC0FF_EE00_0001)) }
        out.append(hci(out.count + 1, 1, command: 0x200C, [0x00, 0x00]))
        out.append(hci(out.count + 1, 1 + gap, command: 0x200C, [0x01, 0x00]))
        for k in 0..<3 { out.append(report(out.count + 1, 1.1 + gap + Double(k) * 0.1, from: 0xC0FF_EE00_0001)) }
        out.append(hci(out.count + 1, 2 + gap, command: 0x200C, [0x00, 0x00]))
        return out
    }

    static func auditPackets(_ packets: [Packet], configuration: AuditConfiguration = AuditConfiguration()) -> AuditOutcome {
        let dissector = Dissector()
        let feed = AuditFeed(dissector: dissector, scanRestartGap: configuration.scanRestartGap)
        let auditor = Auditor(configuration: configuration)
        for p in packets { feed.events(dissector.dissect(p), into: auditor) }
        let last = packets.last.map { FrameRef(number: $0.number, time: $0.timestamp) }
        feed.finish(into: auditor, at: last)
        return auditor.finishAudit(at: last)
    }

    /// Within the gap the scan goes on: one scan with six reports, one occurrence.
    func testScanRestartedWithinTheGapIsOneScan() {
        let one = Self.auditPackets(Self.restartedScan(gap: 0.02))
        XCTAssertEqual(one.findings.map(\.rule), ["BLE101"])
        XCTAssertEqual(one.findings.first?.count, 1)
        XCTAssertTrue(one.findings.first?.message.hasPrefix("6 advertising reports") ?? false, one.findings.first?.message ?? "")
        // Half a second later it is a new scan, of the same habit: one finding, two occurrences.
        let two = Self.auditPackets(Self.restartedScan(gap: 0.5))
        XCTAssertEqual(two.findings.map(\.rule), ["BLE101"])
        XCTAssertEqual(two.findings.first?.count, 2)
        XCTAssertEqual(two.findings.first?.later.first?.decisive.number, 7)
        // The gap is configurable.
        var wide = AuditConfiguration()
        wide.scanRestartGap = 1_000_000_000
        XCTAssertEqual(Self.auditPackets(Self.restartedScan(gap: 0.5), configuration: wide).findings.first?.count, 1)
    }

    /// Three reports of one advertiser show duplicates arrived; two do not.
    func testScanDuplicatesJudgedFromReports() {
        var packets = Self.restartedScan(gap: 5)
        packets.remove(at: 4)  // the third report of the first scan
        let o = Self.auditPackets(packets)
        XCTAssertEqual(o.findings.first?.count, 1, "only the second scan repeated an advertiser 3 times")
    }
}

/// Evidence of Android beyond its vendor commands: its scan modes, and the Qualcomm controller's
/// debug channel, which is no connection.
final class PlatformEvidenceTests: XCTestCase {
    func testAndroidScanModeParametersTellAndroid() throws {
        // LE Set Scan Parameters: active, interval 8000 (5 s), window 800 (500 ms): the low-power
        // mode of Android before 8.0 (../shared/captures/mchwalisz_lightsapp-cli__btsnoop_hci.log frame 55).
        let o = try PlatformTests.audit("bad_full_discovery.btsnoop") { t in
            [Packet(number: 0, timestamp: t, direction: .sent, adapter: 0, kind: .hci(.command),
                    payload: [0x0B, 0x20, 0x07, 0x01, 0x40, 0x1F, 0x20, 0x03, 0x01, 0x00])]
        }
        XCTAssertEqual(o.platform.platform, .android)
        XCTAssertEqual(o.platform.evidence, "Android's scan mode parameters (5000/500 ms)")
    }

    func testVendorDebugHandleIsNoConnection() throws {
        // ACL data on 0x0EDC with no Connection Complete: 20 s apart, an ATT Read Request each time,
        // never answered (a real connection would show BLE403 and BLE401).
        let o = try PlatformTests.audit("bad_full_discovery.btsnoop") { t in
            (0..<3).map { i in
                Packet(number: 0, timestamp: t &+ Int64(i) * 20_000_000_000, direction: .sent, adapter: 0, kind: .hci(.aclData),
                       payload: [0xDC, 0x2E, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00])
            }
        }
        XCTAssertEqual(o.platform.platform, .android)
        XCTAssertEqual(o.platform.evidence, "Qualcomm vendor debug data on ACL handle 0x0EDC")
        let all = o.findings + o.platformBehaviour + o.otherApps
        XCTAssertFalse(all.contains { $0.subject.handle == 0x0EDC }, all.map(\.message).joined(separator: " | "))
    }
}
