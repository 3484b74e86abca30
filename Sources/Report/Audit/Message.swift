import Decoders
import Wire

/// A finding's message, written by string interpolation straight into one byte buffer: joining
/// Strings with `+` makes a new String at every step, and a capture can hold thousands of findings.
///
///     "\(attribute: h, uuid) read \(n) times in \(seconds: t)"
struct Message: ExpressibleByStringInterpolation {
    fileprivate(set) var text: TextLine

    init(stringLiteral s: String) {
        text = TextLine(capacity: s.utf8.count)
        text.write(s)
    }

    init(stringInterpolation i: Interpolation) { text = i.text }

    var string: String { text.string }

    static func += (m: inout Message, other: Message) { m.text.write(line: other.text) }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var text: TextLine

        init(literalCapacity: Int, interpolationCount: Int) {
            text = TextLine(capacity: literalCapacity + 24 * interpolationCount)
        }

        mutating func appendLiteral(_ s: String) { text.write(s) }
        mutating func appendInterpolation(_ s: String) { text.write(s) }
        mutating func appendInterpolation(_ m: Message) { text.write(line: m.text) }
        mutating func appendInterpolation(_ n: Int) { text.write(n) }
        mutating func appendInterpolation(_ a: BDAddr) { text.write(a) }
        /// "0x180D", or the 128-bit form off the Bluetooth base.
        mutating func appendInterpolation(_ u: BluetoothUUID) { text.write(u) }

        /// Seconds with one decimal: "4.1 s".
        mutating func appendInterpolation(seconds ns: Int64) {
            let tenths = Int(truncatingIfNeeded: (ns.magnitude + 50_000_000) / 100_000_000)
            text.write(tenths / 10)
            text.write(byte: UInt8(ascii: "."))
            text.write(tenths % 10)
            text.write(" s")
        }

        /// Milliseconds, whole: "120 ms".
        mutating func appendInterpolation(millis ns: Int64) {
            text.write(Int(truncatingIfNeeded: (ns.magnitude + 500_000) / 1_000_000))
            text.write(" ms")
        }

        /// "1 request", "3 requests".
        mutating func appendInterpolation(plural n: Int, _ one: String, _ many: String? = nil) {
            text.write(n)
            text.write(byte: 0x20)
            if n == 1 { text.write(one) } else if let m = many { text.write(m) } else {
                text.write(one)
                text.write(byte: UInt8(ascii: "s"))
            }
        }

        /// An ATT handle: "0x002A".
        mutating func appendInterpolation(handle h: UInt16) { text.write(hex: h, width: 4) }

        /// "0x1D", as opcodes are written.
        mutating func appendInterpolation(hex v: UInt8) { text.write(hex: v, width: 2) }
        mutating func appendInterpolation(hex v: UInt16) { text.write(hex: v, width: 4) }

        /// A service with its SIG name when it has one: "Heart Rate 0x180D", "0x180D".
        mutating func appendInterpolation(service u: BluetoothUUID) {
            if let name = AssignedNumbers.serviceName(u) {
                text.write(name)
                text.write(byte: 0x20)
            }
            text.write(u)
        }

        /// "handle 0x002A (Battery Level 0x2A19)".
        mutating func appendInterpolation(attribute h: UInt16?, _ uuid: BluetoothUUID?) {
            text.write("handle ")
            if let h { text.write(hex: h, width: 4) } else { text.write(byte: UInt8(ascii: "?")) }
            guard let u = uuid else { return }
            text.write(" (")
            if let name = AssignedNumbers.name(u) {
                text.write(name)
                text.write(byte: 0x20)
            }
            text.write(u)
            text.write(byte: UInt8(ascii: ")"))
        }
    }
}
