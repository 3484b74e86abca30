import XCTest
@testable import Report
@testable import Decoders
import Wire

/// Findings about a peer that changes its resolvable private address group under its identity
/// once an IRK resolves the addresses.
final class AuditIdentityTests: XCTestCase {
    func testConnectionPeersResolveToTheirIdentity() {
        let irk = Block128(msbFirst: LTK(hex: "ec0234a357c8ad05341010a60a397d9b")!.msbFirst)!
        let id = IdentityAddress(BDAddr(0x001B_DC07_32A1), type: 0)
        let resolver = AddressResolver()
        let scope = AuditScope(configuration: AuditConfiguration())
        scope.add(resolver)
        let rpa = PrivateAddressFunctions.resolvableAddress(irk: irk, prand: 0x55_0102)
        func subject(_ a: BDAddr, type: UInt8) -> FindingSubject {
            var s = FindingSubject(kind: .connection, adapter: 0, connectionID: 1, handle: 0x40, address: a)
            s.addressType = type
            return s
        }
        var s = subject(rpa, type: 1)
        scope.resolve(&s)
        XCTAssertNil(s.identity, "no IRK yet")
        // The IRK arrives later in the capture: findings made before it are resolved at the end.
        resolver.add(IdentityKey(irk: irk, identity: id, source: "test"))
        scope.resolve(&s)
        XCTAssertEqual(s.identity, id.address)
        XCTAssertEqual(s.fingerprintKey, "peer 00:1b:dc:07:32:a1")

        var other = subject(PrivateAddressFunctions.resolvableAddress(irk: irk, prand: 0x60_0000), type: 1)
        scope.resolve(&other)
        XCTAssertEqual(other.fingerprintKey, s.fingerprintKey, "another address of the same device")

        var publicPeer = subject(rpa, type: 0)
        scope.resolve(&publicPeer)
        XCTAssertNil(publicPeer.identity, "a public address is never resolvable private")
    }
}
