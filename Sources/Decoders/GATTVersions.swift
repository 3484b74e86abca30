import Wire

/// A peer's database changes: a Service Changed indication (Core Vol 3 Part G 7.1) says which
/// handles, and a firmware update shows as a different database on a later connection. Each
/// version is kept with the frames it held for, and what changed from one to the next.

/// Why a version began.
public enum GATTVersionCause: Sendable, Equatable {
    /// The server indicated Service Changed for these handles in this frame.
    case serviceChanged(frame: Int, start: UInt16, end: UInt16)
    /// A later connection's discovery, from this frame, found a different database.
    case rediscovered(frame: Int)

    public var frame: Int {
        switch self {
        case .serviceChanged(let f, _, _), .rediscovered(let f): return f
        }
    }

    public var description: String {
        switch self {
        case .serviceChanged(let f, let s, let e):
            return "Service Changed indicated in frame \(f) for handles " + GATTDatabase.range(s, e)
        case .rediscovered(let f): return "discovery from frame \(f) found a different database"
        }
    }
}

/// The frames a version held for and why it began.
public struct GATTVersionSpan: Sendable {
    public var firstFrame: Int?
    public var lastFrame: Int?
    /// Nil for the first version.
    public var cause: GATTVersionCause?
}

/// One version of a database: the database as it was, frozen.
public struct GATTDatabaseVersion {
    public let database: GATTDatabase
    public let span: GATTVersionSpan
}

/// What discovery found since a trigger, next to what the database held before it.
struct GATTRediscovery {
    let baseline: GATTDatabase
    let baselineSpan: GATTVersionSpan
    /// First frame of the version it would start.
    let since: Int
    let fresh: GATTDatabase
    let cause: GATTVersionCause
}

/// While a rediscovery runs, what the last values, subscriptions and type hints were before it
/// first changed each: the version the rediscovery may end keeps them. Its copy of the database
/// does not share those tables, so changing them during every later connection copies nothing;
/// the log keeps its room from one rediscovery to the next.
struct GATTPrior {
    struct Value {
        let handle: UInt16
        /// Where its bytes lie in `bytes`; nil: the handle had no value.
        let bytes: Range<Int>?
        let frame: Int
    }
    /// What a table held for each handle before its first change, in order.
    struct FirstChanges<Old> {
        private(set) var entries: [(handle: UInt16, old: Old?)] = []
        /// The handles in `entries`: a capture can change thousands in one rediscovery, and a
        /// search of the list for each would take their square.
        private var handles: Set<UInt16> = []

        mutating func save(_ handle: UInt16, _ old: Old?) {
            if handles.insert(handle).inserted { entries.append((handle, old)) }
        }

        mutating func clear() {
            entries.removeAll(keepingCapacity: true)
            handles.removeAll(keepingCapacity: true)
        }
    }

    /// Numbers the rediscoveries, so a value knows whether this one saved it (`GATTValue.savedIn`).
    private(set) var serial = 0
    private(set) var values: [Value] = []
    private var bytes: [UInt8] = []
    var subscriptions = FirstChanges<GATTSubscription>()
    var typeHints = FirstChanges<BluetoothUUID>()

    /// A rediscovery begins: nothing saved yet.
    mutating func begin() {
        serial &+= 1
        values.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        subscriptions.clear()
        typeHints.clear()
    }

    mutating func save(_ handle: UInt16, _ v: GATTValue?) {
        guard let v else { return values.append(Value(handle: handle, bytes: nil, frame: 0)) }
        let start = bytes.count
        bytes.append(contentsOf: v.bytes)
        values.append(Value(handle: handle, bytes: start..<bytes.count, frame: v.frame))
    }

    /// `db`'s tables as they were when the rediscovery began, from `current`'s and what was saved.
    func restore(_ db: GATTDatabase, from current: GATTDatabase) {
        db.values = current.values
        db.subscriptions = current.subscriptions
        db.typeHints = current.typeHints
        for v in values {
            db.values[Key16(v.handle)] = v.bytes.map { GATTValue(bytes: Array(bytes[$0]), frame: v.frame) }
        }
        for s in subscriptions.entries { db.subscriptions[s.handle] = s.old }
        for t in typeHints.entries { db.typeHints[t.handle] = t.old }
    }
}

