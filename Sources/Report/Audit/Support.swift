import Decoders
import Wire

/// GATT declaration types (Core Vol 3 Part G 3.1-3.3) and the attributes the audit names.
enum GATTType {
    static let primaryService = BluetoothUUID(uuid16: 0x2800)
    static let secondaryService = BluetoothUUID(uuid16: 0x2801)
    static let include = BluetoothUUID(uuid16: 0x2802)
    static let characteristic = BluetoothUUID(uuid16: 0x2803)
    /// Client Characteristic Configuration (3.3.3.3): the descriptor a client subscribes with.
    static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)
    static let serviceChanged = BluetoothUUID(uuid16: 0x2A05)

    static func isDeclaration(_ u: BluetoothUUID?) -> Bool {
        guard let v = u?.uuid16 else { return false }
        return v >= 0x2800 && v <= 0x2803
    }
}

extension ATTOpcodeSet {
    static let requests = ATTOpcodeSet(kinds: [.request])
    static let responses = ATTOpcodeSet(kinds: [.response])
    /// Client reads of a value (`isValueRead`): Read, Read Blob, Read By Type.
    static let valueReads = ATTOpcodeSet([.readRequest, .readBlobRequest, .readByTypeRequest])
    /// PDUs that may touch an attribute value (`ATTOpcode.mayUseValue`): reads, writes, notifications.
    static let valueUses = ATTOpcodeSet((0...255).map { ATTOpcode(UInt8($0)) }.filter(\.mayUseValue))
}

extension ATTOpcode {
    /// A PDU of this opcode may touch an attribute value (read, write, notification): the one list,
    /// matched in place on the path of every PDU (`usesAttribute`) and made a set for the rules'
    /// opcodes (`ATTOpcodeSet.valueUses`), whose every read is a call to its lazy initialiser.
    @inline(__always)
    var mayUseValue: Bool {
        switch self {
        case .readRequest, .readBlobRequest, .readMultipleRequest, .writeRequest, .prepareWriteRequest,
             .handleValueNotification, .handleValueIndication, .readMultipleVariableRequest,
             .multipleHandleValueNotification, .writeCommand, .signedWriteCommand, .readByTypeRequest:
            return true
        default:
            return false
        }
    }
}

extension ATTObservation {
    /// A read of one attribute's value by the client. Inlined: a call on an observation being
    /// built copies it whole first.
    @inline(__always)
    var isValueRead: Bool {
        switch opcode {
        case .readRequest, .readBlobRequest: return kind == .request
        case .readByTypeRequest: return kind == .request && !GATTType.isDeclaration(attributeType)
        default: return false
        }
    }

    /// A request of this host that discovers services, characteristics or descriptors (Read By
    /// Group Type, Read By Type, Find Information): what starts the state of a rule that judges a
    /// discovery. Read By Type also reads values by UUID, which counts too.
    var startsDiscovery: Bool {
        origin == .local && (opcode == .readByGroupTypeRequest || opcode == .readByTypeRequest || opcode == .findInformationRequest)
    }

    /// The PDU touches an attribute value (read, write, notification): use of the characteristic.
    /// Inlined, as `isValueRead` is.
    @inline(__always)
    var usesAttribute: Bool {
        guard opcode.mayUseValue else { return false }
        return opcode == .readByTypeRequest ? !GATTType.isDeclaration(attributeType) : handle != nil
    }
}

extension Connection {
    /// A sniffed link encrypted with no key: what it carried after `lastATT` (the frame of the
    /// last ATT PDU decoded on it) cannot be seen, so nothing can be said of what went unused.
    func hidesUse(after lastATT: Int) -> Bool {
        guard overTheAir, let e = encryptedFrame else { return false }
        return lastATT <= e
    }
}

/// HID over GATT (0x1812): its host is the operating system's HID host, which the profile makes
/// discover every service and characteristic (HOGP 1.0, 7.1 and 7.2), whatever app runs.
let hidService = BluetoothUUID(uuid16: 0x1812)

/// UUIDs a rule looks up on every ATT PDU: those with a 16-bit alias in a bitmap (a bit test rather
/// than hashing 128 bits), the rest in a set.
struct UUIDSet {
    private var short = [UInt64](repeating: 0, count: 1 << 10)
    private var long: Set<BluetoothUUID> = []

    init<S: Sequence>(_ uuids: S) where S.Element == BluetoothUUID {
        for u in uuids {
            if let v = u.uuid16 { short[Int(v >> 6)] |= 1 << (v & 63) } else { long.insert(u) }
        }
    }

