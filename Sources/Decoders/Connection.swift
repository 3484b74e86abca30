import Wire

/// One ACL connection as seen across the capture: from its Connection Complete (or its first
/// data when the capture starts mid-connection) to its Disconnection Complete.
public final class Connection {
    /// Sequential number of the connection in the capture (1-based).
    public private(set) var id: Int
    public private(set) var adapter: UInt16
    public private(set) var handle: UInt16
    public internal(set) var peer: BDAddr?
    /// Peer address type as HCI reports it (0 public, 1 random, 2 public identity, 3 random identity).
    public internal(set) var peerAddressType: UInt8?
    /// Role of this host's controller: true when it is the central.
    public internal(set) var isCentral: Bool?
    public internal(set) var isLE: Bool
    /// Seen by a sniffer over the air rather than in an HCI log (packets may be missing).
    public internal(set) var overTheAir = false
    /// Connection interval in units of 1.25 ms, latency in events, supervision timeout in 10 ms.
    public internal(set) var interval: UInt16?
    public internal(set) var latency: UInt16?
    public internal(set) var supervisionTimeout: UInt16?
    public internal(set) var createdFrame: Int?
    public internal(set) var createdTime: Int64?
    /// First frame of this connection in the capture (its Connection Complete or its first data).
    public private(set) var firstFrame: Int
    public internal(set) var endedFrame: Int?
    public internal(set) var endedTime: Int64?
    public internal(set) var endReason: UInt8?
    public internal(set) var encrypted = false
    /// Frame of the first Encryption Change with encryption on.
    public internal(set) var encryptedFrame: Int?
    /// Connection parameter updates: (frame, its time, interval, latency, timeout).
    public internal(set) var updates: [(frame: Int, time: Int64, interval: UInt16, latency: UInt16, timeout: UInt16)] = []
    public internal(set) var lastActivity: Int64
    /// Frame of the last packet of a sniffed link (for `lastActivity`).
    public internal(set) var lastPacketFrame: Int?
    /// Sniffed links: gaps the link layer saw (`LLFrame.linkGaps`: skipped events, a side out of
    /// turn, damaged PDUs) and L2CAP PDUs that never completed, seen when the next one started.
    var linkGaps = 0, unfinishedPDUs = 0
    /// How many times the sniffer is known to have missed packets, so ATT can tell a lost response
    /// from pipelining.
    var linkLosses: Int { linkGaps &+ unfinishedPDUs }
    /// A sniffed link that ended without a disconnect the sniffer saw: a new CONNECT_IND between the
    /// same devices, or no packet for longer than its supervision timeout. It ended at its last packet.
    public internal(set) var lost = false

    var reassembly: (sent: L2CAPReassembler, received: L2CAPReassembler) = (.init(), .init())
    /// A PDU whose start the capture truncated is being skipped in that direction (sent, received).
    var skippingTruncated: (sent: Bool, received: Bool) = (false, false)
    /// SMP pairings on this connection and the method each used.
    public var pairing: PairingTracker { Self.made(&pairingKept, PairingTracker.init) }
    /// Credit-based and BR/EDR channels opened through signaling.
    public var channels: DynamicChannels { Self.made(&channelsKept, DynamicChannels.init) }
    /// Made at their first use (most connections never pair nor open a channel), and kept apart
    /// from the getters so that `reuse` can tell whether they were made.
    private var pairingKept: PairingTracker?
    private var channelsKept: DynamicChannels?

    private static func made<T: AnyObject>(_ kept: inout T?, _ make: () -> T) -> T {
        if let k = kept { return k }
        let k = make()
        kept = k
        return k
    }
    /// The ATT bearer on the fixed channel, and those on EATT channels by the local CID.
    public internal(set) var att: ATTBearer?
    var eatt: [UInt16: ATTBearer] = [:]
    /// The bearer of the connection this one was before (`reuse`), for its first ATT PDU to take
    /// (`GATTStore.bearer(…reusing:)`).
    var spareBearer: ATTBearer?

    init(id: Int, adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64) {
        self.id = id
        self.adapter = adapter
        self.handle = handle
        self.isLE = isLE
        firstFrame = frame
        lastActivity = time
    }

