import Wire

/// Advertising and scan response data: a sequence of AD structures (Core Supplement Part A,
/// Core Vol 3 Part C 11), each `length | type | data` with `length` counting type and data.
/// Parsing only records where each structure lies; decoding into fields happens when printed.
public struct AdvertisingData: Dissectable, Sendable {
    public let data: Bytes
    /// The well-formed structures, in order, read from `data` as they are visited.
    public let structures: ADStructures
    /// How many rule breaks walking the structures finds (decoding stops at a framing fault).
    /// They are not kept: the few callers that list them walk again (`problems`, `writeFields`).
    public let problemCount: Int
    /// Zero bytes after the last structure (controllers pad legacy data to 31 bytes).
    public let paddingLength: Int
    /// Held to the legacy 31-byte limit (a walk again finds the same faults).
    let legacy: Bool

    /// The rule breaks, in the order the walk finds them (a legacy data's length first).
    public var problems: [ADProblem] {
        var list: [ADProblem] = []
        if problemCount > 0 { forEachProblem { list.append($0) } }
        return list
    }

    private func forEachProblem(_ body: (ADProblem) -> Void) {
        _ = Self.walk(data, legacy: legacy) { body($0); return true }
    }

    /// Legacy advertising data is at most 31 bytes (Core Vol 6 Part B 2.3.1).
    public static let legacyMaximum = 31
    /// Extended advertising data is at most 1650 bytes over its chain (Core Vol 4 Part E 7.8.54).
    public static let extendedMaximum = 1650

    public init(_ data: Bytes) { self.init(data, legacy: false) }

    public init(_ data: Bytes, legacy: Bool) {
        self.data = data
        self.legacy = legacy
        var problems = 0
        let (end, padding) = Self.walk(data, legacy: legacy) { _ in problems &+= 1; return true }
        structures = ADStructures(data: data, endIndex: end)
        problemCount = problems
        self.paddingLength = padding
    }

    /// Whether `AdvertisingData(data, legacy:)` finds `problems`: the check every advertising
    /// report of a capture gets, stopping at the first.
    public static func hasProblems(_ data: Bytes, legacy: Bool) -> Bool {
        var found = false
        _ = walk(data, legacy: legacy) { _ in found = true; return false }
        return found
    }

    /// The one walk over the structures: where the well-formed ones end and the zero padding after
    /// them, each rule break handed to `problem` as it is found (which returns false to stop).
    private static func walk(_ data: Bytes, legacy: Bool, _ problem: (ADProblem) -> Bool) -> (end: Int, padding: Int) {
        if legacy && data.count > legacyMaximum,
           !problem(ADProblem(.tooLongForLegacy, offset: legacyMaximum, type: nil, length: data.count)) {
            return (0, 0)
        }
        // The rules read once: every read of a global checks that it is initialised.
        let rules = ADType.lengthRules
        let start = data.startIndex, count = data.count
        var offset = 0
        while offset < count {
            let length = Int(data[start &+ offset])
            if length == 0 {
                // A zero length ends the significant part; the rest must be zero padding.
                let rest = data.from(offset)
                if rest.allSatisfy({ $0 == 0 }) { return (offset, rest.count) }
                _ = problem(ADProblem(.dataAfterTerminator, offset: offset, type: nil, length: rest.count))
                return (offset, 0)
            }
            guard offset &+ 1 &+ length <= count else {
                _ = problem(ADProblem(.lengthPastEnd, offset: offset, type: data.byte(offset + 1), length: length))
                return (offset, 0)
            }
            // In bounds: the structure's length byte and at least its type are there.
            let type = data[start &+ offset &+ 1]
            if let kind = ADStructure.lengthProblem(rules[Int(type)], valueLength: length &- 1),
               !problem(ADProblem(kind, offset: offset, type: type, length: length &- 1)) {
                return (offset, 0)
            }
            offset &+= 1 &+ length
        }
        return (offset, 0)
    }

    // MARK: Typed accessors

    /// Flags AD (0x01) value.
    public var flags: UInt8? { firstValue(ADType.flags).flatMap { $0.start < $0.end ? data[data.startIndex &+ $0.start] : nil } }

    /// The local name, preferring the complete one.
    public var localName: (name: String, complete: Bool)? {
        if let s = first(ADType.completeLocalName) { return (Self.name(s.data), true) }
        if let s = first(ADType.shortenedLocalName) { return (Self.name(s.data), false) }
        return nil
    }

    /// A name as devices send it: UTF-8, some stacks adding a C terminator that is not part of it.
    static func name(_ b: Bytes) -> String { String(decoding: b.prefix { $0 != 0 }, as: UTF8.self) }

    /// Service UUIDs from the 16/32/128-bit lists, each with whether its list is complete.
    public var serviceUUIDs: [ListedUUID] {
        var out: [ListedUUID] = []
        forEachServiceUUID { out.append($0) }
        return out
    }

    /// `serviceUUIDs` one by one, without an array.
    func forEachServiceUUID(_ body: (ListedUUID) -> Void) {
        forEachValue { type, start, end in
            guard let list = ADType.serviceLists[type] else { return }
            // A trailing partial UUID is left out (a problem of its own).
            var at = start
            while end &- at >= list.width {
                body(ListedUUID(uuid: BluetoothUUID(littleEndian: data, at: at, width: list.width), complete: list.complete))
                at &+= list.width
            }
        }
    }

    /// UUIDs from the service solicitation lists (0x14, 0x1F, 0x15).
    public var solicitedUUIDs: [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        for s in structures {
            if let width = ADType.solicitationWidth[s.type] { out += s.uuids(width: width) }
        }
        return out
    }

    /// Service Data (0x16, 0x20, 0x21): UUID and the data after it.
    public var serviceData: [(uuid: BluetoothUUID, data: Bytes)] {
        var out: [(uuid: BluetoothUUID, data: Bytes)] = []
        forEachServiceData { out.append(($0, $1)) }
        return out
    }

