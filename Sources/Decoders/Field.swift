import Wire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A field's label, the specification's wording ("LE Scan Interval"): its UTF-8 bytes, which live
/// as long as the process. Nearly every label is a literal in a decoder's source, whose bytes are in
/// the binary; a label made at run time (a table's name, "Report 2") is interned once, and the same
/// text gives the same bytes after. So a label is two words with no reference: a field costs no
/// retain or release for it, a printer copies its bytes as they are, and the JSON writer finds its key
/// by the label's address. Labels made at run time come from the decoders' tables and small numbers,
/// so the interned texts stay few. A named value's name is a label too (`FieldValue.named`): a
/// table's names are made labels at once (`table(_:)`), not interned one by one.
public struct FieldLabel: ExpressibleByStringLiteral, Hashable, @unchecked Sendable, CustomStringConvertible {
    /// Immutable and never freed: safe to share between threads.
    public let start: UnsafePointer<UInt8>
    public let count: Int

    @inlinable @inline(__always)
    public init(stringLiteral value: StaticString) {
        if _fastPath(value.hasPointerRepresentation) {
            self.init(start: value.utf8Start, count: value.utf8CodeUnitCount)
        } else {
            self.init(value.description)
        }
    }

    /// A one-character literal comes as a scalar, with no bytes in the binary to point to.
    public init(unicodeScalarLiteral value: Unicode.Scalar) { self.init(String(value)) }

    public init(extendedGraphemeClusterLiteral value: StaticString) { self.init(stringLiteral: value) }

    /// A label made at run time, interned: the first use of a text copies it for good.
    public init(_ text: String) { self = FieldLabelStore.shared.intern(text) }

    @usableFromInline init(start: UnsafePointer<UInt8>, count: Int) {
        self.start = start
        self.count = count
    }

    /// The label's UTF-8 bytes.
    @inlinable public var utf8: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }
    /// Where its bytes are: the same literal, or interned text, has one address.
    @inlinable public var address: UInt { UInt(bitPattern: start) }

    public var string: String { String(decoding: utf8, as: UTF8.self) }
    public var description: String { string }
    public var isEmpty: Bool { count == 0 }

    public static func == (a: FieldLabel, b: FieldLabel) -> Bool {
        a.count == b.count && (a.start == b.start || a.utf8.elementsEqual(b.utf8))
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes: UnsafeRawBufferPointer(utf8)) }
}

extension FieldLabel {
    /// Names found in `bytes` (each by its range there) as labels: the bytes copied into one block
    /// kept for the process, no string made. For tables made once, as `table(_:)`.
    static func table(_ bytes: [UInt8], _ names: [Range<Int>?]) -> [FieldLabel?] {
        let block = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, bytes.count))
        _ = block.initialize(from: bytes)
        return names.map { r in r.map { FieldLabel(start: block.baseAddress! + $0.lowerBound, count: $0.count) } }
    }

    /// A table's names as labels, made at once: their bytes copied into one block kept for the
    /// process, none interned. A field names its value from the table without a reference. For
    /// tables made once (a `static let`): each call allocates a block that is never freed.
    public static func table(_ names: [String?]) -> [FieldLabel?] {
        let total = names.reduce(0) { $0 + ($1?.utf8.count ?? 0) }
        // No bytes to keep (no names, or only empty ones): a block would be held by no label, and
        // lost (the fuzzers' leak check found one, made for an empty table of bit names).
        guard total > 0 else { return names.map { $0.map { _ in "" } } }
        let block = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
        var at = 0
        return names.map { name in
            guard let name else { return nil }
            let n = UnsafeMutableBufferPointer(start: block + at, count: name.utf8.count).initialize(from: name.utf8).1
            defer { at += n }
            return FieldLabel(start: block + at, count: n)
        }
    }

    /// The same, for a table with a name at every index.
    public static func table(_ names: [String]) -> [FieldLabel] { table(names.map(Optional.some)).map { $0! } }
}

/// The interned labels (`FieldLabel.init(_:)`) and bit names (`BitNames`), behind a lock: decoders
/// may run on several threads.
private final class FieldLabelStore: @unchecked Sendable {
    static let shared = FieldLabelStore()
    private var labels: [String: FieldLabel] = [:]
    private var tables: [[String]: BitNames] = [:]
    private var lock = pthread_mutex_t()

