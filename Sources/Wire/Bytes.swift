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

    @inlinable @inline(__always) mutating func need(_ n: Int) throws(DecodeError) {
        guard n >= 0, remaining >= n else { throw .truncated(needed: n, available: remaining) }
    }

    @inlinable @inline(__always) public mutating func u8() throws(DecodeError) -> UInt8 {
        try need(1)
        defer { index += 1 }
        return bytes[index]
    }

    @inlinable @inline(__always) public mutating func i8() throws(DecodeError) -> Int8 { Int8(bitPattern: try u8()) }

    @inlinable @inline(__always) public mutating func u16() throws(DecodeError) -> UInt16 {
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
        let i = index
        index = i + 4
        return UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
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

    /// Where the next `n` bytes are, by the buffer's indices: for values that keep their place in
    /// the bytes rather than a slice (and a reference) of them.
    @inlinable public mutating func range(_ n: Int) throws(DecodeError) -> Range<Int> {
        try need(n)
        defer { index += n }
        return index..<index + n
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

    /// Six octets, least significant first, read without `uint(width:)`'s loop: every
    /// advertising report starts with one.
    @inlinable public mutating func address() throws(DecodeError) -> BDAddr {
        try need(6)
        let i = index
        index = i + 6
        return address(at: i)
    }

    /// Consumes a run of fixed-width fields checked at once, `total` octets in all, and returns the
    /// index in `bytes` of the first, for `u8(at:)` and the like: one check for a report's header
    /// rather than one a field. Where the run does not fit, it throws what reading the fields one
    /// by one throws: the first that does not fit, and what was left for it. `widths` holds each
    /// field's width in a nibble, the first field's lowest (an array would be fetched each call).
    @inlinable @inline(__always)
    public mutating func fields(_ total: Int, widths: UInt64) throws(DecodeError) -> Int {
        let start = index
        if _slowPath(remaining < total) {
            var w = widths
            while w != 0 {
                try need(Int(w & 0xF))
                index += Int(w & 0xF)
                w >>= 4
            }
        }
        index = start &+ total
        return start
    }

    /// The octet at `i`, an index in `bytes` from `fields`.
    @inlinable @inline(__always) public func u8(at i: Int) -> UInt8 { bytes[i] }
    @inlinable @inline(__always) public func i8(at i: Int) -> Int8 { Int8(bitPattern: bytes[i]) }
    @inlinable @inline(__always) public func u16(at i: Int) -> UInt16 { UInt16(bytes[i]) | UInt16(bytes[i &+ 1]) << 8 }
    /// The six octets of a device address at `i`, least significant first.
    @inlinable @inline(__always) public func address(at i: Int) -> BDAddr {
        let low = UInt64(bytes[i]) | UInt64(bytes[i &+ 1]) << 8 | UInt64(bytes[i &+ 2]) << 16 | UInt64(bytes[i &+ 3]) << 24
        return BDAddr(low | UInt64(bytes[i &+ 4]) << 32 | UInt64(bytes[i &+ 5]) << 40)
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


/// Fixed-width integers at a byte offset from the start, for file and record headers whose length
/// the caller has already checked (a shorter buffer traps).
extension RandomAccessCollection where Element == UInt8, Index == Int {
    @inlinable public func le16(at i: Int) -> UInt16 {
        let s = startIndex &+ i
        return UInt16(self[s]) | UInt16(self[s + 1]) << 8
    }

    @inlinable public func le32(at i: Int) -> UInt32 {
        let s = startIndex &+ i
        return UInt32(self[s]) | UInt32(self[s + 1]) << 8 | UInt32(self[s + 2]) << 16 | UInt32(self[s + 3]) << 24
    }

    @inlinable public func le64(at i: Int) -> UInt64 { UInt64(le32(at: i)) | UInt64(le32(at: i &+ 4)) << 32 }

    @inlinable public func be32(at i: Int) -> UInt32 {
        let s = startIndex &+ i
        return UInt32(self[s]) << 24 | UInt32(self[s + 1]) << 16 | UInt32(self[s + 2]) << 8 | UInt32(self[s + 3])
    }

    @inlinable public func be64(at i: Int) -> UInt64 { UInt64(be32(at: i)) << 32 | UInt64(be32(at: i &+ 4)) }

    /// A 32-bit value in the byte order a file's header chose.
    @inlinable public func u32(at i: Int, bigEndian: Bool) -> UInt32 { bigEndian ? be32(at: i) : le32(at: i) }
}
