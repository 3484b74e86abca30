import Wire

/// Generic Attribute Profile (Core 5.4 Vol 3 Part G): each peer's attribute database rebuilt from
/// the discovery traffic, and the ATT bearer state (Vol 3 Part F 3.3) that ties requests to
/// responses and PDUs to the attributes they concern.

/// Characteristic properties (Vol 3 Part G 3.3.1.1).
public struct GATTProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let broadcast = GATTProperties(rawValue: 0x01)
    public static let read = GATTProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTProperties(rawValue: 0x04)
    public static let write = GATTProperties(rawValue: 0x08)
    public static let notify = GATTProperties(rawValue: 0x10)
    public static let indicate = GATTProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = GATTProperties(rawValue: 0x40)
    public static let extendedProperties = GATTProperties(rawValue: 0x80)

    static let bitNames = ["broadcast", "read", "write without response", "write", "notify", "indicate",
                           "signed write", "extended properties"]
    static let setBitNames = BitNames(bitNames)
    /// Names of the set bits, lowest first: ["read", "notify"].
    public var names: [String] { GATTProperties.nameSets[Int(rawValue)] }
    var setNames: SetBitNames { SetBitNames(UInt64(rawValue), in: GATTProperties.setBitNames) }
    /// `names` of every value, made once: every ATT PDU on a characteristic shows its properties.
    private static let nameSets = (0..<256).map { v in (0..<8).filter { v & (1 << $0) != 0 }.map { bitNames[$0] } }
}

/// Notification/indication state a client set in a CCCD, and the frame that set it.
public struct GATTSubscription: Equatable, Sendable {
    public var notify: Bool
    public var indicate: Bool
    public var frame: Int

    static func describe(notify: Bool, indicate: Bool) -> String {
        switch (notify, indicate) {
        case (true, true): return "notifications and indications on"
        case (true, false): return "notifications on"
        case (false, true): return "indications on"
        case (false, false): return "notifications and indications off"
        }
    }
    public var description: String { TextLine.make(write) }

    func write(to s: inout TextLine) {
        s.write(plain: GATTSubscription.describe(notify: notify, indicate: indicate))
        s += " (frame "
        s.write(frame)
        s.write(byte: UInt8(ascii: ")"))
    }
}

/// The last value seen for an attribute (at most `GATTDatabase.maxValueLength` bytes).
public struct GATTValue: Sendable {
    public var bytes: [UInt8]
    public var frame: Int
    /// The rediscovery that saved what it was before changing it (`GATTPrior.serial`; 0: none).
    var savedIn = 0

    /// In place: a value notified over and over keeps its storage; one of the same length is
    /// written over byte by byte, cheaper than the generic `replaceSubrange`. At most
    /// `GATTDatabase.maxValueLength` bytes of `v` are kept, counted rather than sliced off
    /// (a slice is a retain and a release).
    mutating func update(_ v: Bytes, frame: Int) {
        self.frame = frame
        let n = min(v.count, GATTDatabase.maxValueLength)
        if bytes.count == n {
            var j = v.startIndex
            for k in 0..<n {
                bytes[k] = v[j]
                j &+= 1
            }
        } else {
            bytes.replaceSubrange(bytes.indices, with: v.prefix(n))
        }
    }
}

public struct GATTDescriptor: Sendable {
    public let handle: UInt16
    public let uuid: BluetoothUUID
    public let lastValue: GATTValue?
}

public struct GATTCharacteristic: Sendable {
    public let declarationHandle: UInt16
    public let valueHandle: UInt16
    public let properties: GATTProperties
    public let uuid: BluetoothUUID
    public let descriptors: [GATTDescriptor]
    public let subscription: GATTSubscription?
    public let lastValue: GATTValue?
}

/// An Include declaration (Vol 3 Part G 3.2).
public struct GATTInclude: Sendable, Equatable {
    public let handle: UInt16
    public let start: UInt16
    public let end: UInt16
    /// Present only for 16-bit service UUIDs (the declaration omits 128-bit ones).
    public let uuid: BluetoothUUID?
}

public struct GATTService: Sendable {
    public let uuid: BluetoothUUID
    public let start: UInt16
    public let end: UInt16
    public let isPrimary: Bool
    public let includes: [GATTInclude]
    public let characteristics: [GATTCharacteristic]
}

/// What one handle is in a database, as far as discovery has shown.
public struct GATTAttribute: Equatable, Sendable {
    public enum Role: String, Sendable {
        case service, include, characteristicDeclaration, characteristicValue, descriptor
        /// Never discovered: the handle's type is not known.
        case unknown
    }
    public let handle: UInt16
    public let role: Role
    /// The attribute's type: descriptor UUID, characteristic UUID for a value, service UUID.
    public let uuid: BluetoothUUID?
    /// The characteristic the handle belongs to (value or descriptor).
    public let characteristic: BluetoothUUID?
    public let properties: GATTProperties?
    public let service: BluetoothUUID?

    /// "Heart Rate Measurement (0x2A37) in Heart Rate (0x180D)"; "Client Characteristic
    /// Configuration (0x2902) of Heart Rate Measurement (0x2A37) in Heart Rate (0x180D)".
    public var description: String { TextLine.make(writeDescription) }

    public func writeDescription(to s: inout TextLine) {
        func name(_ u: BluetoothUUID?, or fallback: StaticString) {
            if let u { writeATTUUIDName(u, to: &s) } else { s += fallback }
        }
        func of(_ c: BluetoothUUID?) {
            if let c { s += " of "; writeATTUUIDName(c, to: &s) }
        }
        switch role {
        case .descriptor:
            name(uuid, or: "Descriptor")
            of(characteristic)
        case .characteristicDeclaration:
            s += "Characteristic Declaration"
            of(characteristic)
        case .unknown:
            if let uuid {
                writeATTUUIDName(uuid, to: &s)
            } else {
                s += "Handle "
                s.write(hex: handle, width: 4)
                s += " (never discovered)"
            }
        case .service:
            name(uuid, or: "Service")
            s += " declaration"
            return
        case .include:
            s += "Include declaration"
        case .characteristicValue:
            name(uuid, or: "Characteristic value")
        }
        if let sv = service { s += " in "; writeATTUUIDName(sv, to: &s) }
    }

    /// SIG names of the attribute's own type, its characteristic and its service.
    public var name: String? { uuid.flatMap(AssignedNumbers.name) }
    public var characteristicName: String? { characteristic.flatMap(AssignedNumbers.characteristicName) }
    public var serviceName: String? { service.flatMap(AssignedNumbers.serviceName) }

    /// The UUID whose format the attribute's value has.
    public var valueUUID: BluetoothUUID? {
        switch role {
        case .characteristicValue, .descriptor, .unknown: return uuid
        default: return nil
        }
    }
}

/// One server's attribute database, as discovered. Handles are unique per server, so the
/// database is keyed by handle; the tree is assembled when printed.
public final class GATTDatabase {
    /// Longest attribute value (Vol 3 Part F 3.2.9).
    public static let maxValueLength = 512
    /// Bound on the number of handles that keep a last value.
    public static let maxStoredValues = 4096

    struct ServiceRecord: Equatable { var uuid: BluetoothUUID; var end: UInt16; var isPrimary: Bool }
    struct CharacteristicRecord: Equatable { var declaration: UInt16; var properties: GATTProperties; var uuid: BluetoothUUID }

    // What discovery found. Any change forgets the attributes looked up so far (`described`).
    var services: [UInt16: ServiceRecord] = [:] { didSet { forgetDescribed() } }
    var includes: [UInt16: GATTInclude] = [:] { didSet { forgetDescribed() } }
    /// Keyed by value handle.
    var characteristics: [UInt16: CharacteristicRecord] = [:] { didSet { forgetDescribed() } }
    /// Declaration handle → value handle.
    var declarations: [UInt16: UInt16] = [:] { didSet { forgetDescribed() } }
    var descriptors: [UInt16: BluetoothUUID] = [:] { didSet { forgetDescribed() } }
    /// Types learned from Read By Type on a characteristic UUID, without a declaration.
    var typeHints: [UInt16: BluetoothUUID] = [:] { didSet { forgetDescribed() } }
    /// The last attributes `attribute(_:)` built, in a slot chosen by the handle's low bits: a
    /// stream of notifications asks for the same few handles, and building one takes up to seven
    /// lookups by handle and a walk over the services.
    /// Made at the first lookup: the copies a rediscovery compares hold none.
    private var described: [GATTAttribute?] = []
    /// Enough that the handles of one link's usual traffic seldom share a slot (at 8, handles
    /// 0x0010 and 0x0020 did, and each use of one described the other again).
    private static let describedSlots = 32
    /// The last value of each handle, keyed with `WordHash` (`Key16`): looked up for every
    /// notification.
    var values: [Key16: GATTValue] = [:]
    /// Keyed by characteristic value handle.
    var subscriptions: [UInt16: GATTSubscription] = [:]