    func contains(_ u: BluetoothUUID) -> Bool {
        if let v = u.uuid16 { return short[Int(v >> 6)] & (1 << (v & 63)) != 0 }
        return !long.isEmpty && long.contains(u)
    }
}

/// A map with a fixed capacity: when full, the oldest inserted key goes. Keeps per-advertiser or
/// per-handle state flat whatever the capture's size.
struct BoundedMap<Key: Hashable, Value>: Emptiable {
    private(set) var storage: [Key: Value] = [:]
    private var order: [Key] = []
    private var head = 0
    let capacity: Int
    /// The key found last and where: consecutive events mostly concern one connection or handle,
    /// and a hit skips hashing the key. Forgotten on every insertion or removal, which can move entries.
    private var lastKey: Key?
    private var lastIndex: Dictionary<Key, Value>.Index?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }

    /// Whether `key` is present, without copying its value out.
    func contains(_ key: Key) -> Bool {
        if lastIndex != nil, lastKey == key { return true }
        return storage.index(forKey: key) != nil
    }

    subscript(key: Key) -> Value? {
        get { storage[key] }
        set {
            forget()
            guard let v = newValue else { storage[key] = nil; return }
            if storage.updateValue(v, forKey: key) == nil { remember(key) }
        }
    }

    /// Mutates the value in place, inserting `make()` first when absent. No hash for the key found
    /// last, one lookup for another key already present, and no copy of its value.
    mutating func update<R>(_ key: Key, default make: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        if let i = lastIndex, lastKey == key { return body(&storage.values[i]) }
        if let i = storage.index(forKey: key) {
            lastKey = key
            lastIndex = i
            return body(&storage.values[i])
        }
        var v = make()
        let r = body(&v)
        forget()
        storage[key] = v
        remember(key)
        return r
    }

    mutating func removeValue(forKey key: Key) -> Value? {
        forget()
        return storage.removeValue(forKey: key)
    }

    mutating func removeAll(keepingCapacity keep: Bool = false) {
        forget()
        storage.removeAll(keepingCapacity: keep)
        order.removeAll(keepingCapacity: keep)
        head = 0
    }

    private mutating func forget() {
        lastKey = nil
        lastIndex = nil
    }

    /// Ring of insertion order: a new key takes the oldest slot and evicts the key in it (a no-op when
    /// that key was removed already), so the map never holds more than `capacity` keys.
    private mutating func remember(_ key: Key) {
        if order.count < capacity {
            order.append(key)
            return
        }
        let old = order[head]
        if old != key { storage[old] = nil }
        order[head] = key
        head = (head + 1) % capacity
    }
}

