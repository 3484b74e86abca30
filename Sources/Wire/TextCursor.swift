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

    /// Two words as they lie in memory, then a byte: 17 bytes with one check.
    @inlinable @inline(__always) public mutating func append(words a: UInt64, _ b: UInt64, _ last: UInt8) {
        precondition(17 <= count &- end, "text past its reserved room")
        let raw = UnsafeMutableRawPointer(base + end)
        raw.storeBytes(of: a, as: UInt64.self)
        raw.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
        raw.storeBytes(of: last, toByteOffset: 16, as: UInt8.self)
        end &+= 17
    }

    /// Four words and a 32-bit tail as they lie in memory: 36 bytes (a UUID's text) with one check.
    @inlinable @inline(__always)
    public mutating func append(words a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64, _ tail: UInt32) {
        precondition(36 <= count &- end, "text past its reserved room")
        let raw = UnsafeMutableRawPointer(base + end)
        raw.storeBytes(of: a, as: UInt64.self)
        raw.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
        raw.storeBytes(of: c, toByteOffset: 16, as: UInt64.self)
        raw.storeBytes(of: d, toByteOffset: 24, as: UInt64.self)
        raw.storeBytes(of: tail, toByteOffset: 32, as: UInt32.self)
        end &+= 36
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

    /// Copies `n` bytes without a loop where `n` is at most 32 (a label): overlapping words from
    /// both ends, two halves or single bytes, never reading or writing outside the `n` bytes.
    /// Longer runs go to memcpy.
    @inlinable @inline(__always) public static func copyShort(from src: UnsafePointer<UInt8>, count n: Int, to dst: UnsafeMutableRawPointer) {
        let from = UnsafeRawPointer(src)
        if n >= 8 {
            guard n <= 32 else { dst.copyMemory(from: from, byteCount: n); return }
            let a = from.loadUnaligned(as: UInt64.self), b = from.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            if n > 16 {
                let c = from.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let d = from.loadUnaligned(fromByteOffset: n &- 16, as: UInt64.self)
                dst.storeBytes(of: c, toByteOffset: 8, as: UInt64.self)
                dst.storeBytes(of: d, toByteOffset: n &- 16, as: UInt64.self)
            }
            dst.storeBytes(of: a, as: UInt64.self)
            dst.storeBytes(of: b, toByteOffset: n &- 8, as: UInt64.self)
        } else if n >= 4 {
            let a = from.loadUnaligned(as: UInt32.self), b = from.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
            dst.storeBytes(of: a, as: UInt32.self)
            dst.storeBytes(of: b, toByteOffset: n &- 4, as: UInt32.self)
        } else if n > 0 {
            let a = src[0], b = src[n >> 1], c = src[n &- 1]
            dst.storeBytes(of: a, as: UInt8.self)
            dst.storeBytes(of: b, toByteOffset: n >> 1, as: UInt8.self)
            dst.storeBytes(of: c, toByteOffset: n &- 1, as: UInt8.self)
        }
    }

    /// The `n` decimal digits of `v` (`n` at least its digit count): one check for all of them,
    /// two digits a step (a timestamp in nanoseconds takes ten divisions rather than nineteen).
    @inlinable public mutating func appendDecimal(_ v: UInt64, digits n: Int) {
        precondition(n >= 0 && n <= count &- end, "text past its reserved room")
        var m = v, i = end &+ n
        while i &- end >= 2 {
            i &-= 2
            TextCursor.storePair(m % 100, at: base + i)
            m /= 100
        }
        if i > end { base[end] = 0x30 &+ UInt8(truncatingIfNeeded: m % 10) }
        end &+= n
    }

    /// The two decimal digits of `v` (under 100), from a literal of all hundred pairs (in the
    /// binary: nothing to make). For every printer that writes digits backwards two at a time.
    @inlinable @inline(__always)
    public static func storePair(_ v: UInt64, at p: UnsafeMutablePointer<UInt8>) {
        let pairs: StaticString = """
            00010203040506070809101112131415161718192021222324252627282930313233343536373839\
            40414243444546474849505152535455565758596061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899
            """
        let q = pairs.utf8Start + 2 &* Int(truncatingIfNeeded: v)
        p[0] = q[0]
        p[1] = q[1]
    }

    /// The eight decimal digits of `v` (below 10^8, zero-padded) in one word, as a number whose
    /// lowest byte is the first digit (stored little-endian, they read in order). Halves, pairs
    /// and digits are split in parallel lanes of the word: a multiply and a shift each, where
    /// writing pairs from the end took a division each.
    @inlinable @inline(__always) public static func decimalWord(_ v: UInt64) -> UInt64 {
        // Two lanes of 32 bits (the first four digits in the low one), then four of 16, then
        // eight of 8. x * 10486 >> 20 is x / 100 below 10^4; x * 103 >> 10 is x / 10 below 100.
        let halves = v / 10_000 | (v % 10_000) << 32
        let high = (halves &* 10_486) >> 20 & 0x0000_007F_0000_007F
        let pairs = high | (halves &- high &* 100) << 16
        let tens = (pairs &* 103) >> 10 & 0x000F_000F_000F_000F
        return (tens | (pairs &- tens &* 10) << 8) | 0x3030_3030_3030_3030
    }

    /// How many decimal digits `m` has (at least one): four at a time, then the last few.
    @inlinable @inline(__always) public static func decimalDigits(_ m: UInt64) -> Int {
        var n = 1, rest = m
        while rest >= 10_000 { rest /= 10_000; n &+= 4 }
        if rest >= 100 { rest /= 100; n &+= 2 }
        return rest >= 10 ? n &+ 1 : n
    }

    /// `v` in decimal with a point before its last `decimals` digits ("12.345" for 12345 and 3),
    /// `wholeDigits` digits before the point (at least the count `v / 10^decimals` has), after a
    /// minus sign when `negative`: written backwards, with one check for all of it.
    @inlinable @inline(__always)
    public mutating func appendFixed(_ v: UInt64, wholeDigits: Int, decimals: Int, negative: Bool) {
        let n = TextCursor.fixedLength(wholeDigits: wholeDigits, decimals: decimals, negative: negative)
        precondition(wholeDigits > 0 && decimals >= 0 && n <= count &- end, "text past its reserved room")
        let first = end &+ (negative ? 1 : 0)
        var i = end &+ n, m = v, d = 0
        while d < decimals {
            i &-= 1
            base[i] = 0x30 &+ UInt8(truncatingIfNeeded: m % 10)
            m /= 10
            d &+= 1
        }
        if decimals > 0 {
            i &-= 1
            base[i] = UInt8(ascii: ".")
        }
        while i > first {
            i &-= 1
            base[i] = 0x30 &+ UInt8(truncatingIfNeeded: m % 10)
            m /= 10
        }
        if negative { base[end] = UInt8(ascii: "-") }
        end &+= n
    }

    /// How `appendFixed` writes `x` rounded to `decimals` digits after the point: the scaled
    /// digits, how many come before the point, and the sign. Nil where they do not fit (not finite,
    /// more than 18 decimals, or 9e18 and over once scaled).
    @inlinable
    public static func fixedLayout(_ x: Double, decimals: Int) -> (value: UInt64, wholeDigits: Int, negative: Bool)? {
        guard x.isFinite, decimals >= 0, decimals <= 18 else { return nil }
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale &*= 10 }
        let scaled = (x.magnitude * Double(scale)).rounded()
        guard scaled < 9.0e18 else { return nil }
        let n = UInt64(scaled)
        var whole = n / scale, digits = 1
        while whole >= 10 { whole /= 10; digits &+= 1 }
        return (n, digits, x < 0 && n != 0)
    }

    /// The length of `appendFixed`'s text.
    @inlinable public static func fixedLength(wholeDigits: Int, decimals: Int, negative: Bool) -> Int {
        (negative ? 1 : 0) &+ wholeDigits &+ (decimals > 0 ? decimals &+ 1 : 0)
    }

    /// `appendFixed`'s text as a String (no closure between the String's storage and the digits:
    /// this runs for every decimal value printed).
    @inlinable
    public static func fixed(_ v: UInt64, wholeDigits: Int, decimals: Int, negative: Bool) -> String {
        let n = fixedLength(wholeDigits: wholeDigits, decimals: decimals, negative: negative)
        return String(unsafeUninitializedCapacity: n) { buf in
            guard let base = buf.baseAddress else { return 0 }
            var c = TextCursor(base, count: n)
            c.appendFixed(v, wholeDigits: wholeDigits, decimals: decimals, negative: negative)
            return c.written
        }
    }

    /// "0x" when `prefix`, then `n` hex digits of `v` as a String (`Hex` makes its Strings here,
    /// with no closure in between: these run for nearly every printed field).
    @inlinable
    public static func hex(_ v: UInt64, digits n: Int, prefix: Bool, lower: Bool) -> String {
        let total = n &+ (prefix ? 2 : 0)
        return String(unsafeUninitializedCapacity: total) { buf in
            guard let base = buf.baseAddress else { return 0 }
            var c = TextCursor(base, count: total)
            if prefix {
                c.append(UInt8(ascii: "0"))
                c.append(UInt8(ascii: "x"))
            }
            c.appendHex(v, digits: n, lower: lower)
            return c.written
        }
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

    /// "0x" (when `prefix`) and the `n` (1...8) hex digits of `v` from `Hex.digitWord`, stored as
    /// two words at `p`, which has room for 10 bytes; returns how many of them are the text.
    @inlinable @inline(__always) public static func storeHexWord(_ v: UInt64, digits n: Int, prefix: Bool, lower: Bool,
                                                                at p: UnsafeMutablePointer<UInt8>) -> Int {
        let raw = UnsafeMutableRawPointer(p)
        let at = prefix ? 2 : 0
        if prefix { raw.storeBytes(of: UInt16(0x7830).littleEndian, as: UInt16.self) }  // "0x"
        raw.storeBytes(of: Hex.digitWord(v, count: n, lower: lower), toByteOffset: at, as: UInt64.self)
        return at &+ n
    }
}
