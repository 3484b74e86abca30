import XCTest
@testable import Decoders
import Wire

/// AES-128 against FIPS-197 and the LE encryption sample data of Core 5.4 Vol 6 Part C 1
/// (LTK 0x4C68384139F574D836BCF34E9DFB01BF, SKDm 0xACBDCEDFE0F10213, SKDs 0x0213243546576879,
/// IVm 0xBADCAB24, IVs 0xDEAFBABE, SK 0x99AD1B5226A37E3E058E3B8E27C2C666).
final class LinkLayerCryptoTests: XCTestCase {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = s.filter { !$0.isWhitespace }.makeIterator()
        while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
        return out
    }

    func testAESFIPS197AppendixC1() {
        let aes = AES128(key: Self.hex("000102030405060708090a0b0c0d0e0f"))!
        XCTAssertEqual(aes.encrypt(Self.hex("00112233445566778899aabbccddeeff")), Self.hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    func testAESFIPS197AppendixB() {
        let aes = AES128(key: Self.hex("2b7e151628aed2a6abf7158809cf4f3c"))!
        XCTAssertEqual(aes.encrypt(Self.hex("3243f6a8885a308d313198a2e0370734")), Self.hex("3925841d02dc09fbdc118597196a0b32"))
    }

    func testAESRejectsWrongKeyLength() {
        XCTAssertNil(AES128(key: [1, 2, 3]))
        XCTAssertEqual(AES128(key: [UInt8](repeating: 0, count: 16))!.encrypt([1]), [UInt8](repeating: 0, count: 16))
    }

    // Values as LL_ENC_REQ / LL_ENC_RSP carry them (least significant octet first).
    static let skdm = hex("1302F1E0DFCEBDAC"), skds = hex("7968574635241302")
    static let ivm = hex("24ABDCBA"), ivs = hex("BEBAAFDE")
    static let ltk = LTK(hex: "0x4C68384139F574D836BCF34E9DFB01BF")!

    func session() -> LLSession { LLSession(ltk: Self.ltk, skdm: Self.skdm, skds: Self.skds, ivm: Self.ivm, ivs: Self.ivs)! }

    func testLTKParsing() {
        XCTAssertEqual(Self.ltk.description, "4C68384139F574D836BCF34E9DFB01BF")
        XCTAssertEqual(LTK(lsbFirst: Array(Self.ltk.msbFirst.reversed())), Self.ltk)
        XCTAssertNil(LTK(hex: "4C68"))
        XCTAssertNil(LTK(hex: "zz68384139F574D836BCF34E9DFB01BF"))
        XCTAssertEqual(LTK(hex: "4c:68:38:41:39:f5:74:d8:36:bc:f3:4e:9d:fb:01:bf"), Self.ltk)
    }

    func testSessionKey() {
        XCTAssertEqual(session().sessionKey, Self.hex("99AD1B5226A37E3E058E3B8E27C2C666"))
    }

    // Sample packets: (header, direction C→P, counter, plaintext, payload on air incl. MIC)
    static let packets: [(UInt8, Bool, UInt64, [UInt8], [UInt8])] = [
        (0x0F, true, 0, [0x06], hex("9FCDA7F448")),                        // LL_START_ENC_RSP1
        (0x07, false, 0, [0x06], hex("A34C13A415")),                       // LL_START_ENC_RSP2
        (0x0E, true, 1, hex("1700636465666768696A6B6C6D6E6F707131323334353637383930"),
         hex("7A70D6641522 6DF26B17839A0604 05596BD6564F796B5B9CE6FF32F75A6D33")), // LL_DATA1
        (0x06, false, 1, hex("170037363534333231304142434445464748494A4B4C4D4E4F5051"),
         hex("F38881E7BD94C9C369B9A66846DD4786AA8C39CE540D0DAE3ADCDF89B96088")),   // LL_DATA2
    ]

    func testCCMSamplePackets() {
        let s = session()
        for (header, ctp, counter, plain, air) in Self.packets {
            XCTAssertEqual(s.encrypt(header: header, plain: plain, counter: counter, centralToPeripheral: ctp), air)
            XCTAssertEqual(s.decrypt(header: header, payload: ArraySlice(air), counter: counter, centralToPeripheral: ctp), plain)
            // NESN, SN and MD are masked out of the AAD.
            XCTAssertEqual(s.decrypt(header: header ^ 0x1C, payload: ArraySlice(air), counter: counter, centralToPeripheral: ctp), plain)
            // Wrong counter, direction or LLID: MIC fails.
            XCTAssertNil(s.decrypt(header: header, payload: ArraySlice(air), counter: counter + 1, centralToPeripheral: ctp))
            XCTAssertNil(s.decrypt(header: header, payload: ArraySlice(air), counter: counter, centralToPeripheral: !ctp))
            XCTAssertNil(s.decrypt(header: header ^ 1, payload: ArraySlice(air), counter: counter, centralToPeripheral: ctp))
        }
        XCTAssertNil(s.decrypt(header: 0x0F, payload: [1, 2, 3], counter: 0, centralToPeripheral: true))
    }

    /// The sample exchange through the tracker: ENC_REQ/RSP in the clear, START_ENC_REQ, then the
    /// four encrypted packets decrypt with the LTK and the L2CAP payloads come out.
    func testTrackerDecryptsSampleExchange() {
        let aa: [UInt8] = [0x78, 0x56, 0x34, 0x12]
        var frames: [[UInt8]] = []
        func pdu(_ h: UInt8, _ payload: [UInt8]) -> [UInt8] { aa + [h, UInt8(payload.count)] + payload + [0, 0, 0] }
        // SN and NESN follow the acknowledgement scheme (the sample headers' own values do not;
        // they are not part of the MIC).
        frames.append(pdu(0x03, [0x03] + [UInt8](repeating: 0, count: 10) + Self.skdm + Self.ivm))   // C→P LL_ENC_REQ
        frames.append(pdu(0x07, [0x04] + Self.skds + Self.ivs))                                      // P→C LL_ENC_RSP
        frames.append(pdu(0x0D, []))                                                                  // C→P empty
        frames.append(pdu(0x0B, [0x05]))                                                              // P→C START_ENC_REQ
        let sequenced: [UInt8] = [0x03, 0x07, 0x0E, 0x0A]
        for (i, (_, _, _, _, air)) in Self.packets.enumerated() { frames.append(pdu(sequenced[i], air)) }
        let dirs: [Bool] = [true, false, true, false, true, false, true, false]
        let tracker = LinkLayerTracker(keys: [LTK(hex: "00000000000000000000000000000001")!, Self.ltk])
        var results: [LLFrame] = []
        for (i, f) in frames.enumerated() {
            // LE_LL_WITH_PHDR header saying data channel and direction, CRC not checked.
            let flags: UInt16 = (dirs[i] ? 2 : 3) << 7
            let phdr: [UInt8] = [5, 0, 0, 0, 0, 0, 0, 0, UInt8(flags & 0xFF), UInt8(flags >> 8)]
            let p = Packet(number: i + 1, timestamp: 0, direction: .unknown, adapter: 0, kind: .linkLayer(linkType: LinkType.leLLWithPHDR),
                           payload: ArraySlice(phdr + f))
            results.append(tracker.process(p))
        }
        XCTAssertEqual(results[0].dataPDU?.control?.name, "LL_ENC_REQ")
        XCTAssertEqual(results[3].dataPDU?.control?.name, "LL_START_ENC_REQ")
        XCTAssertEqual(results[4].encryption, .decrypted)
        XCTAssertEqual(results[4].dataPDU?.control?.name, "LL_START_ENC_RSP")
        XCTAssertEqual(results[5].dataPDU?.control?.name, "LL_START_ENC_RSP")
        XCTAssertEqual(results[6].encryption, .decrypted)
        XCTAssertEqual(results[6].l2cap.map { Array($0.data) }, Self.packets[2].3)
        XCTAssertEqual(results[6].l2cap?.start, true)
        XCTAssertEqual(results[7].l2cap.map { Array($0.data) }, Self.packets[3].3)
        XCTAssertEqual(results[7].direction, .peripheralToCentral)
        XCTAssertFalse(results.contains { $0.sequence != .new })

        // Without the key: marked encrypted, nothing for L2CAP.
        let blind = LinkLayerTracker()
        for (i, f) in frames.enumerated() {
            let flags: UInt16 = (dirs[i] ? 2 : 3) << 7
            let phdr: [UInt8] = [5, 0, 0, 0, 0, 0, 0, 0, UInt8(flags & 0xFF), UInt8(flags >> 8)]
            let r = blind.process(Packet(number: i + 1, timestamp: 0, direction: .unknown, adapter: 0,
                                         kind: .linkLayer(linkType: LinkType.leLLWithPHDR), payload: ArraySlice(phdr + f)))
            if i >= 4 {
                XCTAssertEqual(r.encryption, .encrypted)
                XCTAssertNil(r.l2cap)
                XCTAssertTrue(r.summary.contains("[encrypted]"))
            }
        }
    }
}