    /// Versions (GATTVersions.swift): those before the current one, oldest first, and what the
    /// current one is.
    var earlier: [GATTDatabaseVersion] = []
    var current = GATTVersionSpan()
    /// Discovery that began after the database may have changed, compared with what it had.
    var rediscovery: GATTRediscovery?
    /// What the running rediscovery changed, as it was (`GATTPrior`).
    var prior = GATTPrior()
    /// The databases of the last rediscovery that found nothing new, emptied for the next one.
    var spareRediscovery: (baseline: GATTDatabase, fresh: GATTDatabase)?
    /// Why the database may have changed, until discovery starts again.
    var trigger: GATTVersionCause?
    /// The bearer whose discovery filled the database last (`ATTBearer.serial`): another one is a
    /// later connection.
    var discoveryBearer: Int?
    /// The bearer of the last PDU to or from this server, since which frame, and the last frame of
    /// the bearer before it.
    var touchBearer: Int?
    var touchBearerSince: Int?
    var previousTouch: Int?

    public init() {}

    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && descriptors.isEmpty && values.isEmpty }

    // MARK: Recording discovery

    /// A handle holds one attribute: what discovery now shows there replaces what it showed before
    /// (a database that changed, a stale record).
    func vacate(_ h: UInt16) {
        services[h] = nil
        includes[h] = nil
        descriptors[h] = nil
        if let v = declarations.removeValue(forKey: h) { characteristics[v] = nil }
        if let c = characteristics.removeValue(forKey: h) { declarations[c.declaration] = nil }
    }

    // What discovery finds again is left as it is: a rediscovery writing the same records would
    // copy the tables the version it is compared with shares (`frozen`).

    func addService(start: UInt16, end: UInt16, uuid: BluetoothUUID, primary: Bool) {
        let record = ServiceRecord(uuid: uuid, end: end, isPrimary: primary)
        if services[start] != record {
            vacate(start)
            services[start] = record
        }
        rediscovery?.fresh.addService(start: start, end: end, uuid: uuid, primary: primary)
    }

    func addCharacteristic(declaration: UInt16, properties: UInt8, valueHandle: UInt16, uuid: BluetoothUUID) {
        let record = CharacteristicRecord(declaration: declaration, properties: GATTProperties(rawValue: properties), uuid: uuid)
        if characteristics[valueHandle] != record || declarations[declaration] != valueHandle || descriptors[valueHandle] != nil {
            vacate(declaration)
            if characteristics[valueHandle]?.declaration != declaration { vacate(valueHandle) }
            characteristics[valueHandle] = record
            declarations[declaration] = valueHandle
            descriptors[valueHandle] = nil
        }
        rediscovery?.fresh.addCharacteristic(declaration: declaration, properties: properties, valueHandle: valueHandle, uuid: uuid)
    }

    func addInclude(_ include: GATTInclude) {
        if includes[include.handle] != include {
            vacate(include.handle)
            includes[include.handle] = include
        }
        rediscovery?.fresh.addInclude(include)
    }

    /// A Find Information entry: declarations and values already known are left alone.
    func addInformation(handle: UInt16, uuid: BluetoothUUID) {
        rediscovery?.fresh.addInformation(handle: handle, uuid: uuid)
        guard characteristics[handle] == nil, declarations[handle] == nil, services[handle] == nil,
              includes[handle] == nil else { return }
        if let u = uuid.uuid16, (0x2800...0x2803).contains(u) { return }
        if descriptors[handle] != uuid { descriptors[handle] = uuid }
    }

    func setValue(_ handle: UInt16, _ bytes: Bytes, frame: Int) {
        if let i = values.index(forKey: Key16(handle)) {
            if rediscovery != nil { savePrior(i) }
            values.values[i].update(bytes, frame: frame)
        } else if values.count < GATTDatabase.maxStoredValues {
            var v = GATTValue(bytes: Array(bytes.prefix(GATTDatabase.maxValueLength)), frame: frame)
            if rediscovery != nil {
                prior.save(handle, nil)
                v.savedIn = prior.serial
            }
            values[Key16(handle)] = v
        }
    }

    /// The value at `i` as it was, saved the first time the running rediscovery changes it.
    private func savePrior(_ i: Dictionary<Key16, GATTValue>.Index) {
        guard values.values[i].savedIn != prior.serial else { return }
        prior.save(values.keys[i].value, values.values[i])
        values.values[i].savedIn = prior.serial
    }

    func setSubscription(_ valueHandle: UInt16, _ s: GATTSubscription) {
        if rediscovery != nil { prior.subscriptions.save(valueHandle, subscriptions[valueHandle]) }
        subscriptions[valueHandle] = s
    }

    func setTypeHint(_ handle: UInt16, _ t: BluetoothUUID) {
        guard typeHints[handle] != t else { return }
        if rediscovery != nil { prior.typeHints.save(handle, typeHints[handle]) }
        typeHints[handle] = t
    }

    /// Bytes of `handle`'s value known so far (0: none).
    func valueLength(_ handle: UInt16) -> Int {
        guard let i = values.index(forKey: Key16(handle)) else { return 0 }
        return values.values[i].bytes.count
    }

    /// A Read Blob's piece laid at `offset` (at most the length known) of `handle`'s value, in
    /// place: a long value read over and over keeps its storage. The value so far.
    func continueValue(_ handle: UInt16, at offset: Int, with piece: Bytes, frame: Int) -> Bytes {
        let kept = piece.prefix(max(0, GATTDatabase.maxValueLength - offset))
        guard let i = values.index(forKey: Key16(handle)) else {
            // Nothing known: the piece is at offset 0 and is the value.
            setValue(handle, kept, frame: frame)
            return kept
        }
        if rediscovery != nil { savePrior(i) }
        values.values[i].frame = frame
        values.values[i].bytes.replaceSubrange(offset..., with: kept)
        return values.values[i].bytes[...]
    }

    // MARK: Lookup

    /// The service whose handle range holds `h`.
    func serviceStart(containing h: UInt16) -> UInt16? {
        var best: UInt16?
        for (start, s) in services where start <= h && h <= s.end {
            if best.map({ start > $0 }) ?? true { best = start }
        }
        return best
    }

    /// The characteristic a descriptor at `h` belongs to: the nearest value handle below it,
    /// not separated from it by a declaration or the start of a service.
    func owner(ofDescriptor h: UInt16) -> UInt16? {
        var best: UInt16?
        for v in characteristics.keys where v < h { if best.map({ v > $0 }) ?? true { best = v } }
        guard let v = best else { return nil }
        for d in declarations.keys where d > v && d < h { return nil }
        for s in services.keys where s > v && s <= h { return nil }
        return v
    }

    /// What discovery says handle `h` is.
    public func attribute(_ h: UInt16) -> GATTAttribute {
        let slot = Int(h) & (GATTDatabase.describedSlots - 1)
        if slot < described.count, let a = described[slot], a.handle == h { return a }
        let a = describe(h)
        if described.isEmpty { described.append(contentsOf: repeatElement(nil, count: GATTDatabase.describedSlots)) }
        described[slot] = a
        return a
    }

    private func forgetDescribed() {
        if !described.isEmpty { described.removeAll(keepingCapacity: true) }
    }

    private func describe(_ h: UInt16) -> GATTAttribute {
        let service = serviceStart(containing: h).flatMap { services[$0]?.uuid }
        if let c = characteristics[h] {
            return GATTAttribute(handle: h, role: .characteristicValue, uuid: c.uuid, characteristic: c.uuid,
                                 properties: c.properties, service: service)
        }
        if let d = descriptors[h] {
            let c = owner(ofDescriptor: h).flatMap { characteristics[$0] }
            return GATTAttribute(handle: h, role: .descriptor, uuid: d, characteristic: c?.uuid,
                                 properties: c?.properties, service: service)
        }
        if let v = declarations[h], let c = characteristics[v] {
            return GATTAttribute(handle: h, role: .characteristicDeclaration, uuid: BluetoothUUID(uuid16: 0x2803),
                                 characteristic: c.uuid, properties: c.properties, service: service)
        }
        if let s = services[h] {
            return GATTAttribute(handle: h, role: .service, uuid: s.uuid, characteristic: nil, properties: nil, service: nil)
        }
        if includes[h] != nil {
            return GATTAttribute(handle: h, role: .include, uuid: BluetoothUUID(uuid16: 0x2802), characteristic: nil,
                                 properties: nil, service: service)
        }
        if let t = typeHints[h] {
            return GATTAttribute(handle: h, role: .characteristicValue, uuid: t, characteristic: t, properties: nil, service: service)
        }
        return GATTAttribute(handle: h, role: .unknown, uuid: nil, characteristic: nil, properties: nil, service: service)
    }

    /// The characteristic value handle whose CCCD is at `h`, when `h` is a discovered CCCD.
    func characteristic(ofCCCD h: UInt16) -> UInt16? {
        // The described attribute answers without hashing the handle, except for a handle
        // discovered as a characteristic value, which may be listed as a descriptor too.
        let a = attribute(h)
        switch a.role {
        case .descriptor: guard a.uuid?.uuid16 == 0x2902 else { return nil }
        case .characteristicValue: guard descriptors[h]?.uuid16 == 0x2902 else { return nil }
        default: return nil
        }
        return owner(ofDescriptor: h)
    }

    /// Last value of a handle.
    public func lastValue(_ h: UInt16) -> GATTValue? { values[Key16(h)] }
    /// Subscription state of the characteristic whose value handle is `h`.
    public func subscription(_ valueHandle: UInt16) -> GATTSubscription? { subscriptions[valueHandle] }

    // MARK: The tree

    /// Services in handle order with their characteristics and descriptors.
    public var serviceTree: [GATTService] {
        let owned = descriptorsByCharacteristic()
        let sorted = sortedCharacteristics()
        return services.sorted { $0.key < $1.key }.map { start, s in
            let incs = includes.isEmpty ? []
                : includes.values.filter { start <= $0.handle && $0.handle <= s.end }.sorted { $0.handle < $1.handle }
            return GATTService(uuid: s.uuid, start: start, end: s.end, isPrimary: s.isPrimary, includes: incs,
                               characteristics: characteristicList(owned, sorted) { start <= $0 && $0 <= s.end })
        }
    }

    /// Characteristics whose declaration lies in no discovered service.
    public var orphanCharacteristics: [GATTCharacteristic] {
        characteristicList(descriptorsByCharacteristic(), sortedCharacteristics()) { serviceStart(containing: $0) == nil }
    }

    /// Handles with a value that discovery never placed in the tree, with the type a Read By
    /// Type showed when there was one.
    public var undiscoveredValues: [(handle: UInt16, type: BluetoothUUID?, value: GATTValue)] {
        values.keys.map(\.value).sorted().compactMap { h in
            guard characteristics[h] == nil, descriptors[h] == nil, let v = values[Key16(h)] else { return nil }
            return (h, typeHints[h], v)
        }
    }

    /// Descriptors of every characteristic (value handle → descriptor handles in order), in one
    /// pass over the handles: a declaration or a service start ends a characteristic.
    func descriptorsByCharacteristic() -> [UInt16: [UInt16]] {
        enum Kind { case boundary, value, descriptor }
        var marks: [(UInt16, Kind)] = []
        marks.reserveCapacity(services.count + declarations.count + characteristics.count + descriptors.count)
        for h in services.keys { marks.append((h, .boundary)) }
        for h in declarations.keys { marks.append((h, .boundary)) }
        for h in characteristics.keys { marks.append((h, .value)) }
        for h in descriptors.keys { marks.append((h, .descriptor)) }
        marks.sort { $0.0 < $1.0 }
        var out: [UInt16: [UInt16]] = [:]
        var current: UInt16?
        for (h, kind) in marks {
            switch kind {
            case .boundary: current = nil
            case .value: current = h
            case .descriptor: if let c = current { out[c, default: []].append(h) }
            }
        }
        return out
    }

    /// The characteristics by value handle, sorted once for every list taken from them.
    func sortedCharacteristics() -> [(key: UInt16, value: CharacteristicRecord)] { characteristics.sorted { $0.key < $1.key } }

    /// The characteristics of `sorted` whose declaration `declarationIn` accepts, in that order.
    func characteristicList(_ owned: [UInt16: [UInt16]], _ sorted: [(key: UInt16, value: CharacteristicRecord)],
                            where declarationIn: (UInt16) -> Bool) -> [GATTCharacteristic] {
        var list: [GATTCharacteristic] = []
        for (vh, c) in sorted where declarationIn(c.declaration) {
            let ds = (owned[vh] ?? []).compactMap { h in
                descriptors[h].map { GATTDescriptor(handle: h, uuid: $0, lastValue: values[Key16(h)]) }
            }
            list.append(GATTCharacteristic(declarationHandle: c.declaration, valueHandle: vh, properties: c.properties,
                                           uuid: c.uuid, descriptors: ds, subscription: subscriptions[vh],
                                           lastValue: values[Key16(vh)]))
        }
        return list
    }

    static func label(_ u: BluetoothUUID, _ name: String?, unknown: String) -> String {
        u.description + " " + (name ?? unknown)
    }

    static func range(_ a: UInt16, _ b: UInt16) -> String { Hex.prefixed(a, width: 4) + "–" + Hex.prefixed(b, width: 4) }

    /// The database as a GATT browser shows it:
    /// ```
    /// Service 0x180D Heart Rate (handles 0x000A–0x0010)
    ///   Characteristic 0x2A37 Heart Rate Measurement [notify] value 0x000C
    ///     Descriptor 0x2902 Client Characteristic Configuration (handle 0x000D): notifications on (frame 57)
    ///     Last value (frame 80): Heart Rate 72 bpm, RR 0.830 s
    /// ```
    public func textTree() -> String {
        var out = ""
        func characteristic(_ c: GATTCharacteristic, indent: String) {
            out += indent + "Characteristic " + GATTDatabase.label(c.uuid, AssignedNumbers.characteristicName(c.uuid),
                                                                   unknown: "Unknown Characteristic")
            out += " [" + c.properties.names.joined(separator: ", ") + "] value " + Hex.prefixed(c.valueHandle, width: 4) + "\n"
            for d in c.descriptors {
                out += indent + "  Descriptor " + GATTDatabase.label(d.uuid, AssignedNumbers.descriptorName(d.uuid),
                                                                      unknown: "Unknown Descriptor")
                out += " (handle " + Hex.prefixed(d.handle, width: 4) + ")"
                if d.uuid.uuid16 == 0x2902, let s = c.subscription {
                    out += ": " + s.description
                } else if let v = d.lastValue {
                    out += ": " + CharacteristicValues.describe(d.uuid, v.bytes[...]) + " (frame \(v.frame))"
                }
                out += "\n"
            }
            if let v = c.lastValue {
                out += indent + "  Last value (frame \(v.frame)): " + CharacteristicValues.describe(c.uuid, v.bytes[...]) + "\n"
            }
        }
        for s in serviceTree {
            out += (s.isPrimary ? "Service " : "Secondary Service ")
                + GATTDatabase.label(s.uuid, AssignedNumbers.serviceName(s.uuid), unknown: "Unknown Service")
                + " (handles " + GATTDatabase.range(s.start, s.end) + ")\n"
            for i in s.includes {
                out += "  Include " + (i.uuid.map { GATTDatabase.label($0, AssignedNumbers.serviceName($0), unknown: "Unknown Service") + " " } ?? "")
                    + "(handles " + GATTDatabase.range(i.start, i.end) + ") at " + Hex.prefixed(i.handle, width: 4) + "\n"
            }
            for c in s.characteristics { characteristic(c, indent: "  ") }
        }
        let orphans = orphanCharacteristics
        if !orphans.isEmpty {
            out += "Characteristics outside any discovered service\n"
            for c in orphans { characteristic(c, indent: "  ") }
        }
        let undiscovered = undiscoveredValues
        if !undiscovered.isEmpty {
            out += "Handles never discovered\n"
            for (h, t, v) in undiscovered {
                out += "  Handle " + Hex.prefixed(h, width: 4) + (t.map { " " + attUUIDName($0) } ?? "")
                    + " last value (frame \(v.frame)): " + CharacteristicValues.describe(t, v.bytes[...]) + "\n"
            }
        }
        return out
    }

    /// The same tree as fields, for JSON and verbose output.
    public var fields: [Field] {
        func characteristic(_ c: GATTCharacteristic) -> Field {
            var f = uuidField(c.uuid, label: "Characteristic")
            f.children += [
                Field("Declaration Handle", .uint(UInt64(c.declarationHandle), hex: 4)),
                Field("Value Handle", .uint(UInt64(c.valueHandle), hex: 4)),
                Field("Properties", .flags(UInt64(c.properties.rawValue), hex: 2, c.properties.setNames)),
            ]
            for d in c.descriptors {
                var df = uuidField(d.uuid, label: "Descriptor")
                df.children.append(.handle(d.handle))
                if let v = d.lastValue {
                    df.children.append(Field("Last Value", .none, [Field("Frame", .uint(UInt64(v.frame), hex: 0))]
                                             + CharacteristicValues.fields(d.uuid, v.bytes[...])))
                }
                f.children.append(df)
            }
            if let s = c.subscription {
                f.children.append(Field("Subscription", .text(GATTSubscription.describe(notify: s.notify, indicate: s.indicate)), [
                    Field("Notifications", .bool(s.notify)), Field("Indications", .bool(s.indicate)),
                    Field("Frame", .uint(UInt64(s.frame), hex: 0)),
                ]))
            }
            if let v = c.lastValue {
                f.children.append(Field("Last Value", .none, [Field("Frame", .uint(UInt64(v.frame), hex: 0))]
                                        + CharacteristicValues.fields(c.uuid, v.bytes[...])))
            }
            return f
        }
        var out: [Field] = serviceTree.map { s in
            var f = uuidField(s.uuid, label: s.isPrimary ? "Primary Service" : "Secondary Service")
            f.children += [Field("Start Handle", .uint(UInt64(s.start), hex: 4)),
                           Field("End Handle", .uint(UInt64(s.end), hex: 4))]
            for i in s.includes {
                f.children.append(Field("Include", i.uuid.map { .uuid($0) } ?? .none, [
                    .handle(i.handle), Field("Included Service Handle", .uint(UInt64(i.start), hex: 4)),
                    Field("End Group Handle", .uint(UInt64(i.end), hex: 4)),
                ]))
            }
            f.children += s.characteristics.map(characteristic)
            return f
        }
        let orphans = orphanCharacteristics
        if !orphans.isEmpty { out.append(Field("Characteristics Outside Services", .none, orphans.map(characteristic))) }
        let undiscovered = undiscoveredValues
        if !undiscovered.isEmpty {
            out.append(Field("Undiscovered Handles", .none, undiscovered.map { (h, t, v) in
                Field("Handle", .uint(UInt64(h), hex: 4), (t.map { [uuidField($0)] } ?? []) + [
                    Field("Frame", .uint(UInt64(v.frame), hex: 0)),
                    Field("Last Value", .none, CharacteristicValues.fields(t, v.bytes[...])),
                ])
            }))
        }
        return out
    }
}

