import Wire

/// A line of text written piece by piece into a byte buffer that can be reused frame after frame.
/// Summary lines are written into one rather than concatenated from Strings: printing a capture
/// then creates no String per frame.
public struct TextLine: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) {
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    /// Empties the line and keeps its storage.
    public mutating func clear() { bytes.removeAll(keepingCapacity: true) }

    public var isEmpty: Bool { bytes.isEmpty }

    /// The line as a String.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// `body`'s writing as a String: how types that write their summary also offer it as a value.
    public static func make(_ body: (inout TextLine) -> Void) -> String {
        // Room for a typical description up front: growing an empty array takes several allocations.
        var line = TextLine(capacity: 96)
        body(&line)
        return line.string
    }

    public mutating func write(_ s: String) {
        // Native strings are read in place (`withUTF8` needs a mutable copy: a retain and release);
        // either way a memcpy rather than the generic append of a UTF8View.
        if s.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            var s = s
            s.withUTF8 { bytes.append(contentsOf: $0) }
        }
    }

    public mutating func write(byte: UInt8) { bytes.append(byte) }

    /// Another line's bytes.
    public mutating func write(bytes b: [UInt8]) { bytes.append(contentsOf: b) }

    /// Text as a device sent it, kept as bytes (possibly invalid UTF-8): the terminal printer shows
    /// invalid bytes as `\xNN` and JSON as U+FFFD, both from the same line.
    public mutating func write(received b: Bytes) { bytes.append(contentsOf: b) }

    /// `s` as `DisplayText` shows it on a terminal, for lines that are printed only as text.
    public mutating func write(display s: String, _ style: DisplayText.Style = []) {
        var s = s
        s.withUTF8 { u in DisplayText.escape(u, style) { bytes.append(contentsOf: $0) } }
    }

    /// Decimal, as `String(v)` spells it.
    public mutating func write<T: BinaryInteger>(_ v: T) {
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        write(decimal: UInt64(truncatingIfNeeded: v.magnitude))
    }

    /// The same for `Int`, not generic: other modules' calls are then not left unspecialised.
    public mutating func write(_ v: Int) {
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        write(decimal: UInt64(truncatingIfNeeded: v.magnitude))
    }

    /// Digits into a scratch tuple on the stack, then appended in order: reversing them in place
    /// would go through a slice of the whole buffer.
    private mutating func write(decimal m: UInt64) {
        var m = m
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { t in
            var n = t.count
            repeat {
                n &-= 1
                t[n] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m % 10)
                m /= 10
            } while m > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: t[n...]))
        }
    }

    /// "0x" and upper-case hex digits, zero-padded to `width`: `Hex.prefixed(v, width:)`.
    public mutating func write<T: BinaryInteger>(hex v: T, width: Int) {
        bytes.append(UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: "x"))
        writeDigits(UInt64(truncatingIfNeeded: v), width: width, upper: 0x37)
    }

    /// "0x" and lower-case hex digits (tshark's spelling of ATT handles).
    public mutating func write(lowerHex v: UInt64, width: Int) {
        bytes.append(UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: "x"))
        writeDigits(v, width: width, upper: 0x57)
    }

    /// The bytes in lower-case hex with no separator: `Hex.string(b)`.
    public mutating func write(hexBytes b: Bytes) {
        for x in b {
            bytes.append(Hex.lowerDigit(x >> 4))
            bytes.append(Hex.lowerDigit(x & 0xF))
        }
    }

    /// "00:1b:dc:07:32:a1", as `BDAddr.description`.
    public mutating func write(_ a: BDAddr) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: BDAddr.textLength))
        bytes.withUnsafeMutableBufferPointer { a.store(at: $0.baseAddress! + start) }
    }

    /// "0x180D", or the 128-bit form when the UUID is not on the base: `BluetoothUUID.description`.
    public mutating func write(_ u: BluetoothUUID) {
        if let s = u.uuid16 { write(hex: s, width: 4) } else if let s = u.uuid32 { write(hex: s, width: 8) } else { write(u.uuidString) }
    }

    private mutating func writeDigits(_ v: UInt64, width: Int, upper letterBase: UInt8) {
        let n = max(Hex.significantDigits(v), width)
        var shift = 4 * (n - 1)
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: shift < 64 ? v >> UInt64(shift) : 0) & 0xF
            bytes.append(d < 10 ? 0x30 &+ d : letterBase &+ d)
            shift -= 4
        }
    }

    /// Appends with `+=`, so summary code reads like the String code it replaces.
    public static func += (line: inout TextLine, s: String) { line.write(s) }
}