    /// `serviceData` one by one, without an array.
    func forEachServiceData(_ body: (BluetoothUUID, Bytes) -> Void) {
        forEachValue { type, start, end in
            guard let width = ADType.serviceDataWidth[type], end &- start >= width else { return }
            body(BluetoothUUID(littleEndian: data, at: start, width: width), value(start &+ width, end))
        }
    }

    /// Manufacturer Specific Data (0xFF): company identifier and the data after it.
    public var manufacturerData: [(company: UInt16, data: Bytes)] {
        var out: [(company: UInt16, data: Bytes)] = []
        forEachManufacturerData { company, data in out.append((company, data)) }
        return out
    }

    /// `manufacturerData` one by one, without an array.
    func forEachManufacturerData(_ body: (UInt16, Bytes) -> Void) {
        forEachValue { type, start, end in
            // A company identifier first: two octets at least.
            guard type == ADType.manufacturerSpecific, end &- start >= 2 else { return }
            body(data.le16(at: start), value(start &+ 2, end))
        }
    }

    /// TX Power Level (0x0A) in dBm.
    public var txPower: Int8? {
        guard let r = firstValue(ADType.txPowerLevel), r.start < r.end else { return nil }
        return Int8(bitPattern: data[data.startIndex &+ r.start])
    }

    /// Appearance (0x19).
    public var appearance: UInt16? {
        guard let r = firstValue(ADType.appearance), r.end &- r.start >= 2 else { return nil }
        return data.le16(at: r.start)
    }

    /// An Apple iBeacon in the manufacturer data.
    public var iBeacon: IBeacon? {
        for m in manufacturerData { if let b = IBeacon(company: m.company, data: m.data) { return b } }
        return nil
    }

    /// Apple's overflow-area bitmap in the manufacturer data.
    public var overflowArea: OverflowArea? {
        for m in manufacturerData { if let o = OverflowArea(company: m.company, data: m.data) { return o } }
        return nil
    }

    /// The first structure of a type.
    public func first(_ type: UInt8) -> ADStructure? {
        var i = 0
        while i < structures.endIndex {
            if data.byte(i + 1) == type { return structures[i] }
            i = structures.index(after: i)
        }
        return nil
    }

    /// Where the first structure of a type has its value (offsets as `forEachValue` gives them),
    /// found in place: building the structure copied a slice of the data.
    @inline(__always)
    func firstValue(_ type: UInt8) -> (start: Int, end: Int)? {
        var i = 0
        while i < structures.endIndex {
            let next = structures.index(after: i)
            if data[data.startIndex &+ i &+ 1] == type { return (i &+ 2, next) }
            i = next
        }
        return nil
    }

    /// Each structure whose type `matches`, in order; the others are passed over unbuilt.
    func forEachStructure(where matches: (UInt8) -> Bool, _ body: (ADStructure) -> Void) {
        forEachValue { type, start, _ in if matches(type) { body(structures[start &- 2]) } }
    }

    /// Each structure's type and where its value lies (offsets from the start of `data`, from the
    /// octet after the type to the structure's end), read in place: the walk the typed readers
    /// share. Building each structure and a reader over it held the data twice more, and every
    /// report's summary reads its service UUIDs and manufacturer data.
    @inline(__always)
    func forEachValue(_ body: (_ type: UInt8, _ start: Int, _ end: Int) -> Void) {
        var i = 0
        while i < structures.endIndex {
            // Up to `endIndex` each structure's length octet, type and value are there (`walk`).
            let next = structures.index(after: i)
            body(data[data.startIndex &+ i &+ 1], i &+ 2, next)
            i = next
        }
    }

    /// The octets from `start` to `end`, offsets from the start of `data`.
    @inline(__always)
    private func value(_ start: Int, _ end: Int) -> Bytes { data[(data.startIndex &+ start)..<(data.startIndex &+ end)] }

    // MARK: Printing

    public var summary: String { TextLine.make(writeSummary) }

    /// A bit per AD type the data holds (bit `type & 63`; 0xFF shares one with 0x3F): a lookup
    /// for a type it cannot hold is skipped without walking the structures again.
    func typeBits() -> UInt64 {
        var bits: UInt64 = 0
        forEachValue { type, _, _ in bits |= 1 << (UInt64(type) & 63) }
        return bits
    }

    /// "Flags 0x06, Name "HR", UUIDs 0x180D, Mfr Apple, Inc. iBeacon, TX 4 dBm".
    public func writeSummary(to s: inout TextLine) {
        // Parts kept in a value passed along with the line: a local function that captured the
        // line (which has one owner) made the counter a heap box on every call.
        var parts = 0
        // One walk says which types are there; each part below walks again only for its own.
        let present = typeBits()
        func has(_ bits: UInt64) -> Bool { present & bits != 0 }
        if has(ADType.bit(ADType.flags)), let f = flags { Self.part("Flags ", &parts, &s); s.write(hex: f, width: 2) }
        if has(ADType.bit(ADType.shortenedLocalName) | ADType.bit(ADType.completeLocalName)) {
            let complete = firstValue(ADType.completeLocalName)
            if let r = complete ?? firstValue(ADType.shortenedLocalName) {
                Self.part(complete != nil ? "Name \"" : "Short name \"", &parts, &s)
                s.write(received: value(r.start, r.end).prefix { $0 != 0 })
                s.write(byte: UInt8(ascii: "\""))
            }
        }
        var listed = false
        if has(ADType.serviceListBits) {
            forEachServiceUUID { u in
                if listed { s.write(byte: 32) } else { Self.part("UUIDs ", &parts, &s) }
                listed = true
                s.write(u.uuid)
            }
        }
        if has(ADType.serviceDataBits) {
            forEachServiceData { uuid, _ in
                Self.part("Service data ", &parts, &s)
                s.write(uuid)
                if uuid.uuid16 == Eddystone.uuid16 { s += " (Eddystone)" }
            }
        }
        if has(ADType.bit(ADType.manufacturerSpecific)) {
            forEachManufacturerData { company, data in
                Self.part("Mfr ", &parts, &s)
                if let c = AssignedNumbers.companyLabel(company) { s.write(name: c) } else { s.write(hex: company, width: 4) }
                if let kind = ManufacturerData.kind(company: company, data: data) { s.write(byte: 32); s.write(plain: kind) }
            }
        }
        if has(ADType.bit(ADType.txPowerLevel)), let t = txPower { Self.part("TX ", &parts, &s); s.write(t); s += " dBm" }
        if has(ADType.bit(ADType.appearance)), let a = appearance {
            Self.part("Appearance ", &parts, &s)
            if let n = AssignedNumbers.appearanceName(a) { s.write(plain: n) } else { s.write(hex: a, width: 4) }
        }
        if problemCount > 0 { Self.part("malformed", &parts, &s) }
        if parts == 0 {
            if structures.isEmpty { s += "no data" } else { s.write(structures.count); s += " AD structures" }
        }
    }