/// Whose attribute database: this host's GATT server on one adapter, or a peer's.
public enum GATTServer: Hashable, Sendable {
    case local(adapter: UInt16)
    case peer(PeerKey)

    /// The peer, for a peer's server.
    public var peer: PeerKey? {
        if case .peer(let p) = self { return p }
        return nil
    }
}

/// Every server database seen in a capture, keyed by server (the dissector keys them by
/// `GATTServer`: a peer by address and address type), so later connections to the same peer
/// reuse what earlier discovery found. A concrete key, not `AnyHashable`: comparing boxed keys
/// cost thousands of instructions at every connection.
public final class GATTStore<Key: Hashable> {
    /// Peers whose databases are kept. Each connection to a new address makes one, and a crafted
    /// capture can name a new address on every reuse of a handle; past the cap a peer's database
    /// still serves its connection (values are decoded) but is not kept for `gatt` or reports.
    public static var maxDatabases: Int { 4096 }
    private var byKey: [Key: GATTDatabase] = [:]
    private var order: [Key] = []
    /// Databases made past `maxDatabases` and not kept.
    public private(set) var databasesNotKept = 0
    /// Bearers made so far: each one's `serial`.
    private var bearersMade = 0
    /// The result the store's bearers hand out, shared by all of them.
    private let results = ATTResultSlot()