/// A map with a fixed capacity that never removes but the oldest key, when full, for a new one
/// (`BoundedMap` without removal). Its entries sit in two arrays in the order they came, a ring, so
/// forgetting the oldest is writing over it; an open-addressed index of entry numbers, probed
/// linearly and at most half full, finds them. A lookup hashes the key once and compares the few
/// keys its probe meets: the advertiser table takes one per advertising report.
struct RingTable<Key: Hashable, Value> {
    private var keys: [Key] = []
    private var values: [Value] = []
    /// Each bucket holds an entry's number plus one; 0 is empty.
    private var buckets = [Int32](repeating: 0, count: 16)
    /// Hashes are seeded as Swift's own are: the same on every run only when asked for.
    private let seed: Int
    /// The entry a new key replaces once the table is full.
    private var oldest = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, min(capacity, Int(Int32.max) / 4))
        var h = Hasher()
        h.combine(self.capacity)
        seed = h.finalize()
    }

    var count: Int { keys.count }

    subscript(key: Key) -> Value? {
        let (b, found) = bucket(key)
        return found ? values[Int(buckets[b]) &- 1] : nil
    }

    /// Mutates the value in place, inserting `make()` first when absent.
    mutating func update<R>(_ key: Key, default make: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        let (b, found) = bucket(key)
        if found { return body(&values[Int(buckets[b]) &- 1]) }
        var v = make()
        let r = body(&v)
        insert(key, v, at: b)
        return r
    }

    /// The bucket holding `key`, or the empty one that ends its probe.
    @inline(__always)
    private func bucket(_ key: Key) -> (Int, found: Bool) {
        let mask = buckets.count &- 1
        var b = key._rawHashValue(seed: seed) & mask
        while true {
            let e = Int(buckets[b])
            if e == 0 { return (b, false) }
            if keys[e &- 1] == key { return (b, true) }
            b = (b &+ 1) & mask
        }
    }

    private mutating func insert(_ key: Key, _ value: Value, at b: Int) {
        if keys.count < capacity {
            keys.append(key)
            values.append(value)
            buckets[b] = Int32(keys.count)
            if keys.count &* 2 > buckets.count { grow() }
            return
        }
        let e = oldest
        unlink(e)
        keys[e] = key
        values[e] = value
        buckets[bucket(key).0] = Int32(e &+ 1)
        oldest = (oldest &+ 1) % capacity
    }

    /// Takes entry `e` out of the index, moving back the entries its bucket kept from their home
    /// (deletion for linear probing without tombstones).
    private mutating func unlink(_ e: Int) {
        let mask = buckets.count &- 1
        var i = keys[e]._rawHashValue(seed: seed) & mask
        while Int(buckets[i]) != e &+ 1 { i = (i &+ 1) & mask }
        buckets[i] = 0
        var j = i
        while true {
            j = (j &+ 1) & mask
            let moved = buckets[j]
            if moved == 0 { return }
            let home = keys[Int(moved) &- 1]._rawHashValue(seed: seed) & mask
            // It may fill the hole at i unless its home lies cyclically in (i, j].
            let stays = i <= j ? (home > i && home <= j) : (home > i || home <= j)
            if !stays {
                buckets[i] = moved
                buckets[j] = 0
                i = j
            }
        }
    }

    private mutating func grow() {
        buckets = [Int32](repeating: 0, count: buckets.count &* 2)
        let mask = buckets.count &- 1
        for (e, key) in keys.enumerated() {
            var b = key._rawHashValue(seed: seed) & mask
            while buckets[b] != 0 { b = (b &+ 1) & mask }
            buckets[b] = Int32(e &+ 1)
        }
    }
}

/// Per-adapter state. A capture has one adapter or a few, so a short list searched in order costs
/// less than hashing the adapter on every event. Iterates in adapter order.
struct AdapterTable<Value> {
    private(set) var keys: [UInt16] = []
    private(set) var values: [Value] = []

    @inline(__always)
    private func find(_ adapter: UInt16) -> Int? {
        for i in keys.indices where keys[i] == adapter { return i }
        return nil
    }

    var isEmpty: Bool { keys.isEmpty }

    /// Where the adapter's value is, for `values` and `update(at:)`; nil when it has none.
    func index(_ adapter: UInt16) -> Int? { find(adapter) }

    /// Mutates the value at `i`, an index from `index(_:)`.
    @inline(__always) mutating func update(at i: Int, _ body: (inout Value) -> Void) { body(&values[i]) }

    /// (adapter, value) pairs in adapter order.
    var entries: Zip2Sequence<[UInt16], [Value]> { zip(keys, values) }

    subscript(adapter: UInt16) -> Value? {
        get { find(adapter).map { values[$0] } }
        set {
            if let v = newValue {
                if let i = find(adapter) { values[i] = v; return }
                let at = keys.firstIndex { $0 > adapter } ?? keys.count
                keys.insert(adapter, at: at)
                values.insert(v, at: at)
            } else {
                removeValue(forKey: adapter)
            }
        }
    }

    /// Mutates the adapter's value in place; nil when it has none.
    @inline(__always) @discardableResult
    mutating func update<R>(_ adapter: UInt16, _ body: (inout Value) -> R) -> R? {
        guard let i = find(adapter) else { return nil }
        return body(&values[i])
    }

    /// Mutates the adapter's value in place, made with `make()` first when absent.
    @inline(__always) @discardableResult
    mutating func update<R>(_ adapter: UInt16, default make: @autoclosure () -> Value, _ body: (inout Value) -> R) -> R {
        if find(adapter) == nil { self[adapter] = make() }
        return body(&values[find(adapter)!])
    }

    @discardableResult
    mutating func removeValue(forKey adapter: UInt16) -> Value? {
        guard let i = find(adapter) else { return nil }
        keys.remove(at: i)
        return values.remove(at: i)
    }

    mutating func removeAll() {
        keys.removeAll()
        values.removeAll()
    }
}

/// Tells a new read of an attribute from the continuation of a long read: a Read Blob of the handle
/// read last, whose previous response filled the PDU (ATT_MTU-1 bytes), continues that read. One
/// per connection, fed the PDUs it `looksAt`.
struct ReadTracker {
    private var lastHandle: UInt16?
    private var lastFull = false
    private var awaiting = false

