import Foundation
import XCTest
@testable import Decoders
import Wire

/// c1 and s1 against the sample data of Core Vol 3 Part H 2.2.3 and 2.2.4, and the passkey search
/// on confirm values made with them.
final class LegacyPairingTests: XCTestCase {
    static let hex = LinkLayerCryptoTests.hex
    static func block(_ s: String) -> Block128 { Block128(msbFirst: hex(s))! }

    // 2.2.3: preq 0x07071000000101 and pres 0x05000800000302 as numbers; sent opcode first.
    static let preq = ArraySlice(hex("07071000000101").reversed())
    static let pres = ArraySlice(hex("05000800000302").reversed())
    static let ia = BDAddr(0xA1A2A3A4A5A6), ra = BDAddr(0xB1B2B3B4B5B6)
    static let r = block("5783D52156AD6F0E6388274EC6702EE0")

    func testWordAESMatchesFIPS197() {
        let key = Self.block("000102030405060708090a0b0c0d0e0f")
        XCTAssertEqual(AESWords(key: key).encrypt(Self.block("00112233445566778899aabbccddeeff")),
                       Self.block("69c4e0d86a7b0430d8cdb78070b4c55a"))
        let k2 = Self.block("2b7e151628aed2a6abf7158809cf4f3c")
        XCTAssertEqual(AESWords(key: k2).encrypt(Self.block("3243f6a8885a308d313198a2e0370734")),
                       Self.block("3925841d02dc09fbdc118597196a0b32"))
    }

    func testC1SampleData() {
        let p1 = LegacyPairingFunctions.p1(preq: Self.preq, pres: Self.pres, iat: 1, rat: 0)!
        XCTAssertEqual(p1, Self.block("05000800000302070710000001010001"))
        let p2 = LegacyPairingFunctions.p2(ia: Self.ia, ra: Self.ra)
        XCTAssertEqual(p2, Self.block("00000000A1A2A3A4A5A6B1B2B3B4B5B6"))
        XCTAssertEqual(LegacyPairingFunctions.c1(k: Block128(repeating: 0), r: Self.r, p1: p1, p2: p2),
                       Self.block("1e1e3fef878988ead2a74dc5bef13b86"))
        XCTAssertNil(LegacyPairingFunctions.p1(preq: Self.preq.dropLast(), pres: Self.pres, iat: 1, rat: 0))
    }