    public init() {}

    /// The database of `peer`, created empty on first use.
    public func database(for peer: Key) -> GATTDatabase {
        if let d = byKey[peer] { return d }
        let d = GATTDatabase()
        guard byKey.count < GATTStore.maxDatabases else {
            databasesNotKept += 1
            return d
        }
        byKey[peer] = d
        order.append(peer)
        return d
    }

    /// Databases in the order their peers first appeared.
    public var databases: [(key: Key, database: GATTDatabase)] {
        order.compactMap { k in byKey[k].map { (k, $0) } }
    }

    /// Ends what is pending at the end of the capture (`GATTDatabase.settle`).
    public func finish() {
        for d in byKey.values { d.settle() }
    }

    /// A new bearer between this host (`local`) and `remote`, sharing their databases: `reusing`,
    /// a bearer of this store that nothing holds any more, made new, when there is one.
    public func bearer(local: Key, remote: Key, mtu: Int = ATTBearer.defaultMTU, reusing spare: ATTBearer? = nil) -> ATTBearer {
        bearersMade += 1
        if let spare {
            spare.reuse(local: database(for: local), remote: database(for: remote), mtu: mtu, serial: bearersMade)
            return spare
        }
        return ATTBearer(local: database(for: local), remote: database(for: remote), mtu: mtu, serial: bearersMade, results: results)
    }
}

/// Where bearers keep the result they handed out last, to fill it again once nobody else holds
/// it. One slot serves every bearer of a store: a result holds its PDU's bytes, and so the block of
/// the capture they were read into; kept per bearer, each connection gone quiet (and every ended
/// one a pass keeps) would keep a block of the capture in memory.
///
/// The slot also keeps the storage of an answered request's handles and written value for the
/// next request on any bearer (`ATTBearer.refill`): requests over and over, and later connections,
/// then allocate none for them.
final class ATTResultSlot {
    var result: ATTResult?
    var spareHandles: [UInt16] = []
    var spareWritten: [UInt8] = []
}

// MARK: Bearer

/// A request (or indication) waiting for its response (or confirmation).
public struct ATTTransaction: Equatable, Sendable {
    public let frame: Int
    public let opcode: ATTOpcode
    /// Nanoseconds, the capture's clock.
    public let time: Int64
    /// The side that sent the request.
    public let side: Side
}

/// The request a response answers.
public struct ATTRequestInfo: Sendable {
    public let frame: Int
    public let opcode: ATTOpcode
    /// Response time minus request time, in nanoseconds.
    public let rtt: Int64
}

/// Something the bearer noticed about a PDU.
public enum ATTNote: Equatable, Sendable, CustomStringConvertible {
    /// A request sent while the one in `frame` still had no response (Vol 3 Part F 3.3.2).
    case pipelined(pendingFrame: Int)
    /// On a lossy capture (a sniffer's), a new request while one is pending means its response was
    /// not captured: the new request replaces it.
    case responseNotCaptured(pendingFrame: Int)
    /// The transaction got no response within 30 s (Vol 3 Part F 3.3.3).
    case timedOut(ATTTransaction)
    case undiscoveredHandle(UInt16)
    case malformed(String)
    /// A response whose opcode does not answer the pending request.
    case unexpectedResponse(expected: ATTOpcode)
    /// A response (or confirmation) with no request pending.
    case unsolicited
    case mtu(Int)
    /// A long value put together from `pieces` reads or prepared writes.
    case reassembled(length: Int, complete: Bool)
    /// A Read Blob or prepared write that does not continue the value so far.
    case offsetGap(have: Int, offset: Int)
    case prepareQueueFull
    case subscription(GATTSubscription)
    case executed(writes: Int)
    case cancelled(writes: Int)
    /// The PDU is longer than the bearer's ATT_MTU (Vol 3 Part F 3.2.8).
    case exceedsMTU(length: Int, mtu: Int)

    public var description: String { TextLine.make(write) }

    /// The note written in place: a stream of requests notes the same few things frame after frame.
    func write(to s: inout TextLine) {
        switch self {
        case .pipelined(let f):
            s += "pipelined: request sent before the response to frame "
            s.write(f)
        case .responseNotCaptured(let f):
            s += "the response to frame "
            s.write(f)
            s += " was not captured"
        case .timedOut(let t):
            s += "transaction timeout: "
            s.write(plain: t.opcode.name)
            s += " in frame "
            s.write(t.frame)
            s += " got no response within 30 s"
        case .undiscoveredHandle(let h):
            s += "handle "
            s.write(hex: h, width: 4)
            s += " never discovered"
        case .malformed(let why):
            s += "malformed: "
            s.write(why)
        case .unexpectedResponse(let e):
            s += "unexpected response: the pending request expects "
            s.write(plain: e.name)
        case .unsolicited: s += "no request pending"
        case .mtu(let m):
            s += "ATT_MTU "
            s.write(m)
        case .reassembled(let n, let complete):
            s += "long value: "
            s.write(n)
            s += complete ? " bytes" : " bytes so far"
        case .offsetGap(let have, let o):
            s += "offset "
            s.write(o)
            s += " does not continue the "
            s.write(have)
            s += " bytes so far"
        case .prepareQueueFull: s += "prepare queue full: write not tracked"
        case .subscription(let sub): sub.write(to: &s)
        case .executed(let n):
            s += "executed "
            s.write(n)
            s += n == 1 ? " prepared write" : " prepared writes"
        case .cancelled(let n):
            s += "cancelled "
            s.write(n)
            s += n == 1 ? " prepared write" : " prepared writes"
        case .exceedsMTU(let n, let m):
            s += "PDU of "
            s.write(n)
            s += " bytes exceeds ATT_MTU "
            s.write(m)
        }
    }
}

/// One attribute a PDU concerns, and the value it carries for it (whole when reassembled).
public struct ATTResultEntry: Sendable {
    public let attribute: GATTAttribute
    public let value: Bytes?
    /// The service an Include declaration names (Read By Type of 0x2802).
    public var include: GATTInclude? = nil
    /// What a Characteristic declaration declares (Read By Type of 0x2803): its value's handle and UUID.
    public var declaredValueHandle: UInt16? = nil
    public var declaredUUID: BluetoothUUID? = nil
}