    /// Makes this ended connection, which nothing else holds any more, a new one: every fact as
    /// `init` sets it, the storage it grew kept (its bearer's queues, its pairing tracker's list,
    /// its updates). A capture connecting over and over then makes none of them again.
    func reuse(id: Int, adapter: UInt16, handle: UInt16, isLE: Bool, frame: Int, time: Int64) {
        (self.id, self.adapter, self.handle, self.isLE, firstFrame, lastActivity) = (id, adapter, handle, isLE, frame, time)
        peer = nil
        peerAddressType = nil
        isCentral = nil
        overTheAir = false
        interval = nil
        latency = nil
        supervisionTimeout = nil
        createdFrame = nil
        createdTime = nil
        endedFrame = nil
        endedTime = nil
        endReason = nil
        encrypted = false
        encryptedFrame = nil
        updates.removeAll(keepingCapacity: true)
        lastPacketFrame = nil
        linkGaps = 0
        unfinishedPDUs = 0
        lost = false
        reassembly.sent.reuse()
        reassembly.received.reuse()
        skippingTruncated = (false, false)
        if isKnownUniquelyReferenced(&pairingKept) { pairingKept?.reuse() } else { pairingKept = nil }
        channelsKept = nil
        eatt.removeAll(keepingCapacity: true)
        if isKnownUniquelyReferenced(&att) { spareBearer = att }
        att = nil
    }

    /// Identity used to carry a peer's GATT database across connections.
    public var peerKey: PeerKey { PeerKey(address: peer, type: peerAddressType.map { $0 & 1 }, connection: peer == nil ? id : 0) }

    public var label: String {
        var s = "#\(id) handle " + Hex.prefixed(handle, width: 4)
        if let p = peer { s += " " + p.description }
        return s
    }
}

/// Identifies a peer across connections: its address and address type (public or random), or,
/// when the capture never showed the address, the one connection it was seen in.
public struct PeerKey: Hashable, Sendable, CustomStringConvertible {
    public let address: BDAddr?
    public let type: UInt8?
    let connection: Int

    public var description: String { TextLine.make(write) }

    /// "D4:AB:CD:00:00:01 (random)", or "connection #3 (address unknown)".
    public func write(to s: inout TextLine) {
        guard let a = address else {
            s += "connection #"
            s.write(connection)
            s += " (address unknown)"
            return
        }
        s.write(a)
        if type == 1 { s += " (random)" } else if type == 0 { s += " (public)" }
    }
}

/// Per-connection state, by the capture's connection number (`Connection.id`, given in order of
/// appearance). Connection n lives in slot n mod the number of slots, a power of two: no hashing.
/// The slots double (from 16) when a new connection would take the slot of a live one, so the
/// table follows the connections open at once, not the capture's length; at `capacity` slots a
/// new connection takes the slot of the one `capacity` connections older, and the table stays
/// bounded.
public struct ConnectionTable<State> {
    /// The connection number in each slot (`empty` for none), apart from the states: testing a slot
    /// then reads an integer rather than copying a state.
    @usableFromInline var slotIDs: [Int] = []
    @usableFromInline var states: [State?] = []
    /// The occupied slots, in no order, and each one's place in that list: sweeps over every
    /// connection visit only these.
    @usableFromInline var occupied: [Int] = []
    @usableFromInline var place: [Int] = []
    /// Slot count - 1 (a mask rather than a division).
    @usableFromInline var mask = 0
    /// States taken out and handed back (`keep`), whose storage new states take over (`ReusableState`).
    @usableFromInline var spares: [State] = []
    /// The most slots, a power of two.
    public let capacity: Int
    @usableFromInline static var empty: Int { .min }

    public init(capacity: Int) { self.capacity = 1 << (Int.bitWidth - (max(1, capacity) - 1).leadingZeroBitCount) }

    @inlinable @inline(__always)
    func slot(_ id: Int) -> Int { id & mask }

    @inlinable @inline(__always)
    public func contains(_ id: Int) -> Bool {
        let i = slot(id)
        return i < slotIDs.count && slotIDs[i] == id
    }

    @inlinable
    public subscript(id: Int) -> State? {
        get { contains(id) ? states[slot(id)] : nil }
        set {
            if let v = newValue { put(v, id) } else { _ = removeValue(forKey: id) }
        }
    }

    /// Mutates the state in place, made with `make()` first when absent.
    @inlinable @inline(__always)
    public mutating func update<R>(_ id: Int, default make: @autoclosure () -> State, _ body: (inout State) -> R) -> R {
        if !contains(id) { put(make(), id) }
        return body(&states[slot(id)]!)
    }

