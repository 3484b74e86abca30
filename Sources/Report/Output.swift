import Decoders

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Wire

/// Buffered output to a file descriptor: text is gathered in a byte buffer and written in large
/// chunks, so printing a line per frame costs no system call per frame.
public final class Output {
    public let fd: Int32
    /// Fixed storage written through a pointer: no array growth or uniqueness checks per byte.
    private let storage: UnsafeMutablePointer<UInt8>
    private let capacity = 1 << 17
    /// Bytes gathered, kept behind a pointer too: a stored `var` of a class is checked for
    /// exclusive access at run time on every byte appended.
    private let used: UnsafeMutablePointer<Int>
    private var count: Int {
        @inline(__always) get { used.pointee }
        @inline(__always) set { used.pointee = newValue }
    }
    /// Written out once this much is gathered.
    private let chunk = 1 << 16
    /// Where derived text is written before it is escaped into the buffer; reused frame after frame.
    private var scratch = TextLine(capacity: 256)
    /// The advertising data summary of the frame's summary line, kept for its fields when
    /// `keepsAdvertisingSummary` (`read -v`, JSON): the second is then copied, not written again.
    private var advertisingSummary = TextLine(capacity: 128)
    private var advertisingSummaryMark = AdvertisingSummaryMark()
    var keepsAdvertisingSummary = false
    /// The JSON keys of field labels, made once for this output's frames.
    let keys = JSONKeys()
    /// Layers' JSON by shape, recorded once for this output's frames.
    let plans = JSONPlans()
    /// Set when a write failed (a closed pipe): further output is dropped.
    public private(set) var failed = false

    public init(fd: Int32 = 1) {
        self.fd = fd
        storage = .allocate(capacity: capacity)
        used = .allocate(capacity: 1)
        used.initialize(to: 0)
    }

    /// Opens (creates or truncates) a file for writing.
    public convenience init?(path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        self.init(fd: fd)
    }

    deinit {
        flush()
        storage.deallocate()
        used.deallocate()
    }

    /// Room for `n` more bytes; false when they do not fit even in an empty buffer.
    @inline(__always) private func reserve(_ n: Int) -> Bool {
        if count &+ n <= capacity { return true }
        flush()
        return n <= capacity
    }

    @inline(__always) private func append(_ b: UInt8) {
        if count == capacity { flush() }
        storage[count] = b
        count &+= 1
    }

    /// `n` bytes copied in place while the buffer has room short of `chunk` (no flush is then
    /// due); false, with nothing copied, otherwise. What literals and text take before `append`.
    @inline(__always) private func copyInPlace(_ base: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard count &+ n <= chunk else { return false }
        TextCursor.copyShort(from: base, count: n, to: storage + count)
        count &+= n
        return true
    }