    private init() {
        pthread_mutex_init(&lock, nil)
        // Room for the decoders' bit name tables (about 50): growing rehashed every list of names.
        tables.reserveCapacity(64)
    }

    /// A bit field's names (`BitNames`): each list made once, its labels in one block.
    func intern(_ names: [String]) -> BitNames {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let t = tables[names] { return t }
        let labels = FieldLabel.table(names)
        let block = UnsafeMutableBufferPointer<FieldLabel>.allocate(capacity: max(labels.count, 1))
        _ = block.initialize(from: labels)
        let t = BitNames(labels: UnsafeBufferPointer(start: block.baseAddress, count: labels.count))
        tables[names] = t
        return t
    }

    func intern(_ text: String) -> FieldLabel {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        if let l = labels[text] { return l }
        let n = text.utf8.count
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(n, 1))
        _ = UnsafeMutableBufferPointer(start: bytes, count: n).initialize(from: text.utf8)
        let l = FieldLabel(start: bytes, count: n)
        labels[text] = l
        return l
    }
}

/// The full decode of a PDU as a tree, built only when someone prints it (`read -v`, JSON).
/// Decoders fill it with semantic values; Report renders them as text or JSON, so the two
/// outputs can never disagree.
public struct Field: Sendable {
    /// Display name, the specification's wording ("LE Scan Interval").
    public var label: FieldLabel
    public var value: FieldValue
    public var children: [Field]

    @inlinable public init(_ label: FieldLabel, _ value: FieldValue = .none, _ children: [Field] = []) {
        self.label = label
        self.value = value
        self.children = children
    }

    /// A marker for input that broke a rule of the specification; decoding goes on after it.
    public static func malformed(_ why: String) -> Field { Field("Malformed", .error(.reason(why))) }

    /// JSON key: the label in snake case ("LE Scan Interval" → "le_scan_interval").
    public var key: String { Field.key(for: label.string) }

    public static func key(for label: String) -> String {
        var out = ""
        out.reserveCapacity(label.utf8.count)
        var pendingUnderscore = false
        for u in label.unicodeScalars {
            let c = u.properties.lowercaseMapping
            if u.properties.isAlphabetic || ("0"..."9").contains(u) {
                if pendingUnderscore && !out.isEmpty { out += "_" }
                pendingUnderscore = false
                out += c
            } else {
                pendingUnderscore = true
            }
        }
        return out
    }
}

/// What a field holds. Numbers keep their raw value (JSON prints it); the extra parts say how a
/// person reads it (text prints those).
public enum FieldValue: Sendable {
    /// A group or a header with children only.
    case none
    /// An unsigned number; `hex` > 0 prints it as 0x with that many digits.
    case uint(UInt64, hex: Int)
    case int(Int64)
    case bool(Bool)
    case text(String)
    /// Text made from what the frame holds, written only when printed (no String per frame).
    case derived(DerivedText)
    /// Text as a device sent it (a name, a GATT string): kept as bytes, since it may be invalid
    /// UTF-8. Text output escapes it (Report's `DisplayText`), JSON and HTML show it as a String.
    case received(Bytes)
    /// Raw bytes (a slice of the frame; field trees do not outlive the frame's printing).
    case bytes(Bytes)
    /// An enumerated value with its name from the specification: "LE Public (0x00)". The name is
    /// the specification's or the assigned numbers' wording, or made from it and numbers ("User 3"),
    /// never text a device sent: nothing in it is escaped for a terminal or in JSON, so outputs
    /// copy it (debug builds check that; `NameTextTests` checks every table). Only a few company
    /// names hold quotation marks (`quotes`, see `company`): JSON escapes those. The name is a
    /// label (a literal, or a table's text made a label once), so a field holding it holds no reference.
    case named(UInt64, hex: Int, FieldLabel, quotes: Bool = false)
    /// A raw value and what it means in a unit: 0x0010 → 10 ms. The unit, like a name, is the
    /// specification's: written as it is.
    case quantity(UInt64, hex: Int, Double, unit: String)
    /// A signed measure in a unit (RSSI −60 dBm, TX power 4 dBm).
    case signed(Int64, unit: String)
    case address(BDAddr)
    case uuid(BluetoothUUID)
    /// A bit field: raw value and the names of the bits that are set (the specification's, as
    /// for `named`).
    case flags(UInt64, hex: Int, SetBitNames)
    /// The input broke the specification here: why, as text given (`DerivedText.reason`) or made
    /// from the frame's numbers when printed (a fault that recurs frame after frame, such as a
    /// malformed advertisement repeated, then builds no String for each).
    case error(DerivedText)
}