    /// Mutates the state in place when there is one (nil when not): one test of the slot where
    /// `contains` then `update` would make two.
    @inlinable @inline(__always) @discardableResult
    public mutating func modify<R>(_ id: Int, _ body: (inout State) -> R) -> R? {
        guard contains(id) else { return nil }
        return body(&states[slot(id)]!)
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey id: Int) -> State? {
        guard contains(id) else { return nil }
        let i = slot(id)
        slotIDs[i] = Self.empty
        let p = place[i], last = occupied.removeLast()
        if last != i {
            occupied[p] = last
            place[last] = p
        }
        return states[i].take()
    }

    @inlinable
    public mutating func removeAll() { self = Self(capacity: capacity) }

    /// The connections held, in number order.
    @inlinable
    public var ids: [Int] { occupied.map { slotIDs[$0] }.sorted() }

    /// Their states, in connection number order.
    @inlinable
    public var values: [State] { ids.map { states[slot($0)]! } }

    /// The newest connection held whose number passes `test`.
    @inlinable
    public func newest(where test: (Int) -> Bool) -> Int? {
        var found: Int?
        for i in occupied where slotIDs[i] > found ?? .min && test(slotIDs[i]) { found = slotIDs[i] }
        return found
    }

    /// Puts `state` in `id`'s slot: over the live connection there only once the table is at its
    /// capacity, after doubling it until then.
    @inlinable
    mutating func put(_ state: State, _ id: Int) {
        while slotIDs.isEmpty || (slotIDs[slot(id)] != Self.empty && slotIDs[slot(id)] != id && slotIDs.count < capacity) {
            grow()
        }
        let i = slot(id)
        if slotIDs[i] == Self.empty {
            place[i] = occupied.count
            occupied.append(i)
        }
        slotIDs[i] = id
        states[i] = state
    }

    /// Doubles the slots and moves each connection to its slot in the new size: two numbers apart
    /// mod n are apart mod 2n, so none collide.
    @usableFromInline
    mutating func grow() {
        let n = slotIDs.isEmpty ? min(16, capacity) : slotIDs.count * 2
        var ids = [Int](repeating: Self.empty, count: n)
        var moved = [State?](repeating: nil, count: n)
        var places = [Int](repeating: 0, count: n)
        for (k, old) in occupied.enumerated() {
            let j = slotIDs[old] & (n - 1)
            ids[j] = slotIDs[old]
            moved[j] = states[old].take()
            places[j] = k
            occupied[k] = j
        }
        slotIDs = ids
        states = moved
        place = places
        mask = n - 1
    }
}

/// Per-connection state whose storage can serve again: a new state takes over (`adopt`) the lists
/// of one judged before, emptied, and with them the room they grew to. A table of such states keeps
/// a few handed back (`keep`) for its new states, so connections that come and go allocate nothing
/// for them once the first few have.
public protocol ReusableState {
    /// Takes `old`'s lists, emptied, for this state's own, which are empty: the state is new.
    mutating func adopt(_ old: inout Self)
}

extension ConnectionTable where State: ReusableState {
    /// Keeps `state`, taken out and judged, for a new connection's state to take its storage (at most four).
    @inlinable
    public mutating func keep(_ state: consuming State) {
        if spares.count < 4 { spares.append(state) }
    }

    /// `update`, a new state taking over the storage of one kept.
    @inlinable @inline(__always)
    public mutating func update<R>(_ id: Int, default make: @autoclosure () -> State, _ body: (inout State) -> R) -> R {
        if !contains(id) { put(renewed(make()), id) }
        return body(&states[slot(id)]!)
    }

    /// `state`, made new, with the storage of a kept state when there is one.
    @inlinable
    public mutating func renewed(_ state: consuming State) -> State {
        guard var old = spares.popLast() else { return state }
        state.adopt(&old)
        return state
    }
}

/// A collection that can be emptied keeping its room.
public protocol Emptiable {
    mutating func removeAll(keepingCapacity: Bool)
}

extension Emptiable {
    /// Takes `old`'s storage, emptied, in place of this collection's (empty) one: its room serves again.
    @inlinable
    public mutating func takeRoom(of old: inout Self) {
        swap(&self, &old)
        removeAll(keepingCapacity: true)
    }
}

extension Array: Emptiable {}
extension Set: Emptiable {}
extension Dictionary: Emptiable {}
