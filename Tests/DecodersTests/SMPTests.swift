import XCTest
@testable import Decoders
import Wire

/// Byte vectors for the SMP and L2CAP signaling tests.
enum SMPVectors {
    /// Hex string to bytes; spaces ignored.
    static func hex(_ s: String) -> Bytes {
        let digits = Array(s.filter { !$0.isWhitespace })
        var out: [UInt8] = []
        var i = 0
        while i + 1 < digits.count {
            out.append(UInt8(String(digits[i...i + 1]), radix: 16)!)
            i += 2
        }
        return out[...]
    }

    /// A slice that does not start at index 0, to catch code that assumes 0-based slices.
    static func offset(_ s: String) -> Bytes {
        let b = [0xEE, 0xEE, 0xEE] + Array(hex(s))
        return b[3...]
    }
}

final class SMPTests: XCTestCase {
    // MARK: Commands, vectors from captures (file, frame) as tshark extracts them

    /// crackle__le_secure_connections.pcapng frame 57.
    func testPairingRequestSC() throws {
        let pdu = SMPPDU(SMPVectors.offset("01030009100d0f"))
        XCTAssertNil(pdu.malformed)
        guard case .pairingRequest(let f)? = pdu.command else { return XCTFail("\(String(describing: pdu.command))") }
        XCTAssertEqual(f.ioCapability, .noInputNoOutput)
        XCTAssertFalse(f.oobPresent)
        XCTAssertTrue(f.authReq.bonding)
        XCTAssertTrue(f.authReq.secureConnections)
        XCTAssertFalse(f.authReq.mitm)
        XCTAssertFalse(f.authReq.keypress)
        XCTAssertFalse(f.authReq.ct2)
        XCTAssertEqual(f.maxEncryptionKeySize, 16)
        XCTAssertEqual(f.initiatorKeys, [.encKey, .signKey, .linkKey])
        XCTAssertEqual(f.responderKeys, [.encKey, .idKey, .signKey, .linkKey])
        XCTAssertEqual(pdu.summary, "Pairing Request: No Input, No Output | AuthReq: Bonding, SC"
                       + " | Initiator Key(s): LTK, CSRK, LinkKey | Responder Key(s): LTK, IRK, CSRK, LinkKey")
        let labels = pdu.fields.map(\.label)
        XCTAssertEqual(labels, ["Opcode", "IO Capability", "OOB Data Flag", "AuthReq", "Max Encryption Key Size",
                                "Initiator Key Distribution", "Responder Key Distribution"])
    }

    /// crackle__le_secure_connections.pcapng frame 66.
    func testPairingResponse() {
        let pdu = SMPPDU(SMPVectors.hex("02040009100103"))
        guard case .pairingResponse(let f)? = pdu.command else { return XCTFail() }
        XCTAssertEqual(f.ioCapability, .keyboardDisplay)
        XCTAssertEqual(f.initiatorKeys, .encKey)
        XCTAssertEqual(f.responderKeys, [.encKey, .idKey])
    }

    /// tesible__mouse.pcapng frame 1075: AuthReq 0x2D = Bonding, MITM, SC, CT2.
    func testAuthReqCT2() {
        guard case .pairingRequest(let f)? = SMPPDU(SMPVectors.hex("0104002d100b0b")).command else { return XCTFail() }
        XCTAssertEqual(f.authReq.names, ["Bonding", "MITM", "SC", "CT2"])
        XCTAssertEqual(f.ioCapability, .keyboardDisplay)
    }