    /// Starts a part of the summary: ", " before all but the first.
    private static func part(_ head: StaticString, _ parts: inout Int, _ s: inout TextLine) {
        if parts > 0 { s += ", " }
        parts += 1
        s += head
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    public func writeFields(to out: FieldSink) {
        var structure = structures.makeIterator()
        if problemCount > 0 {
            // Found again, in the walk's order: a fault goes right after the structure at its
            // offset (a length fault after its structure), the structures before it first; one
            // whose offset no structure has, and every fault after it, after the last structure.
            var written: Int?
            forEachProblem { p in
                while written != p.offset, let s = structure.next() {
                    s.writeField(to: out)
                    written = s.offset
                }
                out.malformed(.adProblem(p))
            }
        }
        while let s = structure.next() { s.writeField(to: out) }
        if paddingLength > 0 { out.add("Padding", .uint(UInt64(paddingLength), hex: 0)) }
    }
}

/// A UUID from a service list and whether that list claims to be complete.
public struct ListedUUID: Sendable, Equatable {
    public let uuid: BluetoothUUID
    public let complete: Bool
}

/// The well-formed AD structures of advertising data, indexed by the offset of each one's length
/// byte: the walk that found where they end is all that is kept, so no array is built per report.
public struct ADStructures: Collection, Sendable {
    let data: Bytes
    /// Where the well-formed structures end: the data's end, a zero length, or a structure that
    /// runs past the end.
    public let endIndex: Int
    public var startIndex: Int { 0 }

    /// Below `endIndex` every structure's length octet is there (`AdvertisingData.walk`).
    public func index(after i: Int) -> Int { i &+ 1 &+ Int(data[data.startIndex &+ i]) }

    public subscript(i: Int) -> ADStructure {
        let start = data.startIndex + i + 2
        return ADStructure(type: data.byte(i + 1) ?? 0, offset: i, data: data[start..<start + Int(data.byte(i) ?? 1) - 1])
    }
}

/// One AD structure: its type and data (the slice after the type byte).
public struct ADStructure: Sendable {
    public let type: UInt8
    /// Offset of the length byte from the start of the advertising data.
    public let offset: Int
    public let data: Bytes

    public var name: String { ADType.name(type) }

    /// UUIDs of a list structure; a trailing partial UUID is left out (reported as a problem).
    public func uuids(width: Int) -> [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        var r = ByteReader(data)
        while r.remaining >= width, let u = try? r.uuid(width: width) { out.append(u) }
        return out
    }

    var lengthProblem: ADProblem.Kind? { ADStructure.lengthProblem(type: type, valueLength: data.count) }

    static func lengthProblem(type: UInt8, valueLength n: Int) -> ADProblem.Kind? {
        lengthProblem(ADType.lengthRules[Int(type)], valueLength: n)
    }

    @inline(__always)
    static func lengthProblem(_ rule: ADLengthRule, valueLength n: Int) -> ADProblem.Kind? {
        switch rule.kind {
        case .any: return nil
        case .multipleOf: return n % Int(rule.a) == 0 ? nil : .badUUIDListLength
        case .oneOf: return n == Int(rule.a) || n == Int(rule.b) ? nil : .badLength
        case .atLeast: return n >= Int(rule.a) ? nil : .badLength
        }
    }

    /// The structure as tshark shows it: name, then Length, Type and the decoded value.
    public func writeField(to out: FieldSink) {
        out.begin(ADType.label(type), .none)
        out.add("Length", .uint(UInt64(data.count + 1), hex: 0))
        out.add("Type", .named(UInt64(type), hex: 2, ADType.label(type)))
        ADValue.write(type: type, data, to: out)
        out.end()
    }
}

/// A rule break in advertising data, at a byte offset into it.
public struct ADProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The length byte runs past the end of the data.
        case lengthPastEnd
        /// A zero length (early end) followed by bytes that are not zero padding.
        case dataAfterTerminator
        /// A UUID list whose length is not a multiple of the UUID size.
        case badUUIDListLength
        /// A structure whose data has a size its type does not allow.
        case badLength
        /// Legacy advertising data longer than 31 bytes.
        case tooLongForLegacy
    }
    public let kind: Kind
    /// Byte offset into the advertising data (of the structure's length byte).
    public let offset: Int
    /// The AD type involved, when known.
    public let type: UInt8?
    /// The length involved: declared length, data size or total size depending on the kind.
    public let length: Int

    public init(_ kind: Kind, offset: Int, type: UInt8?, length: Int) {
        self.kind = kind
        self.offset = offset
        self.type = type
        self.length = length
    }

    public var description: String { TextLine.make(write) }

    /// The description written in place: a fault printed with every frame that repeats it.
    func write(to s: inout TextLine) {
        for part in sentence {
            switch part {
            case .text(let t): s += t
            case .offset: s.write(offset)
            case .type: writeType(to: &s)
            case .length: s.write(length)
            case .legacyMaximum: s.write(AdvertisingData.legacyMaximum)
            }
        }
    }

    /// Each kind's sentence: literal text and the numbers that go between.
    private enum Part { case text(StaticString), offset, type, length, legacyMaximum }
    private var sentence: [Part] {
        switch kind {
        case .lengthPastEnd: return ADProblem.lengthPastEnd
        case .dataAfterTerminator: return ADProblem.dataAfterTerminator
        case .badUUIDListLength: return ADProblem.badUUIDListLength
        case .badLength: return ADProblem.badLength
        case .tooLongForLegacy: return ADProblem.tooLongForLegacy
        }
    }
    private static let lengthPastEnd: [Part] = [.text("AD structure at offset "), .offset, .type, .text(" with length "), .length,
                                                .text(" runs past the end of the data")]
    private static let dataAfterTerminator: [Part] = [.text("zero-length AD structure at offset "), .offset, .text(" followed by "),
                                                      .length, .text(" bytes that are not padding")]
    private static let badUUIDListLength: [Part] = [.text("UUID list"), .type, .text(" at offset "), .offset, .text(" of "), .length,
                                                    .text(" bytes is not a multiple of the UUID size")]
    private static let badLength: [Part] = [.text("AD structure"), .type, .text(" at offset "), .offset, .text(" has "), .length,
                                            .text(" data bytes, not a size the type allows")]
    private static let tooLongForLegacy: [Part] = [.text("legacy advertising data of "), .length, .text(" bytes exceeds "), .legacyMaximum]

    /// " Flags (0x01)", when the type is known.
    private func writeType(to s: inout TextLine) {
        guard let type else { return }
        s.write(byte: 0x20)
        s.write(plain: ADType.name(type))
        s += " ("
        s.write(hex: type, width: 2)
        s.write(byte: UInt8(ascii: ")"))
    }
}