/// One difference between two versions.
public struct GATTChange: Sendable, Equatable {
    public enum Kind: String, Sendable { case added, removed, moved }
    public enum Element: String, Sendable { case service, characteristic }
    public let kind: Kind
    public let element: Element
    public let uuid: BluetoothUUID
    /// The service a characteristic belongs to.
    public let service: BluetoothUUID?
    /// Service start or characteristic value handle, before and after (nil where it did not exist).
    public let before: UInt16?
    public let after: UInt16?

    public var description: String {
        let name = element == .service
            ? GATTDatabase.label(uuid, AssignedNumbers.serviceName(uuid), unknown: "Unknown Service")
            : GATTDatabase.label(uuid, AssignedNumbers.characteristicName(uuid), unknown: "Unknown Characteristic")
        let what = (element == .service ? "Service " : "Characteristic ") + name
            + (service.map { " in " + GATTDatabase.label($0, AssignedNumbers.serviceName($0), unknown: "Unknown Service") } ?? "")
        let at = element == .service ? "at " : "value "
        switch kind {
        case .added: return "added: " + what + " " + at + Hex.prefixed(after ?? 0, width: 4)
        case .removed: return "removed: " + what + " " + at + Hex.prefixed(before ?? 0, width: 4)
        case .moved:
            return "moved: " + what + " from " + Hex.prefixed(before ?? 0, width: 4) + " to " + Hex.prefixed(after ?? 0, width: 4)
        }
    }

    /// Services and characteristics added, removed or moved from `old` to `new`, as far as `new`'s
    /// discovery reached: a service of `old` counts as removed only where `new` discovered services
    /// around its handle, a characteristic only in a service whose characteristics `new` discovered.
    public static func between(_ old: GATTDatabase, _ new: GATTDatabase) -> [GATTChange] {
        let before = old.outline(), after = new.outline()
        var changes: [GATTChange] = []
        var unmatched = before
        var pairs: [(GATTDatabase.ServiceOutline, GATTDatabase.ServiceOutline)] = []
        for s in after {
            // The same UUID pairs in order: a database can hold a service type more than once.
            if let i = unmatched.firstIndex(where: { $0.uuid == s.uuid && $0.isPrimary == s.isPrimary }) {
                let o = unmatched.remove(at: i)
                pairs.append((o, s))
                if o.start != s.start { changes.append(GATTChange(kind: .moved, element: .service, uuid: s.uuid, service: nil, before: o.start, after: s.start)) }
            } else if !before.isEmpty {
                changes.append(GATTChange(kind: .added, element: .service, uuid: s.uuid, service: nil, before: nil, after: s.start))
            }
        }
        for o in unmatched where after.contains(where: { $0.start <= o.start && o.start <= $0.end }) {
            changes.append(GATTChange(kind: .removed, element: .service, uuid: o.uuid, service: nil, before: o.start, after: nil))
        }
        for (o, s) in pairs where !o.characteristics.isEmpty && !s.characteristics.isEmpty {
            var left = o.characteristics
            for c in s.characteristics {
                if let i = left.firstIndex(where: { $0.uuid == c.uuid }) {
                    let was = left.remove(at: i)
                    // Inside a moved service every handle moves with it: only a change of place within it counts.
                    if Int(was.valueHandle) - Int(o.start) != Int(c.valueHandle) - Int(s.start) {
                        changes.append(GATTChange(kind: .moved, element: .characteristic, uuid: c.uuid, service: s.uuid,
                                                  before: was.valueHandle, after: c.valueHandle))
                    }
                } else {
                    changes.append(GATTChange(kind: .added, element: .characteristic, uuid: c.uuid, service: s.uuid, before: nil, after: c.valueHandle))
                }
            }
            for c in left {
                changes.append(GATTChange(kind: .removed, element: .characteristic, uuid: c.uuid, service: s.uuid, before: c.valueHandle, after: nil))
            }
        }
        return changes
    }

