import Decoders

/// A client may keep the handles it discovered on a server across connections whenever they cannot
/// have changed (Core Vol 3 Part G 2.5.2): walking the whole database again on every reconnection
/// then costs the same round trips each time for nothing.
struct BLE203RediscoveryOnReconnect: PerConnectionRule, OptionlessRule {
    static let info = RuleInfo.ble203

    struct Peer {
        var connectionID: Int
        var frame: FrameRef
        var serviceChanged = false
        /// What discovery showed of the server: a Service Changed characteristic, a Database Hash.
        var hasServiceChanged = false
        var hasDatabaseHash = false
        /// The Generic Attribute service's characteristics were discovered: only then does a missing
        /// Service Changed say anything (a characteristic not seen is unknown, not absent).
        var knowsCharacteristics = false
    }

    static let genericAttribute = BluetoothUUID(uuid16: 0x1801)

    static let consumes: AuditEventKinds = [.att, .discovery, .disconnected]
    static let attOpcodes = ATTOpcodeSet([.handleValueIndication, .readByGroupTypeRequest, .readByTypeRequest])
    static let databaseHash = BluetoothUUID(uuid16: 0x2B2A)
    private var peers = BoundedMap<PeerKey, Peer>(capacity: 10_000)
    /// The connections whose full discovery was seen (only the first one on each is judged).
    var states = ConnectionTable<Bool>(capacity: 4096)

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .discovery(let c, let d):
            // Characteristic discovery responses: what the server has.
            guard d.origin == .remote, d.opcode == .readByTypeResponse, c.peer != nil, !d.found.isEmpty else { return }
            let sc = d.found.contains(GATTType.serviceChanged), hash = d.found.contains(Self.databaseHash)
            let inGATTService = d.service == Self.genericAttribute || sc || hash
            peers.update(c.peerKey, default: Peer(connectionID: c.id, frame: frame)) {
                $0.knowsCharacteristics = $0.knowsCharacteristics || inGATTService
                $0.hasServiceChanged = $0.hasServiceChanged || sc
                $0.hasDatabaseHash = $0.hasDatabaseHash || hash
            }
        case .disconnected(let c, _):
            disconnected(c, at: frame, emit: emit)
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: RuleContext) {
        if a.origin == .remote, a.kind == .indication, a.characteristic == GATTType.serviceChanged {
            peers.update(c.peerKey, default: Peer(connectionID: c.id, frame: frame)) { $0.serviceChanged = true }
            return
        }
        guard a.origin == .local, a.kind == .request, a.handle == 0x0001, states[c.id] == nil else { return }
        let full = (a.opcode == .readByGroupTypeRequest && a.attributeType == GATTType.primaryService)
            || (a.opcode == .readByTypeRequest && a.attributeType == GATTType.characteristic
                && (a.endHandle ?? 0xFFFF) == 0xFFFF)
        guard full, c.peer != nil else { return }
        states[c.id] = true
        if let p = peers[c.peerKey], p.connectionID != c.id, !p.serviceChanged, let why = Self.cacheValid(p, bonded: c.encrypted) {
            emit(finding("""
                full discovery repeated on connection #\(c.id) to \(c.peerKey) (first on connection \
                #\(p.connectionID)), although the cached handles were valid: \(why)
                """,
                         subject: .connection(c), evidence: [p.frame, frame], decisive: frame, detail: "rediscovery"))
        }
        var next = Peer(connectionID: c.id, frame: frame)
        if let p = peers[c.peerKey] {
            next.hasServiceChanged = p.hasServiceChanged
            next.hasDatabaseHash = p.hasDatabaseHash
            next.knowsCharacteristics = p.knowsCharacteristics
        }
        peers[c.peerKey] = next
    }

    /// Why the handles could be kept (Core Vol 3 Part G 2.5.2), or nil when rediscovery was required.
    static func cacheValid(_ p: Peer, bonded: Bool) -> String? {
        if p.knowsCharacteristics, !p.hasServiceChanged { return "the server has no Service Changed characteristic, so its handles never change" }
        if bonded { return "the link is encrypted (bonded), and a bonded client keeps handles until Service Changed" }
        if p.hasServiceChanged, p.hasDatabaseHash { return "the server exposes a Database Hash (0x2B2A), which the client could read instead" }
        return nil
    }

    /// A repeated discovery is judged when it starts: nothing is left to judge at the end.
    func close(_ discovered: Bool, of c: Connection, _ end: ConnectionEnd, emit: RuleContext) {}
}