extension FieldValue {
    /// A company identifier named from the assigned numbers; nil where they do not list it.
    public static func company(_ id: UInt16) -> FieldValue? {
        AssignedNumbers.companyLabel(id).map { .named(UInt64(id), hex: 4, $0, quotes: AssignedNumbers.companyNameHasQuotes(id)) }
    }
}


extension FieldValue {
    /// A copy made case by case, without the value witness the compiler calls to copy the whole
    /// enum (about 80 instructions a field, whatever its case): numbers, booleans, addresses and
    /// UUIDs are plain bits, and a name, a unit, bytes or text costs the one retain of its storage.
    /// Only derived text and errors, with references of their own, go through the witness.
    @inline(__always) var copied: FieldValue {
        switch self {
        case .none: return .none
        case .uint(let n, let hex): return .uint(n, hex: hex)
        case .int(let n): return .int(n)
        case .bool(let b): return .bool(b)
        case .address(let a): return .address(a)
        case .uuid(let u): return .uuid(u)
        case .named(let n, let hex, let name, let quotes): return .named(n, hex: hex, name, quotes: quotes)
        case .quantity(let n, let hex, let q, let unit): return .quantity(n, hex: hex, q, unit: unit)
        case .signed(let n, let unit): return .signed(n, unit: unit)
        case .bytes(let b): return .bytes(b)
        case .received(let b): return .received(b)
        case .text(let t): return .text(t)
        case .flags(let n, let hex, let names): return .flags(n, hex: hex, names)
        case .derived, .error: return self
        }
    }

    /// Destroys the value case by case, as `copied` copies it: the value witness that destroys the
    /// whole enum costs about as much as its copy. It does so for a value moved out of storage
    /// (`FieldList.removeAll`); one passed in memory, as a parameter, still goes through the witness.
    @inline(__always) consuming func drop() {
        switch consume self {
        case .none, .uint, .int, .bool, .address, .uuid, .flags: break
        case .named(_, _, let name, _): _ = name
        case .quantity(_, _, _, let unit), .signed(_, let unit): _ = unit
        case .bytes(let b), .received(let b): _ = b
        case .text(let t): _ = t
        case .derived(let d), .error(let d): _ = d
        }
    }

    /// Holds no reference, so nothing to destroy: the cases `copied` rebuilds (a bit field's names
    /// are a `BitNames`, labels kept for the process). A case that holds one (a String, bytes,
    /// derived text) must never be listed here: it would not be released.
    @inline(__always) var isPlain: Bool {
        switch self {
        case .none, .uint, .int, .bool, .address, .uuid, .flags: return true
        default: return false
        }
    }
}

extension AssignedNumbers {
    /// `name(uuid)` as a label: a printer writes it with no String to retain and release.
    public static func label(_ uuid: BluetoothUUID) -> FieldLabel? {
        if let u = uuid.uuid16, u >= 0x1800, u < 0x3000 { return sigLabelsByUUID16[Int(u) &- 0x1800] }
        return anyLabel[uuid]
    }

    /// `appearanceName(value)` as a label: a listed value's from a table, a subcategory the
    /// assigned numbers do not list interned (its text is made from the number).
    public static func appearanceLabel(_ value: UInt16) -> FieldLabel? {
        appearanceLabels[UInt32(value)] ?? appearanceName(value).map(FieldLabel.init)
    }