/// AD type codes and names (Assigned Numbers 2.3 "Common Data Types").
public enum ADType {
    public static let flags: UInt8 = 0x01
    public static let incomplete16: UInt8 = 0x02, complete16: UInt8 = 0x03
    public static let incomplete32: UInt8 = 0x04, complete32: UInt8 = 0x05
    public static let incomplete128: UInt8 = 0x06, complete128: UInt8 = 0x07
    public static let shortenedLocalName: UInt8 = 0x08, completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let appearance: UInt8 = 0x19
    public static let uri: UInt8 = 0x24
    public static let manufacturerSpecific: UInt8 = 0xFF

    public static func name(_ type: UInt8) -> String { names[type] ?? "Unknown AD Type" }

    /// `name` as a field label, made once per type.
    static func label(_ type: UInt8) -> FieldLabel { labels[type] ?? "Unknown AD Type" }
    private static let labels = names.map(FieldLabel.init)

    static let names: ByteTable<String> = [
        0x01: "Flags",
        0x02: "Incomplete List of 16-bit Service or Service Class UUIDs",
        0x03: "Complete List of 16-bit Service or Service Class UUIDs",
        0x04: "Incomplete List of 32-bit Service or Service Class UUIDs",
        0x05: "Complete List of 32-bit Service or Service Class UUIDs",
        0x06: "Incomplete List of 128-bit Service or Service Class UUIDs",
        0x07: "Complete List of 128-bit Service or Service Class UUIDs",
        0x08: "Shortened Local Name",
        0x09: "Complete Local Name",
        0x0A: "Tx Power Level",
        0x0D: "Class of Device",
        0x0E: "Simple Pairing Hash C-192",
        0x0F: "Simple Pairing Randomizer R-192",
        0x10: "Device ID / Security Manager TK Value",
        0x11: "Security Manager Out of Band Flags",
        0x12: "Peripheral Connection Interval Range",
        0x14: "List of 16-bit Service Solicitation UUIDs",
        0x15: "List of 128-bit Service Solicitation UUIDs",
        0x16: "Service Data - 16-bit UUID",
        0x17: "Public Target Address",
        0x18: "Random Target Address",
        0x19: "Appearance",
        0x1A: "Advertising Interval",
        0x1B: "LE Bluetooth Device Address",
        0x1C: "LE Role",
        0x1D: "Simple Pairing Hash C-256",
        0x1E: "Simple Pairing Randomizer R-256",
        0x1F: "List of 32-bit Service Solicitation UUIDs",
        0x20: "Service Data - 32-bit UUID",
        0x21: "Service Data - 128-bit UUID",
        0x22: "LE Secure Connections Confirmation Value",
        0x23: "LE Secure Connections Random Value",
        0x24: "URI",
        0x25: "Indoor Positioning",
        0x26: "Transport Discovery Data",
        0x27: "LE Supported Features",
        0x28: "Channel Map Update Indication",
        0x29: "PB-ADV",
        0x2A: "Mesh Message",
        0x2B: "Mesh Beacon",
        0x2C: "BIGInfo",
        0x2D: "Broadcast_Code",
        0x2E: "Resolvable Set Identifier",
        0x2F: "Advertising Interval - long",
        0x30: "Broadcast_Name",
        0x31: "Encrypted Advertising Data",
        0x32: "Periodic Advertising Response Timing Information",
        0x34: "Electronic Shelf Label",
        0x3D: "3D Information Data",
        0xFF: "Manufacturer Specific Data",
    ]

    /// Service UUID lists: UUID width and whether the list is complete.
    static let serviceLists: ByteTable<(width: Int, complete: Bool)> = [
        0x02: (2, false), 0x03: (2, true), 0x04: (4, false), 0x05: (4, true), 0x06: (16, false), 0x07: (16, true),
    ]
    static let solicitationWidth: ByteTable<Int> = [0x14: 2, 0x1F: 4, 0x15: 16]
    static let serviceDataWidth: ByteTable<Int> = [0x16: 2, 0x20: 4, 0x21: 16]

    /// A type's bit in `AdvertisingData.typeBits()`.
    @inline(__always) static func bit(_ type: UInt8) -> UInt64 { 1 << (UInt64(type) & 63) }
    /// The bits of the service UUID lists (0x02...0x07) and of Service Data (0x16, 0x20, 0x21).
    static let serviceListBits: UInt64 = 0xFC
    static let serviceDataBits: UInt64 = 1 << 0x16 | 1 << 0x20 | 1 << 0x21

