import Decoders

/// A client that has bonded with, or simply met, a peripheral can keep what it discovered: walking
/// the whole database again on every reconnection costs the same round trips each time.
struct BLE203RediscoveryOnReconnect: AuditRule {
    static let info = RuleInfo(
        id: "BLE203", name: "rediscovery-on-reconnect", severity: .note,
        summary: "The same full discovery repeated on a later connection to the same peer",
        help: """
            Keep the attribute handles discovered on a peripheral and reuse them when reconnecting; \
            rediscover only when the peripheral says its database changed (Service Changed indication). \
            Repeating the full discovery on each connection delays the first useful read or write.
            """,
        guidance: "Core Bluetooth Programming Guide: explore a peripheral's data wisely",
        notAFinding: "the peer sent a Service Changed indication in between")

    struct Peer {
        var connectionID: Int
        var frame: FrameRef
        var serviceChanged = false
    }

    static let consumes: AuditEventKinds = [.att, .disconnected]
    static let attOpcodes = ATTOpcodeSet([ATTOpcode.indication, ATTOpcode.readByGroupTypeRequest, ATTOpcode.readByTypeRequest])
    let settings: RuleSettings
    private var peers = BoundedMap<PeerKey, Peer>(capacity: 10_000)
    private var discovered = ConnectionTable<Bool>(capacity: 4096)

    init(settings: RuleSettings) { self.settings = settings }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .disconnected(let c, _):
            _ = discovered.removeValue(forKey: c.id)
        default: break
        }
    }

    mutating func observeATT(_ a: ATTObservation, on c: Connection, at frame: FrameRef,
                             emit: (Finding) -> Void) {
        if a.origin == .remote, a.kind == .indication, a.characteristic == GATTType.serviceChanged {
            peers.update(c.peerKey, default: Peer(connectionID: c.id, frame: frame)) { $0.serviceChanged = true }
            return
        }
        guard a.origin == .local, a.kind == .request, a.handle == 0x0001, discovered[c.id] == nil else { return }
        let full = (a.opcode == ATTOpcode.readByGroupTypeRequest && a.attributeType == GATTType.primaryService)
            || (a.opcode == ATTOpcode.readByTypeRequest && a.attributeType == GATTType.characteristic
                && (a.endHandle ?? 0xFFFF) == 0xFFFF)
        guard full, c.peer != nil else { return }
        discovered[c.id] = true
        if let p = peers[c.peerKey], p.connectionID != c.id, !p.serviceChanged {
            emit(finding("""
                full discovery repeated on connection #\(c.id) to \(c.peerKey.description); the same discovery ran \
                on connection #\(p.connectionID) and no Service Changed indication came in between
                """,
                         subject: .connection(c), evidence: [p.frame, frame], decisive: frame, detail: "rediscovery"))
        }
        peers[c.peerKey] = Peer(connectionID: c.id, frame: frame)
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {}
}