    private func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if reserve(bytes.count) {
            TextCursor.copyShort(from: base, count: bytes.count, to: storage + count)
            count &+= bytes.count
        } else {
            writeAll(UnsafeRawBufferPointer(bytes))
        }
        if count >= chunk { flush() }
    }

    private func append(repeating b: UInt8, count n: Int) {
        guard n > 0 else { return }
        if reserve(n) {
            (storage + count).update(repeating: b, count: n)
            count &+= n
        } else {
            for _ in 0..<n { append(b) }
        }
    }

    /// A literal, its bytes copied as they are: literals go here rather than through `String`,
    /// where each was first found in the String (small ones copied out of it) at every call.
    @inline(__always) public func write(_ s: StaticString) {
        // Its length is known where it is written: the copy is a few loads and stores in place.
        if !(s.hasPointerRepresentation && copyInPlace(s.utf8Start, s.utf8CodeUnitCount)) {
            s.withUTF8Buffer { append($0) }
        }
    }

    /// Text made at run time, as it is. Disfavoured so that literals take the `StaticString` path.
    @_disfavoredOverload @inline(__always) public func write(_ s: String) {
        // Native strings are read in place; `withUTF8` needs a mutable copy (a retain and release).
        if s.utf8.withContiguousStorageIfAvailable({ (u: UnsafeBufferPointer<UInt8>) -> Void in
            if let base = u.baseAddress, copyInPlace(base, u.count) { return }
            append(u)
        }) == nil {
            var s = s
            s.withUTF8 { append($0) }
        }
    }

    /// A label's bytes (a layer's name), as they are.
    @inline(__always) public func write(label: FieldLabel) {
        if !copyInPlace(label.start, label.count) { append(label.utf8) }
    }

    @inline(__always) public func write(byte: UInt8) { append(byte) }

    /// `n` bytes as they are.
    @inline(__always) func write(raw base: UnsafePointer<UInt8>, count n: Int) {
        if !copyInPlace(base, n) { append(UnsafeBufferPointer(start: base, count: n)) }
    }

    /// Lets `body` write up to `n` bytes straight into the buffer and returns how many it wrote
    /// (0 when `n` bytes can never fit).
    @inline(__always) func withSpace(_ n: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) -> Int {
        guard reserve(n) else { return 0 }
        let written = body(storage + count)
        count &+= written
        return written
    }

    /// A key made by `keys`, quoted and followed by a colon; false for a key it could not make
    /// (a label that is not ASCII).
    func write(key: JSONKeys.Key) -> Bool {
        guard key.offset >= 0 else { return false }
        if key.fragmentLength > 0, reserve(32) {
            let raw = UnsafeMutableRawPointer(storage + count)
            raw.storeBytes(of: key.fragment.0.littleEndian, as: UInt64.self)
            raw.storeBytes(of: key.fragment.1.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: key.fragment.2.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: key.fragment.3.littleEndian, toByteOffset: 24, as: UInt64.self)
            count &+= key.fragmentLength
            return true
        }
        let n = key.length
        return keys.bytes.withUnsafeBufferPointer { all in
            withSpace(n &+ 3) { p in
                guard let base = all.baseAddress, key.range.upperBound <= all.count else { return 0 }
                p[0] = UInt8(ascii: "\"")
                (p + 1).update(from: base + key.offset, count: n)
                p[n &+ 1] = UInt8(ascii: "\"")
                p[n &+ 2] = UInt8(ascii: ":")
                return n &+ 3
            } > 0
        }
    }

    public func write<S: Sequence>(bytes: S) where S.Element == UInt8 {
        for b in bytes { append(b) }
        if count >= chunk { flush() }
    }

    /// Appends a decimal integer without building a String. One or two digits (most lengths,
    /// flags, handles and counts) are stored where it is called; longer numbers take one call.
    @inline(__always)
    public func write(int v: Int64) {
        if UInt64(bitPattern: v) < 100, count &+ 2 <= chunk { store(small: UInt64(bitPattern: v)); return }
        write(magnitude: v.magnitude, negative: v < 0)
    }

    /// As `write(int:)`, unsigned.
    @inline(__always)
    public func write(uint v: UInt64) {
        if v < 100, count &+ 2 <= chunk { store(small: v); return }
        write(magnitude: v, negative: false)
    }

    /// "." and `f` thousandths (1 to 999) without trailing zeros: ".5", ".25", ".125". One store
    /// of the digits where a loop wrote and checked them one at a time.
    func write(thousandths f: UInt64) {
        guard count &+ 4 <= chunk else {
            append(UInt8(ascii: "."))
            var f = f, div: UInt64 = 100
            while f != 0 { append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: f / div)); f %= div; div /= 10 }
            return
        }
        let p = storage + count
        let rest = f % 100
        p[0] = UInt8(ascii: ".")
        p[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: f / 100)
        guard rest != 0 else { count &+= 2; return }
        TextCursor.storePair(rest, at: p + 2)
        count &+= rest % 10 == 0 ? 3 : 4
    }

    /// `v` below 100, with room for two bytes.
    @inline(__always)
    private func store(small v: UInt64) {
        if v < 10 {
            storage[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v)
            count &+= 1
        } else {
            TextCursor.storePair(v, at: storage + count)
            count &+= 2
        }
    }

    @inline(never)
    private func write(magnitude m: UInt64, negative: Bool) {
        // Eight digits a word (`TextCursor.decimalWord`), each word stored whole: at most 21
        // bytes with the sign, and the slack the last word's store runs past them.
        guard count &+ 32 <= chunk else {
            if negative { append(UInt8(ascii: "-")) }
            let n = TextCursor.decimalDigits(m)
            withRoom(n) { $0.appendDecimal(m, digits: n) }
            return
        }
        let raw = UnsafeMutableRawPointer(storage + count)
        var n = 0
        if negative {
            raw.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self)
            n = 1
        }
        let word: UInt64 = 100_000_000
        if m < word {
            n &+= Self.store(leading: m, at: raw + n)
        } else {
            let high = m / word
            if high < word {
                n &+= Self.store(leading: high, at: raw + n)
            } else {
                n &+= Self.store(leading: high / word, at: raw + n)
                raw.storeBytes(of: TextCursor.decimalWord(high % word).littleEndian, toByteOffset: n, as: UInt64.self)
                n &+= 8
            }
            raw.storeBytes(of: TextCursor.decimalWord(m % word).littleEndian, toByteOffset: n, as: UInt64.self)
            n &+= 8
        }
        count &+= n
    }

    /// `v` (below 10^8) without its leading zeros, stored as a word at `p`: how many digits it has.
    /// The zeros are counted in the word (its low bytes that are "0"), not by dividing.
    @inline(__always) private static func store(leading v: UInt64, at p: UnsafeMutableRawPointer) -> Int {
        let digits = TextCursor.decimalWord(v)
        let zeros = min((digits ^ 0x3030_3030_3030_3030).trailingZeroBitCount >> 3, 7)
        p.storeBytes(of: (digits >> (8 &* UInt64(truncatingIfNeeded: zeros))).littleEndian, as: UInt64.self)
        return 8 &- zeros
    }

    /// Appends `v` right-aligned in `width` columns (every frame's number): its digits counted
    /// once and written in one reserved piece.
    public func write(int v: Int64, width: Int) {
        let negative = v < 0
        let m = v.magnitude
        let digits = TextCursor.decimalDigits(m)
        let n = (negative ? 1 : 0) &+ digits
        if width > n { append(repeating: UInt8(ascii: " "), count: width &- n) }
        withRoom(n) { c in
            if negative { c.append(UInt8(ascii: "-")) }
            c.appendDecimal(m, digits: digits)
        }
    }

    /// Appends `v` in upper-case hex, zero-padded to `width` digits, after "0x" when `prefix`.
    public func write(hex v: UInt64, width: Int, prefix: Bool = true) {
        let n = max(Hex.significantDigits(v), width)
        // Up to eight digits (nearly every field's) made in one word and stored with the prefix.
        if n <= 8, reserve(10) {
            count &+= TextCursor.storeHexWord(v, digits: n, prefix: prefix, lower: false, at: storage + count)
            return
        }
        // Room made once, the digits stored without a test each.
        withRoom(n + (prefix ? 2 : 0)) { Hex.store(v, digits: n, prefix: prefix, into: &$0) }
    }

    /// Appends the bytes as lower-case hex with no separator.
    public func write(lowerHex bytes: ArraySlice<UInt8>) {
        withRoom(2 * bytes.count) { c in
            for b in bytes { c.appendHex(UInt64(b), digits: 2, lower: true) }
        }
        if count >= chunk { flush() }
    }

    /// Appends the 48-bit device address `raw` as `BDAddr.description` spells it ("00:1b:dc:07:32:a1"),
    /// without building the string.
    /// "0000180D-0000-1000-8000-00805F9B34FB" (`BluetoothUUID.uuidString`) without a String.
    public func write(uuidString u: BluetoothUUID) {
        withRoom(BluetoothUUID.stringLength) { u.storeString(into: &$0) }
    }

    /// "0x180D" on the base, else the full form (`BluetoothUUID.description`) without a String.
    public func write(uuid u: BluetoothUUID) {
        if let s = u.uuid16 { write(hex: UInt64(s), width: 4) }
        else if let s = u.uuid32 { write(hex: UInt64(s), width: 8) }
        else { write(uuidString: u) }
    }

    public func write(address raw: UInt64) {
        withRoom(BDAddr.textLength) { BDAddr(raw).store(into: &$0) }
    }

    /// `withSpace` for exactly `n` bytes, which are stored apart and written out directly when they
    /// can never fit the buffer.
    @inline(__always) private func withRoom(_ n: Int, _ body: (inout TextCursor) -> Void) {
        guard n > 0, withSpace(n, { TextCursor.write(count: n, at: $0, body) }) == 0 else { return }
        let tmp = UnsafeMutablePointer<UInt8>.allocate(capacity: n)
        defer { tmp.deallocate() }
        writeAll(UnsafeRawBufferPointer(start: tmp, count: TextCursor.write(count: n, at: tmp, body)))
    }

    /// A field line's start, "    Label: ", in one piece: the indent, the label's bytes as they are
    /// and, before a value, the colon and space.
    @inline(__always)
    public func write(indent: Int, label: FieldLabel, colon: Bool) {
        guard lineStart(indent: indent, label: label, colon: colon, room: 0) else {
            write(spaces: indent)
            append(label.utf8)
            if colon { write(": ") }
            return
        }
    }

    /// A whole field line whose value is a number in hex ("    Handle: 0x0010\n"), a decimal
    /// below 10,000, a named value, a boolean, or nothing (a group's line): one reservation and
    /// straight stores for most lines of `read -v`. False, with nothing written, for other values
    /// (and indents past 64): `FieldRendering.writeText` writes those.
    @inline(__always)
    public func write(indent: Int, label: FieldLabel, line value: FieldValue) -> Bool {
        switch value {
        case .none:
            guard lineStart(indent: indent, label: label, colon: false, room: 1) else { return false }
        case .uint(let v, let hex):
            if hex > 0 {
                let digits = max(Hex.significantDigits(v), hex)
                guard digits <= 8, lineStart(indent: indent, label: label, colon: true, room: 11) else { return false }
                count &+= TextCursor.storeHexWord(v, digits: digits, prefix: true, lower: false, at: storage + count)
            } else {
                guard v < 10_000, lineStart(indent: indent, label: label, colon: true, room: 5) else { return false }
                let digits = TextCursor.decimalDigits(v)
                Self.storeRight(v, storage + count, width: digits)
                count &+= digits
            }
        case .named(let v, let hex, let name, _):
            // "Name (0x1B)": the name copied as it is (`write(name:)`).
            let digits = max(Hex.significantDigits(v), hex, 1)
            let n = name.count
            guard digits <= 8, lineStart(indent: indent, label: label, colon: true, room: n &+ 14) else { return false }
            assert(DisplayText.isPlainName(name.string), "a name with text to escape: \(name)")
            let p = storage + count
            TextCursor.copyShort(from: name.start, count: n, to: p)
            UnsafeMutableRawPointer(p + n).storeBytes(of: UInt16(0x2820).littleEndian, as: UInt16.self)  // " ("
            let k = n &+ 2 &+ TextCursor.storeHexWord(v, digits: digits, prefix: true, lower: false, at: p + (n &+ 2))
            p[k] = UInt8(ascii: ")")
            count &+= k &+ 1
        case .bool(let b):
            guard lineStart(indent: indent, label: label, colon: true, room: 6) else { return false }
            // "true" or "false", stored as one word.
            let raw = UnsafeMutableRawPointer(storage + count)
            raw.storeBytes(of: (b ? 0x65_7572_74 : 0x65_736c_6166 as UInt64).littleEndian, as: UInt64.self)
            count &+= b ? 4 : 5
        default:
            return false
        }
        storage[count] = 10
        count &+= 1
        return true
    }

    /// Stores a line's indent, label and colon when the buffer has room for them, `room` bytes
    /// after them and slack; false, with nothing written, otherwise.
    @inline(__always)
    private func lineStart(indent: Int, label: FieldLabel, colon: Bool, room: Int) -> Bool {
        let n = indent &+ label.count &+ (colon ? 2 : 0)
        // Slack after the line: the indent is stored eight spaces at a time, and the label
        // then written over what went past it.
        guard indent <= 64, reserve(n &+ room &+ 8) else { return false }
        let p = storage + count
        let raw = UnsafeMutableRawPointer(p)
        // Straight-line stores, not loops: a loop of stores (or of a label's words) is compiled
        // into a call to memset (memcpy), dearer than the few bytes it writes.
        let spaces: UInt64 = 0x2020_2020_2020_2020
        raw.storeBytes(of: spaces, as: UInt64.self)
        if indent > 8 {
            raw.storeBytes(of: spaces, toByteOffset: 8, as: UInt64.self)
            var i = 16
            while i < indent {
                raw.storeBytes(of: spaces, toByteOffset: i, as: UInt64.self)
                i &+= 8
            }
        }
        TextCursor.copyShort(from: label.start, count: label.count, to: raw + indent)
        if colon { raw.storeBytes(of: UInt16(0x203A).littleEndian, toByteOffset: n &- 2, as: UInt16.self) }  // ": "
        count &+= n
        return true
    }

    /// Appends `n` spaces.
    public func write(spaces n: Int) {
        if n > 0 { append(repeating: UInt8(ascii: " "), count: n) }
    }

    /// Appends `s` as a quoted JSON string, escaping byte by byte: quote, backslash and control
    /// characters; everything else (UTF-8 sequences included) goes through unchanged.
    public func write(jsonString s: String) {
        // Native strings are read in place; `withUTF8` needs a mutable copy (a retain and release).
        if s.utf8.withContiguousStorageIfAvailable({ writeJSON($0) }) == nil {
            var s = s
            s.withUTF8 { writeJSON($0) }
        }
    }

    /// A name from the specification's tables, copied: it has nothing a terminal escapes
    /// (`FieldValue.named`; debug builds check).
    @inline(__always) public func write(name l: FieldLabel) {
        assert(DisplayText.isPlainName(l.string), "a name with text to escape: \(l)")
        write(label: l)
    }

    /// A name from the specification's tables as a quoted JSON string, copied (`write(jsonName:)`).
    @inline(__always) public func write(jsonName l: FieldLabel) {
        assert(DisplayText.isPlainName(l.string) && JSONText.quoted(l.string).utf8.count == l.count + 2, "a name with text to escape: \(l)")
        append(UInt8(ascii: "\""))
        write(label: l)
        append(UInt8(ascii: "\""))
    }

    /// A company's name as a quoted JSON string (a few hold quotation marks).
    public func write(jsonString l: FieldLabel) { writeJSON(l.utf8) }

    /// A name or a unit from the specification, copied: it has nothing a terminal escapes
    /// (`FieldValue.named`; debug builds check).
    @inline(__always) public func write(name s: String) {
        assert(DisplayText.isPlainName(s), "a name with text to escape: \(s)")
        write(s)
    }

    /// A name or a unit from the specification as a quoted JSON string, copied: it has nothing
    /// to escape (`FieldValue.named`; debug builds check).
    @inline(__always) public func write(jsonName s: String) {
        assert(DisplayText.isPlainName(s) && JSONText.quoted(s).utf8.count == s.utf8.count + 2, "a name with text to escape: \(s)")
        append(UInt8(ascii: "\""))
        write(s)
        append(UInt8(ascii: "\""))
    }

    /// A summary line as a quoted JSON string. A line of literals, numbers and the specification's
    /// names only (`TextLine.isPlainByConstruction`) holds valid UTF-8 and no control character:
    /// its other bytes are not looked at one by one.
    public func write(jsonString line: borrowing TextLine) {
        let trusted = line.isPlainByConstruction
        line.withUnsafeBytes { u in
            if trusted { writeTrustedJSON(u) } else { writeJSON(u) }
        }
    }

    /// A line of text as it was written.
    public func write(_ line: borrowing TextLine) {
        line.withUnsafeBytes { append($0) }
    }

    /// A line for a terminal: controls, invisible characters and invalid UTF-8 escaped
    /// (`DisplayText.escapeLine`). A line with none of them is copied in one piece.
    public func write(display line: borrowing TextLine) {
        // A line of literals, numbers and names needs no escape (`TextLine.isPlainByConstruction`).
        if line.isPlainByConstruction { return write(line) }
        line.withUnsafeBytes { DisplayText.escapeLine($0) { append($0) } }
    }

    /// A line for a terminal written by `body` straight into the buffer's free end, and left there
    /// unless `DisplayText.isPlainLine` finds something to escape: a summary line is written once,
    /// not written into a line of its own and copied.
    @inline(__always) public func write(displayLine body: (inout TextLine) -> Void) {
        // More room than a summary line takes: one that outgrows it moves to the heap.
        _ = reserve(4096)
        let at = storage + count
        var line = TextLine(lent: UnsafeMutableBufferPointer(start: at, count: capacity &- count))
        body(&line)
        if keepsAdvertisingSummary { keepAdvertisingSummary(of: line) }
        if line.isInLentRoom, line.isPlainByConstruction || line.withUnsafeBytes(DisplayText.isPlainLine) {
            count &+= line.count
            if count >= chunk { flush() }
            return
        }
        // The escaped text would overwrite the line it is read from: copied out first.
        scratch.clear()
        scratch.write(line: line)
        write(display: scratch)
    }

    /// Keeps the advertising data summary `line` holds, if any, for the frame's fields (until
    /// `forgetAdvertisingSummary`).
    @inline(__always) func keepAdvertisingSummary(of line: borrowing TextLine) {
        if _slowPath(!line.advertisingSummary.text.isEmpty) { keep(line.advertisingSummary, of: line) }
    }

    private func keep(_ mark: AdvertisingSummaryMark, of line: borrowing TextLine) {
        advertisingSummaryMark = mark
        advertisingSummary.clear()
        advertisingSummary.write(mark.text, of: line)
    }

    /// The frame is written: its summary is not another frame's.
    @inline(__always) func forgetAdvertisingSummary() {
        if _slowPath(!advertisingSummaryMark.text.isEmpty) { advertisingSummaryMark = AdvertisingSummaryMark() }
    }

    /// Derived text for a terminal, escaped as `DisplayText` says.
    public func write(display t: DerivedText) { write(t, json: false) }

    /// Derived text as a quoted JSON string.
    public func write(jsonString t: DerivedText) { write(t, json: true) }

    /// Derived text for a terminal or as a JSON string: the summary kept when `t` is that
    /// (`keepAdvertisingSummary`), else written into the scratch line first. A reason given as
    /// text is escaped as any text is.
    private func write(_ t: DerivedText, json: Bool) {
        if case .reason(let s) = t { return json ? write(jsonString: s) : write(display: s) }
        if case .advertisingSummary(let b, _) = t, advertisingSummaryMark.holds(b) {
            return json ? write(jsonString: advertisingSummary) : write(display: advertisingSummary)
        }
        scratch.clear()
        t.write(to: &scratch)
        if json { write(jsonString: scratch) } else { write(display: scratch) }
    }

    /// Text for a terminal, escaped as `DisplayText` says.
    public func write(display s: String, _ style: DisplayText.Style = []) {
        if s.utf8.withContiguousStorageIfAvailable({ DisplayText.escape($0, style) { append($0) } }) == nil {
            var s = s
            s.withUTF8 { DisplayText.escape($0, style) { append($0) } }
        }
    }

    /// Bytes as a device sent them, escaped for a terminal.
    public func write(display bytes: Bytes) {
        bytes.withUnsafeBufferPointer { DisplayText.escape($0) { append($0) } }
    }

    /// Bytes as a device sent them as a quoted JSON string (invalid UTF-8 as U+FFFD).
    public func write(jsonString bytes: Bytes) {
        bytes.withUnsafeBufferPointer { writeJSON($0) }
    }

    private func writeJSON(_ u: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        JSONText.escape(u) { append($0) }
        append(UInt8(ascii: "\""))
    }

    /// `writeJSON` for text that is valid UTF-8 with no control character (`JSONText.escape`).
    private func writeTrustedJSON(_ u: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        JSONText.escape(u, trusted: true) { append($0) }
        append(UInt8(ascii: "\""))
    }

    /// A frame's columns before its summary for `read` ("     7     0.012500 < hci0 "): the number
    /// in 6 columns, seconds with six decimals in 12, the direction's arrow and the adapter, stored
    /// in one reserved piece with digits written backwards two at a time. False, with nothing
    /// written, where they do not fit (a number from 1,000,000, a time from 100,000 s or negative,
    /// an adapter from 100): `write(int:width:)` and `write(seconds:width:)` spell those.
    @inline(__always)
    func write(frameColumns number: Int, seconds ns: Int64, arrow: UInt8, adapter: UInt16) -> Bool {
        guard number >= 0, number < 1_000_000, ns >= 0, ns < 99_999_999_999_500, adapter < 100 else { return false }
        // 6 + 1 + 12 + 1 + 1 + 4 + 2 + 1
        return withSpace(28) { at in
            // Spaces first, three words: the digits go over them (spaces stored one by one before
            // each number were two calls to memset a frame).
            let spaces: UInt64 = 0x2020_2020_2020_2020
            for offset in stride(from: 0, through: 16, by: 8) {
                UnsafeMutableRawPointer(at).storeBytes(of: spaces, toByteOffset: offset, as: UInt64.self)
            }
            Self.storeRight(UInt64(number), at, width: 6)
            // Seconds with six decimals, right-aligned in 12 columns.
            let us = (UInt64(ns) &+ 500) / 1000
            var fraction = us % 1_000_000
            for i in stride(from: 17, through: 13, by: -2) {
                TextCursor.storePair(fraction % 100, at: at + i)
                fraction /= 100
            }
            at[12] = UInt8(ascii: ".")
            Self.storeRight(us / 1_000_000, at + 7, width: 5)
            at[20] = arrow
            at[22] = UInt8(ascii: "h")
            at[23] = UInt8(ascii: "c")
            at[24] = UInt8(ascii: "i")
            var n = 25
            if adapter >= 10 {
                at[n] = 0x30 &+ UInt8(truncatingIfNeeded: adapter / 10)
                n &+= 1
            }
            at[n] = 0x30 &+ UInt8(truncatingIfNeeded: adapter % 10)
            at[n &+ 1] = 32
            return n &+ 2
        } > 0
    }

    /// The digits of `v` ending at `width`, the bytes before them left as they are; `v` has at
    /// most `width` digits. Two digits at a time: one division for each pair.
    @inline(__always)
    private static func storeRight(_ v: UInt64, _ at: UnsafeMutablePointer<UInt8>, width: Int) {
        var i = width, m = v
        while m >= 100 && i >= 2 {
            i &-= 2
            TextCursor.storePair(m % 100, at: at + i)
            m /= 100
        }
        if m >= 10 && i >= 2 {
            i &-= 2
            TextCursor.storePair(m, at: at + i)
        } else if i > 0 {
            i &-= 1
            at[i] = 0x30 &+ UInt8(truncatingIfNeeded: m)
        }
    }

    /// Appends a duration in nanoseconds as seconds with six decimals ("12.000345"), right-aligned
    /// in `width` columns: every frame's time column, written backwards in one reserved piece.
    public func write(seconds ns: Int64, width: Int = 0) {
        let negative = ns < 0
        let us = (ns.magnitude &+ 500) / 1000
        let wholeDigits = TextCursor.decimalDigits(us / 1_000_000)
        let n = (negative ? 1 : 0) &+ wholeDigits &+ 7
        if width > n { append(repeating: UInt8(ascii: " "), count: width &- n) }
        withRoom(n) { $0.appendFixed(us, wholeDigits: wholeDigits, decimals: 6, negative: negative) }
    }

    public func flush() {
        guard count > 0 else { return }
        defer { count = 0 }
        guard !failed else { return }
        writeAll(UnsafeRawBufferPointer(start: storage, count: count))
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) {
        guard !failed, let base = raw.baseAddress else { return }
        var off = 0
        while off < raw.count {
            let n = Glibc.write(fd, base + off, raw.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                return
            }
            off += n
        }
    }

    public func close() {
        flush()
        if fd > 2 { _ = Glibc.close(fd) }
    }
}