    private static let appearanceLabels = {
        let keys = Array(appearances.keys)
        return Dictionary(uniqueKeysWithValues: zip(keys, FieldLabel.table(keys.map { appearances[$0] }).map { $0! }))
    }()
    private static let sigLabelsByUUID16 = FieldLabel.table(sigNamesByUUID16)
    private static let anyLabel = {
        let keys = Array(anyName.keys)
        return Dictionary(uniqueKeysWithValues: zip(keys, FieldLabel.table(keys.map { anyName[$0] }).map { $0! }))
    }()
}

/// The names of a bit field's bits, by bit, as labels in storage kept for the process: a field
/// names its set bits from the table with no reference to retain (`FieldValue.flags` is plain
/// bits). Tables are interned by their names, so each is made once however often it is given; a
/// decoder keeps its tables in `static let`s, where the lookup is not paid per field either.
public struct BitNames: ExpressibleByArrayLiteral, @unchecked Sendable {
    /// Immutable and never freed: safe to share between threads. A pointer and a 32-bit count,
    /// so that a bit field's value stays within the size of `FieldValue`'s other cases.
    private let base: UnsafePointer<FieldLabel>
    private let size: UInt32

    public init(_ names: [String]) { self = FieldLabelStore.shared.intern(names) }

    public init(arrayLiteral names: String...) { self.init(names) }

    fileprivate init(labels: UnsafeBufferPointer<FieldLabel>) {
        base = labels.baseAddress!
        size = UInt32(labels.count)
    }

    var labels: UnsafeBufferPointer<FieldLabel> { UnsafeBufferPointer(start: base, count: Int(size)) }
    public var count: Int { Int(size) }
}

/// The names of a bit field's set bits. Decoders hand over their table of names by bit and the
/// value, and the names are read from it as they are printed: no list is built per frame. A list
/// made some other way (or once, for every value) is given as it is.
public struct SetBitNames: Sequence, ExpressibleByArrayLiteral, Equatable, Sendable {
    /// The set bits to name, unless `listed`: `table` is then the list of names itself.
    private let bits: UInt64
    private let table: BitNames
    private let listed: Bool
    private let namesReserved: Bool

    /// The names in `table` of the bits set in `value`, lowest bit first. With `reserved`, a bit
    /// past the table or with an empty name reads "Reserved (bit n)"; without, it is left out.
    public init(_ value: UInt64, in table: BitNames, reserved: Bool = false) {
        self.table = table
        bits = value
        listed = false
        namesReserved = reserved
    }

    /// Names as they are.
    public init(_ names: BitNames) {
        table = names
        bits = 0
        listed = true
        namesReserved = false
    }

    public init(arrayLiteral names: String...) { self.init(BitNames(names)) }

    /// The names as text; `forEachLabel` reads them as labels, making no String.
    public struct Iterator: IteratorProtocol {
        fileprivate let names: SetBitNames
        fileprivate var index = 0
        fileprivate var rest: UInt64

        public mutating func next() -> String? { nextLabel()?.string }

        mutating func nextLabel() -> FieldLabel? {
            let t = names.table.labels
            guard !names.listed else {
                defer { index += 1 }
                return index < t.count ? t[index] : nil
            }
            while rest != 0 {
                let bit = rest.trailingZeroBitCount
                rest &= rest &- 1
                if bit < t.count, !(names.namesReserved && t[bit].isEmpty) { return t[bit] }
                if names.namesReserved { return SetBitNames.reserved.labels[bit] }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(names: self, rest: bits) }

    /// Calls `body` with each name in order, lowest bit first.
    @inline(__always) public func forEachLabel(_ body: (FieldLabel) -> Void) {
        var i = makeIterator()
        while let l = i.nextLabel() { body(l) }
    }

    /// "Reserved (bit n)" for every bit, made once: event masks set reserved bits as a rule.
    private static let reserved = BitNames((0..<64).map { "Reserved (bit \($0))" })

    /// Whether no bit is named, from the bits alone: with `reserved` every set bit is, else those
    /// the table reaches.
    public var isEmpty: Bool {
        if listed { return table.count == 0 }
        if namesReserved { return bits == 0 }
        return table.count >= 64 ? bits == 0 : bits & (1 << UInt64(table.count) &- 1) == 0
    }

    public static func == (a: SetBitNames, b: SetBitNames) -> Bool { a.elementsEqual(b) }
}

/// Text a field shows that is made from numbers or bytes the frame holds. It is written when
/// printed, straight into the output: decoding builds no String for it.
public enum DerivedText: Sendable {
    /// A UUID in its full 128-bit form: "0000180D-0000-1000-8000-00805F9B34FB".
    case uuid128(BluetoothUUID)
    /// Advertising data in one line (`AdvertisingData.writeSummary`); `legacy` data is at most 31 bytes.
    case advertisingSummary(Bytes, legacy: Bool)
    /// A list of frame numbers: "3, 4, 5".
    case frameNumbers([Int])
    /// A part of a PDU: "20 of 251 bytes, reassembly pending" (`of` 0: the length is not known yet).
    case reassemblyPending(have: Int, of: Int)
    /// A payload the capture cut short: "20 of 251 bytes (truncated in the capture; not decoded)".
    case truncatedPayload(have: Int, of: Int)
    /// Why advertising data is malformed (`ADProblem`).
    case adProblem(ADProblem)
    /// A reason given as text (why a field is malformed): written as it is.
    case reason(String)
    /// What the ATT bearer noted about a PDU (`ATTNote`).
    case attNote(ATTNote)

