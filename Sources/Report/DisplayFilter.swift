import Decoders

/// A display filter (`read --filter 'att.opcode == 0x1b'`), compiled once and evaluated per frame
/// without building JSON or strings.
///
/// Field names are the keys of `read --format json`: a layer (`att`), then nested keys joined by
/// dots (`hci_command.opcode.ocf`), or a frame field (`frame`, `time`, `direction`, `adapter`,
/// `connection`, `kind`, `malformed`, `length`). A value that JSON writes as an object can be
/// compared as a whole (its number, UUID or text) or by its member (`hci_event.event_code.name`).
///
/// Evaluation: first the names of the frame's layers (no field decoded); only when the frame has
/// a layer whose fields the filter tests are that layer's fields sent to a `FieldSink` that
/// compares each against the tests whose path it is on (one 64-bit key hash per field on a path).
/// A field that repeats matches when any occurrence does; `!=` holds when the field is present
/// and no occurrence is equal (Wireshark's `!=`).
public final class DisplayFilter {
    public let expression: String
    let program: Node
    let tests: [Test]
    private let matcher: Matcher
    /// Tests on layers: their layer's key hash; `needsFields` when they look inside the layer.
    private let layerTests: [(index: Int, hash: UInt64, needsFields: Bool)]
    private var start = CaptureStart()

    /// The most tests one filter can hold (one bit each while a frame is evaluated).
    public static let maxTests = 64

    public init(_ expression: String) throws(DisplayFilterError) {
        self.expression = expression
        var parser = FilterParser(expression)
        let (program, tests) = try parser.parse()
        self.program = program
        self.tests = tests
        matcher = Matcher(tests)
        layerTests = tests.indices.compactMap { i in
            switch tests[i].target {
            case .layer(let l, let path, _): return (i, l.hash, !path.isEmpty)
            case .anyUUID(let l): return (i, l.hash, true)
            case .frame: return nil
            }
        }
    }

    /// Frames of one connection.
    public static func connection(_ id: Int) -> DisplayFilter {
        // Cannot fail: a frame field and a number.
        try! DisplayFilter("connection == \(id)")
    }

    /// Frames to or from one device: its connections' frames, and frames that carry its address
    /// (advertising reports, connection events, commands naming it).
    public static func device(_ address: String) throws(DisplayFilterError) -> DisplayFilter {
        try DisplayFilter("device == \(address)")
    }

    /// Both filters (`--filter` with `--connection` or `--device`).
    public static func all(_ filters: [DisplayFilter]) throws(DisplayFilterError) -> DisplayFilter? {
        guard !filters.isEmpty else { return nil }
        if filters.count == 1 { return filters[0] }
        return try DisplayFilter(filters.map { "(" + $0.expression + ")" }.joined(separator: " and "))
    }

    /// A new capture starts: `time` is relative to its start again.
    public func reset() { start = CaptureStart() }

    /// Called for every frame in order (also those that will not be printed): `time` counts from
    /// the capture's start (`CaptureStart`).
    public func matches(_ d: Decoded) -> Bool {
        _ = start.see(d.packet)
        matcher.reset()
        for i in tests.indices {
            guard case .frame(let f) = tests[i].target else { continue }
            matcher.frameField(i, f, d, relative: start.relative(d.packet.timestamp))
        }
        if !layerTests.isEmpty {
            var needsFields = false
            d.forEachLayerName { name in
                let h = matcher.keys.key(name).hash
                for t in layerTests where t.hash == h {
                    if t.needsFields { needsFields = true } else { matcher.hit(t.index) }
                }
            }
            if needsFields {
                d.writeLayers(to: matcher) { matcher.layer(matcher.keys.key($0).hash) }
                matcher.endLayers()
            }
        }
        return evaluate(program)
    }

    /// Every value of the fields the filter names in this frame, in the order the decoders write
    /// them (`read -T fields`): for a name alone (`att.opcode`) its occurrences, for a tshark name
    /// those of each field it stands for. Frame fields and layer names alone give nothing here.
    func values(_ d: Decoded) -> [(value: FieldValue, part: Test.Part?)] {
        matcher.reset()
        matcher.collected = []
        defer { matcher.collected = nil }
        if layerTests.contains(where: \.needsFields) {
            d.writeLayers(to: matcher) { matcher.layer(matcher.keys.key($0).hash) }
            matcher.endLayers()
        }
        return matcher.collected ?? []
    }