extension TextLine {
    /// `s` as a quoted JSON string: the bytes of `JSONText.quoted(s)`, without making that String.
    mutating func write(jsonQuoted s: String) {
        write(byte: 0x22)
        if s.utf8.withContiguousStorageIfAvailable({ u in JSONText.escape(u) { write(buffer: $0) } }) == nil {
            var s = s
            s.withUTF8 { u in JSONText.escape(u) { write(buffer: $0) } }
        }
        write(byte: 0x22)
    }

    /// What `body` writes, as a quoted JSON string (written on the stack first, then escaped).
    mutating func write(jsonQuotedBy body: (inout TextLine) -> Void) {
        write(byte: 0x22)
        TextLine.onStack { t in
            body(&t)
            t.withUnsafeBytes { u in JSONText.escape(u) { write(buffer: $0) } }
        }
        write(byte: 0x22)
    }
}

/// JSON string escaping, defined once: what `Output` writes and what `quoted` returns.
public enum JSONText {
    /// `s` as a quoted JSON string.
    public static func quoted(_ s: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(s.utf8.count + 2)
        var s = s
        s.withUTF8 { escape($0) { out.append(contentsOf: $0) } }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    /// Hands `emit` the contents of a JSON string holding `u`, piece by piece: runs that need no
    /// escape as they are, a backslash escape for quotes, backslashes and control characters,
    /// and U+FFFD for each maximal ill-formed UTF-8 subpart (as `String(decoding:as:)` makes it:
    /// lines can hold bytes as a device sent them). `trusted` text is valid UTF-8 with no control
    /// character: only its quotes and backslashes are looked for.
    @inline(__always)
    static func escape(_ u: UnsafeBufferPointer<UInt8>, trusted: Bool = false, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        var i = 0
        while i < u.count {
            i = plain(u, from: i, trusted: trusted)
            guard i < u.count else { break }
            let c = u[i]
            // Trusted text's UTF-8 passes as it is (the scan may stop inside a character).
            if !trusted && c >= 0x80 {
                let (scalar, length) = DisplayText.decode(u, at: i)
                if scalar == nil {
                    if start < i { emit(UnsafeBufferPointer(rebasing: u[start..<i])) }
                    piece(0xEF, 0xBF, 0xBD, count: 3, emit)
                    start = i &+ length
                }
                i &+= length
                continue
            }
            i &+= 1
            guard c < 0x20 || c == 0x22 || c == 0x5C else { continue }
            if start < i &- 1 { emit(UnsafeBufferPointer(rebasing: u[start..<(i &- 1)])) }
            start = i
            switch c {
            case 0x22, 0x5C: piece(0x5C, c, count: 2, emit)
            case 0x0A: piece(0x5C, UInt8(ascii: "n"), count: 2, emit)
            case 0x0D: piece(0x5C, UInt8(ascii: "r"), count: 2, emit)
            case 0x09: piece(0x5C, UInt8(ascii: "t"), count: 2, emit)
            default: piece(0x5C, UInt8(ascii: "u"), 0x30, 0x30, Hex.upperDigit(c >> 4), Hex.upperDigit(c & 0xF), count: 6, emit)
            }
        }
        if start < u.count { emit(UnsafeBufferPointer(rebasing: u[start...])) }
    }

    /// Up to six bytes handed to `emit` as one piece.
    @inline(__always)
    private static func piece(_ a: UInt8, _ b: UInt8, _ c: UInt8 = 0, _ d: UInt8 = 0, _ e: UInt8 = 0, _ f: UInt8 = 0,
                              count: Int, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        var bytes = (a, b, c, d, e, f)
        withUnsafeBytes(of: &bytes) { emit(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)) }
    }

