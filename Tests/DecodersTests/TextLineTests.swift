import XCTest
@testable import Decoders
import Wire

/// `TextLine` writes what the String helpers it replaces spell, byte for byte.
final class TextLineTests: XCTestCase {
    func testNumbersAsStringSpellsThem() {
        for v in [0, 7, 10, 255, 65535, -1, -128, Int.max, Int.min] {
            var l = TextLine()
            l.write(v)
            XCTAssertEqual(l.string, String(v))
        }
        var l = TextLine()
        l.write(Int8(-60))
        l.write(byte: 32)
        l.write(UInt64.max)
        XCTAssertEqual(l.string, "-60 " + String(UInt64.max))
    }

    func testHexAsHexPrefixedSpellsIt() {
        for (v, w) in [(0, 2), (0x0A, 2), (0x1234, 4), (0x1234, 2), (0xABCDEF, 8), (0, 0)] as [(UInt64, Int)] {
            var l = TextLine()
            l.write(hex: v, width: w)
            XCTAssertEqual(l.string, Hex.prefixed(v, width: w))
        }
        var l = TextLine()
        l.write(lowerHex: 0x00AB, width: 4)
        XCTAssertEqual(l.string, "0x00ab")
        l.clear()
        XCTAssertTrue(l.isEmpty)
        l.write(hexBytes: [0x00, 0xFF, 0x1A][...])
        XCTAssertEqual(l.string, Hex.string([0x00, 0xFF, 0x1A][...]))
    }

    /// Up to eight digits are made in one word: every digit in every position, both cases, every
    /// width, and values with more digits than the word, at every point of a line's room.
    func testHexDigitsInEveryPosition() {
        var values: [UInt64] = [0, 0xF, 0x10, 0xABCD, 0x9A9A, 0xFFFF_FFFF, 0x1_0000_0000, UInt64.max, 0x0123_4567_89AB_CDEF]
        for shift in stride(from: 0, to: 32, by: 4) { for d in 0..<16 { values.append(UInt64(d) << UInt64(shift)) } }
        for v in values {
            for width in 0...10 {
                let digits = String(v, radix: 16, uppercase: true)
                let upper = "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
                for used in [0, 5, 54, 60, 63] {
                    var l = TextLine(capacity: 64)
                    l.write(bytes: [UInt8](repeating: 32, count: used))
                    l.write(hex: v, width: width)
                    XCTAssertEqual(String(l.string.dropFirst(used)), upper, "\(v) \(width)")
                    l.clear()
                    l.write(lowerHex: v, width: width)
                    XCTAssertEqual(l.string, upper.lowercased(), "\(v) \(width)")
                }
            }
        }
    }

    /// A decimal written into a line is `fixed`'s String: rounding, a carry into a new whole
    /// digit, negative values that round to zero, and what does not fit a scaled word.
    func testFixedPointAsFixedSpellsIt() {
        let cases: [(Double, Int)] = [(0, 3), (0.7861328125, 3), (9.9996, 3), (99.5, 0), (-0.0004, 3), (-12.345, 2),
                                      (1.25 * 6, 2), (1e20, 2), (.infinity, 1), (-.infinity, 1), (.nan, 1), (5, 19)]
        for (x, d) in cases {
            var l = TextLine()
            l.write(fixed: x, decimals: d)
            XCTAssertEqual(l.string, fixed(x, d), "\(x) \(d)")
        }
        XCTAssertEqual(fixed(9.9996, 3), "10.000")
        XCTAssertEqual(fixed(-0.0004, 3), "0.000")
        XCTAssertEqual(fixed(-12.25, 1), "-12.3")
    }

    func testAddressesAndUUIDsAsTheirDescriptions() {
        let a = BDAddr(0x00_1B_DC_07_32_A1)
        let uuids = [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid32: 0x1234_5678),
                     BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!]
        var l = TextLine()
        l.write(a)
        XCTAssertEqual(l.string, a.description)
        for u in uuids {
            l.clear()
            l.write(u)
            XCTAssertEqual(l.string, u.description)
        }
    }

    func testSummaryIsWhatWriteSummaryWrites() {
        // Error Response, then a Read Request: the String and the line agree.
        for bytes: [UInt8] in [[0x01, 0x0A, 0x03, 0x00, 0x0A], [0x0A, 0x03, 0x00], [0x1B, 0x03, 0x00] + Array(repeating: 0xAB, count: 40)] {
            let pdu = ATTPDU(bytes[...])
            var l = TextLine()
            pdu.writeSummary(to: &l)
            XCTAssertEqual(l.string, pdu.summary)
            XCTAssertFalse(l.isEmpty)
        }
        XCTAssertEqual(ATTPDU([0x0A, 0x03, 0x00][...]).summary, "Read Request, Handle: 0x0003")
        XCTAssertTrue(ATTPDU(([0x1B, 0x03, 0x00] + Array(repeating: 0xAB, count: 40))[...]).summary.hasSuffix(String(repeating: "ab", count: 32) + "…"))
    }

    func testLinesClearAndGrow() {
        // One owner: a line is moved or lent, never copied. Clearing keeps the room it has.
        var a = TextLine()
        XCTAssertTrue(a.isEmpty)
        a += "abc"
        a.write(byte: UInt8(ascii: "!"))
        XCTAssertEqual(a.string, "abc!")
        var b = TextLine(capacity: 2)
        b += "abcdef"
        XCTAssertEqual(b.string, "abcdef")
        var c = TextLine(capacity: 8)
        c += "xyz"
        c.clear()
        XCTAssertEqual(c.string, "")
        XCTAssertEqual(c.count, 0)
        c += "q"
        XCTAssertEqual(c.string, "q")
        // `make` writes into room on the stack, and moves to the heap past it.
        for n in [0, 1, 21, 22, 60] {
            XCTAssertEqual(TextLine.make { for _ in 0..<n { $0 += "abcdef" } }, String(repeating: "abcdef", count: n))
        }
        // Growth past any first capacity, by pieces of every size.
        var long = TextLine(capacity: 4)
        var expected = ""
        for i in 0..<500 {
            let piece = String(repeating: Character(UnicodeScalar(UInt8(97 + i % 26))), count: i % 70)
            long.write(piece)
            long.write(hex: i, width: 4)
            expected += piece + Hex.prefixed(i, width: 4)
        }
        XCTAssertEqual(long.string, expected)
        XCTAssertEqual(long.count, expected.utf8.count)
        var joined = TextLine()
        joined.write(line: a)
        joined.write(line: b)
        XCTAssertEqual(joined.bytes, Array("abc!abcdef".utf8))
    }
}