    /// Whether `between(old, new)` finds any change, told without building either outline: a
    /// rediscovery that found part of the same database (the common case after `declaresTheSame`)
    /// then costs no allocation. No change means each service of `new` pairs with the one at its
    /// own handle in `old`, no unpaired service of `old` lies in a discovered range, and paired
    /// services with characteristics on both sides hold the same ones.
    static func exist(_ old: GATTDatabase, _ new: GATTDatabase) -> Bool {
        if old.services.isEmpty { return false }
        func sameType(_ a: GATTDatabase.ServiceRecord, _ b: GATTDatabase.ServiceRecord) -> Bool {
            a.uuid == b.uuid && a.isPrimary == b.isPrimary
        }
        func paired(_ start: UInt16, _ o: GATTDatabase.ServiceRecord) -> Bool {
            if let n = new.services[start] { return sameType(n, o) }
            return false
        }
        for (start, s) in new.services {
            guard let o = old.services[start], sameType(o, s) else { return true }
            // An unpaired service of the same type before it would pair first (and so move).
            for (at, e) in old.services where at < start && sameType(e, s) && !paired(at, e) { return true }
            if characteristicsDiffer(old, o.end, new, s.end, from: start) { return true }
        }
        for (at, o) in old.services where !paired(at, o) {
            if new.services.contains(where: { $0.key <= at && at <= $0.value.end }) { return true }
        }
        return false
    }

    /// Whether the characteristics declared from `start` to each side's end differ, where both
    /// sides have some.
    private static func characteristicsDiffer(_ old: GATTDatabase, _ oldEnd: UInt16, _ new: GATTDatabase, _ newEnd: UInt16,
                                              from start: UInt16) -> Bool {
        var oldCount = 0, newCount = 0
        for c in old.characteristics.values where start <= c.declaration && c.declaration <= oldEnd { oldCount += 1 }
        for c in new.characteristics.values where start <= c.declaration && c.declaration <= newEnd { newCount += 1 }
        guard oldCount > 0, newCount > 0 else { return false }
        guard oldCount == newCount else { return true }
        for (vh, c) in new.characteristics where start <= c.declaration && c.declaration <= newEnd {
            guard let o = old.characteristics[vh], o.uuid == c.uuid, start <= o.declaration, o.declaration <= oldEnd else { return true }
        }
        return false
    }
}

extension GATTDatabase {
    /// A service as `GATTChange.between` compares it: its type and range, and its characteristics'
    /// types and value handles. `serviceTree` without descriptors, includes or values, which a
    /// comparison at every rediscovery would build and throw away.
    struct ServiceOutline {
        let uuid: BluetoothUUID
        let start: UInt16
        let end: UInt16
        let isPrimary: Bool
        let characteristics: [(uuid: BluetoothUUID, valueHandle: UInt16)]
    }

    /// The services in handle order, each with the characteristics declared in its range, by value
    /// handle (as `serviceTree` orders them).
    func outline() -> [ServiceOutline] {
        let chars = sortedCharacteristics()
        return services.sorted { $0.key < $1.key }.map { start, s in
            var list: [(uuid: BluetoothUUID, valueHandle: UInt16)] = []
            for (vh, c) in chars where start <= c.declaration && c.declaration <= s.end { list.append((c.uuid, vh)) }
            return ServiceOutline(uuid: s.uuid, start: start, end: s.end, isPrimary: s.isPrimary, characteristics: list)
        }
    }

    static let serviceChangedUUID = BluetoothUUID(uuid16: 0x2A05)

    /// Every version, oldest first, the current one last.
    public var versions: [GATTDatabaseVersion] { earlier + [GATTDatabaseVersion(database: self, span: current)] }

    /// A PDU to or from this server in `frame`, on `bearer`.
    func touch(_ frame: Int, by bearer: ATTBearer) {
        let id = bearer.serial
        if touchBearer != id {
            previousTouch = current.lastFrame
            touchBearer = id
            touchBearerSince = frame
        }
        if current.firstFrame == nil { current.firstFrame = frame }
        current.lastFrame = frame
    }