    /// The client's reads of a value and every response: the PDUs that may start or end a read.
    /// Told by `isValueRead` rather than a set's bits, which a static set would load through its
    /// lazy initialiser on every PDU.
    @inline(__always)
    static func looksAt(_ a: ATTObservation) -> Bool {
        a.kind == .response || a.origin == .local && a.isValueRead
    }

    /// For a client read request: true for a new read, false for a continuation; nil for other PDUs.
    @inline(__always)
    mutating func classify(_ a: ATTObservation) -> Bool? {
        if a.kind == .response, awaiting, a.origin == .remote {
            awaiting = false
            lastFull = (a.opcode == .readResponse || a.opcode == .readBlobResponse)
                && a.valueLength >= a.mtu - 1
            return nil
        }
        guard a.isValueRead, let h = a.handle else { return nil }
        let continuation = a.opcode == .readBlobRequest && lastHandle == h && lastFull
        lastHandle = h
        lastFull = false
        awaiting = true
        return !continuation
    }
}

/// The occurrences of one thing: how many, and the first and the last frame (a finding's "read
/// 12 times in 30 s" and its evidence).
struct FrameRun {
    private(set) var count = 0
    let first: FrameRef
    private(set) var last: FrameRef

    /// A run that starts at `frame`; `add` counts every occurrence, that one included.
    init(from frame: FrameRef) {
        first = frame
        last = frame
    }

    mutating func add(_ frame: FrameRef) {
        count += 1
        last = frame
    }

    /// The time from the first to the last.
    var duration: Int64 { last.time &- first.time }
}

/// The first run of `need` events within `window` of each other: a rule's threshold "N times in T".
/// The last events, up to `need`, wait in a ring of `need` places at `base` in a list its owner
/// keeps for all its windows (`WindowedList`): one list per connection, which serves the next
/// one's, rather than one per window.
struct FirstWindow {
    let base: Int
    /// Events in the ring (at most `need`), and the place the next one goes.
    private var held = 0, next = 0
    /// The window's first and decisive event, once found.
    private(set) var found: (first: FrameRef, decisive: FrameRef)?

    init(base: Int) { self.base = base }

    /// Counts one event; true when it completes the window.
    mutating func add(_ frame: FrameRef, need: Int, window: Int64, ring: inout [FrameRef]) -> Bool {
        guard found == nil else { return false }
        ring[base &+ next] = frame
        next = next &+ 1 == need ? 0 : next &+ 1
        if held < need { held &+= 1 }
        guard held == need else { return false }
        // Full: the oldest of the last `need` sits where the next one goes.
        let first = ring[base &+ next]
        guard frame.time &- first.time <= window else { return false }
        found = (first, frame)
        return true
    }

    /// Starts the run again from the next event.
    mutating func restart() {
        guard found == nil else { return }
        held = 0
        next = 0
    }
}

/// What a rule counts in a first window: a handle read, a handle written.
protocol Windowed {
    var window: FirstWindow { get set }
}

/// A connection's windowed things (handles) in order of their first event, at most `limit`: the
/// oldest goes for a new one, which takes its ring. The windows' rings share one list.
struct WindowedList<Element: Windowed>: Emptiable {
    private(set) var elements: [Element] = []
    private var rings: [FrameRef] = []
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The first element that `matches`, else `make`'s, added with a window of `need` events.
    mutating func index(where matches: (Element) -> Bool, need: Int, at frame: FrameRef,
                        make: (FirstWindow) -> Element) -> Int {
        if let i = elements.firstIndex(where: matches) { return i }
        let base: Int
        if elements.count == limit {
            base = elements.removeFirst().window.base
        } else {
            base = rings.count
            rings.append(contentsOf: repeatElement(frame, count: need))
        }
        elements.append(make(FirstWindow(base: base)))
        return elements.count &- 1
    }

    subscript(i: Int) -> Element {
        get { elements[i] }
        _modify { yield &elements[i] }
    }

    /// Counts one event of element `i`; true when it completes the element's window.
    mutating func add(_ frame: FrameRef, to i: Int, need: Int, window: Int64) -> Bool {
        elements[i].window.add(frame, need: need, window: window, ring: &rings)
    }

    mutating func removeAll(keepingCapacity keep: Bool) {
        elements.removeAll(keepingCapacity: keep)
        rings.removeAll(keepingCapacity: keep)
    }
}
