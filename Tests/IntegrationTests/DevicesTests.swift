import XCTest
import Decoders
import Wire

/// `blesniff devices`: what a person reads of each advertiser.
final class DevicesTests: XCTestCase {
    /// A btsnoop (H4) capture of LE Advertising Reports, one per `data`, 100 ms apart unless
    /// `times` (microseconds from the first) says otherwise.
    /// `addresses` gives each report's address type and address (public 66:55:44:33:22:11 otherwise).
    static func advertisingCapture(_ data: [[UInt8]], times: [Int64]? = nil, addresses: [(type: UInt8, address: UInt64)]? = nil,
                                   to path: String) throws {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
        func be64(_ v: Int64) -> [UInt8] { be32(Int(v >> 32)) + be32(Int(v & 0xffff_ffff)) }
        var file: [UInt8] = Array("btsnoop".utf8) + [0] + be32(1) + be32(1002)
        // 2024-06-01 00:00:00 UTC in btsnoop time (microseconds since 0000-01-01).
        let base: Int64 = 0x00dc_ddb3_0f2f_8000 + 1_717_200_000_000_000
        for (i, ad) in data.enumerated() {
            let (type, raw) = addresses?[i] ?? (0, 0x6655_4433_2211)
            let address = (0..<6).map { UInt8(truncatingIfNeeded: raw >> (8 * UInt64($0))) }
            let report: [UInt8] = [0x02, 0x01, 0x00, type] + address + [UInt8(ad.count)] + ad + [0xC4]
            let event: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report
            file += be32(event.count) + be32(event.count) + be32(3) + be32(0) + be64(base + (times?[i] ?? Int64(i) * 100_000)) + event
        }
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    /// Some stacks send the name field whole from a fixed-size buffer: the NULs that pad it are
    /// not shown as part of the name (read -v keeps the AD structure's bytes); first and last seen
    /// are seconds from the start, as `read` shows a frame's time.
    func testNamePaddedWithNULsAndTimesAsReadShowsThem() throws {
        let path = NSTemporaryDirectory() + "blesniff-devices-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let name: [UInt8] = [0x08, 0x09] + Array("Lamp".utf8) + [0, 0, 0]
        try Self.advertisingCapture([[0x02, 0x01, 0x06] + name, [0x02, 0x01, 0x06] + name], to: path)

        let r = try CLI.run(["devices", path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(r.out.contains("\0"), r.out)
        XCTAssertTrue(r.out.contains("66:55:44:33:22:11 (public) \"Lamp\"\n"), r.out)
        XCTAssertTrue(r.out.contains("  Complete Local Name: Lamp\n"), r.out)
        XCTAssertTrue(r.out.contains("  First Seen: 0.000000 s\n"), r.out)
        XCTAssertTrue(r.out.contains("  Last Seen: 0.100000 s\n"), r.out)

        let verbose = try CLI.run(["read", "-v", path]).out
        XCTAssertTrue(verbose.contains("4c616d70000000"), "the AD structure keeps its bytes: \(verbose)")
        let json = try CLI.run(["devices", "--format", "json", path]).out
        XCTAssertTrue(json.contains(#""first_seen":{"value":1717200000000000000"#), json)
    }

    /// One advertising event seen twice (on two channels, or an advertisement and a scan response
    /// some controllers report as a second advertisement) is one event: the interval is between
    /// events, 100 ms here, not the 0.5 ms between the copies.
    func testCopiesOfOneAdvertisingEventAreOneEvent() throws {
        let path = NSTemporaryDirectory() + "blesniff-devices-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ad: [UInt8] = [0x02, 0x01, 0x06]
        try Self.advertisingCapture(Array(repeating: ad, count: 6), times: [0, 500, 100_000, 100_600, 200_000, 201_000], to: path)
        let r = try CLI.run(["devices", path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("  Advertising Interval: 100 ms (100000000)\n"), r.out)
        XCTAssertTrue(r.out.contains("  Advertising Reports: 6\n"), "every report is still counted: \(r.out)")
    }

    /// No advertiser in the shared captures' HCI logs is shown advertising faster than the
    /// specification's 20 ms: blesecpoc__hci_capture_20260306_121058.snoop's Shelly devices once
    /// showed 0.546 ms and 1.291 ms, an advertisement and its scan response 0.5 ms apart.
    func testNoHCIAdvertisingIntervalBelowTheMinimum() throws {
        let shared = try Fixtures.sharedOrSkip().filter { $0.contains("btsnoop") || $0.hasSuffix(".snoop") || $0.hasSuffix(".cfa") }
        for f in shared {
            let r = try CLI.run(["devices", Fixtures.shared + "/" + f])
            for line in r.out.split(separator: "\n") where line.hasPrefix("  Advertising Interval: ") {
                let ns = Int64(line.split(separator: "(").last?.dropLast() ?? "") ?? 0
                XCTAssertGreaterThanOrEqual(ns, 20_000_000, "\(f): \(line)")
            }
        }
    }

    /// A device with privacy advertises from a new resolvable private address now and then: with
    /// its IRK in a keys file, both addresses are one device under its identity address. Without
    /// the keys file they are two advertisers, as before.
    func testPrivateAddressesOfOneIRKAreOneDevice() throws {
        let base = NSTemporaryDirectory() + "blesniff-devices-\(UUID().uuidString)"
        let path = base + ".btsnoop", keys = base + ".yaml"
        defer { for p in [path, keys] { try? FileManager.default.removeItem(atPath: p) } }
        let irkHex = "ec0234a357c8ad05341010a60a397d9b"
        let irk = Block128(msbFirst: LTK(hex: irkHex)!.msbFirst)!
        let first = PrivateAddressFunctions.resolvableAddress(irk: irk, prand: 0x51_2345)
        let second = PrivateAddressFunctions.resolvableAddress(irk: irk, prand: 0x6A_BCDE)
        let name: [UInt8] = [0x05, 0x09] + Array("Ring".utf8)
        try Self.advertisingCapture([[0x02, 0x01, 0x06] + name, [0x02, 0x01, 0x06] + name, [0x02, 0x01, 0x06]],
                                    addresses: [(1, first.raw), (1, second.raw), (0, 0x6655_4433_2211)], to: path)
        try "devices:\n  - name: ring\n    irk: \(irkHex)\n    identity: c0:01:02:03:04:05 random\n"
            .write(toFile: keys, atomically: true, encoding: .utf8)

        let plain = try CLI.run(["devices", path])
        XCTAssertEqual(plain.status, 0, plain.err)
        XCTAssertTrue(plain.out.contains(": 3 advertisers\n"), plain.out)
        XCTAssertFalse(plain.out.contains("Addresses Seen"), plain.out)

        let r = try CLI.run(["devices", "--keys", keys, path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains(": 2 advertisers\n"), r.out)
        XCTAssertTrue(r.out.contains("c0:01:02:03:04:05 (random static identity) \"Ring\"\n"), r.out)
        XCTAssertTrue(r.out.contains("  Addresses Seen: \(first), \(second)\n"), r.out)
        XCTAssertTrue(r.out.contains("    Identity: random static identity, IRK from keys file \(keys) (ring)\n"), r.out)
        XCTAssertTrue(r.out.contains("  Advertising Reports: 2\n"), r.out)
        XCTAssertTrue(r.out.contains("66:55:44:33:22:11 (public)\n"), "others stay as they were: \(r.out)")

        let json = try CLI.run(["devices", "--format", "json", "--keys", keys, path]).out
        XCTAssertTrue(json.contains(#""addresses_seen":["\#(first)","\#(second)"],"address_count":2"#), json)
        XCTAssertTrue(json.contains(#""address":{"value":"c0:01:02:03:04:05""#), json)
    }
}