    private func evaluate(_ n: Node) -> Bool {
        switch n {
        case .test(let i):
            let bit: UInt64 = 1 << UInt64(i)
            if tests[i].op == .ne { return matcher.present & bit != 0 && matcher.satisfied & bit == 0 }
            return matcher.satisfied & bit != 0
        case .anyOf(let tests):
            // The fields of one tshark name: as one field that occurs several times.
            var mask: UInt64 = 0
            for i in tests { mask |= 1 << UInt64(i) }
            if self.tests[tests[0]].op == .ne { return matcher.present & mask != 0 && matcher.satisfied & mask == 0 }
            return matcher.satisfied & mask != 0
        case .not(let a): return !evaluate(a)
        case .and(let a, let b): return evaluate(a) && evaluate(b)
        case .or(let a, let b): return evaluate(a) || evaluate(b)
        }
    }

    indirect enum Node {
        case test(Int)
        /// Tests of the same comparison on the fields one tshark name stands for.
        case anyOf([Int])
        case not(Node)
        case and(Node, Node)
        case or(Node, Node)
    }
}

/// Why a filter does not compile: a stable code, the reason, where (a character offset in the
/// expression) and the known field names nearest to what was written.
public struct DisplayFilterError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case syntax, unknownField, badValue, tooManyTests
    }

    public let code: Code
    public let reason: String
    public let expression: String
    public let position: Int
    public let suggestions: [String]

    /// The expression with a caret under the position, and the suggestions.
    public var description: String {
        var s = "filter: " + reason + "\n  " + expression + "\n  " + String(repeating: " ", count: position) + "^"
        if !suggestions.isEmpty { s += "\n  did you mean: " + suggestions.joined(separator: ", ") }
        return s
    }
}

// MARK: Tests

/// One comparison (or presence test) of a filter.
struct Test {
    enum Op: String { case present, eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">=", contains, matches }

    /// One key of a path, by its hash (`FieldRendering.keyHash`) and text. `anyInstance`: the key
    /// names a field written in numbered instances (`report` for `report_1`, `report_2`, …) and
    /// matches each of them as well as itself.
    struct Key {
        let text: String
        let hash: UInt64
        var anyInstance = false
        init(_ text: String) {
            self.text = text
            hash = FieldRendering.keyHash(text)
        }

        /// Whether a field's label (`keyHash` `h`) is this key or, for `anyInstance`, one instance of it.
        @inline(__always) func matches(_ h: UInt64, _ label: FieldLabel) -> Bool {
            h == hash || (anyInstance && FieldRendering.keyHashWithoutNumber(label.string) == hash)
        }
    }

    /// A member of a value that JSON writes as an object.
    enum Part: String, CaseIterable { case value, name, uuid, uuid128, set, malformed }

    enum FrameField: String, CaseIterable {
        case frame, time, relative_time, timestamp_ns, direction, adapter, connection, kind, malformed, length,
             file_offset, device
    }

    enum Target {
        case frame(FrameField)
        /// A layer, the keys below it, and a member of the last one's value (when that key is one
        /// of `Part` and the path without it is a field).
        case layer(Key, [Key], part: Part?)
        /// `att.uuid`: every UUID the layer holds, wherever it is (as Wireshark's `btatt.uuid16`).
        case anyUUID(Key)
    }

    let target: Target
    let op: Op
    let literal: Literal
}

/// A value written in a filter, read every way a field can compare with it.
struct Literal {
    var text = ""
    var number: Double?
    var unsigned: UInt64?
    var address: UInt64?
    var uuid: BluetoothUUID?
    var bytes: [UInt8]?
    var regex: Regex<AnyRegexOutput>?

    init() {}

