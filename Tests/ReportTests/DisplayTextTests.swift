import XCTest
@testable import Report
@testable import Decoders
import Wire

/// The one rule for text from the air on a terminal: each row is what a device sent and what a
/// person sees.
final class DisplayTextTests: XCTestCase {
    func check(_ input: [UInt8], _ expected: String, _ style: DisplayText.Style = [], line: UInt = #line) {
        XCTAssertEqual(input.withUnsafeBufferPointer { DisplayText.escaped($0, style) }, expected, line: line)
    }

    func testControlsAreHexEscaped() {
        check(Array("\u{1B}[2Jcleared".utf8), "\\x1b[2Jcleared")
        check(Array("\u{1B}]8;;http://x\u{07}link\u{1B}]8;;\u{07}".utf8), "\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07")
        check([0x00, 0x09, 0x0A, 0x0D, 0x7F], "\\x00\\x09\\x0a\\x0d\\x7f")
    }

    func testC1AndInvisibleFormatCharactersAreScalarEscaped() {
        check(Array("abc\u{202E}dcba".utf8), "abc\\u{202E}dcba")
        check(Array("\u{85}\u{9B}".utf8), "\\u{0085}\\u{009B}")
        check(Array("a\u{200B}b\u{200D}c\u{2066}d\u{FEFF}e\u{E0041}".utf8), "a\\u{200B}b\\u{200D}c\\u{2066}d\\u{FEFF}e\\u{E0041}")
    }

    func testVisibleTextPassesUnchanged() {
        check(Array("Nordic_LBS".utf8), "Nordic_LBS")
        check(Array("Café 温度计 🙂".utf8), "Café 温度计 🙂")
        // Combining marks alone are visible (they stack on what precedes them): not escaped.
        check(Array("\u{301}\u{302}".utf8), "\u{301}\u{302}")
        // A backslash is not doubled.
        check(Array("a\\x1b".utf8), "a\\x1b")
    }

    func testInvalidUTF8ShowsEveryByte() {
        check([0xFF, 0xFE, 0xC3, 0x28, 0x6F, 0x6B], "\\xff\\xfe\\xc3(ok")
        // Truncated sequence at the end, surrogate, overlong, past U+10FFFF.
        check([0x41, 0xE2, 0x82], "A\\xe2\\x82")
        check([0xED, 0xA0, 0x80], "\\xed\\xa0\\x80")
        check([0xC0, 0xAF], "\\xc0\\xaf")
        check([0xF4, 0x90, 0x80, 0x80], "\\xf4\\x90\\x80\\x80")
    }

    func testStyles() {
        check(Array("a|b`c\nd".utf8), "a\\|b'c\\x0ad", .markdown)
        check(Array("one\ntwo\u{1B}".utf8), "one\ntwo\\x1b", .keepNewlines)
        check(Array("a|b".utf8), "a|b")
    }

    /// Text with nothing to escape is handed on in one piece (the fast path `read` relies on).
    func testPlainTextIsOneRun() {
        let text = Array("LE Advertising Report ADV_IND c0:00:00:00:00:01 -60 dBm".utf8)
        var runs = 0
        text.withUnsafeBufferPointer { u in DisplayText.escape(u) { _ in runs += 1 } }
        XCTAssertEqual(runs, 1)
    }

