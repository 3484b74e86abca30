import Decoders

/// The connections open now, by number: what rules look a connection up in when they judge it
/// (`RuleContext.connection`), so their state keeps numbers. The auditor adds the connection of each
/// event a rule may start keeping one on before its rules see the event (`Auditor.namingKinds`, and
/// every ATT PDU), and drops it once its disconnection was judged. With each connection it keeps
/// what every PDU updates, so that no rule is called for it: whether the client has discovered,
/// and when data last went over the link (`LinkActivity`).
final class OpenConnections {
    /// One open connection and its facts.
    struct Link {
        let connection: Connection
        /// This host, as client, has started a discovery on it (`ATTObservation.startsDiscovery`).
        var discovered = false
        var activity: LinkActivity

        /// Opened at `frame`: its activity starts there.
        init(_ c: Connection, at frame: FrameRef) {
            connection = c
            activity = LinkActivity(at: frame)
        }
    }

    /// As large as the dissector's table: a connection stays here as long as a rule may hold its state.
    private var table = ConnectionTable<Link>(capacity: 1 << 17)

    subscript(id: Int) -> Connection? { table[id]?.connection }

    /// The data activity of the open connection with this number.
    func activity(_ id: Int) -> LinkActivity? { table.modify(id) { $0.activity } }

    /// Takes the longest pause of an open connection's data since it was last taken (`LinkActivity.takePause`).
    func takePause(_ id: Int) -> (from: FrameRef, to: FrameRef)? { table.modify(id) { $0.activity.takePause() } ?? nil }

    @inline(__always) private func add(_ c: Connection, at frame: FrameRef) {
        if !table.contains(c.id) { table[c.id] = Link(c, at: frame) }
    }

    /// An ATT PDU at `frame`: adds its connection and counts it as data; true when the client has
    /// discovered on the link, this PDU included.
    @inline(__always) func att(_ c: Connection, discovering: Bool, at frame: FrameRef) -> Bool {
        table.update(c.id, default: Link(c, at: frame)) { link in
            if discovering { link.discovered = true }
            link.activity.data(at: frame)
            return link.discovered
        }
    }

    /// Other L2CAP traffic (`.linkData`) on a connection already open: data.
    @inline(__always) func data(_ c: Connection, at frame: FrameRef) {
        table.modify(c.id) { $0.activity.data(at: frame) }
    }

    func remove(_ id: Int) { table.removeValue(forKey: id) }

    /// Adds the connection `event` names, if any: the one place the events that carry one are listed.
    /// Added in place rather than returned, which held a reference across the rules' calls. A
    /// connection's activity starts with its `.connected`.
    func add(namedBy event: AuditEvent, at frame: FrameRef) {
        switch event {
        case .connected(let c):
            table.update(c.id, default: Link(c, at: frame)) { $0.activity = LinkActivity(at: frame) }
        case .disconnected(let c, _), .encryptionChanged(let c, _), .att(let c, _), .pairing(let c, _),
             .pairingDebugKey(let c, _), .linkData(let c), .connectionOwner(let c, _), .discovery(let c, _):
            add(c, at: frame)
        case .scanStarted, .scanStopped, .scanAtEnd, .createConnection, .disconnectCommand, .advertisingData, .advertisingStarted,
             .advertisingStopped, .advertisingParameters, .platform:
            break
        }
    }
}

/// When data (an ATT PDU, SMP, any other L2CAP traffic) last went over a connection, from its
/// `.connected` or the first PDU seen, and the longest pause between two data packets since that
/// was last asked for (`takePause`). Kept by the auditor for every PDU, so the rule that judges
/// idle links (BLE401) is not called for each one: it takes the pause whenever what it judges a
/// pause by changes (its subscriptions), and when the connection ends.
struct LinkActivity {
    /// The last data packet, or the start.
    private(set) var last: FrameRef
    /// The longest pause since the last `takePause`, the first of equal ones, when its length is
    /// positive (no optional: the auditor's table then tests an entry without an outlined call).
    private var pauseFrom: FrameRef, pauseTo: FrameRef
    private var pauseLength: Int64 = 0

    init(at frame: FrameRef) { (last, pauseFrom, pauseTo) = (frame, frame, frame) }

    @inline(__always) mutating func data(at frame: FrameRef) {
        let gap = frame.time &- last.time
        if gap > pauseLength {
            (pauseFrom, pauseTo) = (last, frame)
            pauseLength = gap
        }
        last = frame
    }

    /// The longest pause since the last call, and none from now on.
    mutating func takePause() -> (from: FrameRef, to: FrameRef)? {
        guard pauseLength > 0 else { return nil }
        pauseLength = 0
        return (pauseFrom, pauseTo)
    }
}