/// What the bearer knows about one PDU beyond its bytes. A class: a frame's decode carries it and
/// is passed around by value, and one reference copies cheaper than this many fields. Only the
/// bearer fills it in, before handing it out; it hands the same object out again, refilled, once
/// nothing else holds it (`ATTBearer.process`), so a stream of PDUs allocates nothing.
public final class ATTResult {
    public private(set) var pdu: ATTPDU
    public private(set) var side: Side
    /// The request this response (or confirmation) answers.
    public internal(set) var request: ATTRequestInfo?
    /// Attributes concerned, with their values (one for most PDUs).
    public internal(set) var entries: [ATTResultEntry] = []
    public internal(set) var notes = SmallList<ATTNote>()
    /// A request sent while another was pending (its note is among `notes`): the audit asks it of
    /// every request, and reading the notes for it copied each.
    public internal(set) var pipelined = false
    /// Whether a note says a declaration is too short for its type: the one note
    /// `hasFieldFaults` looks for, so that the notes of other PDUs are not read for it.
    private var declarationFault = false
    /// The entries' values were judged as they were added (`ATTBearer.judgesValues`), and whether
    /// one does not decode as its characteristic's format.
    var valuesJudged = false
    var valueFault = false

    /// A declaration too short for its type (found only knowing the request), as a note.
    func noteDeclarationFault(_ what: String) {
        notes.append(.malformed(what))
        declarationFault = true
    }

    /// A result for the bearer to fill: its PDU is moved in last (`hold`).
    init(side: Side) {
        pdu = ATTResult.noPDU
        self.side = side
    }

    /// What a new result holds until its PDU is moved in.
    static let noPDU = ATTPDU(Bytes())

    /// Empties it for another PDU, keeping the room its entries took. The PDU itself is moved in
    /// once the bearer is done with it (`hold`): storing a copy first costs a retain per reference.
    func reset(side: Side) {
        self.side = side
        request = nil
        // Most PDUs concern one attribute: dropping it is cheaper than the generic removeAll.
        while entries.popLast() != nil {}
        if !notes.isEmpty { notes.removeAll() }
        pipelined = false
        declarationFault = false
        valuesJudged = false
        valueFault = false
    }

    func hold(_ bytes: consuming Bytes, _ layout: ATTLayout) { pdu = ATTPDU(bytes, layout) }

    /// Lends the PDU held to `body`, where it lies.
    @inline(__always) func withPDU<R>(_ body: (borrowing ATTPDU) -> R) -> R { pdu.lend(body) }

    public var attribute: GATTAttribute? { entries.first?.attribute }
    public var value: Bytes? { entries.first?.value }

    /// The text of the attributes described, by handle, kept across refills: values are written
    /// and notified over and over on a few attributes, and their text is then made once rather
    /// than per frame. A handle's text before (`displaced`) is kept too: one handle names two
    /// attributes by turns when two peers' databases share it, or a database before and after a
    /// rediscovery.
    private var described: [Key16: Described] = [:]
    private var displaced: [Key16: Described] = [:]
    /// A struct, not a tuple: a tuple read out of the dictionary was copied through its run-time
    /// metadata (about 55 instructions a frame on `-v`).
    private struct Described {
        let attribute: GATTAttribute
        let text: String
        let plain: Bool
    }
    /// Attributes whose text is kept at most (then the texts are made afresh).
    private static let describedLimit = 64

    /// With whether its text is plain (`TextLine.write(plain:)`).
    func describe(_ a: GATTAttribute) -> (text: String, plain: Bool) {
        if let d = described[Key16(a.handle)], d.attribute == a { return (d.text, d.plain) }
        return describeAgain(a)
    }

    /// `describe` of an attribute whose text is not the one kept for its handle.
    @inline(never)
    private func describeAgain(_ a: GATTAttribute) -> (text: String, plain: Bool) {
        let h = Key16(a.handle)
        let current = described[h]
        let d: Described
        if let before = displaced[h], before.attribute == a {
            d = before
        } else {
            let (text, plain) = TextLine.makeChecked(a.writeDescription)
            d = Described(attribute: a, text: text, plain: plain)
            if described.count >= ATTResult.describedLimit {
                described.removeAll(keepingCapacity: true)
                displaced.removeAll(keepingCapacity: true)
            }
        }
        described[h] = d
        displaced[h] = current
        return (d.text, d.plain)
    }
}

extension ATTResult: Dissectable {
    /// The PDU's summary, then what it concerns and its value decoded.
    public var summary: String { TextLine.make(writeSummary) }

    public func writeSummary(to s: inout TextLine) {
        pdu.lend { $0.writeSummary(to: &s) }
        if pdu.opcode == .readByGroupTypeResponse || pdu.opcode == .readByTypeResponse,
           let first = entries.first, first.attribute.role == .service || first.attribute.role == .characteristicDeclaration {
            // Discovery: name what was found, as tshark does.
            s += " — "
            var separator = false
            for e in entries {
                guard let u = e.attribute.characteristic ?? e.attribute.uuid else { continue }
                if separator { s += ", " }
                separator = true
                writeATTUUIDName(u, to: &s)
            }
        } else {
            // By index: copying each entry out would copy its attribute and value too.
            for i in entries.indices {
                s += " — "
                // Text with names looked up is kept (`describe`); a bare handle costs less written again.
                if entries[i].attribute.uuid != nil || entries[i].attribute.service != nil {
                    let d = describe(entries[i].attribute)
                    if d.plain { s.write(plain: d.text) } else { s.write(d.text) }
                } else {
                    entries[i].attribute.writeDescription(to: &s)
                }
                if let v = entries[i].value, pdu.opcode != .readBlobRequest, let u = entries[i].attribute.valueUUID {
                    CharacteristicValues.writeSummary(u, v, prefix: ": ", to: &s)
                }
            }
        }
        // By index, the kind tested before the note is read: iterating copied every note.
        for i in notes.indices {
            switch notes[i] {
            case .pipelined, .responseNotCaptured, .timedOut, .unexpectedResponse, .exceedsMTU:
                s += " ["
                notes[i].write(to: &s)
                s.write(byte: UInt8(ascii: "]"))
            default: break
            }
        }
    }

    public var fields: [Field] { FieldList.build(writeFields) }

    /// Whether `writeFields` marks a fault the PDU's own decode did not report: a handle range
    /// out of order, a declaration too short for its type, a SIG characteristic value that does not
    /// decode. Checked without writing the fields.
    public var hasFieldFaults: Bool {
        if let r = pdu.parameters.range, !r.isValid { return true }
        if declarationFault {
            for n in notes { if case .malformed(let why) = n, why != pdu.fault?.description { return true } }
        }
        if valuesJudged { return valueFault }
        // By index: copying each entry out would copy its attribute too.
        for i in entries.indices {
            guard let u = entries[i].attribute.valueUUID, let v = entries[i].value else { continue }
            if CharacteristicValues.decodes(u, v) == false { return true }
        }
        return false
    }

    /// The PDU's own fields, then what the bearer adds: request pairing, attributes, decoded values, notes.
    public func writeFields(to out: FieldSink) {
        pdu.lend { $0.writeFields(to: out) }
        if let r = request {
            out.begin("Request In Frame", .uint(UInt64(r.frame), hex: 0))
            out.add("Request Opcode", .named(UInt64(r.opcode.rawValue), hex: 2, r.opcode.label))
            out.end()
            out.add("Response Time", .quantity(UInt64(max(0, r.rtt)), hex: 0, Double(r.rtt) / 1e6, unit: "ms"))
        }
        // Each entry written where it lies (`writeEntry` through `inout`): copying it out retained
        // its attribute's and value's storage.
        for i in entries.indices { writeEntry(&entries[i], to: out) }
        for n in notes {
            if case .malformed(let why) = n {
                // The PDU's own fields say its own fault; a declaration too short for its type
                // (found only knowing the request) is said here, so the frame counts as malformed.
                if why != pdu.malformed { out.malformed(why + " too short") }
                continue
            }
            out.add("Note", .derived(.attNote(n)))
        }
    }

    private func writeEntry(_ e: inout ATTResultEntry, to out: FieldSink) {
        out.begin("Attribute", .text(describe(e.attribute).text))
        out.add("Handle", .uint(UInt64(e.attribute.handle), hex: 4))
        if let u = e.attribute.uuid { writeUUIDField(u, to: out) }
        if let p = e.attribute.properties { out.add("Properties", .flags(UInt64(p.rawValue), hex: 2, p.setNames)) }
        if let h = e.declaredValueHandle { out.add("Characteristic Value Handle", .uint(UInt64(h), hex: 4)) }
        if let u = e.declaredUUID { writeUUIDField(u, label: "Characteristic UUID", to: out) }
        if let i = e.include {
            out.add("Included Service Handle", .uint(UInt64(i.start), hex: 4))
            out.add("End Group Handle", .uint(UInt64(i.end), hex: 4))
            // A 128-bit service UUID is not in the declaration: a Read of the start handle gives it.
            if let u = i.uuid { writeUUIDField(u, label: "Service UUID", to: out) }
        }
        if let v = e.value {
            out.begin("Decoded Value", .none)
            CharacteristicValues.writeFields(e.attribute.valueUUID, v, to: out)
            out.end()
        }
        out.end()
    }
}