    func testS1SampleData() {
        let stk = LegacyPairingFunctions.s1(k: Block128(repeating: 0), r1: Self.block("000F0E0D0C0B0A091122334455667788"),
                                            r2: Self.block("010203040506070899AABBCCDDEEFF00"))
        XCTAssertEqual(stk, Self.block("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }

    func testByteOrders() {
        let b = Self.block("000102030405060708090a0b0c0d0e0f")
        XCTAssertEqual(b.msbFirst, Self.hex("000102030405060708090a0b0c0d0e0f"))
        XCTAssertEqual(Block128(lsbFirst: ArraySlice(Self.hex("0f0e0d0c0b0a09080706050403020100"))), b)
        XCTAssertNil(Block128(lsbFirst: [1, 2, 3]))
    }

    func testFindsJustWorksAndPasskey() {
        let p1 = LegacyPairingFunctions.p1(preq: Self.preq, pres: Self.pres, iat: 1, rat: 0)!
        let p2 = LegacyPairingFunctions.p2(ia: Self.ia, ra: Self.ra)
        for passkey: UInt32 in [0, 7, 12_345] {
            let confirm = LegacyPairingFunctions.c1(k: LegacyPairingFunctions.tk(passkey: passkey), r: Self.r, p1: p1, p2: p2)
            XCTAssertEqual(LegacyPairingFunctions.findPasskey(confirm: confirm, random: Self.r, p1: p1, p2: p2), passkey)
        }
    }
}

/// The sniffer captures of homewsn/bsniffhub in ../shared/captures (skipped when absent): each
/// holds one LE legacy pairing whose TK the file name gives, then the link encrypted with its STK.
final class LegacyPairingCaptureTests: XCTestCase {
    struct Run {
        var notes: [Int: String] = [:]
        /// Decrypted frames by the key's description.
        var decryptedBy: [String: Int] = [:]
        var stillEncrypted = 0
        /// SMP and ATT PDUs that came out of decrypted frames.
        var smpDecrypted = 0, attDecrypted = 0
        var revealed: [RevealedKey] = []
    }

    /// - Parameter drop: frames the sniffer is made to miss.
    static func run(_ name: String, temporaryKeys: [LTK] = [], drop: Set<Int> = []) throws -> Run {
        let url = LinkLayerCaptureTests.captures.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { throw XCTSkip("\(name) not available") }
        let dissector = Dissector(temporaryKeys: temporaryKeys)
        var r = Run()
        for (n, (lt, bytes)) in LinkLayerCaptureTests.records([UInt8](data)).enumerated() where !drop.contains(n + 1) {
            let d = dissector.dissect(Packet(Record(number: n + 1, timestamp: 0, linkType: lt, data: bytes, fileLength: bytes.count)))
            if let note = d.keyNote { r.notes[n + 1] = note }
            guard let ll = d.linkLayer else { continue }
            if ll.encryption == .encrypted, (ll.dataPDU?.length ?? 0) > 0 { r.stillEncrypted += 1 }
            guard ll.encryption == .decrypted, let key = ll.key else { continue }
            r.decryptedBy[key.description, default: 0] += 1
            switch d.upper {
            case .smp?: r.smpDecrypted += 1
            case .att?: r.attDecrypted += 1
            default: break
            }
        }
        r.revealed = dissector.revealedKeys
        return r
    }

    func testJustWorks() throws {
        let r = try Self.run("homewsn_bsniffhub__lp-justworks.pcap")
        XCTAssertEqual(r.notes.values.first, "LE legacy Just Works pairing: TK 0 found, STK ABFE42FB9EFA80C5F0A0B92FD564ECAD")
        let tk = try XCTUnwrap(r.revealed.first { $0.kind == .tk })
        XCTAssertEqual(tk.hex, "00000000000000000000000000000000")
        XCTAssertNil(tk.passkey, "Just Works has no passkey")
        XCTAssertEqual(r.stillEncrypted, 0)
        // Key distribution of both sides: LTK, EDIV/Rand, IRK, identity address, CSRK each.
        XCTAssertEqual(r.smpDecrypted, 10)
        XCTAssertEqual(r.decryptedBy.keys.first, "STK from LE legacy Just Works pairing, TK 0, frames 124–135")
    }

    /// Frames 128 and 131 hold the central's and the peripheral's Pairing Confirm, 132 and 135
    /// their Pairing Randoms, 33 the CONNECT_IND.
    func testMissedPairingValues() throws {
        let name = "homewsn_bsniffhub__lp-justworks.pcap"
        // One confirm is enough to find the TK.
        let oneConfirm = try Self.run(name, drop: [128])
        XCTAssertEqual(oneConfirm.notes.values.first, "LE legacy Just Works pairing: TK 0 found, STK ABFE42FB9EFA80C5F0A0B92FD564ECAD")
        XCTAssertEqual(oneConfirm.stillEncrypted, 0)

        let noConfirm = try Self.run(name, drop: [128, 131])
        XCTAssertEqual(Array(noConfirm.notes.values), ["LE legacy pairing: cannot recover the STK, the sniffer missed both Pairing Confirms"])
        XCTAssertGreaterThan(noConfirm.stillEncrypted, 0)

        let noRandom = try Self.run(name, drop: [132])
        XCTAssertEqual(Array(noRandom.notes.values), ["LE legacy pairing: cannot recover the STK, the sniffer missed the central's Pairing Random"])

        // The peripheral's random missed: said at the LL_ENC_REQ (frame 137).
        let noLastRandom = try Self.run(name, drop: [135])
        XCTAssertEqual(noLastRandom.notes, [137: "LE legacy pairing: cannot recover the STK, the sniffer missed the peripheral's Pairing Random"])

        let noConnect = try Self.run(name, drop: [33])
        XCTAssertEqual(Array(noConnect.notes.values), ["LE legacy pairing: cannot recover the STK, the sniffer missed the CONNECT_IND (the device addresses)"])
    }

    func testJustWorksWithLatency() throws {
        let r = try Self.run("homewsn_bsniffhub__lp-justworks-latency-10.pcap")
        XCTAssertEqual(r.notes.values.first, "LE legacy Just Works pairing: TK 0 found, STK 6305668530FD92611A453413973AFD67")
        XCTAssertEqual(r.stillEncrypted, 0)
        XCTAssertGreaterThan(r.attDecrypted, 0)
    }

    func testPasskey123456() throws {
        let r = try Self.run("homewsn_bsniffhub__lp-passkeyentry-123456-initiator-inputs-responder-displays.pcap")
        XCTAssertEqual(r.revealed.first { $0.kind == .tk }?.passkey, 123_456)
        XCTAssertEqual(r.notes.values.first, "LE legacy Passkey Entry pairing: passkey 123456 found, STK 0D2044A672A3F23EE63B765232F6F2E5")
        XCTAssertEqual(r.stillEncrypted, 0)
        XCTAssertEqual(r.smpDecrypted, 10)
    }

    func testPasskey393699() throws {
        let r = try Self.run("homewsn_bsniffhub__lp-passkeyentry-393699-initiator-displays-responder-inputs.pcap")
        XCTAssertEqual(r.revealed.first { $0.kind == .tk }?.passkey, 393_699)
        XCTAssertEqual(r.stillEncrypted, 0)
        XCTAssertEqual(r.smpDecrypted, 10)
    }

    func testOOBNeedsTheTK() throws {
        let name = "homewsn_bsniffhub__lp-oob-tk-5E882417A987222423A1A9EC719AED27.pcap"
        let blind = try Self.run(name)
        XCTAssertEqual(Array(blind.notes.values), ["LE legacy OOB pairing: TK missing (give it with --tk to decrypt the link)"])
        XCTAssertGreaterThan(blind.stillEncrypted, 0)
        XCTAssertTrue(blind.decryptedBy.isEmpty)

        let given = try Self.run(name, temporaryKeys: [LTK(hex: "5E882417A987222423A1A9EC719AED27")!])
        // bsniffhub's file name gives the TK least significant octet first.
        XCTAssertEqual(Array(given.notes.values), ["LE legacy OOB pairing: the given TK 27ED9A71ECA9A123242287A91724885E (its octets reversed) matches, STK 68190F85EA3773AC268127F659EB0E92"])
        XCTAssertEqual(given.revealed.first { $0.kind == .tk }?.hex, "27ED9A71ECA9A123242287A91724885E")
        XCTAssertEqual(given.stillEncrypted, 0)
        XCTAssertEqual(given.smpDecrypted, 10)

        // A wrong TK: said so, nothing decrypted.
        let wrong = try Self.run(name, temporaryKeys: [LTK(hex: "00000000000000000000000000000001")!])
        XCTAssertEqual(Array(wrong.notes.values), ["LE legacy OOB pairing: TK missing, no given TK matches the confirm values"])
        XCTAssertTrue(wrong.decryptedBy.isEmpty)
    }

    /// Bonding: the peripheral distributes LTK 0x0F24…5D5F (the file name's), and the two later
    /// connections that encrypt with its EDIV and Rand are decrypted with it.
    func testBondingLTKDecryptsLaterConnections() throws {
        let r = try Self.run("homewsn_bsniffhub__bonding-ltk-0F241772AC270CAFEE654186F0A65D5F.pcap")
        let ltks = r.revealed.filter { $0.kind == .ltk }
        XCTAssertEqual(ltks.count, 2)
        let peripheral = try XCTUnwrap(ltks.first { $0.hex == "0F241772AC270CAFEE654186F0A65D5F" })
        XCTAssertEqual(peripheral.ediv, 0x2E7A)
        XCTAssertEqual(peripheral.source, "SMP Encryption Information from the peripheral, decrypted")
        XCTAssertEqual(peripheral.linkKey?.connections, [2, 3], "\(peripheral.linkKey?.connections ?? [])")
        XCTAssertEqual(r.decryptedBy["LTK 0F241772AC270CAFEE654186F0A65D5F distributed by the peripheral in frame 152 (EDIV 0x2E7A, Rand 0x238D24C7250DE29C)"], 90)
        XCTAssertEqual(r.stillEncrypted, 0)
        XCTAssertGreaterThan(r.attDecrypted, 0)
        XCTAssertEqual(r.revealed.filter { $0.kind == .irk }.map { $0.identityAddress?.description }, ["04:ee:03:4a:8b:38", "04:ee:03:4a:8a:2f"])
        // The central's Signing Information is not in the capture.
        XCTAssertEqual(r.revealed.filter { $0.kind == .csrk }.count, 1)
    }
}

/// LTKs a host hands its controller over HCI (Core Vol 4 Part E 7.8.24, 7.8.25, 7.7.65.5).
final class HCIKeyTests: XCTestCase {
    static func hci(_ kind: HCIPacketType, _ bytes: [UInt8], number: Int) -> Packet {
        Packet(number: number, timestamp: 0, direction: kind == .command ? .sent : .received, adapter: 0,
               kind: .hci(kind), payload: ArraySlice(bytes))
    }

    static let ltk: [UInt8] = Array(1...16) // as sent, least significant octet first

    func testLongTermKeyRequestReplyTakesTheRequestsEDIVAndRand() {
        let d = Dissector()
        // LE Long Term Key Request: subevent 0x05, handle 0x0040, Rand, EDIV 0x1234.
        _ = d.dissect(Self.hci(.event, [0x3E, 13, 0x05, 0x40, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0x34, 0x12], number: 1))
        // LE Long Term Key Request Reply: handle 0x0040, LTK.
        _ = d.dissect(Self.hci(.command, [0x1A, 0x20, 18, 0x40, 0x00] + Self.ltk, number: 2))
        XCTAssertEqual(d.revealedKeys.count, 1)
        let k = d.revealedKeys[0]
        XCTAssertEqual(k.kind, .ltk)
        XCTAssertEqual(k.hex, "100F0E0D0C0B0A090807060504030201")
        XCTAssertEqual(k.ediv, 0x1234)
        XCTAssertEqual(k.rand, 0x0807_0605_0403_0201)
        XCTAssertEqual(k.source, "HCI LE Long Term Key Request Reply command")
        XCTAssertEqual(k.frames, [2])
    }

    /// A key's frames are kept as a run while each new one follows the last, and as a list from
    /// the first that does not: either way `frames` lists them all in order.
    func testKeyFramesInRunsAndOutOfThem() {
        let block = Block128(lsbFirst: ArraySlice(Self.ltk))!
        var k = RevealedKey(.irk, value: block, frames: 7...7, connection: 1, source: "SMP Identity Information",
                            sender: KeySender(who: .peripheral, how: .hciACL))
        XCTAssertEqual(k.frames, [7])
        k.addFrame(8)
        XCTAssertEqual(k.frames, [7, 8])
        k.addFrame(8)
        k.addFrame(12)
        k.addFrame(13)
        XCTAssertEqual(k.frames, [7, 8, 8, 12, 13])
        XCTAssertEqual(k.firstFrame, 7)
        XCTAssertEqual(k.value, Array(Self.ltk.reversed()))
        XCTAssertEqual(k.source, "SMP Identity Information from the peripheral (HCI ACL data)")
        let derived = RevealedKey(.stk, value: block, frames: 3...6, connection: nil, source: "s1(TK, Srand, Mrand)")
        XCTAssertEqual(derived.frames, [3, 4, 5, 6])
        XCTAssertEqual(derived.source, "s1(TK, Srand, Mrand)")
    }

    /// Who sent a key, as `keys` and the HTML report say it.
    func testKeySendersSayWhoAndHow() {
        let cases: [(KeySender.Who, KeySender.How, String)] = [
            (.central, .hciACL, "from the central (HCI ACL data)"),
            (.peripheral, .hciACL, "from the peripheral (HCI ACL data)"),
            (.thisHost, .hciACL, "sent by this host (HCI ACL data)"),
            (.peer, .hciACL, "from the peer (HCI ACL data)"),
            (.central, .overTheAir, "from the central, over the air in the clear"),
            (.peripheral, .decrypted, "from the peripheral, decrypted"),
            (.central, .decryptedBySniffer, "from the central, decrypted by the sniffer"),
            (.peripheral, .decryptedInCapture, "from the peripheral, decrypted in the capture"),
        ]
        for (who, how, text) in cases { XCTAssertEqual(KeySender(who: who, how: how).description, text) }
    }

    func testEnableEncryptionAndShortCommands() {
        let d = Dissector()
        // LE Enable Encryption: handle, Rand(8), EDIV(2), LTK(16).
        _ = d.dissect(Self.hci(.command, [0x19, 0x20, 28, 0x40, 0x00] + [UInt8](repeating: 0xAA, count: 8) + [0x78, 0x56] + Self.ltk, number: 1))
        XCTAssertEqual(d.revealedKeys.first?.ediv, 0x5678)
        XCTAssertEqual(d.revealedKeys.first?.rand, 0xAAAA_AAAA_AAAA_AAAA)
        // Cut short: nothing taken, nothing trapped.
        _ = d.dissect(Self.hci(.command, [0x19, 0x20, 28, 0x40, 0x00, 1, 2], number: 2))
        _ = d.dissect(Self.hci(.command, [0x1A, 0x20, 18, 0x40], number: 3))
        XCTAssertEqual(d.revealedKeys.count, 1)
    }
}
