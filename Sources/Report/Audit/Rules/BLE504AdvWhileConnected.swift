import Decoders

/// A peripheral that is connected to the central it serves rarely needs to be discoverable too;
/// advertising on keeps the radio busy and invites connections it does not want.
struct BLE504AdvWhileConnected: AuditRule {
    static let info = RuleInfo.ble504

    struct Adapter {
        /// The links this host holds as peripheral, by number.
        var connections: Set<Int> = []
        var since: FrameRef?
    }

    static let consumes: AuditEventKinds = [.connected, .disconnected, .advertising]
    private let durationSetting: Int64
    private var adapters = AdapterTable<Adapter>()

    init(settings: RuleSettings) { durationSetting = settings.duration("duration") }

    mutating func observe(_ event: AuditEvent, at frame: FrameRef, emit: RuleContext) {
        switch event {
        case .connected(let c) where c.isCentral == false:
            // Its advertising stopped just before (`advertisingStopped`).
            adapters.update(c.adapter, default: Adapter()) { a in
                if a.connections.count < 64 { a.connections.insert(c.id) }
            }
        case .disconnected(let c, _):
            guard adapters.update(c.adapter, { $0.connections.remove(c.id) != nil }) == true else { return }
            if adapters[c.adapter]?.connections.isEmpty == true { end(c.adapter, at: frame, emit: emit) }
        case .advertisingStarted(let a):
            adapters.update(a.adapter) { a in if !a.connections.isEmpty, a.since == nil { a.since = frame } }
        case .advertisingStopped(let a):
            end(a.adapter, at: frame, emit: emit)
        default: break
        }
    }

    mutating func finish(at frame: FrameRef?, emit: RuleContext) {
        guard let f = frame else { return }
        for adapter in adapters.keys { end(adapter, at: f, emit: emit) }
    }

    private mutating func end(_ adapter: UInt16, at frame: FrameRef, emit: RuleContext) {
        guard let a = adapters[adapter], let since = a.since else { return }
        adapters.update(adapter) { $0.since = nil }
        let on = frame.time &- since.time
        guard on > durationSetting, let c = a.connections.min().flatMap(emit.connection) else { return }
        emit(finding("""
            advertising re-enabled while connected as peripheral to \(c.peer?.description ?? "a central") \
            and kept on for \(seconds: on)
            """,
                     subject: .connection(c), evidence: [since, frame], decisive: since, detail: "advertising while connected"))
    }
}