/// One ATT bearer (the LE fixed channel 0x0004 of a connection, or an EATT channel). Feed it
/// every PDU in capture order; it pairs requests with responses, tracks ATT_MTU and
/// transaction timeouts, and keeps both sides' GATT databases up to date.
public final class ATTBearer {
    /// Default ATT_MTU on LE (Vol 3 Part F 3.2.8).
    public static let defaultMTU = 23
    /// Vol 3 Part F 3.3.3.
    public static let transactionTimeout: Int64 = 30_000_000_000
    /// Bound on queued Prepare Write Requests per client.
    public static let maxPreparedWrites = 64
    /// Bound on requests tracked as pending per side (only pipelining peers queue more than one).
    static let maxPending = 16

    /// Database of this host (the server that answers the peer's requests).
    public private(set) var local: GATTDatabase
    /// Database of the peer.
    public private(set) var remote: GATTDatabase
    /// Rx MTU each side announced in an Exchange MTU PDU.
    public private(set) var localRxMTU: UInt16?
    public private(set) var remoteRxMTU: UInt16?
    public private(set) var mtu: Int = ATTBearer.defaultMTU
    /// The capture may miss PDUs (over-the-air sniffing): a request pending when the next one is
    /// sent lost its response in the capture rather than being pipelined, so responses pair with
    /// the latest request, unless the link layer shows that nothing was missed in between.
    public var lossy = false
    /// False where nothing reads attribute values (the audit, `links`, `diff`): a value notified,
    /// indicated, read or written is then not kept in the database (a dictionary update for each),
    /// nor a long read's pieces put together. Each PDU's result still names its attributes; a
    /// notification's or a read response's entry then holds no value (slicing it out is a retain
    /// and a release for each).
    public var keepsValues = true
    /// Whether a notified value is judged against its characteristic's format as it is notified
    /// (`ATTResult.valueFault`), for a dissector that asks every frame's malformed verdict: read
    /// back out of the result, each entry was copied whole first.
    public var judgesValues = false
    /// On a lossy capture, how many times the link layer has seen the sniffer miss packets so far
    /// (`Connection.linkLosses`).
    var losses = 0
    /// Transactions that went 30 s without an answer.
    public private(set) var timedOut: [ATTTransaction] = []

    struct Pending {
        var tx: ATTTransaction
        var handle: UInt16?
        var offset: UInt16?
        var type: BluetoothUUID?
        /// Find By Type Value: the service UUID searched for.
        var searched: BluetoothUUID?
        /// Read Multiple (Variable) Request handles, to name the response's values.
        var handles: [UInt16] = []
        /// Write Request value, applied to the database when the Write Response confirms it.
        var written: [UInt8]?
        /// `losses` when it was sent: unchanged since, no response can have been missed.
        var lossMark = 0
    }

    struct PreparedWrite { var handle: UInt16; var offset: Int; var value: [UInt8] }

    var pending = BothSides<[Pending]>(local: [], remote: [])
    var pendingIndications = BothSides<[Pending]>(local: [], remote: [])
    /// No pending transaction times out before this time (a bound, lowered as requests are
    /// queued and made exact by each sweep): a PDU before it sweeps no queue.
    private var expiresAfter = Int64.max
    /// The result handed out last (`process`), shared with the store's other bearers.
    private let results: ATTResultSlot
    var prepared = BothSides<[PreparedWrite]>(local: [], remote: [])

    /// - Parameter mtu: ATT_MTU before any exchange: 23 on the LE fixed channel; an EATT
    ///   channel's ATT_MTU is its L2CAP MTU (at least 64), which the dissector knows.
    /// `serial` tells this bearer from the others on the same databases (`GATTStore` numbers the
    /// bearers it makes).
    public convenience init(local: GATTDatabase, remote: GATTDatabase, mtu: Int = ATTBearer.defaultMTU, serial: Int) {
        self.init(local: local, remote: remote, mtu: mtu, serial: serial, results: ATTResultSlot())
    }

    init(local: GATTDatabase, remote: GATTDatabase, mtu: Int, serial: Int, results: ATTResultSlot) {
        self.results = results
        self.local = local
        self.remote = remote
        self.mtu = mtu
        initialMTU = mtu
        self.serial = serial
    }

    /// Made new for a later connection (`GATTStore.bearer(…reusing:)`): every value as `init`
    /// sets it, the queues' storage kept.
    func reuse(local: GATTDatabase, remote: GATTDatabase, mtu: Int, serial: Int) {
        self.local = local
        self.remote = remote
        self.mtu = mtu
        initialMTU = mtu
        self.serial = serial
        localRxMTU = nil
        remoteRxMTU = nil
        lossy = false
        keepsValues = true
        judgesValues = false
        losses = 0
        timedOut.removeAll(keepingCapacity: true)
        pending.local.removeAll(keepingCapacity: true)
        pending.remote.removeAll(keepingCapacity: true)
        pendingIndications.local.removeAll(keepingCapacity: true)
        pendingIndications.remote.removeAll(keepingCapacity: true)
        expiresAfter = .max
        prepared.local.removeAll(keepingCapacity: true)
        prepared.remote.removeAll(keepingCapacity: true)
    }

    /// What a database knows this bearer by. Not its `ObjectIdentifier`: that is an address, which
    /// a later connection's bearer can take over once an ended one is freed (the audit keeps no
    /// ended connection), and a rediscovery on the later connection then went unseen.
    private(set) var serial: Int

    private(set) var initialMTU: Int

    func database(of side: Side) -> GATTDatabase { side == .local ? local : remote }

    /// Handles one PDU sent by `side` in frame `frame` at `time` (ns).
    public func process(_ pdu: ATTPDU, from side: Side, frame: Int, time: Int64) -> ATTResult {
        process(pdu.bytes, pdu.layout, from: side, frame: frame, time: time)
    }

    /// The same, for a PDU's bytes and the fields read from them: kept apart, the fields are plain
    /// values, where each read of a field of a whole `ATTPDU` copied it and retained its bytes.
    public func process(_ bytes: consuming Bytes, _ layout: ATTLayout, from side: Side, frame: Int, time: Int64) -> ATTResult {
        let kind = layout.kind, parameters = layout.parameters, fault = layout.fault, length = bytes.count
        let result: ATTResult
        if isKnownUniquelyReferenced(&results.result), let s = results.result {
            // The last result handed out is held by nobody else any more: it is filled again.
            result = s
            result.reset(side: side)
        } else {
            result = ATTResult(side: side)
            results.result = result
        }
        // The server of this PDU was in use: its current version holds up to here.
        switch kind {
        case .request, .command, .confirmation: database(of: side.other).touch(frame, by: self)
        case .response, .notification, .indication: database(of: side).touch(frame, by: self)
        case .unknown: break
        }
        expire(before: time, into: &result.notes)
        if let fault { result.notes.append(.malformed(fault.description)) }
        if length > mtu { result.notes.append(.exceedsMTU(length: length, mtu: mtu)) }
        // The result takes the bytes first, and each handler borrows its PDU where it lies: a PDU
        // made for a handler from a copy of the bytes cost a retain, a release and its destroy.
        result.hold(bytes, layout)
        switch kind {
        case .request: result.withPDU { request($0, side, frame, time, result) }
        case .response: result.withPDU { response($0, side, frame, time, result) }
        case .command: result.withPDU { write($0, server: database(of: side.other), frame, result, apply: true) }
        case .notification:
            let db = database(of: side)
            if case .handleValue(let h, let span) = parameters {
                if keepsValues {
                    let v = result.withPDU { $0[span] }
                    keep(h, v, in: db, frame: frame)
                    let a = db.attribute(h)
                    if judgesValues { judge(a, v, result) }
                    entry(a, h, v, result)
                } else {
                    entry(db, h, nil, result)
                }
            } else {
                for hv in result.withPDU({ $0.handleValues }) {
                    keep(hv.handle, hv.value, in: db, frame: frame)
                    entry(db, hv.handle, hv.value, result)
                }
            }
        case .indication:
            let db = database(of: side)
            let (handle, value) = result.withPDU { ($0.handle, $0.value) }
            if let h = handle, let v = value {
                keep(h, v, in: db, frame: frame)
                entry(db, h, v, result)
                // Service Changed: the names stay useful until the client rediscovers, which
                // then starts a new version if the database did change.
                if db.attribute(h).uuid == GATTDatabase.serviceChangedUUID, let start = v.le16(0), let end = v.le16(2) {
                    db.serviceChanged(start: start, end: end, frame: frame)
                }
            }
            enqueue(&pendingIndications[side], Pending(tx: ATTTransaction(frame: frame, opcode: layout.opcode, time: time, side: side)), result)
        case .confirmation:
            if pendingIndications[side.other].isEmpty {
                result.notes.append(.unsolicited)
            } else {
                let p = pendingIndications[side.other].count == 1 ? pendingIndications[side.other].removeLast()
                    : pendingIndications[side.other].removeFirst()
                result.request = ATTRequestInfo(frame: p.tx.frame, opcode: p.tx.opcode, rtt: time &- p.tx.time)
            }
        case .unknown: break
        }
        return result
    }

