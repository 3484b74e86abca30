import XCTest
import Decoders

/// Frames the capture cut short (btsnooz keeps only the start of ACL payloads) are not malformed
/// traffic: they are shown as truncated and kept out of reassembly, with their continuations.
final class TruncationTests: XCTestCase {
    func testBtsnoozTruncatedACLIsNotMalformed() throws {
        var frames = 0, truncated = 0, malformed: [Int] = []
        try Fixtures.decode(Fixtures.captures + "/phone/bugreport_v2.txt") { d in
            frames += 1
            if d.packet.truncated { truncated += 1 }
            if d.isMalformed { malformed.append(d.packet.number) }
        }
        XCTAssertEqual(frames, 184)
        XCTAssertGreaterThan(truncated, 0)
        XCTAssertEqual(malformed, [])
    }

    func testSameCaptureUntruncatedDecodesATT() throws {
        var att = 0
        try Fixtures.decode(Fixtures.captures + "/phone/bugreport_v2.btsnoop") { d in
            if case .att? = d.upper { att += 1 }
        }
        XCTAssertGreaterThan(att, 50)
    }
}
