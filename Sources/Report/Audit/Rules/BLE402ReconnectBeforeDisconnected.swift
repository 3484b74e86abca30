import Decoders

/// Until Disconnection Complete, the old connection still exists in the controller: connecting to
/// the same peer again races with it and is often refused or confuses the app's state.
struct BLE402ReconnectBeforeDisconnected: AuditRule {
    static let info = RuleInfo(
        id: "BLE402", name: "reconnect-before-disconnected", severity: .error,
        summary: "Connecting to a peer again before its disconnection completed",
        help: """
            Wait for the disconnection to complete (the disconnect callback, HCI Disconnection Complete) \
            before connecting to the same peer again. Until then the controller still has the old link; \
            the new attempt may be refused, or succeed while the app still holds the old connection.
            """,
        guidance: "Core Bluetooth Programming Guide: wait for the disconnect callback before reconnecting")

    struct Pending {
        var peer: BDAddr?
        var frame: FrameRef
        var connection: Connection?
        var flagged = false
    }

    static let consumes: AuditEventKinds = [.connected, .disconnectCommand, .disconnected, .createConnection]
    let settings: RuleSettings
    /// Open connections and pending disconnects by adapter << 16 | handle.
    private var open = BoundedMap<UInt32, Connection>(capacity: 4096)
    private var pending = BoundedMap<UInt32, Pending>(capacity: 4096)

    init(settings: RuleSettings) { self.settings = settings }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: (Finding) -> Void) {
        switch event {
        case .connected(let c):
            open[key(c.adapter, c.handle)] = c
        case .disconnectCommand(let adapter, let handle, let peer):
            let c = open[key(adapter, handle)]
            pending[key(adapter, handle)] = Pending(peer: peer ?? c?.peer, frame: frame, connection: c)
        case .disconnected(let c, _):
            _ = open.removeValue(forKey: key(c.adapter, c.handle))
            _ = pending.removeValue(forKey: key(c.adapter, c.handle))
        case .createConnection(let adapter, let peer?, _):
            for (k, p) in pending.storage where !p.flagged && p.peer == peer && UInt16(k >> 16) == adapter {
                pending[k]!.flagged = true
                let subject = p.connection.map(FindingSubject.connection)
                    ?? FindingSubject(kind: .connection, adapter: adapter, handle: UInt16(truncatingIfNeeded: k), address: peer)
                emit(finding("""
                    LE Create Connection to \(peer) \(millis: frame.time &- p.frame.time) after HCI Disconnect of \
                    handle \(handle: UInt16(truncatingIfNeeded: k)), before its Disconnection Complete
                    """,
                             subject: subject, evidence: [p.frame, frame], decisive: frame, detail: "reconnect"))
            }
        default: break
        }
    }

    mutating func finish(at frame: FrameRef?, emit: (Finding) -> Void) {}

    private func key(_ adapter: UInt16, _ handle: UInt16) -> UInt32 { UInt32(adapter) << 16 | UInt32(handle) }
}