    public func write(to s: inout TextLine) {
        switch self {
        case .uuid128(let u): s.write(uuidString: u)
        case .advertisingSummary(let b, let legacy): AdvertisingData(b, legacy: legacy).writeSummary(to: &s)
        case .frameNumbers(let n):
            for (i, f) in n.enumerated() {
                if i > 0 { s += ", " }
                s.write(f)
            }
        case .reassemblyPending(let have, let of):
            s.write(have)
            s += " of "
            if of == 0 { s.write(byte: UInt8(ascii: "?")) } else { s.write(of) }
            s += " bytes, reassembly pending"
        case .truncatedPayload(let have, let of):
            s.write(have)
            s += " of "
            s.write(of)
            s += " bytes (truncated in the capture; not decoded)"
        case .adProblem(let p): p.write(to: &s)
        case .attNote(let n): n.write(to: &s)
        case .reason(let r): s.write(r)
        }
    }

    public var string: String {
        if case .reason(let r) = self { return r }
        return TextLine.make(write)
    }
}

/// Anything that can be shown as one summary line and as a full tree.
public protocol Dissectable {
    /// One line for `read`: "Read Request handle 0x0003".
    var summary: String { get }
    /// Writes `summary` into a reusable line. Decoders on the printing hot path write it piece by
    /// piece and derive `summary` from it; the others keep the default.
    func writeSummary(to line: inout TextLine)
    /// The full decode for `read -v` and JSON.
    var fields: [Field] { get }
    /// Sends `fields` to `out`; decoders on the printing hot path send them one by one and derive
    /// `fields` from it, the others keep the default.
    func writeFields(to out: FieldSink)
}

extension Dissectable {
    public func writeSummary(to line: inout TextLine) { line.write(summary) }
    public func writeFields(to out: FieldSink) { out.add(fields) }
}

extension Field {
    @inlinable public static func u8(_ label: FieldLabel, _ v: UInt8) -> Field { Field(label, .uint(UInt64(v), hex: 2)) }
    @inlinable public static func u16(_ label: FieldLabel, _ v: UInt16) -> Field { Field(label, .uint(UInt64(v), hex: 4)) }
    @inlinable public static func dec<T: BinaryInteger>(_ label: FieldLabel, _ v: T) -> Field { Field(label, .uint(UInt64(v), hex: 0)) }
    @inlinable public static func handle(_ v: UInt16) -> Field { Field("Handle", .uint(UInt64(v), hex: 4)) }
}

/// Receives a decode field by field, in order: `begin` opens a field, its children follow, `end`
/// closes it. A flat list (`FieldList`: JSON, and `[Field]` trees for everyone else) or a printer
/// that writes each field as it arrives, with no tree in between, can take the same decode.
public protocol FieldSink: AnyObject {
    func begin(_ label: FieldLabel, _ value: FieldValue)
    func end()
    /// A field without children: `begin` then `end`, in one call.
    func add(_ label: FieldLabel, _ value: FieldValue)
}

extension FieldSink {
    public func add(_ label: FieldLabel, _ value: FieldValue) {
        begin(label, value)
        end()
    }