    /// Plain text is checked eight bytes at a time: every byte that needs escaping is still found,
    /// wherever it falls in a word. `.keepNewlines` takes the byte-by-byte path, the reference for
    /// input without newlines.
    func testWordAtATimeScanFindsEveryByteToEscape() {
        var rng = SystemRandomNumberGenerator()
        let specials: [UInt8] = [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xE2, 0x80, 0xAE, 0xFF, 0x20, 0x7E]
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                for special in specials {
                    var input = (0..<length).map { _ in UInt8.random(in: 0x21...0x7D, using: &rng) }
                    if length > 0 { input[position] = special }
                    if length > 2, special == 0xE2 { input[position...].prefix(3).indices.forEach { input[$0] = [0xE2, 0x80, 0xAE][$0 - position] } }
                    let fast = input.withUnsafeBufferPointer { DisplayText.escaped($0) }
                    let reference = input.withUnsafeBufferPointer { DisplayText.escaped($0, .keepNewlines) }
                    XCTAssertEqual(fast, reference, "\(input)")
                    var line: [UInt8] = []
                    input.withUnsafeBufferPointer { DisplayText.escapeLine($0) { line.append(contentsOf: $0) } }
                    XCTAssertEqual(String(decoding: line, as: UTF8.self), reference, "\(input)")
                }
            }
        }
    }

    /// A summary line's scan goes on eight bytes at a time after a visible non-ASCII character (its
    /// " — ", an accent in a name): a byte to escape anywhere after it is still found, as by the
    /// byte-by-byte path and by the escaper for short values.
    func testScanResumesAfterEachNonASCIICharacter() {
        var rng = SystemRandomNumberGenerator()
        let specials: [UInt8] = [0x00, 0x1B, 0x7F, 0x85, 0xFF]
        let dash: [UInt8] = [0xE2, 0x80, 0x94]
        for length in 4..<40 {
            for dashAt in 0...(length - 4) {
                for special in specials {
                    var input = (0..<length).map { _ in UInt8.random(in: 0x21...0x7D, using: &rng) }
                    input.replaceSubrange(dashAt..<(dashAt + 3), with: dash)
                    input[Int.random(in: (dashAt + 3)..<length, using: &rng)] = special
                    var line: [UInt8] = []
                    input.withUnsafeBufferPointer { DisplayText.escapeLine($0) { line.append(contentsOf: $0) } }
                    let reference = input.withUnsafeBufferPointer { DisplayText.escaped($0, .keepNewlines) }
                    XCTAssertEqual(String(decoding: line, as: UTF8.self), reference, "\(input)")
                    XCTAssertEqual(input.withUnsafeBufferPointer { DisplayText.escaped($0) }, reference, "\(input)")
                    XCTAssertTrue(reference.contains("\\"), "\(input)")
                }
            }
        }
    }

    /// Each invisible range is escaped from its first scalar to its last, and the scalars just
    /// outside it are not (the table is searched in order and stops early).
    func testInvisibleRangesEndWhereTheTableSays() {
        for r in DisplayText.invisible {
            XCTAssertTrue(DisplayText.isInvisible(r.lowerBound), "\(r)")
            XCTAssertTrue(DisplayText.isInvisible(r.upperBound), "\(r)")
            let below = r.lowerBound - 1, above = r.upperBound + 1
            XCTAssertEqual(DisplayText.isInvisible(below), DisplayText.invisible.contains { $0.contains(below) }, "\(below)")
            XCTAssertEqual(DisplayText.isInvisible(above), DisplayText.invisible.contains { $0.contains(above) }, "\(above)")
        }
        XCTAssertFalse(DisplayText.isInvisible(0x2014))  // the em dash of every ATT summary
        XCTAssertFalse(DisplayText.isInvisible(0x10FFFF))
    }

    /// Where `String(decoding:)` puts one U+FFFD, `decode` reports one ill-formed subpart.
    func testIllFormedSubpartsMatchStringDecoding() {
        for bytes: [UInt8] in [[0xE2, 0x82, 0x41], [0xF0, 0x80, 0x41], [0xFF], [0xC3], [0xF0, 0x9F, 0x99]] {
            var parts = 0, i = 0
            bytes.withUnsafeBufferPointer { u in
                while i < u.count {
                    if u[i] < 0x80 { i += 1; continue }
                    let (s, n) = DisplayText.decode(u, at: i)
                    if s == nil { parts += 1 }
                    i += n
                }
            }
            XCTAssertEqual(parts, String(decoding: bytes, as: UTF8.self).unicodeScalars.filter { $0 == "\u{FFFD}" }.count, "\(bytes)")
        }
    }

    /// What summaries write with `TextLine.write(plain:)` needs no escaping, so a line made of it,
    /// literals and numbers is printed unscanned: every name of the tables that goes in that way.
    func testTableNamesWrittenAsPlainAreTextThatNeedsNoEscape() {
        var names: [String] = []
        for table in [AssignedNumbers.services, AssignedNumbers.characteristics, AssignedNumbers.descriptors] {
            names += table.values
        }
        names += (0...UInt16.max).compactMap { AssignedNumbers.companyName($0) }
        names += (0...UInt16.max).compactMap { AssignedNumbers.appearanceName($0) }
        for type in UInt8(0)...15 {
            for secondary in [false, true] {
                for aux: UInt8? in [nil, 0, 1, 2, 3] { names.append(LLAdvType.name(type, secondary: secondary, auxType: aux)) }
            }
        }
        for company in [ManufacturerData.apple, ManufacturerData.microsoft] {
            for first in UInt8(0)...255 {
                if let k = ManufacturerData.kind(company: company, data: Bytes([first, 0, 0])) { names.append(k) }
            }
        }
        names += AdvertisingReports.addressTypeNames.keys.compactMap { AdvertisingReports.addressTypeNames[$0] }
        names += [RandomAddressKind.staticAddress, .resolvablePrivate, .nonResolvablePrivate, .reserved].map(\.rawValue)
        XCTAssertGreaterThan(names.count, 5_000)
        for n in names {
            let plain = Array(n.utf8).withUnsafeBufferPointer { DisplayText.isPlainLine($0) }
            XCTAssertTrue(plain, n)
        }
    }

    /// A line is plain by construction until something that may need escaping goes in.
    func testLinesKnowWhetherTheyMayNeedEscaping() {
        func plain(_ body: (inout TextLine) -> Void) -> Bool {
            var line = TextLine(capacity: 64)
            body(&line)
            return line.isPlainByConstruction
        }
        XCTAssertTrue(plain { $0 += "ATT "; $0.write(hex: 0x10, width: 4); $0.write(byte: 32); $0.write(plain: "Heart Rate") })
        XCTAssertFalse(plain { $0.write("made at run time") })
        XCTAssertFalse(plain { $0.write(received: Bytes([0x41, 0x1B])) })
        XCTAssertFalse(plain { $0.write(byte: 0x1B) })
        XCTAssertFalse(plain { $0.write(bytes: [0x41]) })
        XCTAssertFalse(plain { var other = TextLine(capacity: 8); other.write("x"); $0.write(line: other) })
        XCTAssertTrue(plain { var other = TextLine(capacity: 8); other += "x"; $0.write(line: other) })
        XCTAssertTrue(plain { $0.write("x"); $0.clear() })
        XCTAssertTrue(TextLine.makeChecked { $0 += "Handle "; $0.write(hex: 3, width: 4) }.plain)
        XCTAssertFalse(TextLine.makeChecked { $0.write(received: Bytes([0x41])) }.plain)
    }
}