    static func listWidth(_ type: UInt8) -> Int? { serviceLists[type]?.width ?? solicitationWidth[type] }

    /// The length each type's data may have, for every type byte: `lengthProblem` reads one
    /// plain entry per structure rather than three tables and an array.
    static let lengthRules: [ADLengthRule] = (0...255).map { t in
        let type = UInt8(t)
        if let w = listWidth(type) { return ADLengthRule(.multipleOf, w) }
        guard let s = sizes[type], let first = s.first else { return ADLengthRule(.any, 0) }
        if first == -1 { return ADLengthRule(.atLeast, s.last ?? 0) }
        return ADLengthRule(.oneOf, first, s.last ?? first)
    }

    /// Allowed data sizes of fixed-layout types; [-1, n] means "at least n".
    static let sizes: ByteTable<[Int]> = [
        0x01: [1], 0x0A: [1], 0x0D: [3], 0x0E: [16], 0x0F: [16], 0x10: [8, 16], 0x11: [1], 0x12: [4],
        0x16: [-1, 2], 0x17: [-1, 6], 0x18: [-1, 6], 0x19: [2], 0x1A: [2], 0x1B: [7], 0x1C: [1],
        0x1D: [16], 0x1E: [16], 0x20: [-1, 4], 0x21: [-1, 16], 0x22: [16], 0x23: [16], 0x28: [7],
        0x2C: [33, 57], 0x2D: [16], 0x2E: [6], 0x2F: [3, 4], 0x31: [-1, 9], 0x32: [8], 0x3D: [2],
        0xFF: [-1, 2],
    ]
}

/// The length an AD type's data may have (`ADType.lengthRules`).
struct ADLengthRule {
    enum Kind: UInt8 { case any, multipleOf, oneOf, atLeast }
    let kind: Kind
    let a: UInt8, b: UInt8

    init(_ kind: Kind, _ a: Int, _ b: Int = 0) {
        self.kind = kind
        self.a = UInt8(a)
        self.b = UInt8(b)
    }
}

/// Decoding of each AD type's data into fields.
enum ADValue {
    /// Sends the fields of an AD structure's value to `out`. The types nearly every advertisement
    /// carries go field by field, with no tree in between; the others are built as trees.
    static func write(type: UInt8, _ d: Bytes, to out: FieldSink) {
        switch type {
        case 0x01: writeFlags(d, to: out)
        case 0x02...0x07: writeUUIDList(d, width: ADType.serviceLists[type]?.width ?? 2, to: out)
        case 0x14, 0x15, 0x1F: writeUUIDList(d, width: ADType.solicitationWidth[type] ?? 2, to: out)
        case 0x08, 0x09:
            // A name with NULs (padding from a fixed-size buffer, a C terminator) is shown up to the
            // first, as received (escaped on a terminal); the bytes stay visible beside it.
            guard let nul = d.firstIndex(of: 0) else { return out.add("Device Name", .received(d)) }
            out.begin("Device Name", .received(d[..<nul]))
            out.add("Bytes", .bytes(d))
            out.end()
        case 0x0A: if let b = d.byte(0) { out.add("Power Level", .signed(Int64(Int8(bitPattern: b)), unit: "dBm")) }
        case 0x16, 0x20, 0x21: writeServiceData(d, width: ADType.serviceDataWidth[type] ?? 2, to: out)
        case 0xFF: writeManufacturer(d, to: out)
        case 0x19: if let v = d.le16(0) { writeAppearance(v, to: out) }
        // One field each, sent as it is read.
        case 0x30: out.add("Broadcast Name", .received(d.prefix { $0 != 0 }))
        case 0x0E, 0x1D: out.add("Hash C", .bytes(d))
        case 0x0F, 0x1E: out.add("Randomizer R", .bytes(d))
        case 0x10 where d.count != 8: out.add("TK Value", .bytes(d))
        case 0x1C: if let r = d.byte(0) { out.add("LE Role", .named(UInt64(r), hex: 2, leRoles[Int(r)] ?? "Reserved")) }
        case 0x22: out.add("Confirmation Value", .bytes(d))
        case 0x23: out.add("Random Value", .bytes(d))
        case 0x2D: out.add("Broadcast Code", .bytes(d))
        default:
            if let tree = fields(type: type, d) { out.add(tree) } else if !d.isEmpty { out.add("Data", .bytes(d)) }
        }
    }

    /// The less common types with more than one field, as trees; nil for a type not decoded.
    private static func fields(type: UInt8, _ d: Bytes) -> [Field]? {
        switch type {
        case 0x0D: return classOfDevice(d)
        case 0x10: return deviceID(d)
        case 0x11: return oobFlags(d)
        case 0x12: return connectionIntervalRange(d)
        case 0x17, 0x18: return targetAddresses(d)
        case 0x1A, 0x2F: return advertisingInterval(d)
        case 0x1B: return leAddress(d)
        case 0x24: return uri(d)
        case 0x27: return leFeatures(d)
        case 0x28: return channelMapUpdate(d)
        case 0x2C: return bigInfo(d)
        case 0x2E: return rsi(d)
        case 0x31, 0x34: return encrypted(d)
        case 0x32: return pawrTiming(d)
        case 0x3D: return threeD(d)
        default: return nil
        }
    }

    static let flagNames = ["LE Limited Discoverable Mode", "LE General Discoverable Mode", "BR/EDR Not Supported",
                            "Simultaneous LE and BR/EDR to Same Device Capable (Controller)",
                            "Simultaneous LE and BR/EDR to Same Device Capable (Host)"]

    private static let flagLabels = flagNames.map(FieldLabel.init)
    private static let flagBits = BitNames(flagNames)

    static func flags(_ d: Bytes) -> [Field] { FieldList.build { writeFlags(d, to: $0) } }