    /// Transactions still open at the end of the capture that have timed out by `time`.
    @discardableResult
    public func finish(at time: Int64) -> [ATTTransaction] {
        var notes = SmallList<ATTNote>()
        expire(before: time, into: &notes)
        return notes.compactMap { if case .timedOut(let t) = $0 { return t } else { return nil } }
    }

    func expire(before time: Int64, into notes: inout SmallList<ATTNote>) {
        guard time > expiresAfter else { return }
        var next = Int64.max
        // The first request's time read in place: binding `q.first` copies the whole request.
        func sweep(_ q: inout [Pending]) {
            while !q.isEmpty, time &- q[0].tx.time > ATTBearer.transactionTimeout {
                let tx = q.removeFirst().tx
                timedOut.append(tx)
                notes.append(.timedOut(tx))
            }
            if !q.isEmpty { next = min(next, q[0].tx.time &+ ATTBearer.transactionTimeout) }
        }
        sweep(&pending.local)
        sweep(&pendingIndications.local)
        sweep(&pending.remote)
        sweep(&pendingIndications.remote)
        expiresAfter = next
    }

    func enqueue(_ q: inout [Pending], _ p: consuming Pending, _ result: ATTResult) {
        p.lossMark = losses
        if lossy, let last = q.last, last.lossMark != losses {
            result.notes.append(.responseNotCaptured(pendingFrame: last.tx.frame))
            q.removeAll()
        }
        if let last = q.last {
            result.notes.append(.pipelined(pendingFrame: last.tx.frame))
            result.pipelined = true
        }
        if q.count >= ATTBearer.maxPending { q.removeFirst() }
        expiresAfter = min(expiresAfter, p.tx.time &+ ATTBearer.transactionTimeout)
        q.append(p)
    }

    /// `value` is consumed: moved into the entry where it is the caller's last use.
    func entry(_ db: GATTDatabase, _ h: UInt16, _ value: consuming Bytes?, _ result: ATTResult) {
        entry(db.attribute(h), h, value, result)
    }

    func entry(_ a: GATTAttribute, _ h: UInt16, _ value: consuming Bytes?, _ result: ATTResult) {
        if a.role == .unknown { result.notes.append(.undiscoveredHandle(h)) }
        result.entries.append(ATTResultEntry(attribute: a, value: value))
    }

    /// The one entry's value against its characteristic's format, while both are at hand.
    private func judge(_ a: GATTAttribute, _ v: Bytes, _ result: ATTResult) {
        result.valuesJudged = true
        if let u = a.valueUUID, CharacteristicValues.decodes(u, v) == false { result.valueFault = true }
    }

    // MARK: Requests

    func request(_ pdu: ATTPDU, _ side: Side, _ frame: Int, _ time: Int64, _ result: ATTResult) {
        let server = database(of: side.other)
        var searched: BluetoothUUID?, handles: [UInt16] = [], written: [UInt8]?
        switch pdu.opcode {
        case .exchangeMTURequest:
            if let m = pdu.mtu { setRxMTU(m, side, result) }
        case .findByTypeValueRequest:
            if let v = pdu.value { searched = BluetoothUUID(littleEndian: v) }
        case .readRequest, .readBlobRequest:
            if let h = pdu.handle { entry(server, h, nil, result) }
        case .readMultipleRequest, .readMultipleVariableRequest:
            let list = pdu.handleList
            handles = ATTBearer.refill(&results.spareHandles, with: list)
            for h in list { entry(server, h, nil, result) }
        case .writeRequest:
            write(pdu, server: server, frame, result, apply: false)
            // Where values are not kept, only the first octet counts (a CCCD's bits).
            if let v = pdu.value { written = ATTBearer.refill(&results.spareWritten, with: v.prefix(keepsValues ? GATTDatabase.maxValueLength : 1)) }
        case .prepareWriteRequest:
            if let h = pdu.handle, let o = pdu.offset, let v = pdu.value {
                entry(server, h, v, result)
                if prepared[side].count >= ATTBearer.maxPreparedWrites {
                    result.notes.append(.prepareQueueFull)
                } else {
                    prepared[side].append(PreparedWrite(handle: h, offset: Int(o), value: Array(v.prefix(GATTDatabase.maxValueLength))))
                }
            }
        case .executeWriteRequest:
            let queue = prepared[side]
            prepared[side] = []
            if case .executeWrite(let flags) = pdu.parameters, flags == 1 {
                result.notes.append(.executed(writes: queue.count))
                executePrepared(queue, server, frame, result)
            } else {
                result.notes.append(.cancelled(writes: queue.count))
            }
        default: break
        }
        // Made in the call, and so moved into the queue: a request built in a variable was copied
        // into it (retaining its lists), then destroyed.
        enqueue(&pending[side], Pending(tx: ATTTransaction(frame: frame, opcode: pdu.opcode, time: time, side: side),
                                        handle: pdu.handle, offset: pdu.offset, type: pdu.attributeType,
                                        searched: searched, handles: handles, written: written), result)
    }

    /// `elements` in the storage `spare` held, taken from it (emptied, its room kept).
    private static func refill<C: Collection>(_ spare: inout [C.Element], with elements: C) -> [C.Element] {
        var a: [C.Element] = []
        swap(&a, &spare)
        a.removeAll(keepingCapacity: true)
        a.append(contentsOf: elements)
        return a
    }

    /// An answered request's storage, kept for the next request (`refill`).
    private func recycle(_ p: Pending?) {
        guard let p else { return }
        if p.handles.capacity > results.spareHandles.capacity { results.spareHandles = p.handles }
        if let w = p.written, w.capacity > results.spareWritten.capacity { results.spareWritten = w }
    }

    /// `v` as `h`'s value in `db`, where values are kept.
    @inline(__always) func keep(_ h: UInt16, _ v: Bytes, in db: GATTDatabase, frame: Int) {
        if keepsValues { db.setValue(h, v, frame: frame) }
    }

    func setRxMTU(_ m: UInt16, _ side: Side, _ result: ATTResult) {
        if side == .local { localRxMTU = m } else { remoteRxMTU = m }
        if let a = localRxMTU, let b = remoteRxMTU {
            mtu = max(initialMTU, Int(min(a, b)))
            result.notes.append(.mtu(mtu))
        }
    }

    /// Long writes: each handle's pieces laid at their offsets, in the order they were queued.
    func executePrepared(_ queue: [PreparedWrite], _ server: GATTDatabase, _ frame: Int, _ result: ATTResult) {
        var order: [UInt16] = []
        var buffers: [UInt16: [UInt8]] = [:]
        for w in queue {
            var buf = buffers[w.handle] ?? []
            if buffers[w.handle] == nil { order.append(w.handle) }
            if w.offset <= buf.count {
                buf.removeSubrange(w.offset...)
                buf += w.value.prefix(GATTDatabase.maxValueLength - w.offset)
            } else {
                result.notes.append(.offsetGap(have: buf.count, offset: w.offset))
            }
            buffers[w.handle] = buf
        }
        for h in order {
            let buf = buffers[h] ?? []
            keep(h, buf[...], in: server, frame: frame)
            result.notes.append(.reassembled(length: buf.count, complete: true))
            entry(server, h, buf[...], result)
        }
    }

    /// Write Request, Write Command, Signed Write Command: the server's value, and CCCD state.
    /// Write Request, Write Command, Signed Write Command. A request's value reaches the
    /// database only when the Write Response confirms it (`apply` false).
    func write(_ pdu: ATTPDU, server: GATTDatabase, _ frame: Int, _ result: ATTResult, apply: Bool) {
        guard let h = pdu.handle, let v = pdu.value else { return }
        entry(server, h, v, result)
        if let s = store(h, v, server, frame, apply: apply) { result.notes.append(.subscription(s)) }
    }

    /// Records a written value; a CCCD write also sets its characteristic's subscription.
    @discardableResult
    func store(_ h: UInt16, _ v: Bytes, _ server: GATTDatabase, _ frame: Int, apply: Bool) -> GATTSubscription? {
        if apply { keep(h, v, in: server, frame: frame) }
        guard let vh = server.characteristic(ofCCCD: h), let bits = v.first else { return nil }
        let s = GATTSubscription(notify: bits & 1 != 0, indicate: bits & 2 != 0, frame: frame)
        if apply { server.setSubscription(vh, s) }
        return s
    }

    // MARK: Responses

