import XCTest
@testable import Decoders
@testable import Report
import Wire

final class AuditScanRulesTests: XCTestCase {
    private func scanWithReports(filter: UInt8) -> EventStream {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: filter, extended: false)
        for i in 0..<12 {
            let addr = BDAddr(0x1100_0000_0000 + UInt64(i % 3))
            s.add(0.1 + Double(i) * 0.3, .advertisingReport(adapter: 0, address: addr, addressType: 0, rssi: -60, scanResponse: false))
        }
        s.scanEnable(4.1, adapter: 0, enabled: false, filterDuplicates: 0, extended: false)
        return s
    }

    func testBLE101DuplicatesAllowed() {
        let f = audit(scanWithReports(filter: 0), only: "BLE101")
        assertOne(f, "BLE101", .warning, frames: [1, 13], decisive: 1,
                  message: ["12 advertising reports from 3 devices in 4.1 s with duplicate filtering off"])
    }

    func testBLE101PeriodicResetIsANote() {
        let f = audit(scanWithReports(filter: 2), only: "BLE101")
        assertOne(f, "BLE101", .note, frames: [1, 13], message: ["reset each scan period"])
    }

    /// Stacks restart scans every few seconds; restarts that brought in nothing are not findings.
    func testBLE101ScanWithoutReportsIsNotReported() {
        var s = EventStream()
        for i in 0..<5 {
            s.scanEnable(Double(i), adapter: 0, enabled: true, filterDuplicates: 0, extended: true)
            s.scanEnable(Double(i) + 0.5, adapter: 0, enabled: false, filterDuplicates: 0, extended: true)
        }
        assertNone(audit(s, only: "BLE101"))
    }

    func testBLE101FilteredScanIsFine() {
        assertNone(audit(scanWithReports(filter: 1), only: "BLE101"))
    }

    func testBLE102ScanLeftOnAfterConnect() {
        var s = EventStream()
        let c = s.connection()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(1, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        s.add(1.5, .connected(c))
        s.add(4, att(c, .local, 0x0A, .request, handle: 3))
        assertOne(audit(s, only: "BLE102"), "BLE102", .warning, frames: [1, 3, 4], decisive: 4,
                  message: ["scanning still enabled 2.5 s after this host connected to c0:ff:ee:00:00:01"])
    }

    func testBLE102ScanNeverDisabledWithConnection() {
        var s = EventStream()
        let c = s.connection()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(1, .connected(c))
        s.add(1.5, att(c, .local, 0x0A, .request, handle: 3))
        assertOne(audit(s, only: "BLE102"), "BLE102", .warning, frames: [1, 2], message: ["never disabled"])
    }

    func testBLE102ScanStoppedBeforeConnect() {
        var s = EventStream()
        let c = s.connection()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.scanEnable(1, adapter: 0, enabled: false, filterDuplicates: 0, extended: false)
        s.add(1.1, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        s.add(1.5, .connected(c))
        s.add(9, att(c, .local, 0x0A, .request, handle: 3))
        assertNone(audit(s, only: "BLE102"))
    }

    /// The case the rule's documentation names: the app stopped scanning to connect, then started
    /// a scan again and never stopped it.
    func testBLE102ScanStartedAgainAfterConnectingAndLeftOn() {
        var s = EventStream()
        let c = s.connection()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.scanEnable(0.5, adapter: 0, enabled: false, filterDuplicates: 1, extended: false)
        s.add(1, .connected(c))
        s.scanEnable(4, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(60, att(c, .local, 0x0A, .request, handle: 3))
        assertOne(audit(s, only: "BLE102"), "BLE102", .warning, frames: [3, 4, 5], decisive: 4,
                  message: ["scanning started again 3.0 s after this host connected", "kept on while connected"])
    }

    /// Judged against the scan that found the device: that scan was stopped; another, with other
    /// parameters, ran at the connection (another client's scan on a phone).
    func testBLE102ScanThatFoundTheDeviceWasStopped() {
        var s = EventStream()
        let c = s.connection()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(0.2, .advertisingReport(adapter: 0, address: c.peer!, addressType: 1, rssi: -50, scanResponse: false))
        s.scanEnable(0.5, adapter: 0, enabled: false, filterDuplicates: 1, extended: false)
        s.scanEnable(0.6, adapter: 0, enabled: true, filterDuplicates: 0, extended: false)
        s.add(1, .connected(c))
        s.add(9, att(c, .local, 0x0A, .request, handle: 3))
        assertNone(audit(s, only: "BLE102"))
    }

    /// Every connection made during a scan is judged, not only the first.
    func testBLE102EveryConnectionDuringTheScan() {
        var s = EventStream()
        let a = s.connection(handle: 0x40, peer: 0xC0FF_EE00_0001)
        let b = s.connection(handle: 0x41, peer: 0xC0FF_EE00_0002)
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(1, .connected(a))
        s.scanEnable(1.5, adapter: 0, enabled: false, filterDuplicates: 1, extended: false)
        s.scanEnable(2, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(3, .connected(b))
        s.add(9, att(b, .local, 0x0A, .request, handle: 3))
        let f = audit(s, only: "BLE102")
        // b was connected during the scan; the scan restarted while a was up and stayed on is a's.
        XCTAssertEqual(f.map { $0.subject.address }, [a.peer, b.peer], f.map(\.message).joined(separator: " | "))
        XCTAssertTrue(f.first?.message.contains("started again 1.0 s after this host connected") == true)
    }

    /// The app's habit: it stops its scan to connect and restarts it once connected. A scan started
    /// after the link closed is a new scan, not this one's business.
    func testBLE102ScanRestartedWhileConnectedAndAfterDisconnect() {
        var s = EventStream()
        let a = s.connection()
        s.scanEnable(0, enabled: true)
        s.scanEnable(0.5, enabled: false)
        s.add(1, .connected(a))
        s.scanEnable(2, enabled: true)
        s.add(5, att(a, .local, 0x0A, .request, handle: 3))
        s.scanEnable(6, enabled: false)
        s.add(7, .disconnected(a, reason: 0x13))
        s.scanEnable(7.05, enabled: true)
        s.add(40, .advertisingReport(adapter: 0, address: peerA, addressType: 1, rssi: -60, scanResponse: false))
        let f = audit(s, only: "BLE102")
        XCTAssertEqual(f.count, 1, f.map(\.message).joined(separator: " | "))
        XCTAssertTrue(f.first?.message.contains("started again 1.0 s after this host connected") == true)
        XCTAssertEqual(f.first?.decisive.number, 4)
    }

    /// A scan owned by another app (its filters show it) is reported apart, never as a finding.
    func testBLE103OtherAppsScanIsNotAFinding() {
        var s = EventStream()
        let gms = ActivityOwner(.otherApp, "scan filters of Google Play services (Fast Pair 0xFE2C)")
        s.scanEnable(0, enabled: true, owner: gms)
        s.scanEnable(75, enabled: false, owner: gms)
        var config = AuditConfiguration()
        for t in AuditRules.all where t.info.id != "BLE103" { config.rules[t.info.id] = RuleOverride(enabled: false) }
        let auditor = Auditor(configuration: config, capturePath: "test.pcap")
        for (e, f) in s.items { auditor.observe(e, at: f) }
        let o = auditor.finishAudit()
        assertNone(o.findings)
        XCTAssertEqual(o.otherApps.map(\.rule), ["BLE103"])
        XCTAssertEqual(o.otherApps.first?.advice, "another app's: scan filters of Google Play services (Fast Pair 0xFE2C)")
    }

    func testBLE102PassiveMonitoringIsFine() {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(100, .advertisingReport(adapter: 0, address: peerA, addressType: 0, rssi: nil, scanResponse: false))
        assertNone(audit(s, only: "BLE102"))
    }

    func testBLE103LongScan() {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(30, .advertisingReport(adapter: 0, address: peerA, addressType: 0, rssi: nil, scanResponse: false))
        s.scanEnable(75, adapter: 0, enabled: false, filterDuplicates: 0, extended: false)
        assertOne(audit(s, only: "BLE103"), "BLE103", .note, frames: [1, 3], decisive: 3,
                  message: ["scan enabled for 75.0 s with no connection attempt"])
    }

    func testBLE103LongScanThatConnectsIsFine() {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.add(70, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        s.scanEnable(75, adapter: 0, enabled: false, filterDuplicates: 0, extended: false)
        assertNone(audit(s, only: "BLE103"))
    }

    func testBLE103ThresholdFromConfiguration() {
        var s = EventStream()
        s.scanEnable(0, adapter: 0, enabled: true, filterDuplicates: 1, extended: false)
        s.scanEnable(75, adapter: 0, enabled: false, filterDuplicates: 0, extended: false)
        let f = audit(s, only: "BLE103") { $0.rules["BLE103"] = RuleOverride(values: ["duration": 120_000_000_000]) }
        assertNone(f)
    }
}
