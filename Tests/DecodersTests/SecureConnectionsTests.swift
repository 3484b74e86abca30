import XCTest
@testable import Decoders
import Wire

/// P-256, AES-CMAC and f5 against published values: the debug key pair (Core Vol 3 Part H
/// 2.3.5.6.1), the P-256 and f5 sample data (Appendix D: the debug key with private key B gives
/// the DHKey that f5's sample takes as W) and RFC 4493's AES-CMAC examples.
final class SecureConnectionsTests: XCTestCase {
    static let hex = LinkLayerCryptoTests.hex
    static func block(_ s: String) -> Block128 { Block128(msbFirst: hex(s))! }

    func testDebugPrivateKeyGivesTheDebugPublicKey() throws {
        let d = try XCTUnwrap(U256(msbFirst: SecureConnectionsFunctions.debugPrivateKey))
        let q = try XCTUnwrap(P256Point.generator.multiplied(by: d))
        XCTAssertEqual(q.x.msbFirst, Self.hex("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6"))
        XCTAssertEqual(q.y.msbFirst, Self.hex("dc809c49652aeb6d63329abf5a52155c766345c28fed3024741c8ed01589d28b"))
    }

    func testDHKeySampleData() throws {
        // Private B's public key, as SMP sends it (least significant octet first).
        let x = Self.hex("1ea1f0f01faf1d9609592284f19e4c0047b58afd8615a69f559077b22faaa190")
        let y = Self.hex("4c55f33e429dad377356703a9ab85160472d1130e28e36765f89aff915b1214a")
        let pkb = try XCTUnwrap(P256Point(smpX: ArraySlice(x.reversed()), smpY: ArraySlice(y.reversed())))
        XCTAssertEqual(pkb.sharedSecret(privateKey: SecureConnectionsFunctions.debugPrivateKey),
                       Self.hex("ec0234a357c8ad05341010a60a397d9b99796b13b4f866f1868d34f373bfa698"))
        // And the other way round: private B times the debug public key.
        let debug = try XCTUnwrap(P256Point.generator.multiplied(by: U256(msbFirst: SecureConnectionsFunctions.debugPrivateKey)!))
        XCTAssertEqual(debug.sharedSecret(privateKey: Self.hex("55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd")),
                       Self.hex("ec0234a357c8ad05341010a60a397d9b99796b13b4f866f1868d34f373bfa698"))
    }

    func testPointsOffTheCurveAndBadPrivateKeysAreRefused() {
        var y = Self.hex("4c55f33e429dad377356703a9ab85160472d1130e28e36765f89aff915b1214a")
        y[31] ^= 1
        let x = Self.hex("1ea1f0f01faf1d9609592284f19e4c0047b58afd8615a69f559077b22faaa190")
        XCTAssertNil(P256Point(smpX: ArraySlice(x.reversed()), smpY: ArraySlice(y.reversed())))
        XCTAssertNil(P256Point(smpX: ArraySlice(x), smpY: ArraySlice(x.prefix(31))))
        XCTAssertNil(P256Point.generator.sharedSecret(privateKey: [UInt8](repeating: 0, count: 32)))
        XCTAssertNil(P256Point.generator.sharedSecret(privateKey: [UInt8](repeating: 0xFF, count: 32)))
        XCTAssertNil(P256Point.generator.sharedSecret(privateKey: [1, 2, 3]))
    }

    func testCMACMatchesRFC4493() {
        let k = Self.block("2b7e151628aed2a6abf7158809cf4f3c")
        XCTAssertEqual(SecureConnectionsFunctions.cmac(key: k, []), Self.block("bb1d6929e95937287fa37d129b756746"))
        XCTAssertEqual(SecureConnectionsFunctions.cmac(key: k, Self.hex("6bc1bee22e409f96e93d7e117393172a")),
                       Self.block("070a16b46b4d4144f79bdd9dd04a287c"))
        XCTAssertEqual(SecureConnectionsFunctions.cmac(key: k, Self.hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411")),
                       Self.block("dfa66747de9ae63030ca32611497c827"))
    }

    func testF5SampleData() {
        let (macKey, ltk) = SecureConnectionsFunctions.f5(
            w: Self.hex("ec0234a357c8ad05341010a60a397d9b99796b13b4f866f1868d34f373bfa698"),
            n1: Self.block("d5cb8454d177733effffb2ec712baeab"), n2: Self.block("a6e8e7cc25a75f6e216583f7ff3dc4cf"),
            a1: BDAddr(0x56_1237_37BF_CE), a1Random: false, a2: BDAddr(0xA7_1370_2DCF_C1), a2Random: false)
        XCTAssertEqual(macKey, Self.block("2965f176a1084a02fd3f6a20ce636e20"))
        XCTAssertEqual(ltk, Self.block("6986791169d7cd23980522b594750a38"))
    }

    /// A sniffed pairing where neither side used the debug key: the private key given for one side
    /// gives the LTK (checked against Python's cryptography package, ECDH then f5); without it,
    /// or with a random missed, the exchange says why not.
    func testGivenPrivateKeyGivesTheLTK() throws {
        func smp(_ s: String) -> [UInt8] { Array(Self.hex(s).reversed()) }
        func exchange() -> PairingExchange {
            let e = PairingExchange(frame: 1)
            e.centralPublicKey = (smp("1ea1f0f01faf1d9609592284f19e4c0047b58afd8615a69f559077b22faaa190"),
                                  smp("4c55f33e429dad377356703a9ab85160472d1130e28e36765f89aff915b1214a"))
            e.peripheralPublicKey = (smp("f465e43ff23d3f1b9dc7dfc04da8758184dbc966204796eccf0d6cf5e16500cc"),
                                     smp("0201d048bcbbd899eeefc424164e33c201c2b010ca6b4d43a8a155cad8ecb279"))
            e.mrand = Self.block("d5cb8454d177733effffb2ec712baeab")
            e.srand = Self.block("a6e8e7cc25a75f6e216583f7ff3dc4cf")
            return e
        }
        let addresses = (ia: BDAddr(0xC0_1122_3344_55), iatRandom: true, ra: BDAddr(0xA7_1370_2DCF_C1), ratRandom: false)
        let peripheralKey = Self.hex("529aa0670d72cd6497502ed473502b037e8803b5c60829a5a3caa219505530ba")
        guard case .derived(let ltk, let central, let debug) = exchange().deriveSecureConnections(addresses: addresses, privateKeys: [peripheralKey]) else {
            return XCTFail("no LTK")
        }
        XCTAssertEqual(ltk, Self.block("a684c701bbf754ad8a0c7a9f5af6bd1d"))
        XCTAssertFalse(central)
        XCTAssertFalse(debug)
        guard case .noPrivateKey = exchange().deriveSecureConnections(addresses: addresses, privateKeys: [SecureConnectionsFunctions.debugPrivateKey]) else {
            return XCTFail("a private key of neither side gave an LTK")
        }
        let e = exchange()
        e.srand = nil
        guard case .missing(let what) = e.deriveSecureConnections(addresses: addresses, privateKeys: [peripheralKey]) else { return XCTFail() }
        XCTAssertEqual(what, ["the peripheral's Pairing Random"])
    }
}