    init(_ text: String, quoted: Bool) {
        self.text = text
        guard !quoted else { return }
        let lower = text.lowercased()
        if lower.hasPrefix("0x"), let n = UInt64(lower.dropFirst(2), radix: 16) {
            unsigned = n
            number = Double(n)
        } else if let n = UInt64(text) {
            unsigned = n
            number = Double(n)
        } else if let d = Double(text), text.first != "." {
            number = d
        } else if lower == "true" || lower == "false" {
            unsigned = lower == "true" ? 1 : 0
            number = Double(unsigned!)
        }
        // Bytes as tshark writes them: pairs of hex digits joined by ":", "-" or ".", or one pair
        // alone (`att.value contains 8d`; as a number it is 8 or nothing, as bytes 0x8d).
        let separator = text.first { $0 == ":" || $0 == "-" || $0 == "." }
        let hexPairs = separator.map { text.split(separator: $0, omittingEmptySubsequences: false) } ?? [Substring(text)]
        if hexPairs.count > 1 || text.count == 2, hexPairs.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) {
            let b = hexPairs.map { UInt8($0, radix: 16)! }
            bytes = b
            if b.count == 6 { address = b.reduce(0) { $0 << 8 | UInt64($1) } }
        } else if lower.hasPrefix("0x"), lower.count > 2, lower.count % 2 == 0 {
            var b: [UInt8] = []
            var i = lower.index(lower.startIndex, offsetBy: 2)
            while i < lower.endIndex, let v = UInt8(lower[i...lower.index(after: i)], radix: 16) {
                b.append(v)
                i = lower.index(i, offsetBy: 2)
            }
            if i == lower.endIndex { bytes = b }
        }
        if let n = unsigned, n <= 0xFFFF_FFFF {
            uuid = BluetoothUUID(uuid32: UInt32(n))
        } else if text.count == 36, let u = BluetoothUUID(text) {
            uuid = u
        }
    }
}

// MARK: Matching

/// Receives one frame's fields and records, per test, whether its field was present and whether
/// an occurrence satisfied it.
final class Matcher: FieldSink {
    let tests: [Test]
    @exclusivity(unchecked) var present: UInt64 = 0
    @exclusivity(unchecked) var satisfied: UInt64 = 0
    /// Tests whose layer is the current one, with a path below it.
    @exclusivity(unchecked) private var layerMask: UInt64 = 0
    /// `anyUUID` tests whose layer is the current one.
    @exclusivity(unchecked) private var anyMask: UInt64 = 0
    /// For each open field, the tests whose path it is on.
    @exclusivity(unchecked) private var open: [UInt64] = []
    /// When set, every field a test reaches is kept here (`DisplayFilter.values`).
    var collected: [(value: FieldValue, part: Test.Part?)]?
    private let layerHashes: [UInt64]
    /// Labels' key hashes, made once per label.
    let keys = JSONKeys()
    private let pathTests: UInt64
    private let anyTests: UInt64

    init(_ tests: [Test]) {
        self.tests = tests
        var hashes: [UInt64] = [], mask: UInt64 = 0, any: UInt64 = 0
        for (i, t) in tests.enumerated() {
            switch t.target {
            case .layer(let l, let path, _):
                hashes.append(l.hash)
                if !path.isEmpty { mask |= 1 << UInt64(i) }
            case .anyUUID(let l):
                hashes.append(l.hash)
                any |= 1 << UInt64(i)
            case .frame:
                hashes.append(0)
            }
        }
        layerHashes = hashes
        pathTests = mask
        anyTests = any
        open.reserveCapacity(16)
    }

    func reset() {
        keys.trim()
        present = 0
        satisfied = 0
        layerMask = 0
        anyMask = 0
        open.removeAll(keepingCapacity: true)
    }

    func hit(_ i: Int) {
        present |= 1 << UInt64(i)
        satisfied |= 1 << UInt64(i)
    }

    func layer(_ hash: UInt64) {
        open.removeAll(keepingCapacity: true)
        var m: UInt64 = 0
        var bits = pathTests
        while bits != 0 {
            let i = bits.trailingZeroBitCount
            bits &= bits &- 1
            if layerHashes[i] == hash { m |= 1 << UInt64(i) }
        }
        layerMask = m
        m = 0
        bits = anyTests
        while bits != 0 {
            let i = bits.trailingZeroBitCount
            bits &= bits &- 1
            if layerHashes[i] == hash { m |= 1 << UInt64(i) }
        }
        anyMask = m
    }

    func endLayers() {
        layerMask = 0
        anyMask = 0
    }

    func begin(_ label: FieldLabel, _ value: FieldValue) {
        open.append(visit(label, value))
    }

    func end() { _ = open.popLast() }

    func add(_ label: FieldLabel, _ value: FieldValue) { _ = visit(label, value) }

