import Decoders
import Wire

/// A finding's message, written by string interpolation straight into one byte buffer: joining
/// Strings with `+` makes a new String at every step, and a capture can hold thousands of findings.
///
///     "\(attribute: h, uuid) read \(n) times in \(seconds: t)"
struct Message: ExpressibleByStringInterpolation {
    /// The bytes, in a line behind a reference: a message is a value, and a line has one owner.
    /// Written only while it is built, or by `+=` on a message no other copy shares.
    final class Text {
        var line: TextLine
        init(capacity: Int) { line = TextLine(capacity: capacity) }
    }

    fileprivate private(set) var text: Text

    init(stringLiteral s: String) {
        text = Text(capacity: s.utf8.count)
        text.line.write(s)
    }

    init(stringInterpolation i: Interpolation) { text = i.text }

    var string: String { text.line.string }

    static func += (m: inout Message, other: Message) {
        if !isKnownUniquelyReferenced(&m.text) {
            let copy = Text(capacity: m.text.line.count + other.text.line.count)
            copy.line.write(line: m.text.line)
            m.text = copy
        }
        m.text.line.write(line: other.text.line)
    }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate let text: Text

        init(literalCapacity: Int, interpolationCount: Int) {
            text = Text(capacity: literalCapacity + 24 * interpolationCount)
        }

        mutating func appendLiteral(_ s: String) { text.line.write(s) }
        mutating func appendInterpolation(_ s: String) { text.line.write(s) }
        mutating func appendInterpolation(_ m: Message) { text.line.write(line: m.text.line) }
        mutating func appendInterpolation(_ n: Int) { text.line.write(n) }
        mutating func appendInterpolation(_ a: BDAddr) { text.line.write(a) }
        /// "0x180D", or the 128-bit form off the Bluetooth base.
        mutating func appendInterpolation(_ u: BluetoothUUID) { text.line.write(u) }

        /// Seconds with one decimal: "4.1 s".
        mutating func appendInterpolation(seconds ns: Int64) {
            let tenths = Int(truncatingIfNeeded: (ns.magnitude + 50_000_000) / 100_000_000)
            text.line.write(tenths / 10)
            text.line.write(byte: UInt8(ascii: "."))
            text.line.write(tenths % 10)
            text.line.write(" s")
        }

        /// Milliseconds, whole: "120 ms".
        mutating func appendInterpolation(millis ns: Int64) {
            text.line.write(Int(truncatingIfNeeded: (ns.magnitude + 500_000) / 1_000_000))
            text.line.write(" ms")
        }

        /// "1 request", "3 requests".
        mutating func appendInterpolation(plural n: Int, _ one: String, _ many: String? = nil) {
            text.line.write(n)
            text.line.write(byte: 0x20)
            if n == 1 { text.line.write(one) } else if let m = many { text.line.write(m) } else {
                text.line.write(one)
                text.line.write(byte: UInt8(ascii: "s"))
            }
        }

        /// An ATT handle: "0x002A".
        mutating func appendInterpolation(handle h: UInt16) { text.line.write(hex: h, width: 4) }

        /// "0x1D", as opcodes are written.
        mutating func appendInterpolation(hex v: UInt8) { text.line.write(hex: v, width: 2) }
        mutating func appendInterpolation(hex v: UInt16) { text.line.write(hex: v, width: 4) }

        /// A service with its SIG name when it has one: "Heart Rate 0x180D", "0x180D".
        mutating func appendInterpolation(service u: BluetoothUUID) {
            if let name = AssignedNumbers.serviceName(u) {
                text.line.write(name)
                text.line.write(byte: 0x20)
            }
            text.line.write(u)
        }

        /// "handle 0x002A (Battery Level 0x2A19)".
        mutating func appendInterpolation(attribute h: UInt16?, _ uuid: BluetoothUUID?) {
            text.line.write("handle ")
            if let h { text.line.write(hex: h, width: 4) } else { text.line.write(byte: UInt8(ascii: "?")) }
            guard let u = uuid else { return }
            text.line.write(" (")
            if let name = AssignedNumbers.name(u) {
                text.line.write(name)
                text.line.write(byte: 0x20)
            }
            text.line.write(u)
            text.line.write(byte: UInt8(ascii: ")"))
        }
    }
}
