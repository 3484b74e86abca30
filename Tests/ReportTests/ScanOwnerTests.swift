import XCTest
@testable import Decoders
@testable import Report
import Wire

/// Whose scan a log shows, from Android's scan filters (APCF, 0xFD57). Parameters as sent in
/// ../shared/captures/cagnulein_qdomyos-zwift__write_inclination_3.5_and_0.log and fossibot__btsnoop_hci.log.
final class ScanOwnerTests: XCTestCase {
    private func filters(_ commands: [String]) -> AndroidScanFilters {
        var f = AndroidScanFilters()
        for c in commands {
            // Offset by one, as a command's parameters are a slice of its frame.
            var b: [UInt8] = [0xEE]
            var it = c.makeIterator()
            while let x = it.next(), let y = it.next() { b.append(UInt8(String([x, y]), radix: 16)!) }
            f.command(b[1...])
        }
        return f
    }

    func testAllPassFilterIsTheForegroundApp() {
        // Frames 356-358: enable, then filter 1 with feature selection 0 (all pass).
        let f = filters(["0001", "01000100001111018000000000000000"])
        XCTAssertEqual(f.owner(configured: []).kind, .app)
    }

    func testFastPairServiceDataFilterIsGooglePlayServices() {
        // Frames 519-523: service data 0xFE2C (Fast Pair) on filter 0x0A.
        let f = filters(["0001", "07000a2cfe002cfe00", "01000a40001111018000000000000000"])
        let o = f.owner(configured: [])
        XCTAssertEqual(o.kind, .otherApp)
        XCTAssertEqual(o.reason, "scan filters of Google Play services (Fast Pair 0xFE2C)")
    }

    func testDeletedFilterNoLongerCounts() {
        // Filter 1 (all pass) added then deleted (frame 391, "010101"): only Fast Pair is left.
        let f = filters(["01000100001111018000000000000000", "07000a2cfe002cfe00", "01000a40001111018000000000000000",
                         "010101"])
        XCTAssertEqual(f.owner(configured: []).kind, .otherApp)
    }

    func testAddressFilterIsACompanionAppUnlessConfigured() {
        // fossibot frames 139-141: address filter fc:91:5d:71:de:1b on filter 4.
        let f = filters(["0200041bde715d91fc02", "01000401001111018001f401018010270200"])
        XCTAssertEqual(f.owner(configured: []).kind, .otherApp)
        XCTAssertEqual(f.addresses, [BDAddr(parsing: "fc:91:5d:71:de:1b")!])
        XCTAssertEqual(f.owner(configured: [.address(BDAddr(parsing: "fc:91:5d:71:de:1b")!)]).kind, .app)
    }

    func testUnknownServiceFilterIsAnUnknownAppsScan() {
        // darkelf frames 287-289: the app's filter on service 0xFF00.
        let f = filters(["0001", "03000a00ffffff", "01000a040011110180000000000000000000"])
        XCTAssertEqual(f.owner(configured: []).kind, .unknown)
        XCTAssertEqual(f.owner(configured: [.service(BluetoothUUID(uuid16: 0xFF00))]).kind, .app)
    }

    func testLinuxBackgroundScanIsTheOS() {
        XCTAssertTrue(ScanParameters(active: false, interval: 0x60, window: 0x30).isLinuxBackgroundScan)
        XCTAssertFalse(ScanParameters(active: true, interval: 0x12, window: 0x12).isLinuxBackgroundScan)
    }
}

/// BlueZ: a discovery a D-Bus client started through the management interface is the app's; the
/// kernel's passive accept-list scan for a pending connect is the OS's, and the connect goes to the
/// scan that found the device. From ../shared/captures/blesecpoc__hci_capture_20260306_121058.snoop.
final class BlueZScanOwnerTests: XCTestCase {
    func testManagementDiscoveryAndKernelConnectScan() {
        var m = ScanModel(restartGap: 100_000_000, configured: [])
        let sink = Collect()
        m.management(adapter: 0, opcode: 0x003A)  // Start Service Discovery (frame 7)
        m.parameters(adapter: 0, ScanParameters(active: true, interval: 0x12, window: 0x12))
        m.enable(adapter: 0, on: true, filterDuplicates: 1, extended: false, at: FrameRef(number: 12, time: 0), sink)
        m.management(adapter: 0, opcode: 0x0024)  // Stop Discovery (frame 74)
        m.enable(adapter: 0, on: false, filterDuplicates: 0, extended: false, at: FrameRef(number: 109, time: 1_000_000_000), sink)
        m.parameters(adapter: 0, ScanParameters(active: false, interval: 0x60, window: 0x60, filterPolicy: 1))
        m.enable(adapter: 0, on: true, filterDuplicates: 1, extended: false, at: FrameRef(number: 117, time: 1_200_000_000), sink)
        let started = sink.events.compactMap { e -> Scan? in if case .scanStarted(let s) = e { return s } else { return nil } }
        XCTAssertEqual(started.map(\.owner.kind), [.app, .os])
    }

    final class Collect: AuditEventSink {
        var events: [AuditEvent] = []
        func observe(_ event: AuditEvent, at frame: FrameRef) { events.append(event) }
    }
}