    /// crackle__le_secure_connections.pcapng frames 75 (public key), 140, 143, 151.
    func testSCValues() {
        let key = "0c440ed0f2bcb429aa389228a83cf340bc8f196c942bbeaa30e1b1fbf83abb5be701d0854bd9b1834c2a89716b6cfbd4f60956835b664fc8534378cb71afd2a759"
        let pk = SMPPDU(SMPVectors.hex(key))
        guard case .pairingPublicKey(let x, let y)? = pk.command else { return XCTFail() }
        XCTAssertEqual(Hex.string(x), String(key.dropFirst(2).prefix(64)))
        XCTAssertEqual(Hex.string(y), String(key.suffix(64)))
        XCTAssertEqual(pk.summary, "Pairing Public Key")

        guard case .pairingConfirm(let c)? = SMPPDU(SMPVectors.hex("03aa09c34967b26f584146c2eac5b35570")).command
        else { return XCTFail() }
        XCTAssertEqual(Hex.string(c), "aa09c34967b26f584146c2eac5b35570")
        guard case .pairingRandom(let r)? = SMPPDU(SMPVectors.hex("0474b48747a55a628c01b4bd7b36120cce")).command
        else { return XCTFail() }
        XCTAssertEqual(r.count, 16)
        guard case .pairingDHKeyCheck(let e)? = SMPPDU(SMPVectors.hex("0df72a516510c91e29c1fc1582e4aa4a5f")).command
        else { return XCTFail() }
        XCTAssertEqual(Hex.string(e), "f72a516510c91e29c1fc1582e4aa4a5f")
    }

    /// tesible__mouse.pcapng frames 1186, 1188, 1190, 1192 (legacy key distribution).
    func testKeyDistributionCommands() {
        guard case .encryptionInformation(let ltk)? = SMPPDU(SMPVectors.hex("0692d73a3afc899aa2b01f5d631e28201b")).command
        else { return XCTFail() }
        XCTAssertEqual(Hex.string(ltk), "92d73a3afc899aa2b01f5d631e28201b")

        let ci = SMPPDU(SMPVectors.hex("070a846b27f0d7dc98b1b4"))
        guard case .centralIdentification(let ediv, let rand)? = ci.command else { return XCTFail() }
        XCTAssertEqual(ediv, 0x840A)
        XCTAssertEqual(rand, 0xB4B1_98DC_D7F0_276B)
        XCTAssertEqual(ci.summary, "Central Identification: EDIV 0x840A")

        guard case .identityInformation(let irk)? = SMPPDU(SMPVectors.hex("087baf689e6df570ab41ac0d1f4c4d2109")).command
        else { return XCTFail() }
        XCTAssertEqual(irk.count, 16)

        let ia = SMPPDU(SMPVectors.hex("09005400316be0e2"))
        guard case .identityAddressInformation(let type, let addr)? = ia.command else { return XCTFail() }
        XCTAssertEqual(type, 0)
        XCTAssertEqual(addr.description, "e2:e0:6b:31:00:54")
        XCTAssertEqual(ia.summary, "Identity Address Information: Public e2:e0:6b:31:00:54")
    }

    /// sweyn__capture_cypress_psoc6_crash_llid.pcapng frames 1147, 2707 (failed), 306 (signing).
    func testPairingFailedAndSigning() {
        let failed = SMPPDU(SMPVectors.hex("050a"))
        XCTAssertEqual(failed.command, .pairingFailed(reason: 0x0A))
        XCTAssertEqual(failed.summary, "Pairing Failed: Invalid Parameters")
        XCTAssertEqual(SMPPDU(SMPVectors.hex("0504")).summary, "Pairing Failed: Confirm Value Failed")
        XCTAssertEqual(SMPFailureReason.name(0x0B), "DHKey Check Failed")
        XCTAssertEqual(SMPFailureReason.name(0x10), "Busy")
        XCTAssertEqual(SMPFailureReason.name(0x00), "Reserved")
        XCTAssertEqual(SMPFailureReason.name(0xFF), "Reserved")
        guard case .signingInformation(let csrk)? = SMPPDU(SMPVectors.hex("0a53c51f8bf486fc65a5a50829079ad7d3")).command
        else { return XCTFail() }
        XCTAssertEqual(Hex.string(csrk), "53c51f8bf486fc65a5a50829079ad7d3")
    }

    /// sweyn__capture_microchip_ATSAMB11_invalid_fragment.pcap frame 42: Security Request, Bonding.
    func testSecurityRequest() {
        let pdu = SMPPDU(SMPVectors.hex("0b01"))
        guard case .securityRequest(let a)? = pdu.command else { return XCTFail() }
        XCTAssertTrue(a.bonding)
        XCTAssertEqual(pdu.summary, "Security Request: AuthReq: Bonding")
        // Spec value: Bonding | MITM | SC | Keypress (0x1D).
        XCTAssertEqual(SMPPDU(SMPVectors.hex("0b1d")).summary, "Security Request: AuthReq: Bonding, MITM, SC, Keypress")
        // Reserved bonding flags, CT2, and a pairing that distributes no keys.
        XCTAssertEqual(SMPPDU(SMPVectors.hex("0b22")).summary, "Security Request: AuthReq: Bonding Flags Reserved (0x2), CT2")
        XCTAssertEqual(SMPPDU(SMPVectors.hex("01030000100000")).summary,
                       "Pairing Request: No Input, No Output | AuthReq: No Bonding | Initiator Key(s): none | Responder Key(s): none")
        XCTAssertEqual(SMPPDU(SMPVectors.hex("05")).summary, "Pairing Failed [Malformed]")
    }