    /// A marker for input that broke a rule of the specification, as `Field.malformed` makes it.
    public func malformed(_ why: String) { add("Malformed", .error(.reason(why))) }

    /// The same, with the reason made when printed.
    public func malformed(_ why: DerivedText) { add("Malformed", .error(why)) }

    /// One field built with its children.
    public func add(_ field: Field) {
        if field.children.isEmpty { return add(field.label, field.value) }
        begin(field.label, field.value)
        add(field.children)
        end()
    }

    /// Fields a decoder built as a tree, sent field by field.
    public func add(_ fields: [Field]) {
        for i in fields.indices {
            if fields[i].children.isEmpty { add(fields[i].label, fields[i].value); continue }
            begin(fields[i].label, fields[i].value)
            add(fields[i].children)
            end()
        }
    }
}

/// The fields sent to it, in order, each with where its subtree ends: one flat list whose storage
/// serves frame after frame. Printers read `nodes` directly; `tree` makes the `[Field]` tree.
public final class FieldList: FieldSink {
    public struct Node {
        public let label: FieldLabel
        public let value: FieldValue
        /// Index after the node's last descendant (its next sibling, if any).
        public fileprivate(set) var end: Int
    }

    /// The nodes, in storage the list owns: nodes holding plain values are dropped without a
    /// destroy each, where an array destroys every element through its value witness.
    /// Valid until the list changes.
    public var nodes: UnsafeBufferPointer<Node> { UnsafeBufferPointer(start: storage, count: count) }
    private var storage: UnsafeMutablePointer<Node>
    private var count = 0
    private var capacity: Int
    /// Where each open field is in `nodes`, outermost first. Used by one thread and never
    /// re-entered: no run-time exclusivity checks per field.
    @exclusivity(unchecked) private var open: [Int] = []

    public init() {
        capacity = 64
        storage = .allocate(capacity: capacity)
        open.reserveCapacity(8)
    }

    deinit {
        removeAll()
        storage.deallocate()
    }

    @inline(__always) private func append(_ node: Node) {
        if _slowPath(count == capacity) { grow() }
        (storage + count).initialize(to: node)
        count &+= 1
    }

    private func grow() {
        let fresh = UnsafeMutablePointer<Node>.allocate(capacity: capacity * 2)
        fresh.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = fresh
        capacity *= 2
    }

    public func begin(_ label: FieldLabel, _ value: FieldValue) {
        open.append(count)
        append(Node(label: label, value: value.copied, end: 0))
    }

    public func end() {
        guard let i = open.popLast() else { return }
        storage[i].end = count
    }

    public func add(_ label: FieldLabel, _ value: FieldValue) {
        append(Node(label: label, value: value.copied, end: count &+ 1))
    }

    /// Closes what is still open: the list is then complete.
    public func close() {
        while !open.isEmpty { end() }
    }

    /// Empties the list and keeps its storage.
    public func removeAll() {
        for i in 0..<count where !storage[i].value.isPlain { (storage + i).move().value.drop() }
        count = 0
        // Nearly always empty (`close` ran): the generic removal costs about 45 instructions even then.
        if !open.isEmpty { open.removeAll(keepingCapacity: true) }
    }

    /// The fields as a tree, each children array made once at its final size.
    public var tree: [Field] {
        close()
        return Self.tree(nodes, 0, nodes.count)
    }

    private static func tree(_ n: UnsafeBufferPointer<Node>, _ start: Int, _ end: Int) -> [Field] {
        var count = 0
        var i = start
        while i < end { count &+= 1; i = n[i].end }
        var out: [Field] = []
        out.reserveCapacity(count)
        i = start
        while i < end {
            out.append(Field(n[i].label, n[i].value, n[i].end > i &+ 1 ? tree(n, i &+ 1, n[i].end) : []))
            i = n[i].end
        }
        return out
    }

    /// The tree `body` sends.
    public static func build(_ body: (FieldList) -> Void) -> [Field] {
        let list = FieldList()
        body(list)
        return list.tree
    }
}
