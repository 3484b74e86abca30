import XCTest
@testable import Decoders
@testable import Report

final class AuditSecurityRulesTests: XCTestCase {
    private func emailRead(encryptFirst: Bool, error: Bool = false, custom: BluetoothUUID? = nil) -> EventStream {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        if encryptFirst { s.add(0.5, .encryptionChanged(c, on: true)) }
        let obs = ATTObservation(origin: .local, opcode: .readRequest, kind: .request, handle: 0x0030,
                                 characteristic: custom ?? BluetoothUUID(uuid16: 0x2A87), service: BluetoothUUID(uuid16: 0x181C))
        s.add(1, .att(c, obs))
        s.add(1.1, att(c, .remote, error ? 0x01 : 0x0B, .response, length: 14))
        s.add(2, .disconnected(c, reason: 0x13))
        return s
    }

    func testBLE601PersonalDataOnUnencryptedLink() {
        assertOne(audit(emailRead(encryptFirst: false), only: "BLE601"), "BLE601", .warning, frames: [2], decisive: 2,
                  message: ["Email Address (0x2A87) read 1 time on a link that was never encrypted"])
    }

    func testBLE601AfterEncryptionOrRefusedIsFine() {
        assertNone(audit(emailRead(encryptFirst: true), only: "BLE601"))
        assertNone(audit(emailRead(encryptFirst: false, error: true), only: "BLE601"))
    }

    func testBLE601ConfiguredCustomCharacteristic() {
        let custom = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .att(c, ATTObservation(origin: .local, opcode: .writeCommand, kind: .command, handle: 0x0020, characteristic: custom)))
        s.add(2, .disconnected(c, reason: 0x13))
        assertNone(audit(s, only: "BLE601"))
        let f = audit(s, only: "BLE601") { $0.sensitiveCharacteristics = [custom] }
        assertOne(f, "BLE601", .warning, frames: [2], message: ["write 1 time"])
    }

    func testBLE602JustWorks() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .justWorks, secureConnections: true, bothSupportSecureConnections: true)))
        assertOne(audit(s, only: "BLE602"), "BLE602", .note, frames: [2], message: ["Just Works pairing", "no MITM protection"])
    }

    func testBLE602AvoidableLegacyPairing() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .passkey, secureConnections: false, bothSupportSecureConnections: true)))
        assertOne(audit(s, only: "BLE602"), "BLE602", .note, frames: [2],
                  message: ["LE legacy pairing (Passkey Entry) although both sides support Secure Connections"])
    }

    func testBLE602AuthenticatedSecureConnectionsIsFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .numericComparison, secureConnections: true, bothSupportSecureConnections: true)))
        s.add(2, .pairing(c, PairingObservation(method: .justWorks, secureConnections: true, bothSupportSecureConnections: true, failed: true)))
        assertNone(audit(s, only: "BLE602"))
    }

    func testBLE603LegacyPairingAPassiveListenerBreaks() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .passkey, secureConnections: false, bothSupportSecureConnections: false)))
        assertOne(audit(s, only: "BLE603"), "BLE603", .warning, frames: [2], message: ["LE legacy Passkey Entry pairing", "1,000,000 tries"])
    }

    func testBLE603DebugKey() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .numericComparison, secureConnections: true, bothSupportSecureConnections: true)))
        s.add(2, .pairingDebugKey(c, fromInitiator: false))
        assertOne(audit(s, only: "BLE603"), "BLE603", .warning, frames: [3], message: ["debug key, sent by the peripheral"])
    }

    /// Secure Connections without the debug key, legacy OOB (a 128-bit TK) and a failed pairing
    /// give nothing away.
    func testBLE603SecureConnectionsAndOOBAreFine() {
        var s = EventStream()
        let c = s.connection()
        s.add(0, .connected(c))
        s.add(1, .pairing(c, PairingObservation(method: .justWorks, secureConnections: true, bothSupportSecureConnections: true)))
        s.add(2, .pairing(c, PairingObservation(method: .oob, secureConnections: false, bothSupportSecureConnections: false)))
        s.add(3, .pairing(c, PairingObservation(method: .justWorks, secureConnections: false, bothSupportSecureConnections: false, failed: true)))
        assertNone(audit(s, only: "BLE603"))
    }
}
