import XCTest
@testable import Report

/// The energy model's arithmetic, worked by hand for an idle connection: 15 ms for one second (66.7
/// events) with the nRF52840's datasheet currents (TX 6.40 mA, RX 6.26 mA, 40 µs start-up), an
/// empty PDU 80 µs on LE 1M, T_IFS 150 µs.
final class LinkEnergyTests: XCTestCase {
    let nrf52840 = RadioProfile.named("nRF52840")!
    let second: Int64 = 1_000_000_000

    func testIdleConnection() {
        let e = LinkEnergy.estimate(segments: [(12, second)], latency: 0, phy: 1, encrypted: false,
                                    centralPDUs: 0, centralOctets: 0, peripheralPDUs: 0, peripheralOctets: 0, profile: nrf52840)
        // Central: start-up 40 × 6.26 + TX 80 × 6.40 + T_IFS 150 × 6.26 + RX 80 × 6.26 = 2,202.2 nC an event.
        XCTAssertEqual(e.central.microcoulombsPerEvent, 2.2022, accuracy: 0.0001)
        XCTAssertEqual(e.averageMicroamps(e.central), 2202.2 * 1000 / 15 / 1000, accuracy: 0.01)
        // Peripheral: its window widened by 100 ppm of 15 ms (1.5 µs) each side plus 16 µs:
        // 40 × 6.26 + (3 + 16 + 80) × 6.26 + 150 × 6.26 + 80 × 6.40 = 2,321.14 nC.
        XCTAssertEqual(e.peripheral.microcoulombsPerEvent, 2.32114, accuracy: 0.0001)
        XCTAssertEqual(e.peripheral.events, 67)
        XCTAssertEqual(e.milliampHoursPerDay(e.peripheral), e.averageMicroamps(e.peripheral) * 24 / 1000, accuracy: 1e-9)
    }

    /// Peripheral latency 4: the peripheral attends one idle event in five, its window widened for
    /// the 75 ms since its last anchor (7.5 µs each side).
    func testPeripheralLatency() {
        let e = LinkEnergy.estimate(segments: [(12, second)], latency: 4, phy: 1, encrypted: false,
                                    centralPDUs: 0, centralOctets: 0, peripheralPDUs: 0, peripheralOctets: 0, profile: nrf52840)
        let perEvent = 40 * 6.26 + (15 + 16 + 80) * 6.26 + 150 * 6.26 + 80 * 6.40
        XCTAssertEqual(e.peripheral.nanocoulombs, perEvent * (1000.0 / 15) / 5, accuracy: 0.01)
        XCTAssertEqual(e.peripheral.events, 13)
        XCTAssertEqual(e.central.events, 67)
    }

    /// Data: 20 notifications of 20 value octets (27-octet PDUs with ATT and L2CAP headers) from the
    /// peripheral, each in its own event: each PDU is 27 × 8 µs longer on the air than an empty one,
    /// at the peripheral's TX and the central's RX current.
    func testDataPDUs() {
        let idle = LinkEnergy.estimate(segments: [(12, second)], latency: 0, phy: 1, encrypted: false,
                                       centralPDUs: 0, centralOctets: 0, peripheralPDUs: 0, peripheralOctets: 0, profile: nrf52840)
        let busy = LinkEnergy.estimate(segments: [(12, second)], latency: 0, phy: 1, encrypted: false,
                                       centralPDUs: 0, centralOctets: 0, peripheralPDUs: 20, peripheralOctets: 540, profile: nrf52840)
        XCTAssertEqual(busy.peripheral.nanocoulombs - idle.peripheral.nanocoulombs, 20 * 27 * 8 * 6.40, accuracy: 0.01)
        XCTAssertEqual(busy.central.nanocoulombs - idle.central.nanocoulombs, 20 * 27 * 8 * 6.26, accuracy: 0.01)
    }

    func testProfilesNameTheirSource() {
        XCTAssertEqual(RadioProfile.builtIn.map(\.name), ["nRF52840", "nRF54L15", "CC2340R5"])
        for p in RadioProfile.builtIn { XCTAssert(p.source.contains(p.name), p.source) }
        XCTAssertNil(RadioProfile.named("nRF9999"))
    }

    /// A profile file of one's own: the nRF52840's figures under another name give the same
    /// charges, and every current doubled (start-up included) doubles them, the model being linear
    /// in the currents. Bad files are refused with the line and key.
    func testProfileFile() throws {
        let dir = NSTemporaryDirectory() + "blesniff-radio-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = dir + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let same = try RadioProfile.resolve(try write("same.yml", "name: board A\nsource: bench\ntx_ma: 6.40\nrx_1m_ma: 6.26\n"))
        XCTAssertEqual(same.name, "board A")
        XCTAssertEqual(same.source, "bench")
        XCTAssertEqual(same.rx2MMilliamps, 6.26)
        XCTAssertEqual(same.rampMicroseconds, 40)
        let double = try RadioProfile.resolve(try write("double.yaml", "tx_ma: 12.8\nrx_1m_ma: 12.52\nrx_2m_ma: 12.52\n"))
        XCTAssertEqual(double.name, "double.yaml")
        func estimate(_ p: RadioProfile) -> LinkEnergy {
            LinkEnergy.estimate(segments: [(24, second)], latency: 2, phy: 1, encrypted: true,
                                centralPDUs: 5, centralOctets: 100, peripheralPDUs: 30, peripheralOctets: 900, profile: p)
        }
        let builtIn = estimate(nrf52840), a = estimate(same), b = estimate(double)
        XCTAssertEqual(a.central, builtIn.central)
        XCTAssertEqual(a.peripheral, builtIn.peripheral)
        XCTAssertEqual(b.central.nanocoulombs, 2 * builtIn.central.nanocoulombs, accuracy: 1e-6)
        XCTAssertEqual(b.peripheral.nanocoulombs, 2 * builtIn.peripheral.nanocoulombs, accuracy: 1e-6)

        let bad = try write("bad.yml", "tx_ma: 6\nrx: 3\n")
        XCTAssertThrowsError(try RadioProfile.resolve(bad)) { XCTAssert(String(describing: $0).contains("line 2: unknown key rx"), "\($0)") }
        let missing = try write("missing.yml", "tx_ma: 6\n")
        XCTAssertThrowsError(try RadioProfile.resolve(missing)) { XCTAssert(String(describing: $0).contains("rx_1m_ma"), "\($0)") }
        let negative = try write("negative.yml", "tx_ma: -6\nrx_1m_ma: 5\n")
        XCTAssertThrowsError(try RadioProfile.resolve(negative)) { XCTAssert(String(describing: $0).contains("line 1: tx_ma"), "\($0)") }
        XCTAssertThrowsError(try RadioProfile.resolve("nRF9999"))
        XCTAssertEqual(try RadioProfile.resolve("nrf54l15").name, "nRF54L15")
    }
}
