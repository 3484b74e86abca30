import Decoders
import Wire

/// `read -T fields -e NAME…`: one line per frame with the values of the named fields, as
/// `tshark -T fields` writes them. Names are ours or tshark's (`FieldAliases`), plus tshark's
/// frame and column fields (`frame.number`, `frame.time_relative`, `frame.time_epoch`,
/// `frame.time_delta`, `frame.len`, `_ws.col.No.`, `_ws.col.Time`, `_ws.col.Info`). Values
/// follow tshark 4.0: numbers shown in hex as `0x` and lower-case digits to the field's width,
/// others in decimal, booleans 1 or 0, addresses `aa:bb:…`, bytes as hex digits, 16- and 32-bit
/// UUIDs as hex numbers.
public final class FieldColumns {
    /// `-E occurrence=`: every value, the first, the last, or the n-th (1-based).
    public enum Occurrence: Equatable, Sendable {
        case all, first, last, nth(Int)
    }

    public struct Options: Sendable {
        public var header = false
        public var separator = "\t"
        public var aggregator = ","
        public var occurrence = Occurrence.all
        /// `-E quote=d|s`: each value in double or single quotes; nil: none.
        public var quote: Character?
        public init() {}

        /// Applies one `-E key=value` setting (tshark's names and value shorthands: `/t` tab,
        /// `/s` space). Returns an error message for what is not understood.
        public mutating func set(_ setting: String) -> String? {
            guard let eq = setting.firstIndex(of: "=") else { return "-E \(setting): expected key=value" }
            let key = setting[..<eq], raw = String(setting[setting.index(after: eq)...])
            let value = raw == "/t" ? "\t" : raw == "/s" ? " " : raw
            switch key {
            case "header": header = value == "y"
            case "separator": separator = value
            case "aggregator": aggregator = value
            case "occurrence":
                switch value {
                case "a": occurrence = .all
                case "f": occurrence = .first
                case "l": occurrence = .last
                default:
                    guard let n = Int(value), n > 0 else { return "-E occurrence=\(raw): expected a, f, l or a number" }
                    occurrence = .nth(n)
                }
            case "quote":
                switch value {
                case "d": quote = "\""
                case "s": quote = "'"
                case "n": quote = nil
                default: return "-E quote=\(raw): expected d, s or n"
                }
            case "bom", "escape": break
            default: return "-E \(key): unknown setting (header, separator, aggregator, occurrence, quote)"
            }
            return nil
        }
    }

    enum FrameColumn: Sendable {
        case number, relative, epoch, delta, length, info
    }

    enum Column {
        /// The filters of a name's fields (one, or each field a tshark name stands for), those
        /// written only when the others give nothing, and tshark's digits for its numbers.
        case fields([DisplayFilter], fallbacks: [DisplayFilter], digits: Int?)
        case frame(FrameColumn)
    }

    public let names: [String]
    let columns: [Column]
    public let options: Options
    private var start = CaptureStart()
    private var previous: Int64?
    private var line = TextLine(capacity: 256)

    /// tshark's frame and column fields, which are not decoded fields here.
    static let frameColumns: [String: FrameColumn] = [
        "frame.number": .number, "_ws.col.No.": .number, "frame": .number,
        "frame.time_relative": .relative, "_ws.col.Time": .relative, "time": .relative,
        "frame.time_epoch": .epoch, "frame.time_delta": .delta, "frame.time_delta_displayed": .delta,
        "frame.len": .length, "frame.cap_len": .length, "_ws.col.Info": .info,
    ]

    public init(_ names: [String], options: Options = Options()) throws(DisplayFilterError) {
        self.names = names
        self.options = options
        var columns: [Column] = []
        for name in names {
            if let c = Self.frameColumns[name] {
                columns.append(.frame(c))
            } else if let ours = FieldAliases.fields(for: name) {
                // One filter over the fields: their values come in the order the frame holds them.
                let main = ours.filter { !FieldAliases.fallbacks.contains($0) }
                let fallbacks = ours.filter { FieldAliases.fallbacks.contains($0) }
                columns.append(.fields(main.isEmpty ? [] : [try DisplayFilter(main.joined(separator: " or "))],
                                       fallbacks: fallbacks.isEmpty ? [] : [try DisplayFilter(fallbacks.joined(separator: " or "))],
                                       digits: FieldAliases.tsharkDigits[name]))
            } else {
                columns.append(.fields([try DisplayFilter(name)], fallbacks: [], digits: nil))
            }
        }
        self.columns = columns
    }

