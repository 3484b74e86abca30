import Decoders
import Wire

/// A finding's message, written by string interpolation straight into one String grown in place:
/// joining Strings with `+` makes a new String at every step, and a capture can hold thousands of
/// findings. Numbers, handles, addresses and UUIDs are written on the stack and added as they are.
///
///     "\(attribute: h, uuid) read \(n) times in \(seconds: t)"
struct Message: ExpressibleByStringInterpolation {
    /// The text. A copy shares it until one of them changes.
    private(set) var string: String

    init(stringLiteral s: String) { string = s }

    init(stringInterpolation i: Interpolation) { string = i.text }

    static func += (m: inout Message, other: Message) { m.string += other.string }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var text = ""

        /// Room for the whole message at once when its words alone outgrow a small String; a short
        /// piece (", 0x0001-0x0005") stays in one, which takes no allocation.
        init(literalCapacity: Int, interpolationCount: Int) {
            if literalCapacity > 15 { text.reserveCapacity(literalCapacity + 24 * interpolationCount) }
        }

        mutating func appendLiteral(_ s: String) { text += s }
        mutating func appendInterpolation(_ s: String) { text += s }
        mutating func appendInterpolation(_ m: Message) { text += m.string }
        mutating func appendInterpolation(_ n: Int) { write { $0.write(n) } }
        mutating func appendInterpolation(_ a: BDAddr) { write { $0.write(a) } }
        /// A peer's address, or "the peer" when the capture never showed it.
        mutating func appendInterpolation(peer a: BDAddr?) {
            if let a { appendInterpolation(a) } else { text += "the peer" }
        }
        mutating func appendInterpolation(_ k: PeerKey) { write { k.write(to: &$0) } }
        /// "0x180D", or the 128-bit form off the Bluetooth base.
        mutating func appendInterpolation(_ u: BluetoothUUID) { write { $0.write(u) } }

        /// What a line writes of a number, handle, address or UUID (ASCII), made on the stack and added to
        /// the text without allocating (`TextLine.append(to:)`).
        private mutating func write(_ body: (inout TextLine) -> Void) {
            TextLine.onStack { line in
                body(&line)
                line.append(to: &text)
            }
        }

        /// Seconds with one decimal: "4.1 s".
        mutating func appendInterpolation(seconds ns: Int64) {
            let tenths = Int(truncatingIfNeeded: (ns.magnitude + 50_000_000) / 100_000_000)
            write { line in
                line.write(tenths / 10)
                line.write(byte: UInt8(ascii: "."))
                line.write(tenths % 10)
            }
            text += " s"
        }

        /// Milliseconds, whole: "120 ms".
        mutating func appendInterpolation(millis ns: Int64) {
            appendInterpolation(Int(truncatingIfNeeded: (ns.magnitude + 500_000) / 1_000_000))
            text += " ms"
        }

        /// "1 request", "3 requests".
        mutating func appendInterpolation(plural n: Int, _ one: String, _ many: String? = nil) {
            appendInterpolation(n)
            text += " "
            if n == 1 { text += one } else if let m = many { text += m } else {
                text += one
                text += "s"
            }
        }

        /// An ATT handle: "0x002A".
        mutating func appendInterpolation(handle h: UInt16) { write { $0.write(hex: h, width: 4) } }

        /// "0x1D", as opcodes are written.
        mutating func appendInterpolation(hex v: UInt8) { write { $0.write(hex: v, width: 2) } }
        mutating func appendInterpolation(hex v: UInt16) { write { $0.write(hex: v, width: 4) } }

        /// A service with its SIG name when it has one: "Heart Rate 0x180D", "0x180D".
        mutating func appendInterpolation(service u: BluetoothUUID) {
            if let name = AssignedNumbers.serviceName(u) {
                text += name
                text += " "
            }
            appendInterpolation(u)
        }

        /// "handle 0x002A (Battery Level 0x2A19)".
        mutating func appendInterpolation(attribute h: UInt16?, _ uuid: BluetoothUUID?) {
            text += "handle "
            if let h { appendInterpolation(handle: h) } else { text += "?" }
            guard let u = uuid else { return }
            text += " ("
            if let name = AssignedNumbers.name(u) {
                text += name
                text += " "
            }
            appendInterpolation(u)
            text += ")"
        }
    }
}