    /// Vol 3 Part H 3.5.8: Keypress Notification, type 0x01 digit entered.
    func testKeypressNotification() {
        let pdu = SMPPDU(SMPVectors.hex("0e01"))
        XCTAssertEqual(pdu.command, .pairingKeypressNotification(type: 1))
        XCTAssertEqual(pdu.summary, "Pairing Keypress Notification: Passkey Digit Entered")
        XCTAssertEqual(KeypressNotificationType.name(4), "Passkey Entry Completed")
        XCTAssertEqual(KeypressNotificationType.name(5), "Reserved")
    }

    // MARK: Malformed input

    func testTruncatedKeepsWhatWasRead() {
        let pdu = SMPPDU(SMPVectors.hex("010300"))
        XCTAssertNil(pdu.command)
        XCTAssertNotNil(pdu.malformed)
        XCTAssertEqual(pdu.fields.map(\.label), ["Opcode", "IO Capability", "OOB Data Flag", "Malformed"])
        XCTAssertTrue(pdu.summary.hasPrefix("Pairing Request"))
        XCTAssertTrue(pdu.summary.hasSuffix("[Malformed]"))
    }

    func testExtraBytesDecodeButFlag() {
        let pdu = SMPPDU(SMPVectors.hex("050aff"))
        XCTAssertEqual(pdu.command, .pairingFailed(reason: 0x0A))
        XCTAssertNotNil(pdu.malformed)
        XCTAssertTrue(pdu.fields.contains { $0.label == "Extra Data" })
    }

    /// sweyn__capture_cypress_psoc6_crash_llid.pcapng carries fuzzed opcodes such as 0x87.
    func testUnknownAndEmpty() {
        let unknown = SMPPDU(SMPVectors.hex("87aabb"))
        XCTAssertNil(unknown.command)
        XCTAssertEqual(unknown.opcode, 0x87)
        XCTAssertTrue(unknown.summary.hasPrefix("Unknown Opcode 0x87"))
        XCTAssertEqual(unknown.fields.map(\.label), ["Opcode", "Data", "Malformed"])
        let empty = SMPPDU(SMPVectors.hex(""))
        XCTAssertNil(empty.opcode)
        XCTAssertEqual(empty.fields.count, 1)
        _ = empty.summary
    }

    func testEveryPrefixOfEveryCommandIsSafe() {
        for op in SMPOpcode.allCases {
            let full = [op.rawValue] + Array(repeating: UInt8(0xA5), count: 70)
            for n in 0...full.count {
                let pdu = SMPPDU(full[0..<n])
                _ = pdu.summary
                _ = pdu.fields
            }
        }
    }

    // MARK: Pairing method (Vol 3 Part H 2.3.5.1, Table 2.8)

    static func features(_ io: IOCapability, mitm: Bool = true, sc: Bool, oob: Bool = false,
                         keypress: Bool = false) -> PairingFeatures {
        var auth: UInt8 = 0x01
        if mitm { auth |= 0x04 }
        if sc { auth |= 0x08 }
        if keypress { auth |= 0x10 }
        return PairingFeatures(ioCapability: io.rawValue, oobDataFlag: oob ? 1 : 0, authReq: auth,
                               maxEncryptionKeySize: 16, initiatorKeys: 0x03, responderKeys: 0x03)
    }

