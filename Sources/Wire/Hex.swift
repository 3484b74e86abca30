/// Hex formatting without Foundation.
public enum Hex {
    public static let digits: [Character] = Array("0123456789abcdef")
    public static let upperDigits: [Character] = Array("0123456789ABCDEF")

    /// "0x" followed by `width` hex digits (upper case, as the specification writes them).
    public static func prefixed<T: BinaryInteger>(_ v: T, width: Int) -> String {
        if v >= 0, v.bitWidth <= 64 { return ascii(UInt64(truncatingIfNeeded: v), width: width, prefix: true) }
        return "0x" + padded(v, width: width)
    }

    public static func padded<T: BinaryInteger>(_ v: T, width: Int) -> String {
        if v >= 0, v.bitWidth <= 64 { return ascii(UInt64(truncatingIfNeeded: v), width: width, prefix: false) }
        let s = String(v, radix: 16, uppercase: true)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Lower-case hex of `v`, zero-padded to `width` (fingerprints, byte values in messages).
    public static func lower(_ v: UInt64, width: Int) -> String {
        let n = max(significantDigits(v), width)
        return TextCursor.hex(v, digits: n, prefix: false, lower: true)
    }

    /// Upper-case hex of a non-negative value, zero-padded to `width`, written straight into the
    /// string's storage: these run for nearly every printed field.
    @usableFromInline static func ascii(_ v: UInt64, width: Int, prefix: Bool) -> String {
        let n = max(significantDigits(v), width)
        return TextCursor.hex(v, digits: n, prefix: prefix, lower: false)
    }

    /// Writes "0x" when `prefix`, then `n` upper-case (or `lower`-case) hex digits of `v`
    /// (zero-padded): `n + 2` bytes, or `n`.
    @inlinable public static func store(_ v: UInt64, digits n: Int, prefix: Bool, lower: Bool = false,
                                        into c: inout TextCursor) {
        if prefix {
            c.append(UInt8(ascii: "0"))
            c.append(UInt8(ascii: "x"))
        }
        c.appendHex(v, digits: n, lower: lower)
    }

    /// The lower-case hex digit of a nibble (0-15), as an ASCII byte.
    @inlinable public static func lowerDigit(_ d: UInt8) -> UInt8 { d < 10 ? 0x30 &+ d : 0x57 &+ d }
    @inlinable public static func upperDigit(_ d: UInt8) -> UInt8 { d < 10 ? 0x30 &+ d : 0x37 &+ d }

    /// The last `n` (1...8) hex digits of `v` as ASCII, in a word whose first byte in memory is
    /// the first digit (bytes after the `n`th are left over): every digit made at once, eight
    /// nibbles spread one to a byte and each turned into its digit by adding to every byte.
    @inlinable @inline(__always)
    public static func digitWord(_ v: UInt64, count n: Int, lower: Bool) -> UInt64 {
        var x = UInt64(truncatingIfNeeded: UInt32(truncatingIfNeeded: v))
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte whose nibble is 10 or more, then the step from '9' + 1 to 'a' or 'A'.
        let letters = ((x &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        x = x &+ 0x3030_3030_3030_3030 &+ letters &* (lower ? 0x27 : 0x07)
        // Nibble 0 is byte 0: the digits read from the most significant, first in memory.
        return (x << (8 &* (8 &- UInt64(truncatingIfNeeded: n)))).bigEndian
    }

    /// Hex digits needed for `v` (1 for zero).
    @inlinable public static func significantDigits(_ v: UInt64) -> Int {
        v == 0 ? 1 : (67 - v.leadingZeroBitCount) / 4
    }

    /// Lower-case hex of the bytes with no separator, as tshark prints byte fields.
    public static func string(_ bytes: Bytes, separator: String = "") -> String {
        var s = ""
        s.reserveCapacity(bytes.count * (2 + separator.count))
        var first = true
        for b in bytes {
            if !first { s += separator }
            first = false
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 0xF)])
        }
        return s
    }
}
