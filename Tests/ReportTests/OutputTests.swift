import XCTest
import Decoders
import Wire
@testable import Report

/// The output buffer's JSON strings: text is passed eight bytes at a time, so every byte JSON must
/// escape or repair is checked wherever it falls in a word.
final class OutputTests: XCTestCase {
    func written(_ body: (Output) -> Void) throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "blesniff-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try XCTUnwrap(Output(path: path))
        body(out)
        out.close()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The time column: seconds rounded to the microsecond, right-aligned.
    func testSecondsAreRoundedToTheMicrosecondAndAligned() throws {
        let cases: [(Int64, Int, String)] = [
            (0, 0, "0.000000"), (1_234_567_890, 0, "1.234568"), (1_234_567_890, 12, "    1.234568"),
            (-1_500, 0, "-0.000002"), (-12_000_000_000, 11, " -12.000000"), (999_999_999_600, 0, "1000.000000"),
            (Int64.min, 0, "-9223372036.854776"), (5_000, 3, "0.000005"),
        ]
        for (ns, width, text) in cases {
            XCTAssertEqual(String(decoding: try written { $0.write(seconds: ns, width: width) }, as: UTF8.self), text, "\(ns)")
        }
    }

    /// The frame number column: right-aligned, never cut.
    func testIntegersAreRightAligned() throws {
        let cases: [(Int64, Int, String)] = [(0, 6, "     0"), (42, 6, "    42"), (1_234_567, 6, "1234567"), (-5, 3, " -5"),
                                             (Int64.min, 0, "-9223372036854775808"), (10, 0, "10")]
        for (v, width, text) in cases {
            XCTAssertEqual(String(decoding: try written { $0.write(int: v, width: width) }, as: UTF8.self), text, "\(v)")
        }
    }

    /// Decimals are written two digits a step: every count of digits, each power of ten and the
    /// number before it, both ends of the range, against the standard library's spelling.
    func testDecimalsAtEveryLengthAreTheStandardLibrarys() throws {
        var values: [UInt64] = [0, 1, 9, UInt64.max, UInt64(Int64.max), UInt64(Int64.max) + 1, 1_700_000_000_010_500_000]
        var p: UInt64 = 1
        for _ in 0..<19 {
            p *= 10
            values += [p - 1, p, p + 1, p / 2 + 7]
        }
        for v in values {
            XCTAssertEqual(TextCursor.decimalDigits(v), String(v).count, "\(v)")
            XCTAssertEqual(String(decoding: try written { $0.write(uint: v) }, as: UTF8.self), String(v))
            var line = TextLine()
            line.write(v)
            XCTAssertEqual(line.string, String(v))
            if v <= UInt64(Int64.max) {
                XCTAssertEqual(String(decoding: try written { $0.write(int: -Int64(v)) }, as: UTF8.self), String(-Int64(v)))
            }
        }
        XCTAssertEqual(String(decoding: try written { $0.write(int: Int64.min) }, as: UTF8.self), String(Int64.min))
    }

