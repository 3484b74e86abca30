import XCTest
@testable import Report

/// The link capacity model against the reference figures of BLE throughput arithmetic.
final class LinkCapacityTests: XCTestCase {
    /// LE 1M with 27-octet PDUs, each answered by an empty PDU, with the MIC of an encrypted link:
    /// 27 octets every 708 µs, about 305 kbit/s at the link layer.
    func testOneMegabitWith27OctetPDUs() {
        let bps = LinkCapacity.linkLayerBitsPerSecond(phy: 1, dataLength: 27, encrypted: true)
        XCTAssertEqual(bps / 1000, 305, accuracy: 1)
    }

    /// LE 2M, data length 251, ATT MTU 247, unencrypted: one 244-octet notification per LL PDU of
    /// 1,048 µs, answered after 150 + 44 + 150 µs: about 1.40 Mbit/s with the whole interval usable.
    func testTwoMegabitWithDataLengthExtension() {
        let p = LinkParameters(interval: 400, phy: 2, dataLength: 251, attMTU: 247)
        XCTAssertEqual(LinkCapacity.streamBitsPerSecond(p) / 1e6, 1.40, accuracy: 0.01)
        // At 7.5 ms with 5 packets per event: 5 × 244 octets every 7.5 ms, about 1.30 Mbit/s.
        let short = LinkParameters(interval: 6, phy: 2, dataLength: 251, attMTU: 247)
        XCTAssertEqual(LinkCapacity.streamBitsPerSecond(short, packetsPerEvent: 5) / 1e6, 1.30, accuracy: 0.01)
    }

    /// Write requests: one value per two intervals whatever the PHY (20 octets per 60 ms at 30 ms).
    func testAcknowledgedWritesAndTheKnobThatLimitsThem() {
        let p = LinkParameters(interval: 24, phy: 1, dataLength: 27, attMTU: 23)
        XCTAssertEqual(LinkCapacity.acknowledgedBitsPerSecond(p), 20 * 8 / 0.060, accuracy: 0.5)
        let knobs = LinkCapacity.limits(p, acknowledged: true)
        XCTAssertEqual(knobs.first?.name, "write_type")
        XCTAssertTrue(knobs.contains { $0.name == "att_mtu" })
        // A stream of notifications at MTU 23 and 27-octet PDUs: 2M PHY shortens every pair of PDUs
        // (676 µs to 496 µs), a larger MTU fills 10 PDUs with 244 octets instead of one with 20, and a
        // longer data length alone gives nothing (the 27-octet L2CAP PDU already fits).
        let stream = LinkCapacity.limits(p, acknowledged: false).map(\.name)
        XCTAssertEqual(stream, ["phy", "att_mtu"])
    }
}
