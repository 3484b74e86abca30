import XCTest
@testable import Decoders

/// A peer repeating Pairing Requests cannot make a connection's pairing history grow without bound.
final class PairingBoundsTests: XCTestCase {
    func testOutcomesAreCappedAndStartsCounted() {
        let t = PairingTracker()
        let request = SMPPDU(SMPVectors.hex("0104002d100b0b"))
        let response = SMPPDU(SMPVectors.hex("02040009100103"))
        for i in 0..<10_000 {
            t.feed(request, from: .local, frame: 2 * i)
            t.feed(response, from: .remote, frame: 2 * i + 1)
        }
        XCTAssertEqual(t.started, 10_000)
        XCTAssertLessThanOrEqual(t.outcomes.count, PairingTracker.maxOutcomes)
        XCTAssertEqual(t.current?.requestFrame, 19_998)
        XCTAssertEqual(t.current?.responseFrame, 19_999)
    }
}