    /// `read -v` and JSON write an advertising report's data summary twice: in the frame's summary
    /// line and as the field. The second is copied from the first only for the report the line
    /// summarised: in an event of two reports, each field is its own data's summary.
    func testEachReportsDataSummaryIsItsOwn() throws {
        let first: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x09, 0x48, 0x52]          // flags, name "HR"
        let second: [UInt8] = [0x03, 0x03, 0x0D, 0x18, 0x02, 0x0A, 0x04]         // UUID 0x180D, TX 4 dBm
        func report(_ type: UInt8, _ address: UInt8, _ data: [UInt8]) -> [UInt8] {
            [type, 0x00, address, 0, 0, 0, 0, 0xC0, UInt8(data.count)] + data + [0xC4]
        }
        let params: [UInt8] = [0x02, 0x02] + report(0x00, 1, first) + report(0x04, 2, second)
        let p = Packet(number: 1, timestamp: 0, direction: .received, adapter: 0, kind: .hci(.event),
                       payload: Bytes([0x3E, UInt8(params.count)] + params))
        let d = Dissector().dissect(p)
        let summaries = [first, second].map { AdvertisingData($0[...], legacy: true).summary }
        XCTAssertNotEqual(summaries[0], summaries[1])
        let text = String(decoding: try written { FramePrinter(format: .text, verbose: true, output: $0).print(d) }, as: UTF8.self)
        let fields = text.split(separator: "\n").filter { $0.contains("Advertising Data: ") }
        XCTAssertEqual(fields.map { String($0.split(separator: ": ", maxSplits: 1)[1]) }, summaries)
        let json = String(decoding: try written { FramePrinter(format: .json, verbose: false, output: $0).print(d) }, as: UTF8.self)
        for s in summaries {
            let escaped = s.replacingOccurrences(of: "\"", with: "\\\"")
            XCTAssertTrue(json.contains("\"advertising_data\":{\"value\":\"\(escaped)\""), s)
        }
    }

    /// A frame's columns, stored in one piece for the common frame, are what the general path
    /// writes; frames they do not fit are left to it.
    func testFrameColumnsAreWhatTheGeneralPathWrites() throws {
        let numbers = [1, 9, 10, 99_999, 999_999, 1_000_000, 12_345_678]
        let times: [Int64] = [0, 499, 500, 1_234_567_890, 99_999_999_999_499, 99_999_999_999_500, 100_000_000_000_000, -1, -2_000]
        let adapters: [UInt16] = [0, 9, 10, 99, 100, 0xFFFF]
        let directions: [Direction] = [.sent, .received, .unknown]
        for number in numbers {
            for ns in times {
                for adapter in adapters {
                    for direction in directions {
                        let p = Packet(number: number, timestamp: ns, direction: direction, adapter: adapter,
                                       kind: .hci(.event), payload: Bytes([]))
                        var stored = false
                        let fast = try written { out in
                            stored = FramePrinter(format: .text, verbose: false, output: out).writeColumns(p, seconds: ns)
                        }
                        let general = try written { FramePrinter(format: .text, verbose: false, output: $0).writeColumnsSpelledOut(p, relative: ns) }
                        let fits = number < 1_000_000 && ns >= 0 && ns < 99_999_999_999_500 && adapter < 100
                        XCTAssertEqual(stored, fits, "\(number) \(ns) \(adapter)")
                        if stored { XCTAssertEqual(String(decoding: fast, as: UTF8.self), String(decoding: general, as: UTF8.self)) }
                        else { XCTAssertEqual(fast, []) }
                    }
                }
            }
        }
    }

    /// A line written in place is what escaping a finished line writes: plain text stays where it
    /// was written, text with something to escape is escaped, wherever the buffer's end falls and
    /// however long the line.
    func testDisplayLinesWrittenInPlaceAreEscapedLines() throws {
        let texts: [[UInt8]] = [
            Array("ATT Handle Value Notification, Handle: 0x0010".utf8), Array("Heart Rate — 72 bpm".utf8),
            Array("name \u{1B}[2J cleared".utf8), [0x41, 0xFF, 0x42], Array("bidi \u{202E}txet".utf8), [],
            Array(repeating: UInt8(ascii: "x"), count: 5000), Array(repeating: 0x07, count: 3000),
        ]
        // Bytes already gathered, so that the line starts near the buffer's end (128 KiB) or past a flush.
        for before in [0, 1, 65_535, 126_000, 131_000] {
            for t in texts {
                let filler = [UInt8](repeating: UInt8(ascii: "."), count: before)
                let inPlace = try written { out in
                    out.write(bytes: filler)
                    out.write(displayLine: { $0.write(bytes: t) })
                    out.write(byte: 10)
                }
                let copied = try written { out in
                    out.write(bytes: filler)
                    var line = TextLine(capacity: 16)
                    line.write(bytes: t)
                    out.write(display: line)
                    out.write(byte: 10)
                }
                XCTAssertEqual(inPlace, copied, "\(before) \(t.prefix(40))")
            }
        }
    }

    /// Field values in hex and field labels, stored a word at a time: what `Hex` spells and what
    /// the pieces written one by one make, at any indent and near the buffer's end.
    func testHexValuesAndLabelsAreWhatThePiecesSpell() throws {
        for before in [0, 131_066, 131_070] {
            let filler = [UInt8](repeating: UInt8(ascii: "."), count: before)
            for v: UInt64 in [0, 0xA, 0x1B, 0xABCD, 0xFFFF_FFFF, 0x1_0000_0000, UInt64.max] {
                for width in [0, 2, 4, 8, 9] {
                    let hex = try written { $0.write(bytes: filler); $0.write(hex: v, width: width) }
                    XCTAssertEqual(String(decoding: hex.dropFirst(before), as: UTF8.self), Hex.prefixed(v, width: width))
                    let bare = try written { $0.write(bytes: filler); $0.write(hex: v, width: width, prefix: false) }
                    XCTAssertEqual(String(decoding: bare.dropFirst(before), as: UTF8.self), Hex.padded(v, width: width))
                }
            }
            // Every label length the word copies treat apart (0 to 40), and indents around each word.
            let lengths = (0...40).map { n in String((0..<n).map { Character(UnicodeScalar(UInt8(0x41 + $0 % 26))) }) }
            for indent in [0, 1, 4, 6, 8, 9, 16, 17, 24, 64, 65, 70] {
                for label in ["CID", "Packet Boundary Flag", "Ünïcode label"] + lengths {
                    for colon in [false, true] {
                        let line = try written {
                            $0.write(bytes: filler)
                            $0.write(indent: indent, label: FieldLabel(label), colon: colon)
                        }
                        XCTAssertEqual(String(decoding: line.dropFirst(before), as: UTF8.self),
                                       String(repeating: " ", count: indent) + label + (colon ? ": " : ""))
                    }
                }
            }
        }
    }

    /// A field line written in one piece (`write(indent:label:line:)`) is the line the general path
    /// writes: indent, label, colon and value as `writeText` spells it, then a newline. Values past
    /// its reach (nine hex digits, decimals from 10,000, other cases) are left to the general path,
    /// and so is every line near the end of the buffer.
    func testWholeFieldLinesAreWhatThePiecesSpell() throws {
        let names = ["", "ATT", "Handle Value Notification", "LE General Discoverable Mode, BR/EDR Not Supported",
                     String(repeating: "N", count: 70)]
        var values: [FieldValue] = [.none, .bool(true), .bool(false), .int(-3), .text("text")]
        for v: UInt64 in [0, 9, 10, 99, 100, 9_999, 10_000, 0x1B, 0xFFFF_FFFF, 0x1_0000_0000] {
            for hex in [0, 1, 2, 4, 8] { values.append(.uint(v, hex: hex)) }
            for name in names { values.append(.named(v, hex: 2, FieldLabel(name))) }
        }
        for before in [0, 131_060] {
            let filler = [UInt8](repeating: UInt8(ascii: "."), count: before)
            for indent in [0, 17] {
                for label in ["CID", "Simultaneous LE and BR/EDR to Same Device Capable (Controller)"] {
                    for value in values {
                        var taken = true
                        let line = try written { out in
                            out.write(bytes: filler)
                            taken = out.write(indent: indent, label: FieldLabel(label), line: value)
                        }
                        let expected = try written { out in
                            var hasValue = true
                            if case .none = value { hasValue = false }
                            out.write(indent: indent, label: FieldLabel(label), colon: hasValue)
                            FieldRendering.writeText(value, to: out)
                            out.write(byte: 10)
                        }
                        if taken {
                            XCTAssertEqual(String(decoding: line.dropFirst(before), as: UTF8.self),
                                           String(decoding: expected, as: UTF8.self), "\(value) after \(before)")
                        } else {
                            XCTAssertEqual(line.count, before, "nothing written when not taken: \(value)")
                        }
                        switch value {
                        case .uint(let v, let hex) where before == 0: XCTAssertEqual(taken, hex > 0 ? v <= 0xFFFF_FFFF : v < 10_000)
                        case .int, .text: XCTAssertFalse(taken)
                        case .none, .bool: if before == 0 { XCTAssertTrue(taken) }
                        default: break
                        }
                    }
                }
            }
        }
    }

    /// Short copies (labels, escaped runs) are word stores from both ends: every length up to and
    /// past the word path's end copies exactly its bytes and writes nothing before or after them.
    func testShortCopiesWriteExactlyTheirBytes() {
        let source = (0..<64).map { UInt8(0x30 + $0) }
        for n in 0...48 {
            var target = [UInt8](repeating: 0xEE, count: n + 16)
            source.withUnsafeBufferPointer { src in
                target.withUnsafeMutableBytes { dst in
                    TextCursor.copyShort(from: src.baseAddress! + 3, count: n, to: dst.baseAddress! + 8)
                }
            }
            XCTAssertEqual(Array(target[8..<(8 + n)]), Array(source[3..<(3 + n)]), "\(n)")
            XCTAssertEqual(target[..<8] + target[(8 + n)...], ArraySlice(repeating: 0xEE, count: 16), "\(n)")
        }
    }

    /// A label's JSON key, found by the label's address, is the key its text makes: for a literal,
    /// for the same text interned, and again after the keys were trimmed.
    func testLabelKeysAreTheTextsKeys() {
        let keys = JSONKeys()
        let literals: [FieldLabel] = ["Packet Boundary Flag", "CID", "X", "", "Ünïcode label"]
        for round in 0..<2 {
            for label in literals {
                for l in [label, FieldLabel(label.string)] {
                    let k = keys.key(l), t = keys.key(label.string)
                    XCTAssertEqual(k.hash, t.hash, "\(label) \(round)")
                    XCTAssertEqual(k.offset < 0, t.offset < 0)
                    if k.offset >= 0 { XCTAssertEqual(keys.bytes[k.range], keys.bytes[t.range]) }
                }
            }
            // Fill the arena past its limit so that `trim` forgets every key.
            for i in 0..<9_000 { _ = keys.key("label number \(i)") }
            keys.trim()
        }
    }

    /// Far more labels than the address table holds, each asked for twice in a row and again after
    /// all the others: every answer is the key its text makes (a label pushed out of its set is
    /// made again, never confused with one that took its place).
    func testLabelKeysSurviveContention() {
        let keys = JSONKeys()
        let labels = (0..<6_000).map { FieldLabel("contended label \($0)") }
        for _ in 0..<2 {
            for l in labels {
                for _ in 0..<2 {
                    let k = keys.key(l), t = keys.key(l.string)
                    XCTAssertEqual(k.hash, t.hash, l.string)
                    XCTAssertEqual(keys.bytes[k.range], keys.bytes[t.range], l.string)
                }
            }
        }
    }

    /// A member's start, `"key":`, is written from the key's packed words up to 32 bytes and from
    /// the arena past that: the same bytes at every length, near the buffer's end too.
    func testKeysAreWrittenAsTheyAreSpelled() throws {
        for before in [0, 131_050] {
            let filler = [UInt8](repeating: UInt8(ascii: "."), count: before)
            for n in 1...40 {
                let label = String(repeating: "Ab ", count: 14).prefix(n)
                let bytes = try written { out in
                    out.write(bytes: filler)
                    XCTAssertTrue(out.write(key: out.keys.key(String(label))))
                }
                XCTAssertEqual(String(decoding: bytes.dropFirst(before), as: UTF8.self), "\"\(Field.key(for: String(label)))\":", "\(n)")
            }
        }
    }

    func testJSONStringsEscapeEveryByteWhereverItFalls() throws {
        var rng = SystemRandomNumberGenerator()
        let specials: [[UInt8]] = [[0x22], [0x5C], [0x00], [0x0A], [0x1F], [0x7F], [0xC3, 0xA9], [0xE2, 0x82], [0xFF], [0x20]]
        for length in 1..<26 {
            for position in 0..<length {
                for special in specials {
                    var bytes = (0..<length).map { _ in UInt8.random(in: 0x23...0x5B, using: &rng) }
                    bytes.replaceSubrange(position..<min(position + special.count, length), with: special)
                    let json = try written { $0.write(jsonString: Bytes(bytes)) }
                    let decoded = try JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed) as? String
                    XCTAssertEqual(decoded, String(decoding: bytes, as: UTF8.self), "\(bytes)")
                }
            }
        }
    }

    /// A special byte after another: the plain run resumes after the first escape, and the last
    /// word's check (which overlaps bytes before the run) must still find the second.
    func testJSONStringsEscapeASecondByteAfterAnEscape() throws {
        let specials: [[UInt8]] = [[0x22], [0x01], [0xC3, 0xA9], [0xFF]]
        for length in 2..<20 {
            for first in 0..<length {
                for second in (first + 1)..<min(length, first + 10) {
                    for a in specials {
                        for b in specials {
                            var bytes = [UInt8](repeating: UInt8(ascii: "m"), count: length)
                            bytes.replaceSubrange(first..<min(first + a.count, length), with: a)
                            guard second < length else { continue }
                            bytes.replaceSubrange(second..<min(second + b.count, length), with: b)
                            let text = Array(bytes.prefix(length))
                            let json = try written { $0.write(jsonString: Bytes(text)) }
                            let decoded = try JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed) as? String
                            XCTAssertEqual(decoded, String(decoding: text, as: UTF8.self), "\(text)")
                        }
                    }
                }
            }
        }
    }

    /// A line of literals and the specification's names (`TextLine.isPlainByConstruction`) is
    /// looked at for quotes and backslashes only: wherever they are, beside multi-byte UTF-8, the
    /// JSON string gives the line back.
    func testPlainLinesEscapeQuotesAndBackslashesAnywhere() throws {
        let pieces = ["\"", "\\", "—", "µ", "m"]
        for length in 0..<20 {
            for at in 0...length {
                for p in pieces {
                    for q in pieces {
                        let text = String(repeating: "m", count: at) + p + String(repeating: "m", count: length - at) + q
                        var line = TextLine()
                        line.write(plain: text)
                        XCTAssertTrue(line.isPlainByConstruction)
                        let json = try written { $0.write(jsonString: line) }
                        let decoded = try JSONSerialization.jsonObject(with: Data(json), options: .fragmentsAllowed) as? String
                        XCTAssertEqual(decoded, text)
                    }
                }
            }
        }
    }

    /// Names are copied into JSON, but the few company names that hold quotation marks are
    /// escaped: every company's field is valid JSON and gives back its name. In text the quotes
    /// stay as they are.
    func testCompanyNamesWithQuotesStayValidJSON() throws {
        var quoted = 0
        for id in 0...UInt16.max {
            guard let value = FieldValue.company(id), case .named(_, _, let label, let quotes) = value else { continue }
            let name = label.string
            XCTAssertEqual(quotes, name.contains("\""), name)
            if quotes { quoted += 1 }
            let json = try written { out in
                out.write(byte: UInt8(ascii: "{"))
                FieldRendering.writeJSONMembers([Field("Company ID", value)], to: out)
                out.write(byte: UInt8(ascii: "}"))
            }
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json)) as? [String: [String: Any]], name)
            XCTAssertEqual(object["company_id"]?["name"] as? String, name)
            XCTAssertEqual(object["company_id"]?["value"] as? Int, Int(id))
            XCTAssertEqual(FieldRendering.text(value), name + " (" + Hex.prefixed(id, width: 4) + ")")
        }
        XCTAssertEqual(quoted, 6)
    }

    /// Literals, Strings and numbers are written in place, each length its own way (bytes, halves,
    /// words, memcpy; digits two at a time), and flushed as the buffer fills: every byte arrives
    /// once, in order, whatever the length and wherever the buffer's end falls. Single characters,
    /// held as a scalar rather than bytes, too.
    func testPiecesOfEveryLengthAreWrittenAsTheyAre() throws {
        let pieces: [StaticString] = [
            "", "a", "ab", "abc", "abcd", "abcde", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno",
            "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopqrstuvwxyz01234", "abcdefghijklmnopqrstuvwxyz012345",
            "abcdefghijklmnopqrstuvwxyz0123456", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", "é", "\"", "µs",
        ]
        var expected: [UInt8] = []
        let bytes = try written { out in
            for i in 0..<30_000 {
                let piece = pieces[(i &* 7) % pieces.count]
                out.write(piece)
                piece.withUTF8Buffer { expected += $0 }
                if i % 11 == 0 {
                    out.write("é")
                    expected += Array("é".utf8)
                }
                let text = String(repeating: "x", count: i % 37) + "\(i)"
                out.write(text)
                expected += Array(text.utf8)
                let number = Int64(bitPattern: UInt64(i &* 2_654_435_761) >> UInt64(i % 64)) * (i % 3 == 0 ? -1 : 1)
                out.write(int: number)
                expected += Array(String(number).utf8)
            }
        }
        XCTAssertGreaterThan(expected.count, 8 << 17)
        XCTAssertEqual(bytes.count, expected.count)
        XCTAssertTrue(bytes == expected)
    }

    /// Numbers are written eight digits a word: every count of digits, each side of every power
    /// of ten, the largest and the most negative, are what `String` spells.
    func testNumbersOfEveryLengthAreWhatStringSpells() throws {
        var values: [UInt64] = [0, UInt64.max, UInt64(Int64.max), UInt64(Int64.max) + 1]
        var p: UInt64 = 1
        for _ in 0...19 {
            values += [p &- 1, p, p &+ 1, p &* 3 &+ 7]
            if p <= UInt64.max / 10 { p *= 10 } else { break }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 { values.append(UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)) }
        var expected = ""
        let bytes = try written { out in
            for v in values {
                out.write(uint: v)
                out.write(byte: 32)
                expected += "\(v) "
                let i = Int64(bitPattern: v)
                out.write(int: i)
                out.write(byte: 32)
                expected += "\(i) "
            }
            out.write(int: Int64.min)
            expected += "\(Int64.min)"
        }
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), expected)
    }

    /// `JSONText.quoted` is the buffer's escaping: the same bytes for every special character.
    func testQuotedStringsAreWhatTheBufferWrites() throws {
        for s in ["plain", "quote \" and backslash \\", "tab\tnewline\nreturn\r", "nul \u{0} unit \u{1F} del \u{7F}",
                  "é ✓ 😀", ""] {
            let buffered = try written { $0.write(jsonString: s) }
            XCTAssertEqual(Array(JSONText.quoted(s).utf8), buffered, s)
            // A report's line (the audit's JSON) escapes the same, from a String or from what a
            // body writes, a line's worth longer than its room on the stack included.
            var line = TextLine()
            line.write(jsonQuoted: s)
            XCTAssertEqual(line.string, JSONText.quoted(s), s)
            let long = String(repeating: s + "|", count: 300)
            var byBody = TextLine()
            byBody.write(jsonQuotedBy: { $0.write(long) })
            XCTAssertEqual(byBody.string, JSONText.quoted(long), s)
        }
        XCTAssertEqual(JSONText.quoted("a\u{1}\"b"), "\"a\\u0001\\\"b\"")
    }

    /// Objects of every width, nested in each other, as JSON: a wide object's siblings are listed
    /// off the stack in lists the output keeps, one per level in use. Each object has the members
    /// its fields make, shared keys as arrays in order, in every frame that reuses the lists.
    func testWideObjectsHaveEveryMember() throws {
        func fields(_ widths: ArraySlice<Int>, _ seed: Int) -> [Field] {
            guard let width = widths.first else { return [] }
            return (0..<width).map { i in
                let label = FieldLabel("Member \((i &* 7 &+ seed) % 40)")
                return i % 9 == 4 && widths.count > 1 ? Field(label, .none, fields(widths.dropFirst(), i)) : Field(label, .uint(UInt64(i), hex: 0))
            }
        }
        func expected(_ fields: [Field]) -> [String: Any] {
            var members: [String: [Any]] = [:]
            for f in fields {
                members[Field.key(for: f.label.string), default: []].append(f.children.isEmpty ? f.value.uintValue : expected(f.children))
            }
            return members.mapValues { $0.count == 1 ? $0[0] : $0 }
        }
        for widths in [[1, 300], [14, 15], [15, 14], [123, 123, 2], [300, 40, 13], [40, 300]] {
            let trees = (0..<3).map { fields(ArraySlice(widths), $0) }
            let json = try written { out in
                for tree in trees {
                    out.write(byte: UInt8(ascii: "{"))
                    FieldRendering.writeJSONMembers(tree, to: out)
                    out.write("}\n")
                }
            }
            let lines = json.split(separator: UInt8(ascii: "\n"))
            XCTAssertEqual(lines.count, trees.count)
            for (line, tree) in zip(lines, trees) {
                let object = try JSONSerialization.jsonObject(with: Data(line))
                let got = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
                let want = try JSONSerialization.data(withJSONObject: expected(tree), options: .sortedKeys)
                XCTAssertEqual(String(decoding: got, as: UTF8.self), String(decoding: want, as: UTF8.self), "\(widths)")
            }
        }
    }
}

private extension FieldValue {
    var uintValue: Int {
        if case .uint(let n, _) = self { return Int(n) }
        return 0
    }
}
