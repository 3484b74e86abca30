import Decoders
import Wire

/// How text from the air is shown on a terminal. A device name, a GATT string or a file name is
/// whatever anyone in radio range chose to send: raw, an escape sequence would clear the screen,
/// plant a hyperlink (OSC 8) or reorder what follows it (U+202E). Every text output writes such
/// text through `escape`; JSON and HTML keep it exact with their own escapes.
///
/// The rule, in one place:
/// - printable ASCII and valid UTF-8 of visible characters pass through unchanged;
/// - C0 controls and DEL are written `\x1b` (two lower-case hex digits);
/// - C1 controls and invisible format characters (bidi embeddings, overrides and isolates, zero
///   width spaces and joiners, word joiner, BOM, tag characters) are written `\u{202E}` (upper-case
///   hex, at least four digits), the spelling of a Swift string literal;
/// - each byte of invalid UTF-8 (the maximal ill-formed subpart, as Unicode defines it, which is
///   what `String(decoding:as:)` turns into one U+FFFD) is written `\xff`;
/// - `keepNewlines` lets line feeds through, for multi-line text we built ourselves around it;
/// - `markdown` also writes `|` as `\|` and a backtick as `'` (cells may sit in code spans, where
///   a backslash escape does not work).
/// A backslash itself is not doubled: the escapes are for a person reading a terminal, not for
/// parsing back (JSON is for that).
public enum DisplayText {
    public struct Style: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let keepNewlines = Style(rawValue: 1)
        public static let markdown = Style(rawValue: 2)
    }

    /// Calls `emit` with the escaped form of `u`, in runs: text without anything to escape is one
    /// call with `u` itself, so the common case costs one pass and one copy. Made for short text
    /// (a field's value, a name): after the first eight-byte run it goes byte by byte.
    @inlinable
    public static func escape(_ u: UnsafeBufferPointer<UInt8>, _ style: Style = [],
                              to emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        var i = style.rawValue == 0 && u.baseAddress != nil ? plainASCII(u, from: 0) : 0
        while i < u.count { i = step(u, at: i, style, start: &start, emit) }
        finish(u, start: start, emit)
    }

    /// `escape` for text built in a `TextLine` (a summary line, whose " — " or a quoted name's
    /// accent would end the first run early, and derived field values): the eight-byte runs resume
    /// after each byte that is not printable ASCII. Kept apart from `escape`: the larger loop made
    /// every short value dearer.
    public static func escapeLine(_ u: UnsafeBufferPointer<UInt8>, to emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        _ = scanLine(u, untilEscape: false, emit)
    }

    /// Whether `escapeLine` hands on `u` unchanged: a line written in place can then stay there.
    public static func isPlainLine(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        !scanLine(u, untilEscape: true) { _ in }
    }

    /// `escapeLine`'s walk; true when something was escaped. `untilEscape` stops at the first
    /// escape and emits nothing after it.
    @inline(__always)
    private static func scanLine(_ u: UnsafeBufferPointer<UInt8>, untilEscape: Bool,
                                 _ emit: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        guard u.baseAddress != nil else { return false }
        var start = 0, i = 0
        while i < u.count {
            i = plainASCII(u, from: i)
            while i < u.count, u[i] &- 0x20 < 0x5F { i &+= 1 }
            if i < u.count {
                i = step(u, at: i, [], start: &start, emit)
                if untilEscape, start != 0 { return true }
            }
        }
        if !untilEscape { finish(u, start: start, emit) }
        return start != 0
    }

    /// One step of the escapers at `i`: past a printable byte (or a kept newline), or past the
    /// character there, its escape emitted after the run before it. Returns where to go on.
    @inlinable @inline(__always)
    static func step(_ u: UnsafeBufferPointer<UInt8>, at i: Int, _ style: Style, start: inout Int,
                     _ emit: (UnsafeBufferPointer<UInt8>) -> Void) -> Int {
        let b = u[i]
        // Printable ASCII: the fast path, checked with one subtraction.
        if b &- 0x20 < 0x5F, style.rawValue == 0 || !isMarkdownSpecial(b, style) { return i &+ 1 }
        if b == 0x0A, style.contains(.keepNewlines) { return i &+ 1 }
        var e = Escape()
        let used = e.fill(u, at: i, style)
        if e.count > 0 {  // not a visible non-ASCII character
            if start < i { emit(UnsafeBufferPointer(rebasing: u[start..<i])) }
            e.emit(emit)
            start = i &+ used
        }
        return i &+ used
    }

    /// The run left after the last escape: all of `u` when nothing was escaped.
    @inlinable @inline(__always)
    static func finish(_ u: UnsafeBufferPointer<UInt8>, start: Int, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        if start == 0 { emit(u) } else if start < u.count { emit(UnsafeBufferPointer(rebasing: u[start...])) }
    }

    /// Where the first byte from `i` that is not printable ASCII (0x20...0x7E) may be: text is
    /// passed eight bytes at a time, a high bit in `low` marking a byte below 0x20, one in `high`
    /// a byte from 0x7F up. `u` has a base address.
    @inlinable @inline(__always)
    static func plainASCII(_ u: UnsafeBufferPointer<UInt8>, from i: Int) -> Int {
        let raw = UnsafeRawPointer(u.baseAddress.unsafelyUnwrapped)
        var i = i
        while i &+ 8 <= u.count {
            let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let low = (x &- 0x2020_2020_2020_2020) & ~x
            let high = x | (x &+ 0x0101_0101_0101_0101)
            if (low | high) & 0x8080_8080_8080_8080 != 0 { break }
            i &+= 8
        }
        return i
    }

    @inlinable static func isMarkdownSpecial(_ b: UInt8, _ style: Style) -> Bool {
        style.contains(.markdown) && (b == UInt8(ascii: "|") || b == UInt8(ascii: "`"))
    }

    /// `s` is the same escaped for a terminal: what a value's name from the specification must
    /// be, since text outputs copy it as it is (`FieldValue.named`).
    public static func isPlainName(_ s: String) -> Bool { escaped(s) == s }

    /// `s` escaped, for text outputs built as Strings (device lists, reports, error messages).
    public static func escaped(_ s: String, _ style: Style = []) -> String {
        var s = s
        return s.withUTF8 { escaped($0, style) }
    }

    /// Bytes as received (possibly invalid UTF-8) escaped into a String.
    public static func escaped(_ u: UnsafeBufferPointer<UInt8>, _ style: Style = []) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(u.count)
        escape(u, style) { out.append(contentsOf: $0) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func escaped(bytes: Bytes, _ style: Style = []) -> String {
        bytes.withUnsafeBufferPointer { escaped($0, style) }
    }

    // MARK: UTF-8

    /// Well-formed UTF-8 (Unicode table 3-7): for each lead byte range, the sequence length and the
    /// range its second byte must fall in (later bytes are always 0x80...0xBF).
    @usableFromInline static let leads: [(lead: ClosedRange<UInt8>, length: Int, second: ClosedRange<UInt8>)] = [
        (0xC2...0xDF, 2, 0x80...0xBF),
        (0xE0...0xE0, 3, 0xA0...0xBF),
        (0xE1...0xEC, 3, 0x80...0xBF),
        (0xED...0xED, 3, 0x80...0x9F),  // no surrogates
        (0xEE...0xEF, 3, 0x80...0xBF),
        (0xF0...0xF0, 4, 0x90...0xBF),  // no overlong forms
        (0xF1...0xF3, 4, 0x80...0xBF),
        (0xF4...0xF4, 4, 0x80...0x8F),  // nothing past U+10FFFF
    ]

    /// The scalar starting at `i` and its length, or nil and the length of the maximal ill-formed
    /// subpart there (at least 1). `u[i]` is at least 0x80.
    public static func decode(_ u: UnsafeBufferPointer<UInt8>, at i: Int) -> (scalar: UInt32?, length: Int) {
        let b0 = u[i]
        guard let row = leads.first(where: { $0.lead.contains(b0) }) else { return (nil, 1) }
        var scalar = UInt32(b0) & (0xFF >> (row.length + 1))
        for k in 1..<row.length {
            guard i + k < u.count else { return (nil, k) }
            let b = u[i + k]
            guard k == 1 ? row.second.contains(b) : (0x80...0xBF).contains(b) else { return (nil, k) }
            scalar = scalar << 6 | UInt32(b & 0x3F)
        }
        return (scalar, row.length)
    }

    /// Valid characters that are shown escaped: C1 controls and the format characters that are
    /// invisible or change the order or joining of what follows.
    @usableFromInline static let invisible: [ClosedRange<UInt32>] = [
        0x80...0x9F,        // C1 controls (0x9B is CSI on some terminals)
        0x061C...0x061C,    // Arabic letter mark
        0x180E...0x180E,    // Mongolian vowel separator
        0x200B...0x200F,    // zero width space, non-joiner, joiner; LRM, RLM
        0x2028...0x202E,    // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
        0x2060...0x2064,    // word joiner, invisible operators
        0x2066...0x206F,    // LRI, RLI, FSI, PDI; deprecated format characters
        0xFEFF...0xFEFF,    // zero width no-break space (BOM)
        0xFFF9...0xFFFB,    // interlinear annotation
        0xE0000...0xE007F,  // tag characters
    ]

    /// The table is in order: the search ends at the first range past `scalar`.
    @usableFromInline static func isInvisible(_ scalar: UInt32) -> Bool {
        for r in invisible {
            if scalar < r.lowerBound { return false }
            if scalar <= r.upperBound { return true }
        }
        return false
    }

    /// What one escape writes, on the stack: `\u{E007F}` is the longest (9 bytes).
    @usableFromInline struct Escape {
        @usableFromInline var bytes: (UInt64, UInt64) = (0, 0)
        @usableFromInline var count = 0

        @inlinable init() {}

        /// Writes the escape for the text at `i`, which is not printable ASCII, and returns how
        /// many input bytes it covers. Nothing is written for a visible character.
        @usableFromInline mutating func fill(_ u: UnsafeBufferPointer<UInt8>, at i: Int, _ style: Style) -> Int {
            let b = u[i]
            if b < 0x80 {
                switch b {
                case UInt8(ascii: "|"): append("\\|")
                case UInt8(ascii: "`"): append("'")
                default: hexByte(b)
                }
                return 1
            }
            let (scalar, length) = DisplayText.decode(u, at: i)
            guard let scalar else {
                // Each byte of the ill-formed subpart; at most three, so they fit.
                for k in 0..<length { hexByte(u[i + k]) }
                return length
            }
            guard DisplayText.isInvisible(scalar) else { return length }
            append("\\u{")
            var digits = 4
            while digits < 8, scalar >> UInt32(4 * digits) != 0 { digits += 1 }
            for d in stride(from: digits - 1, through: 0, by: -1) {
                let x = UInt8(truncatingIfNeeded: scalar >> UInt32(4 * d)) & 0xF
                push(x < 10 ? 0x30 + x : 0x37 + x)
            }
            push(UInt8(ascii: "}"))
            return length
        }

        mutating func hexByte(_ b: UInt8) {
            push(UInt8(ascii: "\\"))
            push(UInt8(ascii: "x"))
            push(Hex.lowerDigit(b >> 4))
            push(Hex.lowerDigit(b & 0xF))
        }

        mutating func append(_ s: StaticString) {
            s.withUTF8Buffer { for b in $0 { push(b) } }
        }

        mutating func push(_ b: UInt8) {
            withUnsafeMutableBytes(of: &bytes) { $0[count] = b }
            count += 1
        }

        @inlinable func emit(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            var copy = bytes
            let n = count
            withUnsafeBytes(of: &copy) { body(UnsafeBufferPointer(start: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)) }
        }
    }
}

extension TextLine {
    /// `s` as `DisplayText` shows it on a terminal, for lines that are printed only as text.
    public mutating func write(display s: String, _ style: DisplayText.Style = []) {
        var s = s
        s.withUTF8 { u in DisplayText.escape(u, style) { write(buffer: $0) } }
    }
}
