import XCTest
@testable import Decoders
import Wire

/// ah and address resolution against the sample data of Core Vol 3 Part H Appendix D.7.
final class PrivateAddressTests: XCTestCase {
    static let irk = LegacyPairingTests.block("ec0234a357c8ad05341010a60a397d9b")

    func testAhSampleData() {
        XCTAssertEqual(PrivateAddressFunctions.ah(irk: Self.irk, prand: 0x708194), 0x0dfbaa)
    }

    /// The sample's address is prand over hash: 70:81:94:0d:fb:aa.
    func testResolvableAddressOfTheSample() {
        XCTAssertEqual(PrivateAddressFunctions.resolvableAddress(irk: Self.irk, prand: 0x708194), BDAddr(0x708194_0dfbaa))
    }

    /// Addresses made with an IRK resolve to its identity; others, and addresses that are not
    /// resolvable private or not of the random type, do not.
    func testRoundTrip() {
        let id = IdentityAddress(BDAddr(0xC0_11_22_33_44_55), type: 1)
        let other = LegacyPairingTests.block("00112233445566778899aabbccddeeff")
        let resolver = AddressResolver([IdentityKey(irk: other, identity: IdentityAddress(BDAddr(0x001122334455), type: 0), source: "test"),
                                        IdentityKey(irk: Self.irk, identity: id, source: "test")])
        for prand: UInt32 in [0x000000, 0x123456, 0x3FFFFF, 0xFFFFFF] {
            let a = PrivateAddressFunctions.resolvableAddress(irk: Self.irk, prand: prand)
            XCTAssertTrue(PrivateAddressFunctions.isResolvable(a), a.description)
            XCTAssertEqual(resolver.identity(of: a, type: 1)?.identity, id, a.description)
            // Cached: the same answer again.
            XCTAssertEqual(resolver.identity(of: a, type: 1)?.identity, id, a.description)
            XCTAssertNil(resolver.identity(of: a, type: 0), "a public address is not resolvable")
            XCTAssertNil(resolver.identity(of: BDAddr(a.raw ^ 1), type: 1), "a wrong hash")
        }
        XCTAssertNil(resolver.identity(of: BDAddr(0xC08194_0dfbaa), type: 1), "random static")
    }

    /// An IRK that arrives later resolves addresses seen (and not resolved) before it.
    func testIRKLearnedLater() {
        let resolver = AddressResolver()
        let a = PrivateAddressFunctions.resolvableAddress(irk: Self.irk, prand: 0x2A2A2A)
        XCTAssertTrue(resolver.isEmpty)
        XCTAssertNil(resolver.identity(of: a, type: 1))
        let id = IdentityAddress(BDAddr(0x001B_DC07_32A1), type: 0)
        XCTAssertTrue(resolver.add(IdentityKey(irk: Self.irk, identity: id, source: "test")))
        XCTAssertFalse(resolver.add(IdentityKey(irk: Self.irk, identity: id, source: "again")), "known already")
        XCTAssertFalse(resolver.add(IdentityKey(irk: Block128(repeating: 0), identity: id, source: "zero")), "no IRK")
        XCTAssertEqual(resolver.identity(of: a, type: 1)?.identity, id)
    }
}
