import XCTest
@testable import Decoders
@testable import Report

final class AuditGATTRulesTests: XCTestCase {
    // MARK: BLE201

    func testBLE201DiscoverAllPrimaryServices() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(0.2, att(c, .remote, 0x11, .response, length: 12))
        s.add(0.3, att(c, .local, 0x10, .request, handle: 0x0010, end: 0xFFFF, type: 0x2800))
        s.add(0.4, att(c, .remote, 0x01, .response))
        s.add(0.5, att(c, .local, 0x0A, .request, handle: 0x0012, characteristic: 0x2A19, service: 0x180F))
        s.add(0.6, att(c, .remote, 0x0B, .response, length: 1))
        s.add(1, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE201"), "BLE201", .warning, frames: [2, 4], decisive: 2,
                  message: ["in 2 requests to the end of the database", "1 service used afterwards", "0x180F"])
    }

    /// The auditor hands notifications to BLE201 only on links whose client discovered: on this
    /// one it did, so the notified service counts as used; the other link never discovered and
    /// holds nothing.
    func testBLE201NotificationsAfterDiscoveryCountAsUse() {
        var s = EventStream()
        let c = s.connection()
        let cached = s.connection()
        s.add(0, .connected(c))
        s.add(0, .connected(cached))
        s.add(0.1, att(c, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(0.2, att(c, .remote, 0x01, .response))
        s.add(0.3, att(cached, .remote, 0x1B, .notification, handle: 0x0012, characteristic: 0x2A37, service: 0x180D))
        s.add(0.4, att(c, .remote, 0x1B, .notification, handle: 0x0012, characteristic: 0x2A37, service: 0x180D))
        s.add(1, .disconnected(c, reason: 0x13))
        s.add(1, .disconnected(cached, reason: 0x13))
        assertOne(audit(s, only: "BLE201"), "BLE201", .warning, frames: [3], decisive: 3,
                  message: ["1 service used afterwards (Heart Rate 0x180D)"])
    }

    /// A service used before the discovery, and not after it, is not one the discovery found a use for.
    func testBLE201UseBeforeTheDiscoveryDoesNotCount() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x0A, .request, handle: 0x0012, characteristic: 0x2A19, service: 0x180F))
        s.add(0.2, att(c, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(0.3, att(c, .remote, 0x01, .response))
        s.add(0.4, att(c, .remote, 0x1B, .notification, handle: 0x0022, characteristic: 0x2A37, service: 0x180D))
        s.add(1, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE201"), "BLE201", .warning, frames: [3], decisive: 3,
                  message: ["1 service used afterwards (Heart Rate 0x180D)"])
    }

    func testBLE201DiscoveryByUUIDIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x06, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(0.2, att(c, .remote, 0x07, .response, length: 4))
        s.add(1, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE201"))
    }

    // MARK: BLE202

    /// The walk's continuations (0x0007-0xFFFF, ...) are part of it: one finding, not a second
    /// about an unused range 0x0007-0xFFFF.
    func testBLE202WholeDatabaseCharacteristicDiscovery() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x08, .request, handle: 0x0001, end: 0xFFFF, type: 0x2803))
        s.add(0.2, att(c, .remote, 0x09, .response, length: 14))
        s.add(0.21, att(c, .local, 0x08, .request, handle: 0x0007, end: 0xFFFF, type: 0x2803))
        s.add(0.22, att(c, .remote, 0x01, .response))
        s.add(0.3, att(c, .local, 0x0A, .request, handle: 0x0003))
        s.add(1, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE202"), "BLE202", .warning, frames: [2], decisive: 2,
                  message: ["over the whole database 0x0001-0xFFFF"])
    }

    /// The second range is used by a notification, handed to BLE202 because the client
    /// discovered on the link.
    func testBLE202UnusedServiceRange() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x08, .request, handle: 0x0010, end: 0x001F, type: 0x2803, service: 0x180D))
        s.add(0.2, att(c, .remote, 0x09, .response, length: 14))
        s.add(0.3, att(c, .local, 0x08, .request, handle: 0x0014, end: 0x001F, type: 0x2803))
        s.add(0.4, att(c, .remote, 0x01, .response))
        s.add(0.41, att(c, .local, 0x08, .request, handle: 0x0020, end: 0x002F, type: 0x2803, service: 0x180F))
        s.add(0.42, att(c, .remote, 0x09, .response, length: 14))
        s.add(0.43, att(c, .remote, 0x1B, .notification, handle: 0x0022))
        s.add(0.5, att(c, .local, 0x0A, .request, handle: 0x0030))
        s.add(1, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE202"), "BLE202", .warning, frames: [2], decisive: 2,
                  message: ["1 service range", "0x0010-0x001F", "0x180D"])
    }

    func testBLE202DiscoveryOfUsedServiceIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.1, att(c, .local, 0x08, .request, handle: 0x0010, end: 0x001F, type: 0x2803, service: 0x180D))
        s.add(0.2, att(c, .remote, 0x09, .response, length: 14))
        s.add(0.3, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0001))
        s.add(0.4, att(c, .remote, 0x13, .response))
        s.add(1, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE202"))
    }

    /// A sniffed link that was encrypted and read all the same (its keys were known) hides nothing:
    /// a discovery on it whose ranges go unused is judged. Without a PDU read after the encryption,
    /// what the link carried is unknown, and it is not.
    func testBLE202SniffedEncryptedLinkHidesUseOnlyWhenUnread() {
        for readAfter in [true, false] {
            var s = EventStream()
            let c = s.connection()
            c.overTheAir = true
            s.add(0, .connected(c))
            s.add(0.1, att(c, .local, 0x08, .request, handle: 0x0010, end: 0x001F, type: 0x2803, service: 0x180D))
            s.add(0.2, att(c, .remote, 0x09, .response, length: 14))
            c.encryptedFrame = s.add(0.3, .encryptionChanged(c, on: true))
            if readAfter { s.add(0.4, att(c, .local, 0x08, .request, handle: 0x0014, end: 0x001F, type: 0x2803)) }
            s.add(1, .disconnected(c, reason: 0x13))
            if readAfter {
                assertOne(audit(s, only: "BLE202"), "BLE202", .warning, frames: [2], decisive: 2,
                          message: ["1 service range whose characteristics were never used: 0x0010-0x001F"])
            } else {
                assertNone(audit(s, only: "BLE202"))
            }
        }
    }

    /// An ATT observation is plain bytes: the feed makes one per PDU and lends it to each rule, and
    /// copying it retains nothing (a discovery response's list comes as its own `.discovery` event).
    func testATTObservationHoldsNoReference() {
        XCTAssertTrue(_isPOD(ATTObservation.self))
    }

    // MARK: BLE203

    /// Two connections to one server, each discovering the whole database. The first finds the
    /// server's characteristics: `has` of them (0x2A05 Service Changed, 0x2B2A Database Hash).
    /// `inService`: the service whose characteristics that response lists (0x1801 Generic Attribute).
    private func twoConnections(serviceChanged: Bool, has: [UInt16] = [0x2A00], inService: UInt16 = 0x1801) -> EventStream {
        var s = EventStream()
        let c1 = s.connection(handle: 0x40)
        s.add(0, .connected(c1))
        s.add(0.1, att(c1, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(0.2, att(c1, .remote, 0x01, .response))
        s.add(0.3, discovery: ATTObservation(origin: .remote, opcode: .readByTypeResponse, kind: .response,
                                             service: BluetoothUUID(uuid16: inService)),
              on: c1, found: has.map { BluetoothUUID(uuid16: $0) })
        if serviceChanged {
            s.add(0.5, .att(c1, ATTObservation(origin: .remote, opcode: .handleValueIndication, kind: .indication, handle: 0x0003,
                                               characteristic: BluetoothUUID(uuid16: 0x2A05))))
        }
        s.add(1, .disconnected(c1, reason: 0x13))
        let c2 = s.connection(handle: 0x41)
        s.add(5, .connected(c2))
        s.add(5.1, att(c2, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
        s.add(5.2, att(c2, .remote, 0x01, .response))
        s.add(6, .disconnected(c2, reason: 0x13))
        return s
    }

    func testBLE203RediscoveryOnReconnect() {
        assertOne(audit(twoConnections(serviceChanged: false), only: "BLE203"), "BLE203", .note, frames: [2, 7], decisive: 7,
                  message: ["connection #2", "connection #1", "no Service Changed characteristic"])
    }

    /// Core Vol 3 Part G 2.5.2: without a bond, a client of a server that has Service Changed must
    /// rediscover, unless the server has a Database Hash to read instead.
    func testBLE203UnbondedClientOfServerWithServiceChanged() {
        assertNone(audit(twoConnections(serviceChanged: false, has: [0x2A00, 0x2A05]), only: "BLE203"))
        assertOne(audit(twoConnections(serviceChanged: false, has: [0x2A05, 0x2B2A]), only: "BLE203"), "BLE203", .note,
                  frames: [2, 7], decisive: 7, message: ["Database Hash (0x2B2A)"])
    }

    /// Nothing is known of the server's characteristics: the cache may not have been valid.
    func testBLE203UnknownDatabaseIsNotJudged() {
        var s = EventStream()
        for h in [UInt16(0x40), 0x41] {
            let c = s.connection(handle: h)
            s.add(Double(h), .connected(c))
            s.add(Double(h) + 0.1, att(c, .local, 0x10, .request, handle: 0x0001, end: 0xFFFF, type: 0x2800))
            s.add(Double(h) + 0.5, .disconnected(c, reason: 0x13))
        }
        assertNone(audit(s, only: "BLE203"))
    }

    /// Only the GAP service's characteristics were discovered: the Generic Attribute service's are
    /// unknown, so nothing says the server has no Service Changed.
    func testBLE203UndiscoveredGATTServiceIsNotAbsent() {
        assertNone(audit(twoConnections(serviceChanged: false, has: [0x2A00, 0x2A01], inService: 0x1800), only: "BLE203"))
    }

    func testBLE203ServiceChangedInBetweenIsFine() {
        assertNone(audit(twoConnections(serviceChanged: true), only: "BLE203"))
    }

    // MARK: BLE301

    private func reads(every seconds: Double, count: Int, properties: UInt8?, handles: [UInt16] = [0x002A]) -> EventStream {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        for i in 0..<count {
            let h = handles[i % handles.count]
            s.add(1 + Double(i) * seconds, att(c, .local, 0x0A, .request, handle: h, characteristic: 0x2A19, properties: properties))
            s.add(1.05 + Double(i) * seconds, att(c, .remote, 0x0B, .response, length: 1))
        }
        s.add(60, .disconnected(c, reason: 0x13))
        return s
    }

    func testBLE301PollingANotifiableValue() {
        assertOne(audit(reads(every: 1, count: 5, properties: 0x12), only: "BLE301"), "BLE301", .warning,
                  frames: [2, 10], decisive: 10, message: ["handle 0x002A", "read 5 times in 4.0 s", "can notify"])
    }

    /// The severity configuration gives a rule is what its findings carry; a lesser variant (a
    /// value whose properties are unknown) keeps its own.
    func testConfiguredSeverityReachesFindingsButNotVariants() {
        let louder: (inout AuditConfiguration) -> Void = { $0.rules["BLE301"] = RuleOverride(severity: .error) }
        XCTAssertEqual(audit(reads(every: 1, count: 5, properties: 0x12), only: "BLE301", configure: louder).map(\.severity), [.error])
        XCTAssertEqual(audit(reads(every: 1, count: 6, properties: nil), only: "BLE301", configure: louder).map(\.severity), [.note])
    }

    func testBLE301UnknownPropertiesIsANote() {
        assertOne(audit(reads(every: 1, count: 6, properties: nil), only: "BLE301"), "BLE301", .note,
                  frames: [2, 10, 12], decisive: 10, message: ["read 6 times in 5.0 s (5 within 4.0 s)"])
    }

    /// A firmware update's flow-control read after every few writes, of a characteristic that
    /// declares Read and Write only: there is nothing to subscribe to.
    func testBLE301CharacteristicThatCannotNotifyIsFine() {
        assertNone(audit(reads(every: 1, count: 8, properties: 0x0A), only: "BLE301"))
    }

    func testBLE301SlowReadsAndDifferentHandlesAreFine() {
        assertNone(audit(reads(every: 3, count: 5, properties: 0x12), only: "BLE301"))
        assertNone(audit(reads(every: 1, count: 8, properties: 0x12, handles: [0x10, 0x11, 0x12, 0x13]), only: "BLE301"))
    }

    func testBLE301ReadBlobContinuationsCountOnce() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 0x0030, properties: 0x12))
        s.add(1.1, att(c, .remote, 0x0B, .response, length: 22))
        for i in 0..<5 {
            s.add(1.2 + Double(i) * 0.2, att(c, .local, 0x0C, .request, handle: 0x0030, properties: 0x12))
            s.add(1.3 + Double(i) * 0.2, att(c, .remote, 0x0D, .response, length: i == 4 ? 5 : 22))
        }
        s.add(10, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE301"))
    }

    // MARK: BLE302

    private func deviceNameReads(_ n: Int) -> EventStream {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        for i in 0..<n {
            s.add(1 + Double(i) * 20, att(c, .local, 0x0A, .request, handle: 0x0003, characteristic: 0x2A00))
            s.add(1.1 + Double(i) * 20, att(c, .remote, 0x0B, .response, length: 8))
        }
        s.add(100, .disconnected(c, reason: 0x13))
        return s
    }

    func testBLE302RepeatedDeviceNameReads() {
        assertOne(audit(deviceNameReads(3), only: "BLE302"), "BLE302", .note, frames: [2, 6], decisive: 6,
                  message: ["Device Name", "read 3 times in one connection"])
    }

    /// GATT "Read Using Characteristic UUID" (Read By Type of a value) reads the same static value.
    func testBLE302ReadsByCharacteristicUUIDCount() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        for i in 0..<3 {
            s.add(1 + Double(i), att(c, .local, 0x08, .request, handle: 0x0001, end: 0xFFFF, type: 0x2A01))
            s.add(1.1 + Double(i), att(c, .remote, 0x09, .response, length: 4))
        }
        s.add(9, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE302"), "BLE302", .note, frames: [2, 6], decisive: 6,
                  message: ["0x2A01 read 3 times in one connection"])
        // Reads of other types over the same range are not one polled value (BLE301).
        var t = EventStream()
        let d = t.connection()
        t.add(0, .connected(d))
        for (i, type) in [0x2A29, 0x2A27, 0x2A28, 0x2A23, 0x2A50].enumerated() {
            t.add(1 + Double(i) * 0.05, att(d, .local, 0x08, .request, handle: 0x000C, end: 0x0016, type: UInt16(type)))
            t.add(1.02 + Double(i) * 0.05, att(d, .remote, 0x09, .response, length: 8))
        }
        assertNone(audit(t, only: "BLE301"))
    }

    func testBLE302SingleReadIsFine() {
        assertNone(audit(deviceNameReads(1), only: "BLE302"))
    }

    // MARK: BLE303

    func testBLE303FullNotificationThenRead() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .remote, 0x1B, .notification, handle: 0x0010, length: 20, mtu: 23))
        s.add(1.1, att(c, .local, 0x0A, .request, handle: 0x0010))
        s.add(1.2, att(c, .remote, 0x0B, .response, length: 22))
        s.add(2, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE303"), "BLE303", .note, frames: [2, 3], decisive: 3,
                  message: ["1 notification of handle 0x0010 filled ATT_MTU-3 (20 bytes)"])
    }

    func testBLE303ShortNotificationOrNoReadIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .remote, 0x1B, .notification, handle: 0x0010, length: 20, mtu: 23))
        s.add(1.5, att(c, .remote, 0x1B, .notification, handle: 0x0011, length: 8, mtu: 23))
        s.add(1.6, att(c, .local, 0x0A, .request, handle: 0x0011))
        s.add(1.7, att(c, .remote, 0x1B, .notification, handle: 0x0010, length: 12, mtu: 23))
        s.add(1.8, att(c, .local, 0x0A, .request, handle: 0x0010))
        s.add(2, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE303"))
    }

    // MARK: BLE304

    func testBLE304ReadBlobAtDefaultMTU() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 0x0030))
        s.add(1.1, att(c, .remote, 0x0B, .response, length: 22))
        s.add(1.2, att(c, .local, 0x0C, .request, handle: 0x0030))
        s.add(1.3, att(c, .remote, 0x0D, .response, length: 22))
        s.add(1.4, att(c, .local, 0x0C, .request, handle: 0x0030))
        s.add(1.5, att(c, .remote, 0x0D, .response, length: 3))
        s.add(2, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE304"), "BLE304", .note, frames: [4, 6], decisive: 4,
                  message: ["2 Read Blob / Prepare Write requests at ATT_MTU 23 with no MTU exchange"])
    }

    func testBLE304AfterMTUExchangeIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(0.5, att(c, .local, 0x02, .request))
        s.add(0.6, att(c, .remote, 0x03, .response))
        s.add(1.2, att(c, .local, 0x0C, .request, handle: 0x0030, mtu: 23))
        s.add(2, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE304"))
    }
}
