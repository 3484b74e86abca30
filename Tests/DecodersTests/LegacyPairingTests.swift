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