    static func writeFlags(_ d: Bytes, to out: FieldSink) {
        guard let f = d.byte(0) else { return }
        out.begin("Flags", .flags(UInt64(f), hex: 2, SetBitNames(UInt64(f), in: flagBits, reserved: true)))
        for (bit, label) in flagLabels.enumerated() { out.add(label, .bool(f >> UInt8(bit) & 1 == 1)) }
        if f & 0xE0 != 0 { out.add("Reserved", .uint(UInt64(f >> 5), hex: 1)) }
        out.end()
    }

    /// A UUID with its full 128-bit form and, when the tables know it, its name. A 128-bit
    /// UUID on the base UUID is also shown in its short form.
    static func uuidField(_ label: FieldLabel, _ u: BluetoothUUID) -> Field {
        FieldList.build { writeUUID(label, u, to: $0) }[0]
    }

    static func writeUUID(_ label: FieldLabel, _ u: BluetoothUUID, to out: FieldSink) {
        out.begin(label, .uuid(u))
        if u.width < 16 {
            out.add("UUID 128", .derived(.uuid128(u)))
        } else if let s = u.uuid16 {
            out.add("Short Form", .uuid(BluetoothUUID(uuid16: s)))
        } else if let s = u.uuid32 {
            out.add("Short Form", .uuid(BluetoothUUID(uuid32: s)))
        }
        if let n = AssignedNumbers.name(u) { out.add("Name", .text(n)) }
        out.end()
    }

    static func writeUUIDList(_ d: Bytes, width: Int, to out: FieldSink) {
        var r = ByteReader(d)
        while r.remaining >= width, let u = try? r.uuid(width: width) { writeUUID("UUID", u, to: out) }
        if r.remaining > 0 { out.add("Trailing Bytes", .bytes(r.rest())) }
    }

    static func writeServiceData(_ d: Bytes, width: Int, to out: FieldSink) {
        guard d.count >= width, let u = BluetoothUUID(littleEndian: d.prefix(width)) else { return out.add("Data", .bytes(d)) }
        let rest = d.dropFirst(width)
        writeUUID("UUID", u, to: out)
        out.add("Service Data", .bytes(rest))
        if u.uuid16 == Eddystone.uuid16 { out.add(Field("Eddystone", .none, Eddystone.fields(rest))) }
    }

    static func writeManufacturer(_ d: Bytes, to out: FieldSink) {
        guard let company = d.le16(0) else { return out.add("Data", .bytes(d)) }
        let rest = d.dropFirst(2)
        out.add("Company ID", .company(company) ?? .named(UInt64(company), hex: 4, "Unknown"))
        out.add("Data", .bytes(rest))
        ManufacturerData.writeFields(company: company, data: rest, to: out)
    }

    static func appearanceField(_ v: UInt16) -> Field { FieldList.build { writeAppearance(v, to: $0) }[0] }

    static func writeAppearance(_ v: UInt16, to out: FieldSink) {
        out.begin("Appearance", .named(UInt64(v), hex: 4, AssignedNumbers.appearanceLabel(v) ?? "Unknown"))
        out.add("Category", .uint(UInt64(v >> 6), hex: 3))
        out.add("Subcategory", .uint(UInt64(v & 0x3F), hex: 2))
        out.end()
    }

    static let serviceClasses: BitNames = ["Limited Discoverable Mode", "LE Audio", "Reserved", "Positioning", "Networking",
                                 "Rendering", "Capturing", "Object Transfer", "Audio", "Telephony", "Information"]
    static let majorDeviceClasses: ByteTable<FieldLabel> = [
        0: "Miscellaneous", 1: "Computer", 2: "Phone", 3: "LAN/Network Access Point", 4: "Audio/Video",
        5: "Peripheral", 6: "Imaging", 7: "Wearable", 8: "Toy", 9: "Health", 31: "Uncategorized",
    ]

    static func classOfDevice(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let cod = try? r.u24() else { return [Field("Data", .bytes(d))] }
        let major = UInt8(cod >> 8 & 0x1F)
        let services = UInt64(cod >> 13 & 0x7FF)
        return [Field("Class of Device", .uint(UInt64(cod), hex: 6), [
            Field("Major Service Classes", .flags(services, hex: 3, SetBitNames(services, in: serviceClasses, reserved: true))),
            Field("Major Device Class", .named(UInt64(major), hex: 2, majorDeviceClasses[major] ?? "Reserved")),
            Field("Minor Device Class", .uint(UInt64(cod >> 2 & 0x3F), hex: 2)),
        ])]
    }

    static func deviceID(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let src = try? r.u16(), let vendor = try? r.u16(), let product = try? r.u16(), let version = try? r.u16() else { return [] }
        return [Field("Vendor ID Source", .named(UInt64(src), hex: 4, src == 1 ? "Bluetooth SIG" : src == 2 ? "USB Implementer's Forum" : "Reserved")),
                Field("Vendor ID", (src == 1 ? .company(vendor) : nil) ?? .uint(UInt64(vendor), hex: 4)),
                Field.u16("Product ID", product), Field.u16("Version", version)]
    }

    static func oobFlags(_ d: Bytes) -> [Field] {
        guard let f = d.byte(0) else { return [] }
        return [Field("OOB Flags", .uint(UInt64(f), hex: 2), [
            Field("OOB Data Present", .bool(f & 1 != 0)),
            Field("LE Supported (Host)", .bool(f & 2 != 0)),
            Field("Simultaneous LE and BR/EDR to Same Device Capable (Host)", .bool(f & 4 != 0)),
            Field("Address Type", .named(UInt64(f >> 3 & 1), hex: 1, f & 8 == 0 ? "Public" : "Random")),
        ])]
    }

    static func connectionInterval(_ label: FieldLabel, _ v: UInt16) -> Field {
        v == 0xFFFF ? Field(label, .named(UInt64(v), hex: 4, "no specific value"))
            : Field(label, .quantity(UInt64(v), hex: 4, Double(v) * 1.25, unit: "ms"))
    }

