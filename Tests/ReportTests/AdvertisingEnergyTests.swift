import XCTest
@testable import Report

/// The advertising energy model against its arithmetic, nRF52840 currents (TX 6.40 mA, RX 6.26 mA,
/// 40 µs start-up at the receive current).
final class AdvertisingEnergyTests: XCTestCase {
    private let radio = RadioProfile.builtIn[0]

    private func parameters(legacy: Bool, connectable: Bool, scannable: Bool, interval: UInt32 = 160,
                            primary: UInt8 = 1, secondary: UInt8 = 1) -> HostAdvertisingParameters {
        HostAdvertisingParameters(adapter: 0, intervalMin: interval, intervalMax: interval, legacy: legacy, scannable: scannable,
                                  connectable: connectable, channels: 3, primaryPHY: primary, secondaryPHY: secondary)
    }

    /// ADV_IND with 29 octets of data: on each channel 40 µs of start-up, 360 µs sending the
    /// 35-octet PDU ((1 + 4 + 2 + 35 + 3) × 8 µs) and 190 µs listening (T_IFS and a request's
    /// preamble and access address).
    func testLegacyConnectable() {
        let e = AdvertisingEnergy.estimate(parameters(legacy: true, connectable: true, scannable: true), dataOctets: 29, profile: radio)
        XCTAssertEqual(e.nanocoulombsPerEvent, 3 * (40 * 6.26 + 360 * 6.40 + 190 * 6.26), accuracy: 1e-6)
        // Every 100 ms plus 5 ms of advDelay on average.
        XCTAssertEqual(e.shortestPeriod, 105_000_000)
        XCTAssertEqual(e.averageMicroamps(period: e.shortestPeriod), 11_231.4 / 0.105 / 1000, accuracy: 0.01)
    }

    /// ADV_NONCONN_IND listens for nothing.
    func testLegacyNotConnectable() {
        let e = AdvertisingEnergy.estimate(parameters(legacy: true, connectable: false, scannable: false), dataOctets: 29,
                                           profile: radio)
        XCTAssertEqual(e.nanocoulombsPerEvent, 3 * (40 * 6.26 + 360 * 6.40), accuracy: 1e-6)
    }

    /// Extended, not connectable: ADV_EXT_IND (7 octets, 136 µs on LE 1M) on three channels, then
    /// 104 octets in one AUX_ADV_IND on LE 2M (114 octets: (2 + 4 + 2 + 114 + 3) × 4 µs = 500 µs).
    func testExtendedOneAuxiliaryPDU() {
        let e = AdvertisingEnergy.estimate(parameters(legacy: false, connectable: false, scannable: false, secondary: 2),
                                           dataOctets: 104, profile: radio)
        XCTAssertEqual(e.nanocoulombsPerEvent, 3 * (40 * 6.26 + 136 * 6.40) + (40 * 6.26 + 500 * 6.40), accuracy: 1e-6)
    }

    /// 300 octets do not fit one AUX_ADV_IND: 242 go with it (255-octet PDU, AuxPtr included,
    /// 2,120 µs on LE 1M), the other 58 in an AUX_CHAIN_IND of 62 octets (576 µs).
    func testExtendedChain() {
        let e = AdvertisingEnergy.estimate(parameters(legacy: false, connectable: false, scannable: false), dataOctets: 300, profile: radio)
        let primary = 3 * (40 * 6.26 + 136 * 6.40)
        XCTAssertEqual(e.nanocoulombsPerEvent, primary + (40 * 6.26 + 2120 * 6.40) + (40 * 6.26 + 576 * 6.40), accuracy: 1e-6)
    }
}
