import XCTest
@testable import Decoders
@testable import Report

final class AuditAdvertisingRulesTests: XCTestCase {
    private func hostData(_ data: [UInt8], scanResponse: Bool = false) -> AuditEvent {
        .advertisingData(adapter: 0, advertiser: nil, data: data[...], scanResponse: scanResponse, legacy: true, sentByHost: true)
    }

    private func stream(_ events: [AuditEvent]) -> EventStream {
        var s = EventStream()
        for (i, e) in events.enumerated() { s.add(Double(i) * 0.1, e) }
        return s
    }

    // Flags, complete 16-bit list (0x180D), complete name "Sensor".
    private let good: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18, 0x07, 0x09] + Array("Sensor".utf8)

    // MARK: BLE501

    func testBLE501TooLong() {
        let long: [UInt8] = [0x02, 0x01, 0x06, 0x21, 0xFF] + [UInt8](repeating: 0xAB, count: 32)
        assertOne(audit(stream([hostData(long)]), only: "BLE501"), "BLE501", .error, frames: [1],
                  message: ["legacy advertising data of 37 bytes (limit 31)"])
    }

    func testBLE501MalformedStructure() {
        let bad: [UInt8] = [0x02, 0x01, 0x06, 0x09, 0x09, 0x41, 0x42]
        assertOne(audit(stream([hostData(good), hostData(bad)]), only: "BLE501"), "BLE501", .error, frames: [2],
                  message: ["AD structure at offset 3 (length 9) runs past the end of the 7-byte advertising data"])
    }

    func testBLE501ValidDataIsFine() {
        assertNone(audit(stream([hostData(good), hostData([0x02, 0x01, 0x06, 0x00, 0x00], scanResponse: true)]), only: "BLE501"))
    }

    // MARK: BLE502

    /// An incomplete list in data with no room for one more UUID: UUIDs were left out for space.
    func testBLE502IncompleteList() {
        let name: [UInt8] = [0x15, 0x09] + Array("Heart rate monitor 1".utf8)  // 22 bytes
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x02, 0x0D, 0x18, 0x0F, 0x18] + name  // 31 bytes
        assertOne(audit(stream([hostData(data), hostData(data)]), only: "BLE502"), "BLE502", .note, frames: [1],
                  message: ["incomplete list of 16-bit service UUIDs (AD 0x02) in full advertising data: 0x180D, 0x180F"])
    }

    /// With room left, an incomplete list is a choice, not an overflow.
    func testBLE502IncompleteListWithRoomIsNotOverflow() {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x02, 0x0D, 0x18, 0x0F, 0x18]
        assertNone(audit(stream([hostData(data)]), only: "BLE502"))
    }

    /// An incomplete 128-bit list that holds the device's only 128-bit service (its discovery shows
    /// it) left nothing out; one that misses a discovered 128-bit service did.
    func testBLE502IncompleteListHoldingEveryDiscoveredService() {
        let listed = BluetoothUUID("8B592A7B-DC5C-42CB-B0DD-DFAAF6AF1F0C")!
        let other = BluetoothUUID("F000FFC0-0451-4000-B000-000000000000")!
        let name: [UInt8] = [0x0C, 0x09] + Array("Light 00000".utf8)  // 13 bytes
        let data: [UInt8] = [0x11, 0x06] + listed.bigEndianBytes.reversed() + name  // 31 bytes
        for services in [[listed, BluetoothUUID(uuid16: 0x180A)], [listed, other]] {
            var s = EventStream()
            let c = s.connection(peer: peerA.raw)
            s.add(0, .advertisingData(adapter: 0, advertiser: peerA, data: data[...], scanResponse: false, legacy: true,
                                      sentByHost: false))
            s.add(1, .connected(c))
            s.add(1.2, discovery: ATTObservation(origin: .remote, opcode: .readByGroupTypeResponse, kind: .response),
                  on: c, found: services)
            let f = audit(s, only: "BLE502")
            if services.contains(other) { XCTAssertEqual(f.map(\.rule), ["BLE502"]) } else { assertNone(f) }
        }
    }

    func testBLE502AppleOverflowArea() {
        var bitmap = [UInt8](repeating: 0, count: 16)
        bitmap[7] = 0x22
        let data: [UInt8] = [0x14, 0xFF, 0x4C, 0x00, 0x01] + bitmap
        let e = AuditEvent.advertisingData(adapter: 0, advertiser: peerA, data: data[...], scanResponse: false, legacy: true,
                                           sentByHost: false)
        let f = audit(stream([e]), only: "BLE502") { $0.devices = [.address(peerA)] }
        assertOne(f, "BLE502", .note, frames: [1], message: ["Apple overflow area", "2 service UUID bits set"])
        XCTAssertEqual(f.first?.subject.kind, .advertiser)
        XCTAssertEqual(f.first?.subject.address, peerA)
    }

    /// An advertiser this host never connected to and configuration does not name is a bystander:
    /// its findings go to the nearby devices, unless every advertiser is audited or it is picked by
    /// name or service.
    func testBystandersAreNotFindings() {
        let data: [UInt8] = [0x05, 0x08, 0x48, 0x52, 0x2D, 0x31, 0x03, 0x02, 0x0D, 0x18]  // "HR-1", incomplete 0x180D
        let ad = AuditEvent.advertisingData(adapter: 0, advertiser: peerA, data: data[...], scanResponse: false, legacy: true,
                                            sentByHost: false)
        // Its scan response is empty: the complete name is nowhere.
        let rsp = AuditEvent.advertisingData(adapter: 0, advertiser: peerA, data: [][...], scanResponse: true, legacy: true,
                                             sentByHost: false)
        let e = [ad, rsp]
        assertNone(audit(stream(e), only: "BLE503"))
        let auditor = Auditor(configuration: AuditConfiguration(), capturePath: "t")
        for (x, f) in stream(e).items { auditor.observe(x, at: f) }
        let o = auditor.finishAudit()
        XCTAssertEqual(Set(o.nearby.map(\.rule)), ["BLE503"])
        XCTAssertTrue(o.findings.isEmpty)
        XCTAssertEqual(audit(stream(e), only: "BLE503") { $0.allAdvertisers = true }.count, 1)
        XCTAssertEqual(audit(stream(e), only: "BLE503") { $0.devices = [.name("HR-*")] }.count, 1)
        XCTAssertEqual(audit(stream(e), only: "BLE503") { $0.devices = [.service(BluetoothUUID(uuid16: 0x180D))] }.count, 1)
        XCTAssertEqual(audit(stream(e), only: "BLE503") { $0.devices = [.name("Other*")] }.count, 0)
        // Connected to: a device under test.
        var s = EventStream()
        let c = s.connection(peer: peerA.raw)
        s.add(0, ad)
        s.add(0.1, rsp)
        s.add(1, .connected(c))
        XCTAssertEqual(audit(s, only: "BLE503").count, 1)
    }

    /// A received advertiser's scan response was never seen (passive scanning, a sniffer that
    /// missed it): it may hold the complete name.
    func testBLE503UnknownScanResponseIsNotJudged() {
        let data: [UInt8] = [0x05, 0x08, 0x48, 0x52, 0x2D, 0x31]
        let e = AuditEvent.advertisingData(adapter: 0, advertiser: peerA, data: data[...], scanResponse: false, legacy: true,
                                           sentByHost: false)
        assertNone(audit(stream([e]), only: "BLE503") { $0.allAdvertisers = true })
    }

    func testBLE502CompleteListIsFine() {
        assertNone(audit(stream([hostData(good)]), only: "BLE502"))
    }

    // MARK: BLE503

    func testBLE503ShortenedName() {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x08] + Array("Sen".utf8)
        assertOne(audit(stream([hostData(data)]), only: "BLE503"), "BLE503", .note, frames: [1],
                  message: ["Shortened Local Name \"Sen\""])
    }

    func testBLE503CompleteNameInScanResponseIsFine() {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x08] + Array("Sen".utf8)
        let scanResponse: [UInt8] = [0x07, 0x09] + Array("Sensor".utf8)
        assertNone(audit(stream([hostData(data), hostData(scanResponse, scanResponse: true)]), only: "BLE503"))
    }

    // MARK: BLE504

    private func advertisingWhileConnected(for seconds: Double) -> EventStream {
        var s = EventStream()
        let c = s.connection(central: false)
        s.add(0, .connected(c))
        s.advertisingEnable(1, enabled: true)
        s.advertisingEnable(1 + seconds, enabled: false)
        s.add(20, .disconnected(c, reason: 0x13))
        return s
    }

    func testBLE504AdvertisingKeptOnWhileConnected() {
        assertOne(audit(advertisingWhileConnected(for: 7), only: "BLE504"), "BLE504", .warning, frames: [2, 3], decisive: 2,
                  message: ["advertising re-enabled while connected as peripheral", "kept on for 7.0 s"])
    }

    func testBLE504BriefAdvertisingIsFine() {
        assertNone(audit(advertisingWhileConnected(for: 2), only: "BLE504"))
    }

    func testBLE504SwitchedOffByConfiguration() {
        let f = audit(advertisingWhileConnected(for: 7), only: "BLE504") { $0.rules["BLE504"] = RuleOverride(enabled: false) }
        assertNone(f)
    }

    // MARK: BLE505

    private func advertising(intervalMax: UInt32, for seconds: Double) -> EventStream {
        var s = EventStream()
        s.add(0, .advertisingParameters(HostAdvertisingParameters(
            adapter: 0, intervalMin: intervalMax, intervalMax: intervalMax, legacy: true, scannable: true, connectable: true,
            channels: 3, primaryPHY: 1, secondaryPHY: 1)))
        s.advertisingEnable(0.1, enabled: true)
        s.advertisingEnable(0.1 + seconds, enabled: false)
        return s
    }

    func testBLE505AggressiveInterval() {
        assertOne(audit(advertising(intervalMax: 32, for: 45), only: "BLE505"), "BLE505", .note, frames: [2, 3], decisive: 2,
                  message: ["advertising interval max 20 ms (0x0020) kept on for 45.0 s"])
    }

    func testBLE505RelaxedIntervalOrShortBurstIsFine() {
        assertNone(audit(advertising(intervalMax: 160, for: 45), only: "BLE505"))
        assertNone(audit(advertising(intervalMax: 32, for: 20), only: "BLE505"))
    }
}