    /// Tests the field against the tests whose path reaches it; returns those that go deeper.
    @inline(__always) private func visit(_ label: FieldLabel, _ value: FieldValue) -> UInt64 {
        if anyMask != 0, case .uuid = value {
            var any = anyMask
            while any != 0 {
                let i = any.trailingZeroBitCount
                any &= any &- 1
                check(i, value, part: nil)
            }
        }
        var bits = open.last ?? layerMask
        guard bits != 0 else { return 0 }
        let depth = open.count
        let h = keys.key(label).hash
        var deeper: UInt64 = 0
        while bits != 0 {
            let i = bits.trailingZeroBitCount
            bits &= bits &- 1
            guard case .layer(_, let path, let part) = tests[i].target, path[depth].matches(h, label) else { continue }
            if depth == path.count - 1 {
                check(i, value, part: part)
            } else if depth == path.count - 2, let part, path[depth + 1].text == part.rawValue {
                check(i, value, part: part)
                deeper |= 1 << UInt64(i)
            } else {
                deeper |= 1 << UInt64(i)
            }
        }
        return deeper
    }

    private func check(_ i: Int, _ value: FieldValue, part: Test.Part?) {
        let bit: UInt64 = 1 << UInt64(i)
        let t = tests[i]
        present |= bit
        if collected != nil { collected!.append((value, part)) }
        if t.op == .present || Self.compare(value, part: part, t.op == .ne ? .eq : t.op, t.literal) { satisfied |= bit }
    }

    func frameField(_ i: Int, _ f: Test.FrameField, _ d: Decoded, relative: Int64) {
        let t = tests[i]
        let op = t.op == .ne ? .eq : t.op
        let p = d.packet
        let value: FieldValue
        switch f {
        case .frame: value = .uint(UInt64(p.number), hex: 0)
        case .time, .relative_time: return number(i, Double(relative) / 1e9, op, t.literal)
        case .timestamp_ns: value = .int(p.timestamp)
        case .direction: value = .text(p.direction == .sent ? "sent" : p.direction == .received ? "received" : "unknown")
        case .adapter: value = .uint(UInt64(p.adapter), hex: 0)
        case .connection:
            guard let c = d.connection else { return }
            value = .uint(UInt64(c.id), hex: 0)
        case .kind: value = .text(FramePrinter.kindName(p.kind))
        case .malformed:
            guard d.isMalformed else { return }
            value = .bool(true)
        case .length: value = .uint(UInt64(p.payload.count), hex: 0)
        case .file_offset: value = .int(p.fileOffset)
        case .device:
            guard let want = t.literal.address else { return }
            present |= 1 << UInt64(i)
            if d.connection?.peer?.raw == want { satisfied |= 1 << UInt64(i); return }
            let finder = AddressFinder(want)
            d.writeLayers(to: finder) { _ in }
            if finder.found { satisfied |= 1 << UInt64(i) }
            return
        }
        present |= 1 << UInt64(i)
        if t.op == .present || Self.compare(value, part: nil, op, t.literal) { satisfied |= 1 << UInt64(i) }
    }

    private func number(_ i: Int, _ v: Double, _ op: Test.Op, _ lit: Literal) {
        present |= 1 << UInt64(i)
        if op == .present { satisfied |= 1 << UInt64(i); return }
        guard let n = lit.number else { return }
        if Self.order(v < n ? -1 : v > n ? 1 : 0, op) { satisfied |= 1 << UInt64(i) }
    }

    @inline(__always) static func order(_ c: Int, _ op: Test.Op) -> Bool {
        switch op {
        case .eq: return c == 0
        case .lt: return c < 0
        case .le: return c <= 0
        case .gt: return c > 0
        case .ge: return c >= 0
        default: return false
        }
    }

    static func compareUnsigned(_ v: UInt64, _ op: Test.Op, _ lit: Literal) -> Bool {
        if let n = lit.unsigned { return order(v < n ? -1 : v > n ? 1 : 0, op) }
        if let d = lit.number { let x = Double(v); return order(x < d ? -1 : x > d ? 1 : 0, op) }
        return false
    }

    static func compareSigned(_ v: Int64, _ op: Test.Op, _ lit: Literal) -> Bool {
        guard let d = lit.number else { return false }
        let x = Double(v)
        return order(x < d ? -1 : x > d ? 1 : 0, op)
    }

