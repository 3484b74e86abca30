import XCTest
@testable import Decoders
import Report
import Wire

/// Outputs copy the names of values, bits and UUIDs (`FieldValue.named`) and units as they are:
/// every one a decoder can give must have nothing a terminal or JSON escapes, but the few company
/// names with quotation marks, which are marked for JSON to escape. Checked for every entry of the
/// name tables and for every name in the decode of every committed and shared capture.
final class NameTextTests: XCTestCase {
    /// Nothing a terminal escapes; nothing JSON escapes, or with `quotes` only quotation marks.
    func check(_ name: String?, quotes: Bool = false, _ what: @autoclosure () -> String,
               file: StaticString = #filePath, line: UInt = #line) {
        guard let name else { return }
        XCTAssertTrue(DisplayText.isPlainName(name), "\(what()): \(name.debugDescription) has text a terminal escapes", file: file, line: line)
        XCTAssertEqual(quotes, name.contains("\""), "\(what()): \(name.debugDescription) quotes", file: file, line: line)
        XCTAssertEqual(JSONText.quoted(name), "\"" + name.replacingOccurrences(of: "\"", with: "\\\"") + "\"",
                       "\(what()): JSON escapes more than its quotation marks", file: file, line: line)
    }

    func testEveryTableNameNeedsNoEscape() {
        for v in 0...0xFFFF {
            let u = UInt16(v)
            check(AssignedNumbers.companyName(u), quotes: AssignedNumbers.companyNameHasQuotes(u), "company \(v)")
            check(AssignedNumbers.appearanceName(u), "appearance \(v)")
            check(AssignedNumbers.name(BluetoothUUID(uuid16: u)), "UUID \(v)")
            check(HCICommands.name(u), "command \(v)")
            check(PSM.name(u), "PSM \(v)")
            check(PSM.name(u, le: true), "LE PSM \(v)")
            check(L2CAPChannel.name(u), "CID \(v)")
        }
        for name in AssignedNumbers.anyName.values { check(name, "UUID") }
        for v in 0...0xFF {
            let b = UInt8(v)
            check(HCIEvents.name(b), "event \(v)")
            check(HCIEvents.leSubeventName(b), "LE subevent \(v)")
            check(HCIErrors.name(b), "error \(v)")
            check(ATTOpcode(rawValue: b).name, "ATT opcode \(v)")
            check(ATTError.name(b), "ATT error \(v)")
            check(SMPOpcode.name(b), "SMP opcode \(v)")
            check(SMPFailureReason.name(b), "SMP reason \(v)")
            check(KeypressNotificationType.name(b), "keypress \(v)")
            check(SignalingCode.name(b), "signaling code \(v)")
            check(ADType.name(b), "AD type \(v)")
            check(LLPhy.name(b), "PHY \(v)")
        }
    }

    func testEveryDecodedNameNeedsNoEscape() throws {
        var paths = Fixtures.committed.map { Fixtures.captures + "/" + $0 }
        paths += ((try? Fixtures.sharedOrSkip()) ?? []).map { Fixtures.shared + "/" + $0 }
        var names = 0
        func walk(_ fields: [Field], _ where_: String) {
            for f in fields {
                switch f.value {
                case .named(_, _, let text, let quotes):
                    names += 1
                    check(text.string, quotes: quotes, where_ + " \(f.label)")
                case .quantity(_, _, _, let text), .signed(_, let text):
                    check(text, where_ + " \(f.label)")
                case .flags(_, _, let set):
                    for name in set { check(name, where_ + " \(f.label)") }
                case .uuid(let u):
                    check(AssignedNumbers.name(u), where_ + " \(f.label)")
                default: break
                }
                walk(f.children, where_)
            }
        }
        for path in paths {
            // A shared capture libpcap cannot open is not this test's concern.
            try? Fixtures.decode(path) { d in
                for layer in d.layers { walk(layer.fields, "\(path) frame \(d.packet.number) \(layer.name)") }
            }
        }
        XCTAssertGreaterThan(names, 10_000)
    }
}