    /// Table 2.8 written out cell by cell as the specification prints it: rows are the
    /// responder, columns the initiator (DisplayOnly, DisplayYesNo, KeyboardOnly,
    /// NoInputNoOutput, KeyboardDisplay). "RD": responder displays, initiator inputs;
    /// "ID": initiator displays, responder inputs; "BI": both input; "NC": numeric comparison.
    static let legacyTable = [
        ["JW", "JW", "RD", "JW", "RD"],
        ["JW", "JW", "RD", "JW", "RD"],
        ["ID", "ID", "BI", "JW", "ID"],
        ["JW", "JW", "JW", "JW", "JW"],
        ["ID", "ID", "RD", "JW", "ID"],
    ]
    static let scTable = [
        ["JW", "JW", "RD", "JW", "RD"],
        ["JW", "NC", "RD", "JW", "NC"],
        ["ID", "ID", "BI", "JW", "ID"],
        ["JW", "JW", "JW", "JW", "JW"],
        ["ID", "NC", "RD", "JW", "NC"],
    ]

    static func code(_ m: PairingMethod) -> String {
        switch m {
        case .justWorks: return "JW"
        case .numericComparison: return "NC"
        case .outOfBand: return "OOB"
        case .passkeyEntry(.responderDisplaysInitiatorInputs): return "RD"
        case .passkeyEntry(.initiatorDisplaysResponderInputs): return "ID"
        case .passkeyEntry(.bothInput): return "BI"
        }
    }

    func testIOCapabilityMatrix() {
        for sc in [false, true] {
            let table = sc ? SMPTests.scTable : SMPTests.legacyTable
            for r in IOCapability.allCases {
                for i in IOCapability.allCases {
                    let m = PairingMethod.resolve(request: SMPTests.features(i, sc: sc),
                                                  response: SMPTests.features(r, sc: sc))
                    XCTAssertEqual(SMPTests.code(m), table[Int(r.rawValue)][Int(i.rawValue)],
                                   "sc=\(sc) initiator \(i) responder \(r)")
                }
            }
        }
    }

    func testNoMITMIsJustWorks() {
        let m = PairingMethod.resolve(request: SMPTests.features(.keyboardDisplay, mitm: false, sc: true),
                                      response: SMPTests.features(.keyboardDisplay, mitm: false, sc: true))
        XCTAssertEqual(m, .justWorks)
        // One side asking for MITM is enough to use the IO capabilities.
        let one = PairingMethod.resolve(request: SMPTests.features(.keyboardDisplay, mitm: true, sc: true),
                                        response: SMPTests.features(.keyboardDisplay, mitm: false, sc: true))
        XCTAssertEqual(one, .numericComparison)
    }

    func testOOB() {
        let f = SMPTests.features
        // Legacy: OOB only when both have OOB data.
        XCTAssertEqual(PairingMethod.resolve(request: f(.noInputNoOutput, true, false, true, false),
                                             response: f(.noInputNoOutput, true, false, true, false)), .outOfBand)
        XCTAssertEqual(PairingMethod.resolve(request: f(.noInputNoOutput, true, false, true, false),
                                             response: f(.noInputNoOutput, true, false, false, false)), .justWorks)
        // LE Secure Connections: either side's OOB data is enough, MITM or not.
        XCTAssertEqual(PairingMethod.resolve(request: f(.noInputNoOutput, false, true, true, false),
                                             response: f(.noInputNoOutput, false, true, false, false)), .outOfBand)
        XCTAssertEqual(PairingMethod.resolve(request: f(.displayOnly, true, true, false, false),
                                             response: f(.keyboardOnly, true, true, true, false)), .outOfBand)
    }

    // MARK: Tracker

    func feed(_ tracker: PairingTracker, _ steps: [(Side, Int, String)]) {
        for (side, frame, hex) in steps { tracker.feed(SMPPDU(SMPVectors.hex(hex)), from: side, frame: frame) }
    }

