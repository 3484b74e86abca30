/// A run of bytes being filled with text, from its start: what `Hex`, `BDAddr` and
/// `BluetoothUUID` write their digits into, whether the run is a new String's storage
/// (`string(count:)`) or room a printer reserved in its own buffer (`write(count:at:)`).
/// The one type that builds text through a pointer: every write is checked against the run's
/// end, so what writes through it cannot write past it.
public struct TextCursor: ~Copyable {
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline let count: Int
    @usableFromInline var end = 0
    /// Bytes written so far.
    @inlinable public var written: Int { end }

    @inlinable init(_ base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    @inlinable @inline(__always) public mutating func append(_ b: UInt8) {
        precondition(end < count, "text past its reserved room")
        base[end] = b
        end &+= 1
    }

    /// `n` hex digits of `v`, zero-padded, upper case (or `lower`): one check for all of them.
    @inlinable @inline(__always) public mutating func appendHex(_ v: UInt64, digits n: Int, lower: Bool = false) {
        precondition(n >= 0 && n <= count &- end, "text past its reserved room")
        let letterBase: UInt8 = lower ? 0x57 : 0x37
        var p = base + end, shift = 4 &* (n &- 1)
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: v >> UInt64(shift)) & 0xF
            p.pointee = d < 10 ? 0x30 &+ d : letterBase &+ d
            p += 1
            shift &-= 4
        }
        end &+= n
    }

    /// The `n` decimal digits of `v` (`n` at least its digit count): one check for all of them.
    @inlinable public mutating func appendDecimal(_ v: UInt64, digits n: Int) {
        precondition(n >= 0 && n <= count &- end, "text past its reserved room")
        var m = v, i = end &+ n
        while i > end {
            i &-= 1
            base[i] = 0x30 &+ UInt8(truncatingIfNeeded: m % 10)
            m /= 10
        }
        end &+= n
    }

    /// Stores `b` at `offset` from the start (text written backwards, as decimal digits are).
    @inlinable public func put(_ b: UInt8, at offset: Int) {
        precondition(offset >= 0 && offset < count, "text past its reserved room")
        base[offset] = b
    }

    /// Marks the first `n` bytes written (after `put`).
    @inlinable public mutating func wrote(_ n: Int) {
        precondition(n >= 0 && n <= count, "text past its reserved room")
        end = n
    }

    /// A String of `count` bytes of ASCII or UTF-8 that `body` writes; bytes it leaves unwritten
    /// are cut off.
    @inlinable public static func string(count: Int, _ body: (inout TextCursor) -> Void) -> String {
        String(unsafeUninitializedCapacity: count) { buf in
            guard let base = buf.baseAddress else { return 0 }
            var c = TextCursor(base, count: count)
            body(&c)
            return c.written
        }
    }

    /// Lets `body` write at most `count` bytes at `p`, room a printer reserved in its own buffer;
    /// returns how many it wrote.
    @inlinable @inline(__always) public static func write(count: Int, at p: UnsafeMutablePointer<UInt8>,
                                        _ body: (inout TextCursor) -> Void) -> Int {
        var c = TextCursor(p, count: count)
        body(&c)
        return c.written
    }
}
