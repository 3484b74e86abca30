import XCTest
@testable import Decoders
@testable import Report

final class AuditConnectionRulesTests: XCTestCase {
    // MARK: BLE401

    func testBLE401IdleConnection() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        s.add(1.1, att(c, .remote, 0x0B, .response, length: 2))
        s.add(43.4, att(c, .local, 0x0A, .request, handle: 3))
        s.add(44, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(44.1, .disconnected(c, reason: 0x16))
        assertOne(audit(s, only: "BLE401"), "BLE401", .warning, frames: [3, 4], decisive: 4,
                  message: ["no ACL data (ATT, SMP, L2CAP) for 42.3 s"])
    }

    /// A client with the server's handles cached from an earlier connection subscribes without
    /// discovering: a 2-octet write of 0x0001 to a handle never discovered, then notifications.
    func testBLE401SubscriptionFromCachedHandles() {
        for notified in [true, false] {
            var s = EventStream()
            let c = s.connection()
            s.add(0, .connected(c))
            s.add(1, .att(c, ATTObservation(origin: .local, opcode: .writeRequest, kind: .request, handle: 0x0842,
                                            valueLength: 2, cccdValue: 1)))
            s.add(1.1, att(c, .remote, 0x13, .response))
            if notified { s.add(2, att(c, .remote, 0x1B, .notification, handle: 0x0841, length: 4)) }
            s.add(60, .disconnected(c, reason: 0x13))
            let f = audit(s, only: "BLE401")
            if notified { assertNone(f) } else { XCTAssertEqual(f.map(\.rule), ["BLE401"]) }
        }
    }