    /// crackle__le_secure_connections.pcapng: SC, both NoInputNoOutput → Just Works.
    func testTrackerSCJustWorks() throws {
        let t = PairingTracker()
        feed(t, [(.local, 57, "01030009100d0f"), (.remote, 66, "02040009100103"),
                 (.local, 75, "0c" + String(repeating: "11", count: 64)),
                 (.remote, 138, "0c" + String(repeating: "22", count: 64)),
                 (.remote, 140, "03aa09c34967b26f584146c2eac5b35570"),
                 (.local, 143, "0474b48747a55a628c01b4bd7b36120cce"),
                 (.remote, 148, "0432bd4875b470cd236460fea79a1cd3c4"),
                 (.local, 151, "0df72a516510c91e29c1fc1582e4aa4a5f"),
                 (.remote, 156, "0d12459a5f8493fe9d859bf8a6ad05cba2")])
        XCTAssertEqual(t.outcomes.count, 1)
        let o = try XCTUnwrap(t.current)
        XCTAssertEqual(o.initiator, .local)
        XCTAssertEqual(o.requestFrame, 57)
        XCTAssertEqual(o.responseFrame, 66)
        XCTAssertTrue(o.secureConnections)
        XCTAssertEqual(o.method, .justWorks)
        XCTAssertFalse(o.legacyDespiteSC)
        XCTAssertTrue(o.isWeak)
        XCTAssertNil(o.failure)
        XCTAssertEqual(o.publicKeysSeen, 2)
        // Response 0x01/0x03 within request 0x0D/0x0F; SC ignores EncKey.
        XCTAssertEqual(o.negotiatedInitiatorKeys, [])
        XCTAssertEqual(o.negotiatedResponderKeys, .idKey)
    }

    /// tesible__Lv4_passkey.pcapng frames 3239/3242: KeyboardDisplay initiator, DisplayOnly
    /// responder, both MITM and SC → Passkey Entry, responder displays.
    func testTrackerSCPasskey() throws {
        let t = PairingTracker()
        feed(t, [(.local, 3239, "0104002d100b0b"), (.remote, 3242, "0200000d100200"),
                 (.local, 3243, "0c" + String(repeating: "33", count: 64)),
                 (.remote, 3246, "0c" + String(repeating: "44", count: 64)),
                 (.local, 3550, "03a71f2b759e5d4bb567c0c808e1f715c4")])
        let o = try XCTUnwrap(t.current)
        XCTAssertEqual(o.method, .passkeyEntry(.responderDisplaysInitiatorInputs))
        XCTAssertEqual(o.method?.name, "Passkey Entry (responder displays, initiator inputs)")
        XCTAssertTrue(o.secureConnections)
        XCTAssertFalse(o.isWeak)
        XCTAssertFalse(o.keypressNotifications)
    }

    /// tesible__mouse.pcapng frames 1075–1195: initiator offers SC, responder
    /// (NoInputNoOutput) does not → LE legacy Just Works; keys distributed both ways.
    func testTrackerLegacyKeys() throws {
        let t = PairingTracker()
        feed(t, [(.local, 1075, "0104002d100b0b"), (.remote, 1078, "02030001100203"),
                 (.local, 1165, "03130e33c4a6b7b13568f758fe473fcc57"),
                 (.remote, 1168, "032787fbf6e87aca21e6980215392fa19b"),
                 (.local, 1169, "04198760c6c54abf93eb11a23c641bde74"),
                 (.remote, 1172, "04eeec9c082d730ba44e5eb8d326c0a0bd"),
                 (.remote, 1186, "0692d73a3afc899aa2b01f5d631e28201b"),
                 (.remote, 1188, "070a846b27f0d7dc98b1b4"),
                 (.remote, 1190, "087baf689e6df570ab41ac0d1f4c4d2109"),
                 (.remote, 1192, "09005400316be0e2"),
                 (.local, 1193, "080190fcc49c61a65f6500da59b185721b"),
                 (.local, 1195, "090037c580677e6c")])
        let o = try XCTUnwrap(t.current)
        XCTAssertFalse(o.secureConnections)
        XCTAssertEqual(o.method, .justWorks)
        XCTAssertTrue(o.initiatorSupportsSC)
        XCTAssertFalse(o.responderSupportsSC)
        XCTAssertFalse(o.legacyDespiteSC)
        XCTAssertTrue(o.isWeak)
        XCTAssertEqual(o.negotiatedInitiatorKeys, .idKey)
        XCTAssertEqual(o.negotiatedResponderKeys, [.encKey, .idKey])
        XCTAssertEqual(o.keysFromResponder, [.encKey, .idKey])
        XCTAssertEqual(o.keysFromInitiator, .idKey)
        XCTAssertEqual(o.responderIdentityAddress?.description, "e2:e0:6b:31:00:54")
        XCTAssertEqual(o.initiatorIdentityAddress?.description, "6c:7e:67:80:c5:37")
    }

