import Wire

/// A line of text written piece by piece into a byte buffer that can be reused frame after frame.
/// Summary lines are written into one rather than concatenated from Strings: printing a capture
/// then creates no String per frame.
///
/// Not copyable: the buffer has one owner, so a write is a bounds check and a copy, with no test of
/// whether the storage is shared (which a copy-on-write buffer makes on every piece of a line).
public struct TextLine: ~Copyable, @unchecked Sendable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var used = 0
    @usableFromInline var capacity: Int
    /// The line allocated `base` (else it is lent room, or none yet).
    private var owned: Bool
    /// Something that may need escaping on a terminal went in: text made at run time, bytes from
    /// the air, a control byte. A line without it holds literals, numbers and names from the
    /// specification's tables only, and its printer need not scan it.
    @usableFromInline var mayNeedEscape = false
    /// Where the line holds the summary of a report's advertising data (`markAdvertisingSummary`).
    public private(set) var advertisingSummary = AdvertisingSummaryMark()
    /// Where a line with no room yet points: an empty line costs no allocation.
    nonisolated(unsafe) private static let none = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    public init(capacity: Int = 0) {
        self.capacity = max(0, capacity)
        owned = capacity > 0
        base = capacity > 0 ? .allocate(capacity: capacity) : TextLine.none
    }

    /// A line written into room the caller lends (on the stack, or an output buffer's free end),
    /// moved to the heap only if it outgrows it.
    public init(lent room: UnsafeMutableBufferPointer<UInt8>) {
        capacity = room.count
        owned = false
        base = room.baseAddress ?? TextLine.none
    }

    deinit { if owned { base.deallocate() } }

    /// Room for `n` more bytes; where they go.
    @inlinable @inline(__always)
    mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(used &+ n > capacity) { grow(n) }
        return base + used
    }

    /// The bytes `reserve` made room for, written.
    @inlinable @inline(__always)
    mutating func commit(_ n: Int) { used &+= n }

    @usableFromInline mutating func grow(_ n: Int) {
        let size = max(used &+ n, capacity &* 2, 64)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        fresh.initialize(from: base, count: used)
        if owned { base.deallocate() }
        base = fresh
        capacity = size
        owned = true
    }

    @inlinable @inline(__always)
    mutating func append(_ b: UInt8) {
        reserve(1).pointee = b
        commit(1)
    }

    @inlinable
    mutating func append(_ p: UnsafeRawBufferPointer) {
        guard let from = p.baseAddress, p.count > 0 else { return }
        reserve(p.count).update(from: from.assumingMemoryBound(to: UInt8.self), count: p.count)
        commit(p.count)
    }

    mutating func append(_ p: UnsafeBufferPointer<UInt8>) { append(UnsafeRawBufferPointer(p)) }

    /// Bytes lent by the caller, as they are.
    @inlinable public mutating func write(buffer p: UnsafeBufferPointer<UInt8>) {
        mayNeedEscape = true
        append(UnsafeRawBufferPointer(p))
    }

    /// Empties the line and keeps its storage.
    public mutating func clear() {
        used = 0
        mayNeedEscape = false
        advertisingSummary = AdvertisingSummaryMark()
    }

    /// The bytes from `start` to the end are the summary of the advertising data at `dataStart`
    /// (`dataCount` octets) in the frame's bytes (`AdvertisingData.writeSummary`): a printer that
    /// writes the same data's summary again in the frame's fields copies it.
    mutating func markAdvertisingSummary(from start: Int, dataStart: Int, dataCount: Int) {
        advertisingSummary = AdvertisingSummaryMark(text: start..<used, dataStart: dataStart, dataCount: dataCount)
    }

    /// The bytes in `range` as another line's, with what they may need escaped.
    public mutating func write(_ range: Range<Int>, of other: borrowing TextLine) {
        if other.mayNeedEscape { mayNeedEscape = true }
        other.withUnsafeBytes { append(UnsafeBufferPointer(rebasing: $0[range.clamped(to: 0..<$0.count)])) }
    }

    public var count: Int { used }
    /// Still in the room it was lent: its bytes are where the lender's room starts.
    public var isInLentRoom: Bool { !owned }
    public var isEmpty: Bool { used == 0 }
    /// Whether anything went in that may need escaping on a terminal (`write(plain:)` says what does not).
    public var isPlainByConstruction: Bool { !mayNeedEscape }

    /// The line's bytes, lent to `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: used))
    }

    /// The line's bytes as an array (a copy).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The line as a String.
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// The line added to `text` 15 bytes at a time: each piece a small String, which takes no
    /// allocation, where the whole line as one String would take one past 15 bytes.
    public func append(to text: inout String) {
        withUnsafeBytes { bytes in
            var at = 0
            while at < bytes.count {
                let end = min(at &+ 15, bytes.count)
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<end]), as: UTF8.self)
                at = end
            }
        }
    }

    /// `body`'s writing as a String: how types that write their summary also offer it as a value.
    public static func make(_ body: (inout TextLine) -> Void) -> String { makeChecked(body).text }

    /// The same, and whether the line stayed plain (`write(plain:)` may then write the text).
    public static func makeChecked(_ body: (inout TextLine) -> Void) -> (text: String, plain: Bool) {
        // Room for a typical description on the stack: the String is then the one allocation.
        onStack { line in
            body(&line)
            return (line.string, !line.mayNeedEscape)
        }
    }

    /// A line with room for a typical description on the stack, for `body` only: text that is
    /// made to be looked at (hashed, turned into a String) and not kept allocates nothing.
    public static func onStack<R>(_ body: (inout TextLine) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { room in
            var line = TextLine(lent: room)
            return body(&line)
        }
    }

    /// The line's bytes added to `h`.
    public func hash(into h: inout FNV1a) { withUnsafeBytes { h.add($0) } }

    public mutating func write(_ s: String) {
        mayNeedEscape = true
        append(utf8Of: s)
    }

    /// Text known to need no escaping on a terminal, which leaves the line as plain as it was: a
    /// name from the specification's tables (`ReportTests` holds each table to it), or text made
    /// by a line that stayed plain (`TextLine.makeChecked`).
    public mutating func write(plain s: String) { append(utf8Of: s) }

    private mutating func append(utf8Of s: String) {
        // Native strings are read in place (`withUTF8` needs a mutable copy: a retain and release).
        if s.utf8.withContiguousStorageIfAvailable({ append($0) }) == nil {
            var s = s
            s.withUTF8 { append($0) }
        }
    }

    /// A name from the specification's or the assigned numbers' tables, held as a label: plain,
    /// as `write(plain:)` (`NameTextTests` holds each table to it).
    public mutating func write(name l: FieldLabel) {
        assert(!l.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "a name with text to escape")
        append(l.utf8)
    }

    /// A field's label, from its bytes without a String. Escaped as other text is: a label may
    /// come from a table at run time.
    public mutating func write(label l: FieldLabel) {
        mayNeedEscape = true
        append(l.utf8)
    }

    public mutating func write(byte: UInt8) {
        if byte < 0x20 || byte > 0x7E { mayNeedEscape = true }
        append(byte)
    }

    /// Another line's bytes.
    public mutating func write(line other: borrowing TextLine) {
        if other.mayNeedEscape { mayNeedEscape = true }
        other.withUnsafeBytes { append($0) }
    }

    public mutating func write(bytes b: [UInt8]) {
        mayNeedEscape = true
        b.withUnsafeBufferPointer { append($0) }
    }

    /// Text as a device sent it, kept as bytes (possibly invalid UTF-8): the terminal printer shows
    /// invalid bytes as `\xNN` and JSON as U+FFFD, both from the same line.
    public mutating func write(received b: Bytes) {
        mayNeedEscape = true
        b.withUnsafeBufferPointer { append($0) }
    }

    /// Decimal, as `String(v)` spells it.
    public mutating func write<T: BinaryInteger>(_ v: T) {
        if v < 0 { append(UInt8(ascii: "-")) }
        write(decimal: UInt64(truncatingIfNeeded: v.magnitude))
    }

    /// The same for `Int`, not generic: other modules' calls are then not left unspecialised.
    public mutating func write(_ v: Int) {
        if v < 0 { append(UInt8(ascii: "-")) }
        write(decimal: UInt64(truncatingIfNeeded: v.magnitude))
    }

    /// Counted, then written in place by `TextCursor`, as every printer writes decimals.
    private mutating func write(decimal m: UInt64) {
        let n = TextCursor.decimalDigits(m)
        _ = TextCursor.write(count: n, at: reserve(n)) { $0.appendDecimal(m, digits: n) }
        commit(n)
    }

    /// `x` with `decimals` digits after the point, as `fixed(x, decimals)` spells it, without a String.
    mutating func write(fixed x: Double, decimals: Int) {
        guard let f = TextCursor.fixedLayout(x, decimals: decimals) else { return write(Decoders.fixed(x, decimals)) }
        let n = TextCursor.fixedLength(wholeDigits: f.wholeDigits, decimals: decimals, negative: f.negative)
        _ = TextCursor.write(count: n, at: reserve(n)) {
            $0.appendFixed(f.value, wholeDigits: f.wholeDigits, decimals: decimals, negative: f.negative)
        }
        commit(n)
    }

    /// "0x" and upper-case hex digits, zero-padded to `width`: `Hex.prefixed(v, width:)`.
    @inlinable public mutating func write<T: BinaryInteger>(hex v: T, width: Int) {
        writeDigits(UInt64(truncatingIfNeeded: v), width: width, lower: false)
    }

    /// "0x" and lower-case hex digits (tshark's spelling of ATT handles).
    public mutating func write(lowerHex v: UInt64, width: Int) {
        writeDigits(v, width: width, lower: true)
    }

    /// The bytes in lower-case hex with no separator: `Hex.string(b)`.
    public mutating func write(hexBytes b: Bytes) {
        var p = reserve(2 &* b.count)
        for x in b {
            p[0] = Hex.lowerDigit(x >> 4)
            p[1] = Hex.lowerDigit(x & 0xF)
            p += 2
        }
        commit(2 &* b.count)
    }

    /// "00:1b:dc:07:32:a1", as `BDAddr.description`.
    public mutating func write(_ a: BDAddr) {
        _ = TextCursor.write(count: BDAddr.textLength, at: reserve(BDAddr.textLength)) { a.store(into: &$0) }
        commit(BDAddr.textLength)
    }

    /// "0x180D", or the 128-bit form when the UUID is not on the base: `BluetoothUUID.description`.
    public mutating func write(_ u: BluetoothUUID) {
        if let s = u.uuid16 { write(hex: s, width: 4) } else if let s = u.uuid32 { write(hex: s, width: 8) } else { write(uuidString: u) }
    }

    /// "0000180D-0000-1000-8000-00805F9B34FB", as `BluetoothUUID.uuidString`.
    public mutating func write(uuidString u: BluetoothUUID) {
        _ = TextCursor.write(count: BluetoothUUID.stringLength, at: reserve(BluetoothUUID.stringLength)) { u.storeString(into: &$0) }
        commit(BluetoothUUID.stringLength)
    }

    /// "0x" and the digits, the room for all of them reserved at once and the digits stored
    /// backwards (a handle's four digits are on nearly every ATT line).
    @inline(__always)
    @usableFromInline mutating func writeDigits(_ v: UInt64, width: Int, lower: Bool) {
        let n = max(Hex.significantDigits(v), width)
        guard n <= 8 else {
            _ = TextCursor.write(count: 2 &+ n, at: reserve(2 &+ n)) { Hex.store(v, digits: n, prefix: true, lower: lower, into: &$0) }
            return commit(2 &+ n)
        }
        // Room for the whole word of digits; only `n` of them are kept.
        commit(TextCursor.storeHexWord(v, digits: n, prefix: true, lower: lower, at: reserve(10)))
    }

    /// Appends with `+=`, so summary code reads like the String code it replaces. Literals only:
    /// their bytes are copied as they are, where a String's are first found (a call into the
    /// standard library per piece); other text goes through `write`.
    @inlinable @inline(__always)
    public static func += (line: inout TextLine, s: StaticString) {
        s.withUTF8Buffer { line.append(UnsafeRawBufferPointer($0)) }
    }
}

/// Where a line holds the summary of a report's advertising data, and where that data lies in the
/// frame's bytes (`Bytes` indices): within one frame, the same place is the same data.
public struct AdvertisingSummaryMark: Sendable {
    public private(set) var text = 0..<0
    private var dataStart = 0, dataCount = -1

    /// None.
    public init() {}

    init(text: Range<Int>, dataStart: Int, dataCount: Int) {
        (self.text, self.dataStart, self.dataCount) = (text, dataStart, dataCount)
    }

    /// Whether `data`, from the same frame, is the data summarised.
    @inline(__always) public func holds(_ data: Bytes) -> Bool {
        data.startIndex == dataStart && data.count == dataCount
    }
}