    /// Any ACL data is the link in use: SMP, signalling, other channels, not only ATT.
    func testBLE401OtherL2CAPTrafficIsActivity() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        for t in stride(from: 20.0, through: 80, by: 20) { s.add(t, .linkData(c)) }
        s.add(95, .disconnected(c, reason: 0x16))
        assertNone(audit(s, only: "BLE401"))
    }

    /// A BR/EDR link serves profiles (RFCOMM, SDP, A2DP) the app does not hold as an LE link; a
    /// handle met only in data (no connection seen opening) has no known start.
    func testBLE401JudgesLELinksSeenOpening() {
        var s = EventStream()
        let classic = Connection(id: 7, adapter: 0, handle: 0x000B, isLE: false, frame: 1, time: 0)
        classic.isCentral = true
        s.add(0, .connected(classic))
        s.add(1, .linkData(classic))
        s.add(90, .linkData(classic))
        let midStream = s.connection(handle: 0x0EDC)
        s.add(2, att(midStream, .remote, 0x1B, .notification, handle: 9, length: 2))
        s.add(99, att(midStream, .remote, 0x1B, .notification, handle: 9, length: 2))
        assertNone(audit(s, only: "BLE401"))
    }

    func testBLE401IdleWithNotificationsOnIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0001))
        s.add(1.1, att(c, .remote, 0x13, .response))
        s.add(50, att(c, .remote, 0x1B, .notification, handle: 0x0012, length: 2))
        s.add(51, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE401"))
    }

    /// A pause is judged by the subscriptions it was under: the one before the subscription counts,
    /// a longer one while notifications were on does not.
    func testBLE401PauseJudgedByTheSubscriptionsOfItsTime() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        s.add(40.5, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0001))
        s.add(41, att(c, .remote, 0x1B, .notification, handle: 0x0012, length: 2))
        s.add(120, att(c, .remote, 0x1B, .notification, handle: 0x0012, length: 2))
        s.add(121, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0000))
        s.add(122, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(122.1, .disconnected(c, reason: 0x16))
        assertOne(audit(s, only: "BLE401"), "BLE401", .warning, frames: [2, 3], decisive: 3,
                  message: ["no ACL data (ATT, SMP, L2CAP) for 39.5 s"])
    }

    func testBLE401NoDisconnectAfterUnsubscribing() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0001))
        s.add(1.1, att(c, .remote, 0x13, .response))
        s.add(2, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0000))
        s.add(2.1, att(c, .remote, 0x13, .response))
        s.add(9.5, att(c, .local, 0x0A, .request, handle: 3))
        s.add(9.6, att(c, .remote, 0x0B, .response))
        s.add(10, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE401"), "BLE401", .warning, frames: [4, 6], decisive: 6,
                  message: ["all notifications switched off", "still connected 7.5 s later"])
    }

    func testBLE401DisconnectSoonAfterUnsubscribingIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0001))
        s.add(1.1, att(c, .remote, 0x13, .response))
        s.add(2, att(c, .local, 0x12, .request, handle: 0x0013, cccd: 0x0000))
        s.add(2.1, att(c, .remote, 0x13, .response))
        s.add(3, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(20, .disconnected(c, reason: 0x16))
        assertNone(audit(s, only: "BLE401"))
    }

    func testBLE401PeripheralRoleIsNotFlagged() {
        var s = EventStream()
        let c = s.connection(central: false)
        s.add(0, .connected(c))
        s.add(100, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE401"))
    }

    // MARK: BLE402

    func testBLE402ReconnectBeforeDisconnectionComplete() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(1.12, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        s.add(1.2, .disconnected(c, reason: 0x16))
        assertOne(audit(s, only: "BLE402"), "BLE402", .error, frames: [2, 3], decisive: 3,
                  message: ["LE Create Connection to c0:ff:ee:00:00:01 120 ms after HCI Disconnect of handle 0x0040"])
    }

    func testBLE402ReconnectAfterDisconnectionCompleteIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .disconnectCommand(adapter: 0, handle: c.handle, peer: nil))
        s.add(1.2, .disconnected(c, reason: 0x16))
        s.add(1.3, .createConnection(adapter: 0, peer: peerA, peerType: 1))
        assertNone(audit(s, only: "BLE402"))
    }

    // MARK: BLE404

    /// `count` Write Requests to handle 0x0023 every `period` seconds, each answered 55 ms later,
    /// with the characteristic's properties.
    private func writes(_ count: Int, properties: UInt8?, cccd: UInt16? = nil, period: Double = 0.06) -> EventStream {
        var s = EventStream()
        let c = s.connection()
        c.interval = 24
        s.add(0, .connected(c))
        for i in 0..<count {
            let t = 1 + Double(i) * period
            s.add(t, att(c, .local, 0x12, .request, handle: 0x23, length: 20, characteristic: 0x2A9F, properties: properties, cccd: cccd))
            s.add(t + 0.055, att(c, .remote, 0x13, .response))
        }
        s.add(10, .disconnected(c, reason: 0x13))
        return s
    }

    func testBLE404WriteRequestStream() {
        // Write (0x08) and Write Without Response (0x04) declared: 20 writes in 1.14 s, each 5 ms
        // after the one before was answered. Waiting, one
        // 20-octet value per two 30 ms intervals (2.67 kbit/s); without, 44 a 30 ms event on LE 1M
        // (235 kbit/s).
        assertOne(audit(writes(25, properties: 0x0C), only: "BLE404"), "BLE404", .note, frames: [2, 40, 50], decisive: 40,
                  message: ["25 Write Requests to", "20 of them within 1.1 s each sent as the last was answered, although it accepts Write Without Response",
                            "at a 30 ms interval and ATT_MTU 23 that is at most 3 kbit/s against 235 kbit/s without waiting"])
    }

    /// A characteristic that needs each write acknowledged, too few writes, CCCD writes, or writes
    /// paced by something else (200 ms after each answer, as a command protocol does): nothing.
    func testBLE404NotAFinding() {
        assertNone(audit(writes(25, properties: 0x0C, period: 0.25), only: "BLE404"))
        assertNone(audit(writes(25, properties: 0x08), only: "BLE404"))
        assertNone(audit(writes(19, properties: 0x0C), only: "BLE404"))
        assertNone(audit(writes(25, properties: nil), only: "BLE404"))
        assertNone(audit(writes(25, properties: 0x0C, cccd: 1), only: "BLE404"))
    }

    // MARK: BLE403

    func testBLE403PipelinedRequests() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        s.add(1.01, att(c, .local, 0x12, .request, handle: 5))
        s.add(1.1, att(c, .remote, 0x0B, .response))
        s.add(1.2, att(c, .remote, 0x13, .response))
        s.add(2, .disconnected(c, reason: 0x13))
        assertOne(audit(s, only: "BLE403"), "BLE403", .error, frames: [2, 3], decisive: 3,
                  message: ["1 ATT request sent by this host before the response", "Write Request while Read Request"])
    }

    func testBLE403TransactionTimeout() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        s.add(35, .disconnected(c, reason: 0x08))
        assertOne(audit(s, only: "BLE403"), "BLE403", .error, frames: [2, 3], decisive: 2,
                  message: ["Read Request (0x0A) sent by this host got no response in 30.0 s"])
    }

    func testBLE403SequentialRequestsAndCommandsAreFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, att(c, .local, 0x0A, .request, handle: 3))
        s.add(1.05, att(c, .local, 0x52, .command, handle: 7))
        s.add(1.06, att(c, .remote, 0x1B, .notification, handle: 9))
        s.add(1.07, att(c, .local, 0xD2, .command, handle: 7))
        s.add(1.1, att(c, .remote, 0x0B, .response))
        s.add(1.2, att(c, .local, 0x12, .request, handle: 5))
        s.add(1.3, att(c, .remote, 0x13, .response))
        s.add(1.4, att(c, .remote, 0x0A, .request, handle: 1))
        s.add(1.5, att(c, .local, 0x0B, .response))
        s.add(2, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE403"))
    }
}