    /// The responder's Security Request offers SC, its Pairing Response drops it: a
    /// legacy pairing between two SC devices, weak even though Passkey Entry is used.
    func testTrackerLegacyDespiteSC() throws {
        let t = PairingTracker()
        t.feed(SMPPDU(SMPVectors.hex("0b0d")), from: .remote, frame: 10)
        t.feed(SMPPDU(SMPVectors.hex("01040d0d100303")), from: .local, frame: 11)  // KeyboardDisplay, MITM, SC
        t.feed(SMPPDU(SMPVectors.hex("020000051003 03")), from: .remote, frame: 12)  // DisplayOnly, MITM, no SC
        let o = try XCTUnwrap(t.current)
        XCTAssertTrue(o.bothSupportSC)
        XCTAssertFalse(o.secureConnections)
        XCTAssertTrue(o.legacyDespiteSC)
        XCTAssertEqual(o.method, .passkeyEntry(.responderDisplaysInitiatorInputs))
        XCTAssertTrue(o.isWeak)
    }

    /// Both set SC, but the exchange runs legacy (confirm with no public keys, EDIV/Rand).
    func testTrackerLegacyExchangeAfterSCNegotiated() throws {
        let t = PairingTracker()
        t.feed(SMPPDU(SMPVectors.hex("01040d0d100303")), from: .local, frame: 1)
        t.feed(SMPPDU(SMPVectors.hex("02000d0d100303")), from: .remote, frame: 2)
        XCTAssertEqual(t.current?.legacyDespiteSC, false)
        t.feed(SMPPDU(SMPVectors.hex("03" + String(repeating: "00", count: 16))), from: .local, frame: 3)
        XCTAssertEqual(t.current?.legacyDespiteSC, true)
        XCTAssertEqual(t.current?.isWeak, true)
    }

    func testTrackerKeypressAndFailure() throws {
        let t = PairingTracker()
        // KeyboardOnly both sides, MITM + SC + Keypress: both input the passkey.
        t.feed(SMPPDU(SMPVectors.hex("0102001d100303")), from: .remote, frame: 5)
        t.feed(SMPPDU(SMPVectors.hex("0202001d100303")), from: .local, frame: 6)
        t.feed(SMPPDU(SMPVectors.hex("0e00")), from: .local, frame: 7)
        t.feed(SMPPDU(SMPVectors.hex("0e01")), from: .local, frame: 8)
        t.feed(SMPPDU(SMPVectors.hex("0501")), from: .remote, frame: 9)
        let o = try XCTUnwrap(t.current)
        XCTAssertEqual(o.initiator, .remote)
        XCTAssertEqual(o.method, .passkeyEntry(.bothInput))
        XCTAssertTrue(o.keypressNotifications)
        XCTAssertEqual(o.keypressNotificationsSeen, 2)
        XCTAssertEqual(o.failure, PairingFailure(reason: 1, side: .remote, frame: 9))
        XCTAssertEqual(o.failure?.reasonName, "Passkey Entry Failed")
        // Keypress needs both flags.
        let t2 = PairingTracker()
        t2.feed(SMPPDU(SMPVectors.hex("0102001d100303")), from: .local, frame: 1)
        t2.feed(SMPPDU(SMPVectors.hex("0202000d100303")), from: .remote, frame: 2)
        XCTAssertEqual(t2.current?.keypressNotifications, false)
    }

    func testTrackerIgnoresStrayAndRestarts() {
        let t = PairingTracker()
        // No pairing yet: keys and responses are ignored, no crash.
        t.feed(SMPPDU(SMPVectors.hex("02030001100203")), from: .remote, frame: 1)
        t.feed(SMPPDU(SMPVectors.hex("0501")), from: .remote, frame: 2)
        XCTAssertTrue(t.outcomes.isEmpty)
        t.feed(SMPPDU(SMPVectors.hex("01030001100303")), from: .local, frame: 3)
        t.feed(SMPPDU(SMPVectors.hex("01030001100303")), from: .local, frame: 4)
        XCTAssertEqual(t.outcomes.count, 2)
        XCTAssertNil(t.current?.method)
        // A response from the initiator's own side does not count.
        t.feed(SMPPDU(SMPVectors.hex("02030001100303")), from: .local, frame: 5)
        XCTAssertNil(t.current?.response)
    }
}
