import Capture
import Foundation
import XCTest

/// Damaged input never crashes the readers: every outcome is records, a truncation warning or
/// a CaptureError.
final class RobustnessTests: TempDirTestCase {
    func testMutatedAndCutInputs() throws {
        var seeds: [[UInt8]] = [
            pcapFile(nanoseconds: false, bigEndian: false, linkType: 201, (0..<20).map {
                PcapRecord(seconds: UInt32($0), fraction: 1, data: Array(repeating: UInt8($0), count: $0 * 3)) }),
            pcapFile(nanoseconds: true, bigEndian: true, linkType: 272, (0..<20).map {
                PcapRecord(seconds: UInt32($0), fraction: 1, data: Array(repeating: UInt8($0), count: $0)) }),
            btsnoopFile(datalink: 1002, (0..<20).map { BtsnoopRecord(micros: Int64($0), flags: 1, data: Array(repeating: 4, count: $0)) }),
            pcapngSHB() + pcapngIDB(linkType: 201) + pcapngIDB(linkType: 254, tsresol: 0x8a)
                + (0..<20).flatMap { pcapngEPB(interface: UInt32($0 % 2), timestamp: UInt64($0), Array(repeating: 1, count: $0)) },
        ]
        let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/captures")
        for name in ["blesecpoc__hci_capture_20260306_121058.snoop", "darkelf__test1.pcapng", "blepcapan__fitup.pcap"] {
            if let d = try? Data(contentsOf: shared.appendingPathComponent(name)) { seeds.append(Array(d)) }
        }
        var rng = SystemRandomNumberGenerator()
        var outcomes = [0, 0, 0]
        for (s, seed) in seeds.enumerated() {
            for round in 0..<40 {
                var bytes = seed
                let flips = Int.random(in: 1...8, using: &rng)
                for _ in 0..<flips {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    bytes[i] = round % 3 == 0 ? 0xff : UInt8.random(in: 0...255, using: &rng)
                }
                if round % 2 == 1 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng))) }
                let path = try write("m\(s)-\(round)", bytes)
                do {
                    let r = try readAll(path: path)
                    outcomes[r.truncation == nil ? 0 : 1] += 1
                } catch is CaptureError {
                    outcomes[2] += 1
                }
            }
        }
        XCTAssertEqual(outcomes.reduce(0, +), seeds.count * 40)
    }
}