    /// Where the next byte JSON does not keep as it is (a control character, quote, backslash or
    /// non-ASCII byte) may be, from `i`: text is passed eight bytes at a time, a high bit in `marks`
    /// flagging a byte to look at one by one.
    @inline(__always) private static func plain(_ u: UnsafeBufferPointer<UInt8>, from i: Int, trusted: Bool) -> Int {
        guard let base = u.baseAddress else { return i }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func marks(_ x: UInt64) -> UInt64 {
            // A byte is zero in `quote` or `backslash` where it is one of those; a high bit of `x`
            // flags a byte anyway, or (trusted text, whose high bits are UTF-8) clears the flag.
            let quote = x ^ (0x22 &* ones), backslash = x ^ (0x5C &* ones)
            let special = (quote &- ones) | (backslash &- ones)
            return (trusted ? special & ~x : x | (x &- 0x20 &* ones) | special) & 0x8080_8080_8080_8080
        }
        var i = i
        while i &+ 8 <= u.count {
            if marks(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) != 0 { return i }
            i &+= 8
        }
        // The last few bytes, in the word that ends where the text does (the bytes of it before
        // `i`, passed already, shifted out): most text then needs no byte-by-byte tail.
        if i < u.count && u.count >= 8 {
            let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: u.count &- 8, as: UInt64.self))
            if marks(x) >> (8 &* UInt64(truncatingIfNeeded: 8 &- (u.count &- i))) == 0 { return u.count }
        }
        return i
    }

}
