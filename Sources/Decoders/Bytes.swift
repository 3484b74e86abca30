/// Bytes of a frame: a slice of the reader's buffer, never copied on the hot path.
/// Indices are those of the underlying buffer; use `ByteReader` or `bytes.u8(at:)` helpers
/// that take offsets relative to `startIndex`.
public typealias Bytes = ArraySlice<UInt8>

/// Why a decoder stopped before the end of its input.
public enum DecodeError: Error, Equatable, Sendable {
    /// The PDU ended before a field that the specification requires.
    case truncated(needed: Int, available: Int)
    /// A field holds a value the specification does not allow.
    case invalid(String)
}

/// A bounds-checked little-endian cursor over `Bytes`. Every read verifies the length first,
/// so no input can make it trap; a short read throws `DecodeError.truncated`.
public struct ByteReader: Sendable {
    public let bytes: Bytes
    /// Absolute index into `bytes` of the next byte to read.
    public var index: Int

    @inlinable public init(_ bytes: Bytes) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    /// Offset of the cursor from the start of the slice.
    @inlinable public var offset: Int { index - bytes.startIndex }
    @inlinable public var remaining: Int { bytes.endIndex - index }
    @inlinable public var isAtEnd: Bool { index >= bytes.endIndex }

    @inlinable mutating func need(_ n: Int) throws(DecodeError) {
        guard n >= 0, remaining >= n else { throw .truncated(needed: n, available: remaining) }
    }

    @inlinable public mutating func u8() throws(DecodeError) -> UInt8 {
        try need(1)
        defer { index += 1 }
        return bytes[index]
    }

    @inlinable public mutating func i8() throws(DecodeError) -> Int8 { Int8(bitPattern: try u8()) }

    @inlinable public mutating func u16() throws(DecodeError) -> UInt16 {
        try need(2)
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    @inlinable public mutating func u16be() throws(DecodeError) -> UInt16 {
        try need(2)
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    @inlinable public mutating func u24() throws(DecodeError) -> UInt32 {
        try need(3)
        defer { index += 3 }
        return UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
    }

    @inlinable public mutating func u32() throws(DecodeError) -> UInt32 {
        try need(4)
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[index + i]) << (8 * i) }
        index += 4
        return v
    }

    @inlinable public mutating func u32be() throws(DecodeError) -> UInt32 {
        try need(4)
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(bytes[index + i]) }
        index += 4
        return v
    }

    /// Little-endian unsigned integer of `width` bytes (1...8).
    @inlinable public mutating func uint(width: Int) throws(DecodeError) -> UInt64 {
        guard (1...8).contains(width) else { throw .invalid("integer width \(width)") }
        try need(width)
        var v: UInt64 = 0
        for i in 0..<width { v |= UInt64(bytes[index + i]) << (8 * i) }
        index += width
        return v
    }

    @inlinable public mutating func u64() throws(DecodeError) -> UInt64 { try uint(width: 8) }

    /// The next `n` bytes as a slice of the same buffer (no copy).
    @inlinable public mutating func take(_ n: Int) throws(DecodeError) -> Bytes {
        try need(n)
        defer { index += n }
        return bytes[index..<index + n]
    }

    /// Everything left, as a slice (no copy).
    @inlinable public mutating func rest() -> Bytes {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }

    @inlinable public mutating func skip(_ n: Int) throws(DecodeError) {
        try need(n)
        index += n
    }

    @inlinable public mutating func address() throws(DecodeError) -> BDAddr {
        BDAddr(try uint(width: 6))
    }

    /// Looks at a byte without consuming it.
    @inlinable public func peek(_ ahead: Int = 0) -> UInt8? {
        let i = index + ahead
        return i >= index && i < bytes.endIndex ? bytes[i] : nil
    }
}

extension ArraySlice where Element == UInt8 {
    /// Byte at `offset` from the start of the slice, or nil past the end.
    @inlinable public func byte(_ offset: Int) -> UInt8? {
        let i = startIndex + offset
        return offset >= 0 && i < endIndex ? self[i] : nil
    }

    /// Little-endian UInt16 at `offset` from the start, or nil past the end.
    @inlinable public func le16(_ offset: Int) -> UInt16? {
        let i = startIndex + offset
        guard offset >= 0, i + 1 < endIndex else { return nil }
        return UInt16(self[i]) | UInt16(self[i + 1]) << 8
    }

    /// The slice from `offset` (relative) to the end; empty past the end.
    @inlinable public func from(_ offset: Int) -> ArraySlice<UInt8> {
        let i = Swift.min(endIndex, startIndex + Swift.max(0, offset))
        return self[i...]
    }
}

/// A Bluetooth device address (48 bits), printed most significant byte first, in lower case as
/// tshark prints it ("00:1b:dc:07:32:a1").
public struct BDAddr: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    @inlinable public init(_ raw: UInt64) { self.raw = raw & 0xFFFF_FFFF_FFFF }

    public var description: String { TextLine.make { $0.write(self) } }

    /// The kind of a random address, from its two most significant bits (Vol 6 Part B 1.3.2).
    public var randomKind: RandomAddressKind {
        switch raw >> 46 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    public static func < (a: BDAddr, b: BDAddr) -> Bool { a.raw < b.raw }
}

public enum RandomAddressKind: String, Sendable {
    case staticAddress = "random static"
    case resolvablePrivate = "resolvable private"
    case nonResolvablePrivate = "non-resolvable private"
    case reserved = "random (reserved)"
}

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

    /// Upper-case hex of a non-negative value, zero-padded to `width`, written straight into the
    /// string's storage: these run for nearly every printed field.
    @usableFromInline static func ascii(_ v: UInt64, width: Int, prefix: Bool) -> String {
        let n = max(significantDigits(v), width)
        let total = n + (prefix ? 2 : 0)
        return String(unsafeUninitializedCapacity: total) { buf in
            store(v, digits: n, prefix: prefix, at: buf.baseAddress!)
            return total
        }
    }

    /// Stores "0x" when `prefix`, then `n` upper-case hex digits of `v` (zero-padded), from `p`:
    /// `n + 2` bytes, or `n`.
    @inlinable public static func store(_ v: UInt64, digits n: Int, prefix: Bool, at p: UnsafeMutablePointer<UInt8>) {
        var i = 0
        if prefix {
            p[0] = UInt8(ascii: "0")
            p[1] = UInt8(ascii: "x")
            i = 2
        }
        var shift = 4 * (n - 1)
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: v >> UInt64(shift)) & 0xF
            p[i] = d < 10 ? 0x30 &+ d : 0x37 &+ d
            i &+= 1
            shift -= 4
        }
    }

    /// The lower-case hex digit of a nibble (0-15), as an ASCII byte.
    @inlinable public static func lowerDigit(_ d: UInt8) -> UInt8 { d < 10 ? 0x30 &+ d : 0x57 &+ d }

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