    /// A new capture: times count from its start again.
    public func reset() {
        start = CaptureStart()
        previous = nil
    }

    /// Times count from the capture's first frame: called for every frame, printed or not.
    public func noteFrame(_ p: Packet) { _ = start.see(p) }

    public func writeHeader(to out: Output) {
        guard options.header else { return }
        for (i, n) in names.enumerated() {
            if i > 0 { out.write(options.separator) }
            out.write(n)
        }
        out.write(byte: 10)
    }

    public func write(_ d: Decoded, to out: Output) {
        _ = start.see(d.packet)
        let p = d.packet
        for (i, c) in columns.enumerated() {
            if i > 0 { out.write(options.separator) }
            var values: [String] = []
            switch c {
            case .frame(.number): values = [String(p.number)]
            case .frame(.relative): values = [Self.seconds(start.relative(p.timestamp))]
            case .frame(.epoch): values = [Self.seconds(p.timestamp)]
            case .frame(.delta): values = [Self.seconds(previous.map { p.timestamp - $0 } ?? 0)]
            case .frame(.length): values = [String(p.fileLength)]
            case .frame(.info):
                line.clear()
                d.writeSummary(to: &line)
                values = [line.string]
            case .fields(let main, let fallbacks, let digits):
                for f in main { Self.append(f.values(d), digits: digits, to: &values) }
                if values.isEmpty { for f in fallbacks { Self.append(f.values(d), digits: digits, to: &values) } }
            }
            switch options.occurrence {
            case .all: break
            case .first: values = Array(values.prefix(1))
            case .last: values = values.last.map { [$0] } ?? []
            case .nth(let n): values = n <= values.count ? [values[n - 1]] : []
            }
            guard !values.isEmpty else { continue }
            if let q = options.quote { out.write(String(q)) }
            out.write(values.joined(separator: options.aggregator))
            if let q = options.quote { out.write(String(q)) }
        }
        out.write(byte: 10)
        previous = p.timestamp
    }

    /// A tshark field of 16 bits (`btatt.uuid16`) holds 16-bit UUIDs only.
    static func append(_ found: [(value: FieldValue, part: Test.Part?)], digits: Int?, to values: inout [String]) {
        for (v, part) in found {
            if digits == 4, case .uuid(let u) = v, u.uuid16 == nil { continue }
            values.append(format(v, part: part, digits: digits))
        }
    }

    /// Nanoseconds as tshark writes seconds: nine decimals.
    static func seconds(_ ns: Int64) -> String {
        let sign = ns < 0 ? "-" : ""
        let m = ns.magnitude
        let frac = String(m % 1_000_000_000)
        return sign + String(m / 1_000_000_000) + "." + String(repeating: "0", count: 9 - frac.count) + frac
    }

    /// One value as tshark's `-T fields` writes it.
    /// `digits`: tshark's form of the number (hex with that many digits, 0 decimal).
    static func format(_ v: FieldValue, part: Test.Part?, digits: Int? = nil) -> String {
        switch (part, v) {
        case (.name?, .named(_, _, let s, _)): return s.string
        case (.name?, .uuid(let u)): return AssignedNumbers.name(u) ?? ""
        case (.uuid128?, .uuid(let u)): return u.uuidString.lowercased()
        case (.set?, .flags(_, _, let names)): return names.joined(separator: ",")
        default: break
        }
        switch v {
        case .none: return ""
        case .uint(let n, let hex), .named(let n, let hex, _, _), .quantity(let n, let hex, _, _), .flags(let n, let hex, _):
            let width = digits ?? hex
            return width > 0 ? hexNumber(n, width: width) : String(n)
        case .int(let n), .signed(let n, _): return String(n)
        case .bool(let b): return b ? "1" : "0"
        case .text(let s): return s
        case .derived(let t), .error(let t): return t.string
        case .received(let b): return String(decoding: b, as: UTF8.self)
        case .bytes(let b): return Hex.string(b).lowercased()
        case .address(let a): return a.description
        case .uuid(let u):
            if let short = u.uuid16 { return hexNumber(UInt64(short), width: digits ?? 4) }
            if let short = u.uuid32 { return hexNumber(UInt64(short), width: 8) }
            return u.uuidString.lowercased()
        }
    }

    static func hexNumber(_ n: UInt64, width: Int) -> String {
        let digits = String(n, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