    func response(_ pdu: ATTPDU, _ side: Side, _ frame: Int, _ time: Int64, _ result: ATTResult) {
        let server = database(of: side)
        let p: Pending?
        defer { recycle(p) }
        if !pending[side.other].isEmpty {
            // Most links have one request outstanding: taking the last moves nothing up.
            let first = pending[side.other].count == 1 ? pending[side.other].removeLast() : pending[side.other].removeFirst()
            result.request = ATTRequestInfo(frame: first.tx.frame, opcode: first.tx.opcode, rtt: time &- first.tx.time)
            if pdu.opcode != .errorResponse, let e = first.tx.opcode.expectedResponse, e != pdu.opcode {
                result.notes.append(.unexpectedResponse(expected: e))
            }
            p = consume first
        } else {
            p = nil
            result.notes.append(.unsolicited)
        }
        switch pdu.opcode {
        case .errorResponse:
            // Discovery errors name the start of a searched range: only name handles that exist.
            if let e = pdu.error, e.handle != 0, server.attribute(e.handle).role != .unknown {
                entry(server, e.handle, nil, result)
            }
        case .exchangeMTUResponse:
            if let m = pdu.mtu { setRxMTU(m, side, result) }
        case .readByGroupTypeResponse:
            server.discovering(frame: frame, by: self)
            let primary = p?.type?.uuid16 != 0x2801
            for g in pdu.groups {
                guard let u = BluetoothUUID(littleEndian: g.value) else { continue }
                server.addService(start: g.start, end: g.end, uuid: u, primary: primary)
                result.entries.append(ATTResultEntry(attribute: server.attribute(g.start), value: nil))
            }
        case .findByTypeValueResponse:
            if let u = p?.searched, let t = p?.type?.uuid16, t == 0x2800 || t == 0x2801 {
                server.discovering(frame: frame, by: self)
                for g in pdu.groups { server.addService(start: g.start, end: g.end, uuid: u, primary: t == 0x2800) }
            }
        case .readByTypeResponse:
            readByType(pdu, p, server, frame, result)
        case .findInformationResponse:
            server.discovering(frame: frame, by: self)
            for e in pdu.information { server.addInformation(handle: e.handle, uuid: e.uuid) }
        case .readResponse:
            if let h = p?.handle, p?.tx.opcode == .readRequest, pdu.parameters.valueSpan != nil {
                if keepsValues, let v = pdu.value {
                    keep(h, v, in: server, frame: frame)
                    entry(server, h, v, result)
                } else {
                    entry(server, h, nil, result)
                }
            }
        case .readBlobResponse:
            if let h = p?.handle, let o = p?.offset, p?.tx.opcode == .readBlobRequest, let v = pdu.value {
                blob(h, Int(o), v, server, frame, result)
            }
        case .readMultipleVariableResponse:
            if let req = p, req.tx.opcode == .readMultipleVariableRequest {
                for (h, v) in zip(req.handles, pdu.lengthValues) {
                    keep(h, v, in: server, frame: frame)
                    entry(server, h, v, result)
                }
            }
        case .readMultipleResponse:
            // Values are concatenated without lengths: only the handles can be named.
            if let req = p, req.tx.opcode == .readMultipleRequest {
                for h in req.handles { entry(server, h, nil, result) }
            }
        case .writeResponse:
            if let req = p, req.tx.opcode == .writeRequest, let h = req.handle {
                if let v = req.written { store(h, v[...], server, req.tx.frame, apply: true) }
                entry(server, h, nil, result)
            }
        case .prepareWriteResponse:
            if let h = pdu.handle { entry(server, h, nil, result) }
        default: break
        }
    }

    func readByType(_ pdu: ATTPDU, _ p: Pending?, _ server: GATTDatabase, _ frame: Int, _ result: ATTResult) {
        let type = p?.type?.uuid16
        if type == 0x2803 || type == 0x2802 { server.discovering(frame: frame, by: self) }
        for e in pdu.attributeData {
            var r = ByteReader(e.value)
            switch type {
            case 0x2803:
                guard let props = try? r.u8(), let vh = try? r.u16(), let u = try? r.uuid(width: r.remaining) else {
                    result.noteDeclarationFault("characteristic declaration at " + Hex.prefixed(e.handle, width: 4))
                    continue
                }
                server.addCharacteristic(declaration: e.handle, properties: props, valueHandle: vh, uuid: u)
                result.entries.append(ATTResultEntry(attribute: server.attribute(e.handle), value: nil,
                                                     declaredValueHandle: vh, declaredUUID: u))
            case 0x2802:
                guard let s = try? r.u16(), let end = try? r.u16() else {
                    result.noteDeclarationFault("include declaration at " + Hex.prefixed(e.handle, width: 4))
                    continue
                }
                let u = r.remaining == 2 ? try? r.uuid(width: 2) : nil
                let include = GATTInclude(handle: e.handle, start: s, end: end, uuid: u)
                server.addInclude(include)
                result.entries.append(ATTResultEntry(attribute: server.attribute(e.handle), value: nil, include: include))
            default:
                // Read Using Characteristic UUID: the handle is a value of that type.
                if let t = p?.type, !server.isDeclared(e.handle) { server.setTypeHint(e.handle, t) }
                keep(e.handle, e.value, in: server, frame: frame)
                entry(server, e.handle, e.value, result)
            }
        }
    }

    /// Long reads: a Read Blob at offset n continues the value when n bytes are known.
    func blob(_ h: UInt16, _ offset: Int, _ v: Bytes, _ server: GATTDatabase, _ frame: Int, _ result: ATTResult) {
        guard keepsValues else { return entry(server, h, v, result) }
        let have = server.valueLength(h)
        guard offset <= have else {
            result.notes.append(.offsetGap(have: have, offset: offset))
            entry(server, h, v, result)
            return
        }
        let value = server.continueValue(h, at: offset, with: v, frame: frame)
        let complete = v.count < mtu - 1 || value.count >= GATTDatabase.maxValueLength
        result.notes.append(.reassembled(length: value.count, complete: complete))
        entry(server, h, value, result)
    }
}

extension GATTDatabase {
    func isDeclared(_ h: UInt16) -> Bool {
        characteristics[h] != nil || descriptors[h] != nil || declarations[h] != nil || services[h] != nil
    }
}

/// The fields of an ATT PDU the audit reads of every PDU, as plain values (`ATTResult.facts`).
public struct ATTPDUFacts: Sendable {
    public var opcode: ATTOpcode
    /// The handle the PDU concerns, or the first of its range, and the last of its range.
    public var handle: UInt16?
    public var endHandle: UInt16?
    /// The attribute type of a Read By (Group) Type or Find By Type Value Request.
    public var attributeType: BluetoothUUID?
    /// The length of the value the PDU carries (0 without one), and its first two octets
    /// little-endian (its one octet when it has one).
    public var valueLength: Int
    public var valuePrefix: UInt16?
}

extension ATTPDU {
    /// The fields the audit reads, without slicing the value out: one switch over the parameters,
    /// where `range`, `handle`, `attributeType` and `valueSpan` would make four.
    @inline(__always) public var facts: ATTPDUFacts {
        var f = ATTPDUFacts(opcode: opcode, handle: nil, endHandle: nil, attributeType: nil, valueLength: 0, valuePrefix: nil)
        var value: ATTSpan?
        switch parameters {
        case .handleValue(let h, let v), .signedWrite(let h, let v, _), .prepareWrite(let h, _, let v):
            f.handle = h
            value = v
        case .error(_, let h, _), .handle(let h), .readBlob(let h, _):
            f.handle = h
        case .value(let v):
            value = v
        case .range(let r):
            (f.handle, f.endHandle) = (r.start, r.end)
        case .typedRange(let r, let t):
            (f.handle, f.endHandle, f.attributeType) = (r.start, r.end, t)
        case .findByTypeValue(let r, let t, let v):
            (f.handle, f.endHandle, f.attributeType) = (r.start, r.end, BluetoothUUID(uuid16: t))
            value = v
        default:
            break
        }
        if let v = value, !v.isEmpty {
            f.valueLength = v.count
            var prefix = UInt16(bytes[v.lowerBound])
            if v.count > 1 { prefix |= UInt16(bytes[v.lowerBound + 1]) << 8 }
            f.valuePrefix = prefix
        }
        return f
    }
}

extension ATTPDU {
    /// Lends the PDU where it lies. Through `inout`, a result's stored PDU is reached by its
    /// address; a call on `pdu` itself copies it out of the class first, and retains its bytes.
    @inline(__always) mutating func lend<R>(_ body: (borrowing ATTPDU) -> R) -> R { body(self) }
}

extension ATTResult {
    /// The PDU's fields the audit reads, read in place: a consumer that fetches `pdu` out of the
    /// result copies it, retaining its bytes, for every PDU.
    public var facts: ATTPDUFacts { pdu.facts }
}

/// A 16-bit dictionary key (an attribute handle, a 16-bit UUID), hashed as one word (`WordHash`)
/// rather than through `Hasher`: a database's values are looked up by handle for every
/// notification, the characteristic decoders by UUID for every value shown.
struct Key16: Hashable {
    let value: UInt16
    @inline(__always) init(_ value: UInt16) { self.value = value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
    func _rawHashValue(seed: Int) -> Int { WordHash.value(UInt64(value), seed: seed) }
}

/// A 64-bit dictionary key (a content hash), hashed as one word as `Key16` is: through `Hasher`,
/// each lookup of the dissector's fault memo cost about 80 instructions more.
struct Key64: Hashable {
    let value: UInt64
    @inline(__always) init(_ value: UInt64) { self.value = value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
    func _rawHashValue(seed: Int) -> Int { WordHash.value(value, seed: seed) }
}
