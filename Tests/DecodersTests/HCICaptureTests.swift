import XCTest
@testable import Decoders
import Wire

/// Decodes every HCI command and event of the real btsnoop captures in `../shared/captures`
/// (skipped when the folder is absent). tshark 4.0 flags exactly two of these packets as malformed
/// (mabip frames 55 and 161, a truncated LE Set Extended Scan Parameters); the decoder must agree.
final class HCICaptureTests: XCTestCase {
    private static let captures: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/captures")

    private static let files = [
        "bk300__btsnoop_hci.log.last", "blesecpoc__hci_capture_20260306_121058.snoop", "btmouse__btsnoop_hci.log",
        "darkelf__btsnoop_hci.log", "dsd6__btsnoop_hci.log", "fossibot__btsnoop_hci.log",
        "happyleaf__btsnoop_hci_happyleaf_fail.log", "horizon74__btsnoop_hci.log", "mabip__btsnoop_hci.log",
        "oppo__BT_HCI_2026_0719_110149.cfa",
    ]

    /// Commands and events of a btsnoop file (datalink 1002 H4 or 2001 Linux monitor), numbered as
    /// Wireshark numbers frames.
    private func hciPackets(_ data: [UInt8]) -> [(frame: Int, isCommand: Bool, bytes: ArraySlice<UInt8>)] {
        guard data.count >= 16, data.starts(with: Array("btsnoop\0".utf8)) else { return [] }
        func be32(_ i: Int) -> Int { Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3]) }
        let datalink = be32(12)
        var out: [(Int, Bool, ArraySlice<UInt8>)] = []
        var i = 16, frame = 0
        while i + 24 <= data.count {
            let incl = be32(i + 4), flags = be32(i + 8)
            let start = i + 24, end = start + incl
            guard end <= data.count else { break }
            frame += 1
            let rec = data[start..<end]
            if datalink == 1002, let t = rec.first, t == 1 || t == 4 {
                out.append((frame, t == 1, rec.dropFirst()))
            } else if datalink == 2001, flags & 0xFFFF == 2 || flags & 0xFFFF == 3 {
                out.append((frame, flags & 0xFFFF == 2, rec))
            }
            i = end
        }
        return out
    }

    private func malformed(_ fields: [Field]) -> Bool {
        fields.contains { $0.label == "Malformed" || malformed($0.children) }
    }

    func testRealCapturesDecodeLikeTshark() throws {
        guard FileManager.default.fileExists(atPath: Self.captures.path) else { throw XCTSkip("no shared captures") }
        var total = 0
        var malformedPackets: [String] = []
        for name in Self.files {
            guard let d = FileManager.default.contents(atPath: Self.captures.appendingPathComponent(name).path) else { continue }
            for p in hciPackets([UInt8](d)) {
                total += 1
                let fields: [Field]
                if p.isCommand {
                    guard let op = p.bytes.le16(0) else { continue }
                    fields = HCICommands.parameters(opcode: op, p.bytes.from(3))
                    if HCICommands.ogf(op) != 0x3F && HCICommands.ogf(op) != 0x3E {
                        XCTAssertTrue(HCICommands.isKnown(op), "\(name) #\(p.frame) \(Hex.prefixed(op, width: 4))")
                    }
                } else {
                    guard let code = p.bytes.byte(0) else { continue }
                    fields = HCIEvents.parameters(code: code, p.bytes.from(2))
                    XCTAssertTrue(HCIEvents.isKnown(code), "\(name) #\(p.frame) event \(code)")
                    if code == HCIEvents.leMeta, let sub = p.bytes.byte(2) {
                        XCTAssertTrue(HCIEvents.isKnownLESubevent(sub), "\(name) #\(p.frame) subevent \(sub)")
                    }
                }
                if malformed(fields) { malformedPackets.append("\(name)#\(p.frame)") }
            }
        }
        XCTAssertGreaterThan(total, 10_000)
        XCTAssertEqual(malformedPackets, ["mabip__btsnoop_hci.log#55", "mabip__btsnoop_hci.log#161"])
    }
}