    static func connectionIntervalRange(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let lo = try? r.u16(), let hi = try? r.u16() else { return [Field("Data", .bytes(d))] }
        return [connectionInterval("Connection Interval Min", lo), connectionInterval("Connection Interval Max", hi)]
    }

    static func targetAddresses(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        var out: [Field] = []
        while r.remaining >= 6, let a = try? r.address() { out.append(Field("BD_ADDR", .address(a))) }
        if r.remaining > 0 { out.append(Field("Trailing Bytes", .bytes(r.rest()))) }
        return out
    }

    static func advertisingInterval(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let v = try? r.uint(width: min(max(d.count, 1), 4)) else { return [Field("Data", .bytes(d))] }
        return [Field("Advertising Interval", .quantity(v, hex: d.count * 2, Double(v) * 0.625, unit: "ms"))]
    }

    static func leAddress(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let a = try? r.address(), let t = try? r.u8() else { return [Field("Data", .bytes(d))] }
        return [Field("BD_ADDR", .address(a)), Field("Address Type", .named(UInt64(t & 1), hex: 2, t & 1 == 0 ? "Public" : "Random"))]
    }

    static let leRoles: [Int: FieldLabel] = [0: "Only Peripheral Role supported", 1: "Only Central Role supported",
                          2: "Peripheral and Central Role supported; Peripheral Role preferred for connection establishment",
                          3: "Peripheral and Central Role supported; Central Role preferred for connection establishment"]

    static func uri(_ d: Bytes) -> [Field] {
        // The scheme is a code point (UTF-8 encoded) into the URI scheme name table; 0x01 means none.
        guard let b0 = d.byte(0) else { return [] }
        var code = UInt32(b0), used = 1
        if b0 & 0xE0 == 0xC0, let b1 = d.byte(1), b1 & 0xC0 == 0x80 {
            code = UInt32(b0 & 0x1F) << 6 | UInt32(b1 & 0x3F)
            used = 2
        }
        let rest = String(decoding: d.dropFirst(used), as: UTF8.self)
        let scheme = URISchemes.name(code)
        return [Field("Scheme", .named(UInt64(code), hex: 4, scheme.map(FieldLabel.init) ?? "Unknown")),
                Field("URI", .text((scheme ?? "") + rest))]
    }

    static func leFeatures(_ d: Bytes) -> [Field] {
        var names: [String] = []
        for (i, b) in d.enumerated() {
            for bit in 0..<8 where b >> UInt8(bit) & 1 == 1 {
                let n = i &* 8 &+ bit
                names.append(n < HCINames.leFeatures.count ? HCINames.leFeatures[n] : "Reserved (bit \(n))")
            }
        }
        return [Field("LE Features", .bytes(d), names.map { Field(FieldLabel($0), .bool(true)) })]
    }

    static func channelMapUpdate(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let map = try? r.uint(width: 5), let instant = try? r.u16() else { return [Field("Data", .bytes(d))] }
        return [Field("Channel Map", .uint(map, hex: 10), [Field("Used Channels", .int(Int64((map & 0x1F_FFFF_FFFF).nonzeroBitCount)))]),
                Field("Instant", .uint(UInt64(instant), hex: 4))]
    }

    static func bigInfo(_ d: Bytes) -> [Field] {
        // Core Vol 6 Part B 4.4.6.2: bit-packed fields, an RFU octet after Max_PDU; the encrypted
        // form adds GIV and GSKD.
        var r = ByteReader(d)
        guard let w0 = try? r.u32(), let w1 = try? r.u32(), let w2 = try? r.u32(), (try? r.skip(1)) != nil,
              let seedAA = try? r.u32(), let sdu = try? r.u32(), let crcInit = try? r.u16(), let chm = try? r.uint(width: 5),
              let w4 = try? r.uint(width: 5) else { return [Field("Data", .bytes(d))] }
        var out: [Field] = [
            Field("BIG_Offset", .uint(UInt64(w0 & 0x3FFF), hex: 0)),
            Field("BIG_Offset_Units", .named(UInt64(w0 >> 14 & 1), hex: 1, w0 >> 14 & 1 == 0 ? "30 µs" : "300 µs")),
            Field("ISO_Interval", .quantity(UInt64(w0 >> 15 & 0xFFF), hex: 3, Double(w0 >> 15 & 0xFFF) * 1.25, unit: "ms")),
            Field("Num_BIS", .uint(UInt64(w0 >> 27), hex: 0)),
            Field("NSE", .uint(UInt64(w1 & 0x1F), hex: 0)),
            Field("BN", .uint(UInt64(w1 >> 5 & 0x7), hex: 0)),
            Field("Sub_Interval", .quantity(UInt64(w1 >> 8 & 0xFFFFF), hex: 0, Double(w1 >> 8 & 0xFFFFF), unit: "µs")),
            Field("PTO", .uint(UInt64(w1 >> 28), hex: 0)),
            Field("BIS_Spacing", .quantity(UInt64(w2 & 0xFFFFF), hex: 0, Double(w2 & 0xFFFFF), unit: "µs")),
            Field("IRC", .uint(UInt64(w2 >> 20 & 0xF), hex: 0)),
            Field("Max_PDU", .uint(UInt64(w2 >> 24), hex: 0)),
            Field("Seed Access Address", .uint(UInt64(seedAA), hex: 8)),
            Field("SDU_Interval", .quantity(UInt64(sdu & 0xFFFFF), hex: 0, Double(sdu & 0xFFFFF), unit: "µs")),
            Field("Max_SDU", .uint(UInt64(sdu >> 20), hex: 0)),
            Field("BaseCRCInit", .uint(UInt64(crcInit), hex: 4)),
            Field("ChM", .uint(chm & 0x1F_FFFF_FFFF, hex: 10)),
            Field("PHY", .named(chm >> 37 & 7, hex: 1, phyNames[Int(chm >> 37 & 7)] ?? "Reserved")),
            Field("bisPayloadCount", .uint(w4 & 0x7F_FFFF_FFFF, hex: 0)),
            Field("Framing", .bool(w4 >> 39 & 1 == 1)),
        ]
        if r.remaining >= 24, let giv = try? r.take(8), let gskd = try? r.take(16) {
            out += [Field("GIV", .bytes(giv)), Field("GSKD", .bytes(gskd))]
        }
        return out
    }

