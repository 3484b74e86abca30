import XCTest
@testable import Decoders
import Wire

/// Runs every advertising report of real btsnoop (H4) captures through the decoders.
final class AdvertisingCaptureTests: XCTestCase {
    static let captures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures")

    /// LE Meta events of a btsnoop 1002 file: (frame, time ns, subevent, parameters). A minimal
    /// reader so these tests do not depend on the capture module.
    func leMetaEvents(_ name: String) throws -> [(frame: Int, time: Int64, subevent: UInt8, params: Bytes)] {
        let url = AdvertisingCaptureTests.captures.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { throw XCTSkip("capture \(name) not present") }
        let b = [UInt8](data)
        func be32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        var out: [(frame: Int, time: Int64, subevent: UInt8, params: Bytes)] = []
        var i = 16, frame = 0
        while i + 24 <= b.count {
            let incl = be32(i + 4)
            var ts: Int64 = 0
            for k in 0..<8 { ts = ts << 8 | Int64(b[i + 16 + k]) }
            let start = i + 24
            i = start + incl
            frame += 1
            guard i <= b.count, incl >= 4, b[start] == 0x04, b[start + 1] == 0x3E else { continue }
            out.append((frame, ts &* 1000, b[start + 3], b[(start + 4)..<i]))
        }
        return out
    }

    func run(_ name: String, expectEvents: Int) throws -> [DeviceSummary] {
        let events = try leMetaEvents(name).filter { AdvertisingReports.isReport(subevent: $0.subevent) }
        XCTAssertEqual(events.count, expectEvents, name)
        let devices = Advertisers()
        var asm = ExtendedAdvertisingAssembler()
        for e in events {
            let (reports, malformed) = AdvertisingReports.parse(subevent: e.subevent, e.params)
            XCTAssertNil(malformed, "\(name) frame \(e.frame)")
            for r in reports {
                devices.add(r, data: r.data(in: e.params), frame: e.frame, time: e.time)
                if r.subevent == AdvertisingReports.extended, let whole = asm.add(r, in: e.params) {
                    XCTAssertEqual(AdvertisingData(whole.data[...], legacy: r.isLegacy).problems, [], "\(name) frame \(e.frame)")
                }
                _ = r.summary(in: e.params)
            }
            XCTAssertNotNil(AdvertisingReports.fields(subevent: e.subevent, e.params))
        }
        return devices.devices
    }

    func testHorizonLegacyReports() throws {
        // MANIFEST.tsv: 412 legacy advertising report events.
        let devices = try run("horizon74__btsnoop_hci.log", expectEvents: 412)
        let d = try XCTUnwrap(devices.first { $0.address == BDAddr(0xA4C1_38BF_6FAB) })
        XCTAssertEqual(d.completeName, "GVH5072_6FAB")
        XCTAssertEqual(d.flags, 0x05)
        XCTAssertTrue(d.connectable)
        let hpa = try XCTUnwrap(devices.first { $0.address == BDAddr(0x9C1D_5892_4B64) })
        XCTAssertEqual(hpa.completeName, "HPA8350B")  // from its scan response, frame 182
        XCTAssertGreaterThan(hpa.scanResponses, 0)
    }

    func testExtendedReports() throws {
        // MANIFEST.tsv: 154 extended report events; frame 221 carries Apple's overflow area.
        let devices = try run("btmouse__btsnoop_hci.log", expectEvents: 154)
        let apple = try XCTUnwrap(devices.first { $0.address == BDAddr(0x417E_E973_E775) })
        XCTAssertEqual(apple.overflowBits, [103])
        XCTAssertEqual(apple.randomKind, .resolvablePrivate)
        let beacon = try XCTUnwrap(devices.first { $0.address == BDAddr(0xB052_16BD_6A42) })
        XCTAssertTrue(beacon.companies.contains(0x004C))
        XCTAssertFalse(beacon.connectable)
    }

    func testLargeExtendedCapture() throws {
        _ = try run("fossibot__btsnoop_hci.log", expectEvents: 7426)
    }
}
