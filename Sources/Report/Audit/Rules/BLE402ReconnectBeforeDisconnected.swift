import Decoders
import Wire

/// Until Disconnection Complete, the old connection still exists in the controller: connecting to
/// the same peer again races with it and is often refused or confuses the app's state.
struct BLE402ReconnectBeforeDisconnected: OptionlessRule {
    static let info = RuleInfo.ble402

    struct Pending {
        var peer: BDAddr?
        var frame: FrameRef
        /// The number of the connection the disconnect was for, when it was seen opening.
        var connection: Int?
        var flagged = false
    }

    static let consumes: AuditEventKinds = [.connected, .disconnectCommand, .disconnected, .createConnection]
    /// Open connections' numbers and pending disconnects, by adapter << 16 | handle: a few at a
    /// time, so they are lists searched in order (the oldest goes past 4,096).
    private var open: [(key: UInt32, value: Int)] = []
    private var pending: [(key: UInt32, value: Pending)] = []

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .connected(let c):
            Self.put(&open, key(c.adapter, c.handle), c.id)
        case .disconnectCommand(let adapter, let handle, let peer):
            let k = key(adapter, handle)
            let c = open.first { $0.key == k }.flatMap { emit.connection($0.value) }
            Self.put(&pending, k, Pending(peer: peer ?? c?.peer, frame: frame, connection: c?.id))
        case .disconnected(let c, _):
            let k = key(c.adapter, c.handle)
            open.removeAll { $0.key == k }
            pending.removeAll { $0.key == k }
        case .createConnection(let adapter, let peer?, _):
            for i in pending.indices where !pending[i].value.flagged && pending[i].value.peer == peer
                && UInt16(pending[i].key >> 16) == adapter {
                pending[i].value.flagged = true
                let (k, p) = pending[i]
                let subject = p.connection.flatMap(emit.connection).map(FindingSubject.connection)
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

    private func key(_ adapter: UInt16, _ handle: UInt16) -> UInt32 { UInt32(adapter) << 16 | UInt32(handle) }

    /// Sets `key`'s value in a list: in place when present, else at the end.
    private static func put<V>(_ list: inout [(key: UInt32, value: V)], _ key: UInt32, _ v: V) {
        if let i = list.firstIndex(where: { $0.key == key }) {
            list[i].value = v
            return
        }
        if list.count == 4096 { list.removeFirst() }
        list.append((key, v))
    }
}