    /// A discovery response in `frame` on `bearer`: discovery on another connection than the last,
    /// or after Service Changed, is compared with what the database held.
    func discovering(frame: Int, by bearer: ATTBearer) {
        let id = bearer.serial
        if let last = discoveryBearer, last != id, trigger == nil, !services.isEmpty || !characteristics.isEmpty {
            trigger = .rediscovered(frame: frame)
        }
        discoveryBearer = id
        guard let cause = trigger else { return }
        trigger = nil
        settle()
        var span = current
        var since = cause.frame
        if case .rediscovered = cause {
            // The old version held until the previous connection's last PDU; the new one from this
            // connection's first.
            span.lastFrame = previousTouch ?? span.lastFrame
            since = touchBearerSince ?? frame
        }
        // The last rediscovery's databases when it found nothing new: a peer rediscovered on every
        // connection then allocates none for them.
        let baseline: GATTDatabase, fresh: GATTDatabase
        if let spare = spareRediscovery {
            spareRediscovery = nil
            baseline = spare.baseline
            baseline.copyDiscovery(of: self)
            fresh = spare.fresh
        } else {
            baseline = GATTDatabase()
            baseline.copyDiscovery(of: self)
            fresh = GATTDatabase()
            // Room for what the database held, made once: discovery mostly finds it again.
            fresh.services.reserveCapacity(services.count)
            fresh.characteristics.reserveCapacity(characteristics.count)
            fresh.declarations.reserveCapacity(declarations.count)
        }
        rediscovery = GATTRediscovery(baseline: baseline, baselineSpan: span, since: since, fresh: fresh, cause: cause)
        prior.begin()
    }

    /// The server says the handles from `start` to `end` changed.
    func serviceChanged(start: UInt16, end: UInt16, frame: Int) {
        settle()
        trigger = .serviceChanged(frame: frame, start: start, end: end)
    }

    /// Ends a rediscovery: a new version when it found a different database. Called at each
    /// trigger and at the end of the capture.
    public func settle() {
        guard let r = rediscovery else { return }
        rediscovery = nil
        // The same declarations found again (the common case) need no comparison of service trees.
        guard !r.fresh.declaresTheSame(as: r.baseline), GATTChange.exist(r.baseline, r.fresh) else {
            // Kept for the next rediscovery: the copy lets go of the tables it shared (so that
            // changing them copies nothing), the found tables are emptied and keep their room.
            r.baseline.emptyTables(keepingCapacity: false)
            r.fresh.emptyTables(keepingCapacity: true)
            spareRediscovery = (r.baseline, r.fresh)
            return
        }
        var old = r.baselineSpan
        if case .serviceChanged(let f, _, _) = r.cause { old.lastFrame = f }
        prior.restore(r.baseline, from: self)
        earlier.append(GATTDatabaseVersion(database: r.baseline, span: old))
        // The new version is what discovery found, with the values and subscriptions seen since
        // it began (older ones belong to the old version's handles).
        values = values.filter { $0.value.frame >= r.since }
        subscriptions = subscriptions.filter { $0.value.frame >= r.since }
        services = r.fresh.services
        includes = r.fresh.includes
        characteristics = r.fresh.characteristics
        declarations = r.fresh.declarations
        descriptors = r.fresh.descriptors
        current = GATTVersionSpan(firstFrame: r.since, lastFrame: current.lastFrame, cause: r.cause)
    }

    /// Whether discovery recorded exactly the same services, includes, characteristics and
    /// descriptors in both.
    func declaresTheSame(as other: GATTDatabase) -> Bool {
        services == other.services && includes == other.includes && characteristics == other.characteristics
            && declarations == other.declarations && descriptors == other.descriptors
    }

    /// Takes what `other`'s discovery found (shared: a rediscovery that finds the same leaves
    /// them as they are). Values, subscriptions and type hints follow at the end, if a new version
    /// begins (`GATTPrior`).
    func copyDiscovery(of other: GATTDatabase) {
        services = other.services
        includes = other.includes
        characteristics = other.characteristics
        declarations = other.declarations
        descriptors = other.descriptors
    }

    func emptyTables(keepingCapacity keep: Bool) {
        services.removeAll(keepingCapacity: keep)
        includes.removeAll(keepingCapacity: keep)
        characteristics.removeAll(keepingCapacity: keep)
        declarations.removeAll(keepingCapacity: keep)
        descriptors.removeAll(keepingCapacity: keep)
        typeHints.removeAll(keepingCapacity: keep)
        values.removeAll(keepingCapacity: keep)
        subscriptions.removeAll(keepingCapacity: keep)
    }

    /// The changes that made each version from the one before (empty for the first).
    public var changesByVersion: [[GATTChange]] {
        let all = versions
        return all.indices.map { i in i == 0 ? [] : GATTChange.between(all[i - 1].database, all[i].database) }
    }
}
