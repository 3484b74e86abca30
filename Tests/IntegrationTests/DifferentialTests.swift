import XCTest
import Capture
import Decoders

/// Decodes every committed and shared capture and compares, frame by frame, the HCI packet type,
/// direction, opcode, event code, LE subevent and L2CAP channel with tshark's decode of the same
/// file (recorded in Tests/Captures/expected by scripts/gen_expected.sh, so tshark is not needed).
final class DifferentialTests: XCTestCase {
    struct Mismatch: CustomStringConvertible {
        let file: String, frame: Int, field: String, tshark: String, ours: String
        var description: String { "\(file) frame \(frame): \(field) tshark=\(tshark) blesniff=\(ours)" }
    }

    /// Our view of a frame in tshark's field names (only the fields we compare).
    static func fields(_ d: Decoded) -> [String: Int] {
        var f: [String: Int] = [:]
        switch d.hci {
        case .command(let op, _): f["bthci_cmd.opcode"] = Int(op)
        case .event(let code, let params):
            f["bthci_evt.code"] = Int(code)
            if code == 0x3E, let sub = params.byte(0) { f["bthci_evt.le_meta_subevent"] = Int(sub) }
        default: break
        }
        if let l = d.l2cap { f["btl2cap.cid"] = Int(l.cid) }
        return f
    }

    func compare(_ path: String, name: String, mismatches: inout [Mismatch]) throws -> Int {
        guard let rows = Fixtures.expected(name) else { return -1 }
        var n = 0
        try Fixtures.decode(path) { d in
            n += 1
            guard d.packet.number <= rows.count else { return }
            let row = rows[d.packet.number - 1]
            let ours = Self.fields(d)
            for key in ["bthci_cmd.opcode", "bthci_evt.code", "bthci_evt.le_meta_subevent", "btl2cap.cid"] {
                let theirs = Fixtures.int(row[key])
                if theirs != ours[key] {
                    mismatches.append(Mismatch(file: name, frame: d.packet.number, field: key,
                                               tshark: theirs.map { String($0, radix: 16) } ?? "-",
                                               ours: ours[key].map { String($0, radix: 16) } ?? "-"))
                }
            }
            // 0xFF: tshark does not know the direction (DLT 187); blesniff infers it for commands and events.
            if let dir = Fixtures.int(row["hci_h4.direction"]), dir != 0xFF {
                let ourDir = d.packet.direction == .sent ? 0 : d.packet.direction == .received ? 1 : -1
                if dir != ourDir {
                    mismatches.append(Mismatch(file: name, frame: d.packet.number, field: "direction", tshark: String(dir), ours: String(ourDir)))
                }
            }
            if let t = Fixtures.int(row["hci_h4.type"]), case .hci(let type) = d.packet.kind, Int(type.rawValue) != t {
                mismatches.append(Mismatch(file: name, frame: d.packet.number, field: "hci_h4.type", tshark: String(t), ours: String(type.rawValue)))
            }
        }
        XCTAssertEqual(n, rows.count, "\(name): frame count")
        return n
    }

    func testCommittedCapturesMatchTshark() throws {
        var mismatches: [Mismatch] = []
        var compared = 0
        for name in Fixtures.committed {
            if try compare(Fixtures.captures + "/" + name, name: name, mismatches: &mismatches) >= 0 { compared += 1 }
        }
        if compared == 0 { throw XCTSkip("no expected files in Tests/Captures/expected") }
        XCTAssertTrue(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(20).map(\.description).joined(separator: "\n"))")
    }

    func testSharedCapturesMatchTshark() throws {
        var mismatches: [Mismatch] = []
        for name in try Fixtures.sharedOrSkip() {
            let path = Fixtures.shared + "/" + name
            // Link-layer captures are compared by the link-layer tests; PPI is unsupported.
            guard let reader = try? CaptureReader(path: path) else { continue }
            guard let first = try? reader.next(), !LinkType.isLinkLayer(first.linkType) else { continue }
            _ = try compare(path, name: name, mismatches: &mismatches)
        }
        XCTAssertTrue(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(30).map(\.description).joined(separator: "\n"))")
    }
}