    static func compareText<S: Sequence<UInt8>>(_ bytes: S, _ op: Test.Op, _ lit: Literal) -> Bool {
        switch op {
        case .contains:
            let needle = Array(lit.text.utf8)
            if needle.isEmpty { return true }
            let hay = Array(bytes)
            guard hay.count >= needle.count else { return false }
            for s in 0...(hay.count - needle.count) where hay[s] == needle[0] {
                if hay[s..<(s + needle.count)].elementsEqual(needle) { return true }
            }
            return false
        case .matches:
            guard let r = lit.regex else { return false }
            return (try? r.firstMatch(in: String(decoding: Array(bytes), as: UTF8.self))) != nil
        default:
            var a = bytes.makeIterator()
            var b = lit.text.utf8.makeIterator()
            while true {
                switch (a.next(), b.next()) {
                case (nil, nil): return order(0, op)
                case (nil, _): return order(-1, op)
                case (_, nil): return order(1, op)
                case let (x?, y?): if x != y { return order(x < y ? -1 : 1, op) }
                }
            }
        }
    }

    static func compare(_ v: FieldValue, part: Test.Part?, _ op: Test.Op, _ lit: Literal) -> Bool {
        if let part {
            switch (part, v) {
            case (.value, .named(let n, _, _, _)), (.value, .quantity(let n, _, _, _)), (.value, .flags(let n, _, _)):
                return compareUnsigned(n, op, lit)
            case (.value, _): return compare(v, part: nil, op, lit)
            case (.name, .named(_, _, let s, _)): return compareText(s.utf8, op, lit)
            case (.name, .uuid(let u)):
                guard let s = AssignedNumbers.name(u) else { return false }
                return compareText(s.utf8, op, lit)
            case (.uuid, .uuid(let u)): return compareUUID(u, op, lit)
            case (.uuid128, .uuid(let u)): return compareUUID(u, op, lit)
            case (.set, .flags(_, _, let names)):
                return names.contains { op == .eq ? $0 == lit.text : compareText($0.utf8, op, lit) }
            case (.malformed, .error(let t)): return compareText(t.string.utf8, op, lit)
            default: return false
            }
        }
        switch v {
        case .none: return false
        case .uint(let n, _), .named(let n, _, _, _), .quantity(let n, _, _, _), .flags(let n, _, _):
            if lit.unsigned == nil, lit.number == nil {
                // `hci_event.event_code == "Disconnection Complete"`: the name.
                if case .named(_, _, let s, _) = v { return compareText(s.utf8, op, lit) }
                if case .flags(_, _, let names) = v, op == .contains { return names.contains(lit.text) }
                return false
            }
            return compareUnsigned(n, op, lit)
        case .int(let n), .signed(let n, _): return compareSigned(n, op, lit)
        case .bool(let b): return compareUnsigned(b ? 1 : 0, op, lit)
        case .text(let s): return compareText(s.utf8, op, lit)
        case .derived(let t), .error(let t): return compareText(t.string.utf8, op, lit)
        case .received(let b): return compareText(b, op, lit)
        case .bytes(let b):
            if let want = lit.bytes {
                if op == .contains {
                    guard b.count >= want.count else { return false }
                    let hay = Array(b)
                    if want.isEmpty { return true }
                    for s in 0...(hay.count - want.count) where hay[s..<(s + want.count)].elementsEqual(want) { return true }
                    return false
                }
                return op == .eq && b.elementsEqual(want)
            }
            return false
        case .address(let a):
            if let want = lit.address { return op == .eq && a.raw == want }
            return op == .contains || op == .matches ? compareText(a.description.utf8, op, lit) : false
        case .uuid(let u): return compareUUID(u, op, lit)
        }
    }

    static func compareUUID(_ u: BluetoothUUID, _ op: Test.Op, _ lit: Literal) -> Bool {
        if op == .eq, let want = lit.uuid { return want == u }
        if op == .contains || op == .matches { return compareText(u.uuidString.utf8, op, lit) }
        return false
    }
}

/// Whether any field of a frame holds one address.
final class AddressFinder: FieldSink {
    let want: UInt64
    var found = false
    init(_ want: UInt64) { self.want = want }
    func begin(_ label: FieldLabel, _ value: FieldValue) { add(label, value) }
    func end() {}
    func add(_ label: FieldLabel, _ value: FieldValue) {
        if case .address(let a) = value, a.raw == want { found = true }
    }
}