    static let phyNames: [Int: FieldLabel] = [0: "LE 1M", 1: "LE 2M", 2: "LE Coded"]

    static func rsi(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let hash = try? r.u24(), let prand = try? r.u24() else { return [Field("Data", .bytes(d))] }
        return [Field("Hash", .uint(UInt64(hash), hex: 6)), Field("prand", .uint(UInt64(prand), hex: 6))]
    }

    static func encrypted(_ d: Bytes) -> [Field] {
        // Randomizer (5), encrypted payload, MIC (4) (Core Supplement Part A 1.23, ESL Profile 5.3).
        guard d.count >= 9 else { return [Field("Data", .bytes(d))] }
        return [Field("Randomizer", .bytes(d.prefix(5))), Field("Payload", .bytes(d.dropFirst(5).dropLast(4))),
                Field("MIC", .bytes(d.suffix(4)))]
    }

    static func pawrTiming(_ d: Bytes) -> [Field] {
        var r = ByteReader(d)
        guard let aa = try? r.u32(), let n = try? r.u8(), let interval = try? r.u8(), let delay = try? r.u8(),
              let spacing = try? r.u8() else { return [Field("Data", .bytes(d))] }
        return [Field("RspAA", .uint(UInt64(aa), hex: 8)), Field.dec("NumSubevents", n),
                Field("SubeventInterval", .quantity(UInt64(interval), hex: 2, Double(interval) * 1.25, unit: "ms")),
                Field("ResponseSlotDelay", .quantity(UInt64(delay), hex: 2, Double(delay) * 1.25, unit: "ms")),
                Field("ResponseSlotSpacing", .quantity(UInt64(spacing), hex: 2, Double(spacing) * 0.125, unit: "ms"))]
    }

    static let threeDFlags: BitNames = ["Association Notification", "Battery Level Reporting",
                                        "Send Battery Level Report on Start-up Synchronization",
                                        "Reserved", "Reserved", "Reserved", "Reserved", "Factory Test Mode"]

    static func threeD(_ d: Bytes) -> [Field] {
        guard let f = d.byte(0), let loss = d.byte(1) else { return [Field("Data", .bytes(d))] }
        return [Field("3D Flags", .flags(UInt64(f), hex: 2, SetBitNames(UInt64(f), in: threeDFlags, reserved: true))),
                Field("Path Loss Threshold", .quantity(UInt64(loss), hex: 2, Double(loss), unit: "dB"))]
    }
}

/// URI scheme name strings (Assigned Numbers 2.7): code 0x0001 is the empty scheme, 0x0002 "aaa:" onward.
enum URISchemes {
    static func name(_ code: UInt32) -> String? {
        if code == 1 { return "" }
        let i = Int(code) - 2
        return i >= 0 && i < table.count ? table[i] : nil
    }

    static let table: [String] = [
        "aaa:", "aaas:", "about:", "acap:", "acct:", "cap:", "cid:", "coap:", "coaps:", "crid:", "data:", "dav:",
        "dict:", "dns:", "file:", "ftp:", "geo:", "go:", "gopher:", "h323:", "http:", "https:", "iax:", "icap:",
        "im:", "imap:", "info:", "ipp:", "ipps:", "iris:", "iris.beep:", "iris.xpc:", "iris.xpcs:", "iris.lwz:",
        "jabber:", "ldap:", "mailto:", "mid:", "msrp:", "msrps:", "mtqp:", "mupdate:", "news:", "nfs:", "ni:",
        "nih:", "nntp:", "opaquelocktoken:", "pop:", "pres:", "reload:", "rtsp:", "rtsps:", "rtspu:", "service:",
        "session:", "shttp:", "sieve:", "sip:", "sips:", "sms:", "snmp:", "soap.beep:", "soap.beeps:", "stun:",
        "stuns:", "tag:", "tel:", "telnet:", "tftp:", "thismessage:", "tn3270:", "tip:", "turn:", "turns:", "tv:",
        "urn:", "vemmi:", "ws:", "wss:", "xcon:", "xcon-userid:", "xmlrpc.beep:", "xmlrpc.beeps:", "xmpp:",
        "z39.50r:", "z39.50s:", "acr:", "adiumxtra:", "afp:", "afs:", "aim:", "apt:", "attachment:", "aw:",
        "barion:", "beshare:", "bitcoin:", "bolo:", "callto:", "chrome:", "chrome-extension:",
        "com-eventbrite-attendee:", "content:", "cvs:", "dlna-playsingle:", "dlna-playcontainer:", "dtn:", "dvb:",
        "ed2k:", "facetime:", "feed:", "feedready:", "finger:", "fish:", "gg:", "git:", "gizmoproject:", "gtalk:",
        "ham:", "hcp:", "icon:", "ipn:", "irc:", "irc6:", "ircs:", "itms:", "jar:", "jms:", "keyparc:", "lastfm:",
        "ldaps:", "magnet:", "maps:", "market:", "message:", "mms:", "ms-help:", "ms-settings-power:", "msnim:",
        "mumble:", "mvn:", "notes:", "oid:", "palm:", "paparazzi:", "pkcs11:", "platform:", "proxy:", "psyc:",
        "query:", "res:", "resource:", "rmi:", "rsync:", "rtmfp:", "rtmp:", "secondlife:", "sftp:", "sgn:", "skype:",
        "smb:", "smtp:", "soldat:", "spotify:", "ssh:", "steam:", "submit:", "svn:", "teamspeak:", "teliaeid:",
        "things:", "udp:", "unreal:", "ut2004:", "ventrilo:", "view-source:", "webcal:", "wtai:", "wyciwyg:",
        "xfire:", "xri:", "ymsgr:", "example:", "ms-settings-cloudstorage:",
    ]
}
